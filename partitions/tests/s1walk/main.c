/* s1walk: a hostile partition whose own stage-1 tables lead the hypervisor's walk out of its
 * memory (tests/system/test_attack2_apex.py, configs/s1walk.yaml). With the MMU on, the
 * hypervisor translates a buffer a hypercall names through the partition's stage 1 (AT S1E1R/W
 * at EL2, cpu.c stage1_va_to_ipa); here the level-1 entry for the GiB at VA 5 GiB names a
 * level-2 table at an IPA its stage 2 does not map, so that walk takes a stage-2 fault. The
 * hypervisor must refuse the buffer (an error to the caller) and go on; the partition's own
 * AT of that VA traps to EL2 and is its own health-monitor event. */
#include "bhtest.h"

#define DESC_BLOCK 1ul
#define DESC_TABLE 3ul
#define AF (1ul << 10)
#define SH_INNER (3ul << 8)
#define TCR_VALUE (25ul | 1ul << 8 | 1ul << 10 | 3ul << 12 | 1ul << 23 | 2ul << 32)
#define BAD_TABLE 0x80000000ul  /* not in the partition's stage 2 */
#define BAD_VA (5ul << 30)     /* its level-1 entry names BAD_TABLE */

static unsigned long level1[512] __attribute__((aligned(4096)));

static void mmu_on_with_a_bad_table(void)
{
	unsigned long sctlr;

	for (unsigned long i = 0; i < 512; i++)
		level1[i] = i << 30 | AF | SH_INNER | DESC_BLOCK; /* RW, executable, Normal */
	level1[BAD_VA >> 30] = BAD_TABLE | DESC_TABLE;
	__asm__ volatile("dsb sy\n\tmsr mair_el1, %0\n\tmsr tcr_el1, %1\n\tmsr ttbr0_el1, %2\n\t"
			 "isb\n\ttlbi vmalle1\n\tdsb nsh\n\tisb"
			 : : "r"(0xfful), "r"(TCR_VALUE), "r"(level1) : "memory");
	__asm__ volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
	sctlr |= 1ul; /* M only: caches stay off, as the image was written */
	__asm__ volatile("msr sctlr_el1, %0\n\tisb" : : "r"(sctlr) : "memory");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	struct bh_hm_status st;
	long rc;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	mmu_on_with_a_bad_table();
	bh_puts("s1walk: MMU on");
	rc = bh_hvc(BH_HC_CONSOLE_WRITE, BAD_VA, 8, 0, 0, 0).x0;      /* hypervisor reads */
	bh_printf("s1walk: console write from the bad walk: %ld\n", rc);
	rc = bh_hvc(BH_HC_HM_STATUS, bh_partition_id(), BAD_VA, 0, 0, 0).x0; /* writes */
	bh_printf("s1walk: hm status into the bad walk: %ld\n", rc);
	rc = bh_hm_status(bh_partition_id(), &st); /* a good buffer still works */
	bh_printf("s1walk: hm status into a good buffer: %ld\n", rc);
	bh_puts("s1walk: done");
	bh_halt_self();
	return 0;
}
