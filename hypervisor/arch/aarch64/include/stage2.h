/* Stage-2 table construction (pure: also built into the host unit tests). */
#ifndef AARCH64_STAGE2_H
#define AARCH64_STAGE2_H

#include <stdbool.h>
#include <stdint.h>
#include "config_tables.h"

#define STAGE2_IPA_LIMIT (1ul << BH_IPA_BITS) /* VTCR_EL2.T0SZ = 64 - BH_IPA_BITS, level-1 root */
#define STAGE2_PAGE_SIZE 0x1000ul    /* level-3 pages: the smallest mapping */

/* Take `count` tables (zeroed here) for the tables to come, forgetting any built before (host
 * unit tests boot many times); no block larger than largest_block will be mapped. */
void stage2_init(uint64_t (*tables)[512], unsigned count, uint64_t largest_block);
uint64_t *stage2_new_root(void);
void stage2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, uint32_t flags);
uint64_t stage2_leaf_attrs(uint32_t flags);
unsigned stage2_pages_used(void);
/* Make the level-2 entries (2 MiB each: a block or a table of pages) of [ipa, ipa + size) invalid
 * (present false) or valid again, keeping their addresses and rights: an emulated flash bank
 * unmapped while it is in a command mode, in at most size / 2 MiB steps. ipa and size are 2 MiB
 * aligned, and everything mapped in the range belongs to the caller (a flash bank's window);
 * entries never mapped stay so. Returns the entries changed. The caller flushes TLBs. */
unsigned stage2_set_present(uint64_t *root, uint64_t ipa, uint64_t size, bool present);

#endif
