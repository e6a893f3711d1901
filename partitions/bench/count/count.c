/* Benchmark `perf_loss_<d>ms`: the share of a cyclic core lost to partition switches.
 *
 * Two copies of this image (partitions 0 = A and 1 = B) alternate on one cyclic core, A in
 * [0, d) and B in [d, 2d) of a 2d major frame (generated configs build/bench/perfloss_<d>ms
 * .yaml). Both take the frame start from BH_HC_PLAN_STATUS, sleep through most of frame 0
 * (idle time costs nothing under -icount), then count iterations of a 4-instruction loop
 * from the start of frame 1 to a common end `frames` major frames later, and print the
 * count. bench/run.py: loss = 1 - 4 * (count A + count B) / (end - start).
 * bench/run.py sets slot_ns and frames by patching bench_count_params in a copy of the
 * image (the hypervisor gives a partition no parameters). */
#include "bench.h"

#define PARAMS_MAGIC 0x424e4348504152ull      /* "BNCHPAR" */
#define LOOP_LEN 4                             /* add, mrs, cmp, b.lo */
#define MARGIN_NS 50000ull                     /* spin this long before the own slot ends */

struct bench_count_params {
	unsigned long long magic;
	unsigned long long slot_ns;    /* d */
	unsigned long long frames;     /* measured major frames */
};

__attribute__((used)) volatile struct bench_count_params bench_count_params = {
	PARAMS_MAGIC, 1000000ull, 100ull,
};

/* Iterations of the loop until the counter reaches end (ticks). */
static unsigned long long count_until(unsigned long long end)
{
	unsigned long long n = 0, t;

	__asm__ volatile("1:\n\t"
			 "add	%[n], %[n], #1\n\t"
			 "mrs	%[t], cntvct_el0\n\t"
			 "cmp	%[t], %[end]\n\t"
			 "b.lo	1b"
			 : [n] "+r"(n), [t] "=&r"(t)
			 : [end] "r"(end)
			 : "cc", "memory");
	return n;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned role = bench_partition_id();
	unsigned long long frame_start, slot = bench_count_params.slot_ns;
	unsigned long long frames = bench_count_params.frames, period = 2 * slot;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (bench_count_params.magic != PARAMS_MAGIC || bench_init() ||
	    bench_plan_frame_start(&frame_start) < 0 || role > 1) {
		bh_printf("BENCH-ERROR bad parameters, counter or plan status\n");
		bench_exit();
	}
	unsigned long long start = frame_start + period, end = start + frames * period;
	unsigned long long own_end = frame_start + (role + 1) * slot;
	unsigned long long margin = slot / 4 < MARGIN_NS ? slot / 4 : MARGIN_NS;

	bh_sleep_until_ns(own_end - margin);
	while (bench_cntvct() < start / BENCH_NS_PER_TICK)
		;
	unsigned long long n = count_until(end / BENCH_NS_PER_TICK);

	bh_printf("BENCH-COUNT %u %llu %llu %llu %u\n", role, n, start, end, LOOP_LEN);
	if (role)
		bh_printf("BENCH-DONE\n");
	bench_exit();
}
