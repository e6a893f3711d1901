/* Bulkhead partition runtime layout constants.
 *
 * Plain integer macros only (no C syntax, no 'u' suffixes), so crt0.S and the C runtime
 * share one definition of the per-vCPU stack layout.
 */
#ifndef BULKHEAD_LAYOUT_H
#define BULKHEAD_LAYOUT_H

/* The runtime reserves a stack for this many vCPUs; a vCPU with a higher id is parked. */
#define BH_PART_MAX_VCPUS 8

/* Each vCPU stack is 1 << BH_PART_STACK_SHIFT bytes (16 KiB). */
#define BH_PART_STACK_SHIFT 14
#define BH_PART_STACK_SIZE (1 << BH_PART_STACK_SHIFT)

#endif
