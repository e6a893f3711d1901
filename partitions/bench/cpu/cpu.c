/* Benchmarks `cpu_<kernel>_{bare,partition}_ns`: CPU-bound kernels, timed with stamps.
 *
 * The same objects run as a partition alone on a dedicated core (bench/cpu.yaml) and as a
 * bare-metal EL1 program (build/bare/cpu.elf); bench/run.py compares the times and checks
 * that both print the same results (`BENCH-CHECK <kernel> <value>`).
 * Kernels: nqueens (solutions for N = 9, bitmask backtracking), arraysum (a 64 KiB array
 * of 32-bit words summed repeatedly), matmul (32 x 32 int matrix product, repeated).
 * Built -mgeneral-regs-only like everything else here, so no SIMD. */
#include "bench.h"

#define NQ_N        9u
#define NQ_REPS     20u
#define SUM_WORDS   16384u      /* 64 KiB */
#define SUM_REPS    64u
#define MM_N        32u
#define MM_REPS     20u

/* Read once per repetition, so the compiler cannot fold repetitions together. */
static volatile unsigned nq_size = NQ_N;

static unsigned sum_data[SUM_WORDS];
static int mm_a[MM_N][MM_N], mm_b[MM_N][MM_N], mm_c[MM_N][MM_N];

#define BARRIER() __asm__ volatile("" : : : "memory")

static unsigned nq_place(unsigned all, unsigned cols, unsigned left, unsigned right)
{
	unsigned n = 0, free = all & ~(cols | left | right);

	if (cols == all)
		return 1;
	while (free) {
		unsigned bit = free & -free;

		free -= bit;
		n += nq_place(all, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
	}
	return n;
}

static unsigned long long kernel_nqueens(void)
{
	unsigned long long total = 0;

	for (unsigned r = 0; r < NQ_REPS; r++)
		total += nq_place((1u << nq_size) - 1, 0, 0, 0);
	return total / NQ_REPS;
}

static unsigned long long kernel_arraysum(void)
{
	unsigned long long total = 0;

	for (unsigned r = 0; r < SUM_REPS; r++) {
		unsigned long long s = 0;

		BARRIER();
		for (unsigned i = 0; i < SUM_WORDS; i++)
			s += sum_data[i];
		total += s;
	}
	return total;
}

static unsigned long long kernel_matmul(void)
{
	unsigned long long check = 0;

	for (unsigned r = 0; r < MM_REPS; r++) {
		BARRIER();
		for (unsigned i = 0; i < MM_N; i++)
			for (unsigned j = 0; j < MM_N; j++) {
				int acc = 0;

				for (unsigned k = 0; k < MM_N; k++)
					acc += mm_a[i][k] * mm_b[k][j];
				mm_c[i][j] = acc;
			}
		BARRIER();
	}
	for (unsigned i = 0; i < MM_N; i++)
		for (unsigned j = 0; j < MM_N; j++)
			check = check * 31 + (unsigned)mm_c[i][j];
	return check;
}

static void init_data(void)
{
	unsigned x = 12345;

	for (unsigned i = 0; i < SUM_WORDS; i++) {
		x = x * 1103515245u + 12345u;
		sum_data[i] = x;
	}
	for (unsigned i = 0; i < MM_N; i++)
		for (unsigned j = 0; j < MM_N; j++) {
			x = x * 1103515245u + 12345u;
			mm_a[i][j] = (int)(x >> 16) % 201 - 100;
			x = x * 1103515245u + 12345u;
			mm_b[i][j] = (int)(x >> 16) % 201 - 100;
		}
}

static void run(const char *kernel, unsigned long long (*fn)(void))
{
	char name[64];
	struct bench_reads before, after;

	BENCH_READ16(before);
	unsigned long long result = fn();
	BENCH_READ16(after);

	bh_snprintf(name, sizeof(name), "cpu_%s_%s_ns", kernel, bench_platform);
	bench_report(name, bench_stamp_decode(&after) - bench_stamp_decode(&before), "ns");
	bh_printf("BENCH-CHECK %s %llu\n", kernel, result);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (bench_init())
		bench_exit();
	init_data();
	run("nqueens", kernel_nqueens);
	run("arraysum", kernel_arraysum);
	run("matmul", kernel_matmul);
	bh_printf("BENCH-DONE\n");
	bench_exit();
}
