/* Exact instruction times under QEMU `-icount shift=0` from the 62.5 MHz counter, for every
 * benchmark program: partitions, bare-metal EL1 programs and Linux user space alike (no
 * dependencies). One guest instruction advances the virtual clock by 1 ns and the counter
 * ticks every 16 ns; a stamp (BENCH_READ16 + bench_stamp_decode) recovers from 16 back-to-back
 * counter reads the exact instruction time of the first one. */
#ifndef BENCH_STAMP_H
#define BENCH_STAMP_H

#define BENCH_NS_PER_TICK 16ull   /* 62.5 MHz; bench_check_counter() verifies it */

/* One counter read, no barrier: QEMU executes in order, and the isb would be one more
 * instruction on every measured path. */
static inline unsigned long long bench_cntvct(void)
{
	unsigned long long v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}


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

#endif
