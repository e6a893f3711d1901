/* flashbusy: a firmware image that loses power while the flash is busy: in the middle of a block
 * erase and of a 1024-word buffered program, after their confirm and before the status says they
 * are done. Three runs, told apart by marker words in block 2 of bank 1:
 *
 * 1. fills block 1 (256 KiB) with a known pattern, sets marker 1, starts erasing block 1, polls
 *    the status a few times (counting the busy answers) and resets the machine (PSCI
 *    SYSTEM_RESET: in a Bulkhead partition, a restart of the partition only);
 * 2. prints what the cut erase left in block 1 (words erased, words kept, words that are neither,
 *    and whether the erased ones come first), programs the first 1024 words of block 1 with an
 *    old pattern, sets marker 2, starts a buffered program of a new pattern over them, polls
 *    twice and resets;
 * 3. prints what the cut program left (words new, old, neither, new ones first), then the status
 *    (ready) and that the flash works again.
 *
 * Under QEMU's -bios (pflash_cfi01 erases and programs at once) nothing is ever busy. In a
 * Bulkhead partition the erase and the program go a step at a time at each access
 * (hypervisor/arch/aarch64/vflash.c), so the power goes in the middle: each word must be old or
 * new, never a mix (tests/system/test_flash_bound.py). */
#define PROBE_NAME "flashbusy"
#include "fwprobe.h"
#include "flashbusy.h"
