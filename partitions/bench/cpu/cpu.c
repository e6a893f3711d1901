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

#include "cpu_kernels.h"

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
