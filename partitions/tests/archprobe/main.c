/* archprobe: architectural traps of a paravirtual partition (configs/arch_traps.yaml, a system
 * partition with memory_violation and trapped_instruction set to ignore):
 * - an ignored load pair outside its memory (no syndrome) reads zero into both registers;
 * - ACTLR_EL1 traps (HCR_EL2.TACR); the implementation-defined L2CTLR_EL1 does not on QEMU 7.2,
 *   which does not implement HCR_EL2.TIDCP (docs/architecture.md);
 * - CONSOLE_READ and TRACE_READ of length 0 answer the same for any pointer. */
#include "bhtest.h"

#define UNMAPPED_IPA 0x50000000ul /* outside the partition's areas: a stage-2 fault */
#define BAD_POINTER 0x7ff00000ul
#define POISON 0x5555aaaa5555aaaaul

BH_TEST(ignored_load_pair_reads_zero)
{
	register unsigned long a __asm__("x2") = POISON;
	register unsigned long b __asm__("x3") = POISON;
	register unsigned long base __asm__("x4") = UNMAPPED_IPA;

	__asm__ volatile("ldp %0, %1, [%2]" : "+r"(a), "+r"(b) : "r"(base) : "memory");
	BH_EXPECT_EQ(a, 0);
	BH_EXPECT_EQ(b, 0);
}

BH_TEST(ignored_load_pair_with_writeback_moves_its_base)
{
	register unsigned long a __asm__("x5") = POISON;
	register unsigned long b __asm__("x6") = POISON;
	register unsigned long base __asm__("x7") = UNMAPPED_IPA;

	__asm__ volatile("ldp %w0, %w1, [%2], #16" : "+r"(a), "+r"(b), "+r"(base) : : "memory");
	BH_EXPECT_EQ(a, 0);
	BH_EXPECT_EQ(b, 0);
	BH_EXPECT_EQ(base, UNMAPPED_IPA + 16);
}

BH_TEST(actlr_el1_traps_and_reads_zero)
{
	unsigned long v = POISON;

	__asm__ volatile("mrs %0, actlr_el1" : "+r"(v) : : "memory");
	BH_EXPECT_EQ(v, 0);
}

/* Reported, not judged here: the Python side checks the health-monitor log. */
BH_TEST(l2ctlr_el1_read)
{
	unsigned long v = POISON;

	__asm__ volatile("mrs %0, s3_1_c11_c0_2" : "+r"(v) : : "memory");
	bh_printf("archprobe: L2CTLR_EL1 reads 0x%lx\n", v);
}

BH_TEST(zero_length_reads_ignore_the_pointer)
{
	static char buf[8];

	BH_EXPECT_EQ(bh_console_read(buf, 0), 0);
	BH_EXPECT_EQ(bh_console_read((void *)BAD_POINTER, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_HC_TRACE_READ, 0, (unsigned long)buf, 0, 0, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_HC_TRACE_READ, 0, BAD_POINTER, 0, 0, 0), 0);
	/* Any other length still checks the buffer. */
	BH_EXPECT_EQ(bh_console_read((void *)BAD_POINTER, 1), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_hypercall(BH_HC_TRACE_READ, 0, BAD_POINTER, 1, 0, 0), BH_INVALID_PARAM);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_test_run_all();
	return 0;
}
