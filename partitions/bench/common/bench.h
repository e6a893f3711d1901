/* Shared helpers of the benchmark programs in partitions/bench/.
 *
 * Everything is measured under QEMU `-icount shift=0`: one guest instruction advances the
 * virtual clock by 1 ns and the counter (CNTVCT_EL0, 62.5 MHz) ticks every 16 ns, so a
 * counter difference is a path length in instructions with a resolution of 16.
 * A stamp (BENCH_READ16 + bench_stamp_decode) removes that quantisation: from 16
 * back-to-back counter reads it recovers the exact instruction time of the first one.
 *
 * A program built from one of these directories runs either as a partition (backend
 * plat_part.c, linked into libbhbench.a) or, for irqlat and cpu, as a bare-metal EL1 program
 * without the hypervisor (backend partitions/bare/bare.c). Both use libbhpart's crt0,
 * vectors and interrupt dispatch, so only the hypervisor differs between the two.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include "bulkhead/bulkhead.h"

/* --- Platform backend ----------------------------------------------------------------- */

/* "partition" or "bare": the suffix of the figures the program prints. */
extern const char bench_platform[];

/* First call of every program: sets the platform up (bare: the GIC distributor and
 * redistributor) and checks the counter frequency; returns 0 or -1 after printing why. */
int bench_init(void);

/* Waits for an interrupt with IRQs in whatever state the caller left them: the idle
 * hypercall in a partition, `wfi` on bare metal. */
void bench_wait(void);

/* Ends the program after its output: a system partition halts the system, another halts
 * itself; a bare program parks its core (the runner kills QEMU on the DONE line). */
_Noreturn void bench_exit(void);

#define BENCH_STR_(x) #x
#define BENCH_STR(x) BENCH_STR_(x)   /* a macro's value as a string, for inline asm */

/* --- Counter ------------------------------------------------------------------------------ */

#define BENCH_NS_PER_TICK 16ull   /* 62.5 MHz; bench_check_counter() verifies it */

/* One counter read, no barrier: QEMU executes in order, and the isb would be one more
 * instruction on every measured path. */
static inline unsigned long long bench_cntvct(void)
{
	unsigned long long v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

/* Returns 0 if CNTFRQ_EL0 is the 62.5 MHz the stamp decoding assumes, else prints why not. */
int bench_check_counter(void);

/* Sixteen consecutive counter reads (one instruction each), the raw material of a stamp. */
#define BENCH_STAMP_READS 16
struct bench_reads {
	unsigned long long r[BENCH_STAMP_READS];
};

#define BENCH_READ16(s)                                                                    \
	__asm__ volatile("mrs %0, cntvct_el0\n\tmrs %1, cntvct_el0\n\t"                     \
			 "mrs %2, cntvct_el0\n\tmrs %3, cntvct_el0\n\t"                     \
			 "mrs %4, cntvct_el0\n\tmrs %5, cntvct_el0\n\t"                     \
			 "mrs %6, cntvct_el0\n\tmrs %7, cntvct_el0\n\t"                     \
			 "mrs %8, cntvct_el0\n\tmrs %9, cntvct_el0\n\t"                     \
			 "mrs %10, cntvct_el0\n\tmrs %11, cntvct_el0\n\t"                   \
			 "mrs %12, cntvct_el0\n\tmrs %13, cntvct_el0\n\t"                   \
			 "mrs %14, cntvct_el0\n\tmrs %15, cntvct_el0"                       \
			 : "=r"((s).r[0]), "=r"((s).r[1]), "=r"((s).r[2]), "=r"((s).r[3]),  \
			   "=r"((s).r[4]), "=r"((s).r[5]), "=r"((s).r[6]), "=r"((s).r[7]),  \
			   "=r"((s).r[8]), "=r"((s).r[9]), "=r"((s).r[10]), "=r"((s).r[11]), \
			   "=r"((s).r[12]), "=r"((s).r[13]), "=r"((s).r[14]),               \
			   "=r"((s).r[15])                                                  \
			 : : "memory")

/* The exact virtual time (ns = instructions) at which reads->r[0] was taken, counting that
 * read itself. Read i happens at T+i and returns floor((T+i)/16): the first read that
 * differs from r[0] sits exactly on a tick boundary; if none differs, T is one. */
static inline unsigned long long bench_stamp_decode(const struct bench_reads *s)
{
	for (unsigned i = 1; i < BENCH_STAMP_READS; i++)
		if (s->r[i] != s->r[0])
			return s->r[i] * BENCH_NS_PER_TICK - i;
	return s->r[0] * BENCH_NS_PER_TICK;
}

/* Timing a stretch of code: BENCH_READ16 before and after it, bench_stamp_decode both
 * afterwards (the decoding loop's length depends on the tick phase, so it must not run
 * inside the timed stretch); the difference is the exact number of instructions from the
 * first read to the first read. */

/* --- Output ------------------------------------------------------------------------------- */

/* `BENCH <name> <value> <unit>`, collected by bench/run.py. */
void bench_report(const char *name, unsigned long long value, const char *unit);

/* --- Hypercalls the library does not wrap in full ------------------------------------------ */

/* BH_HC_PLAN_STATUS: x4 is the start of the current major frame in ns on the BH_CLOCK_HW
 * time base (counter ticks x 16). Returns BH_OK or the error. */
long bench_plan_frame_start(unsigned long long *frame_start_ns);

/* The calling partition's id (0 if the call fails). */
unsigned bench_partition_id(void);

#endif
