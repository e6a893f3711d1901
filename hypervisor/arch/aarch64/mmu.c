/* The hypervisor's own stage 1 (EL2): one level-1 table of 1 GiB blocks, identity mapped.
 * The first GiB holds the devices (never executable); RAM above it is normal write-back. */
#include "arch/aarch64.h"
#include "arch/sysreg.h"

#define DESC_BLOCK (1ul << 0)
#define DESC_ATTR(i) ((uint64_t)(i) << 2)
#define DESC_SH_INNER (3ul << 8)
#define DESC_AF (1ul << 10)
#define DESC_XN (1ul << 54)

#define MAIR_DEVICE_NGNRE 0x04ul
#define MAIR_NORMAL_WB 0xfful
#define ATTR_DEVICE 0
#define ATTR_NORMAL 1

#define TCR_T0SZ(n) ((uint64_t)(n))
#define TCR_IRGN0_WBWA (1ul << 8)
#define TCR_ORGN0_WBWA (1ul << 10)
#define TCR_SH0_INNER (3ul << 12)
#define TCR_PS_40BIT (2ul << 16)
#define TCR_EL2_RES1 ((1ul << 31) | (1ul << 23))

static uint64_t el2_l1[512] __attribute__((aligned(4096)));

void aarch64_mmu_init(void)
{
	el2_l1[0] = DESC_BLOCK | DESC_ATTR(ATTR_DEVICE) | DESC_AF | DESC_XN;
	for (uint64_t gib = 1; gib < 4; gib++)
		el2_l1[gib] = (gib << 30) | DESC_BLOCK | DESC_ATTR(ATTR_NORMAL) | DESC_SH_INNER |
			      DESC_AF;
}

void aarch64_mmu_enable_this_core(void)
{
	uint64_t tcr = TCR_T0SZ(32) | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER |
		       TCR_PS_40BIT | TCR_EL2_RES1;
	uint64_t mair = MAIR_DEVICE_NGNRE << (8 * ATTR_DEVICE) | MAIR_NORMAL_WB << (8 * ATTR_NORMAL);

	aarch64_mmu_enable((uint64_t)el2_l1, tcr, mair);
}
