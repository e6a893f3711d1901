/* The CPU kernels of the CPU benchmarks, shared by the bare-metal and partition runs
 * (partitions/bench/cpu) and the Linux runs (linux/bench/lbench.c), so all compare the same
 * code. Plain C with no library: the includer defines NQ_N, NQ_REPS, SUM_WORDS, SUM_REPS,
 * MM_N and MM_REPS first, then calls init_data() once and the kernel_*() functions.
 * Kernels: nqueens (solutions for N queens, bitmask backtracking), arraysum (an array of 32-bit
 * words summed repeatedly), matmul (an int matrix product, repeated). */
#ifndef BENCH_CPU_KERNELS_H
#define BENCH_CPU_KERNELS_H
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

#endif
