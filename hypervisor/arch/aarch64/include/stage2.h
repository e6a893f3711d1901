/* Stage-2 table construction (pure: also built into the host unit tests). */
#ifndef AARCH64_STAGE2_H
#define AARCH64_STAGE2_H

#include <stdint.h>

#define STAGE2_POOL_PAGES 128u
#define STAGE2_IPA_LIMIT (1ul << 32) /* VTCR_EL2.T0SZ = 32: 4 GiB guest space, level-1 root */

uint64_t *stage2_new_root(void);
void stage2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, uint32_t flags);
uint64_t stage2_leaf_attrs(uint32_t flags);
unsigned stage2_pages_used(void);
/* Forget every table (host unit tests boot many times). */
void stage2_pool_reset(void);

#endif
