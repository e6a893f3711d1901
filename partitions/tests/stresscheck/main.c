/* stresscheck: a partition that checks its own state for as long as a neighbour stresses the
 * hypervisor (tests/system/test_stressng.py: Debian's stress-ng in a Linux partition).
 *
 * It works in rounds, forever: be_spin (bework/spin.S) fills x19-x28 and v0-v31, spins and
 * counts the registers that changed; it checks a memory pattern of PATTERN_BYTES and writes the
 * next round's (so memory that went stale shows, not only memory that was overwritten); it checks
 * registers it set once at boot (TPIDR_EL0, TPIDRRO_EL0, SP_EL0, CONTEXTIDR_EL1, CNTKCTL_EL1: a
 * Linux beside it sets each of them too; TPIDR_EL1 is libbhpart's vCPU index);
 * and it sleeps on its virtual timer until an absolute deadline, checking that the interrupt came,
 * not before the deadline. Every REPORT_ROUNDS rounds (or as many as the test parameter
 * `report_rounds` says, bh_test_param) it prints
 *   BHCHECK rounds <r> regs_bad <a> mem_bad <b> sysregs_bad <c> early <e> late_max_ns <l>
 * with the counts since boot; `late_max_ns` is the largest wake-up lateness, which without
 * -icount includes the host's own scheduling of QEMU (no bound is checked on it here). */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"

#define PATTERN_BYTES (256u * 1024u)
#define PATTERN_WORDS (PATTERN_BYTES / 8u)
#define SPIN_ITERS 20000ul    /* tens of microseconds of spinning per round */
#define SLEEP_NS 1000000ull   /* 1 ms */
#define REPORT_ROUNDS 500u
#define CPACR_FPEN (3ul << 20)
#define CNTV_ENABLE 1ul
#define SYSREG_SEED 0x5ca1ab1e00000000ul
#define CNTKCTL_MINE 0x3ul    /* EL0PCTEN and EL0VCTEN, no event stream: not what Linux sets */

unsigned long be_spin(unsigned long seed, unsigned long iterations);

/* volatile: the check must read memory, not values the compiler remembers. */
static volatile unsigned long pattern[PATTERN_WORDS];
static volatile unsigned long fired, early;
static volatile unsigned long long deadline;

static unsigned long word_of(unsigned long round, unsigned long i)
{
	return (round * 0x9e3779b97f4a7c15ul) ^ (i * 0xc2b2ae3d27d4eb4ful) ^ 0xa5a5a5a5a5a5a5a5ul;
}

/* Counts the words that do not hold round's pattern, and writes round + 1's. */
static unsigned long check_and_refill(unsigned long round)
{
	unsigned long bad = 0;

	for (unsigned long i = 0; i < PATTERN_WORDS; i++) {
		bad += pattern[i] != word_of(round, i);
		pattern[i] = word_of(round + 1, i);
	}
	return bad;
}

static void sysregs_set(void)
{
	__asm__ volatile("msr cntkctl_el1, %0\n\tmsr tpidr_el0, %1\n\tmsr tpidrro_el0, %2\n\t"
			 "msr sp_el0, %3\n\tmsr contextidr_el1, %4\n\tisb"
			 : : "r"(CNTKCTL_MINE), "r"(SYSREG_SEED | 2), "r"(SYSREG_SEED | 3),
			   "r"(SYSREG_SEED | 4), "r"(0x5ca1ul) : "memory");
}

static unsigned long sysregs_bad(void)
{
	unsigned long a, b, c, d, e;

	__asm__ volatile("mrs %0, cntkctl_el1\n\tmrs %1, tpidr_el0\n\tmrs %2, tpidrro_el0\n\t"
			 "mrs %3, sp_el0\n\tmrs %4, contextidr_el1"
			 : "=r"(a), "=r"(b), "=r"(c), "=r"(d), "=r"(e));
	return (a != CNTKCTL_MINE) + (b != (SYSREG_SEED | 2)) + (c != (SYSREG_SEED | 3)) +
	       (d != (SYSREG_SEED | 4)) + (e != 0x5ca1ul);
}

static void on_vtimer(unsigned intid)
{
	(void)intid;
	if (bh_counter() < deadline)
		early++;
	fired++;
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
}

/* Sleeps until the virtual timer's interrupt for `at` came; returns the lateness in ticks. */
static unsigned long long sleep_until(unsigned long long at)
{
	unsigned long seen = fired;

	deadline = at;
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(at), "r"(CNTV_ENABLE) : "memory");
	unsigned long flags = bh_irq_save();
	while (fired == seen) {
		bh_idle();
		bh_irq_poll();
	}
	bh_irq_restore(flags);
	return bh_counter() - at;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long regs = 0, mem = 0, sys = 0;
	unsigned long long late_max = 0, next = bh_counter();
	unsigned long long report = bh_test_param("report_rounds");

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	__asm__ volatile("msr cpacr_el1, %0\n\tisb" : : "r"(CPACR_FPEN));
	bh_irq_set_handler(BH_VIRQ_VTIMER, on_vtimer);
	bh_irq_enable();
	sysregs_set();
	if (!report)
		report = REPORT_ROUNDS;
	for (unsigned long i = 0; i < PATTERN_WORDS; i++)
		pattern[i] = word_of(0, i);
	for (unsigned long round = 0;; round++) {
		regs += be_spin(round * 0x0123456789abcdeful, SPIN_ITERS);
		mem += check_and_refill(round);
		sys += sysregs_bad();
		next += bh_ns_to_ticks(SLEEP_NS);
		if (next < bh_counter())
			next = bh_counter() + bh_ns_to_ticks(SLEEP_NS); /* the round overran: no catching up */
		unsigned long long late = sleep_until(next);
		if (late > late_max)
			late_max = late;
		if ((round + 1) % report == 0)
			bh_printf("BHCHECK rounds %lu regs_bad %lu mem_bad %lu sysregs_bad %lu early %lu "
				  "late_max_ns %llu\n", round + 1, regs, mem, sys, early,
				  late_max * 16);
	}
}
