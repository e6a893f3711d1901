/* Benchmarks `timer_irq_latency_partition` / `timer_irq_latency_bare`: from the EL1 virtual
 * timer's deadline to the first instruction of its interrupt handler.
 *
 * The same objects run as a partition alone on a dedicated core (bench/irqlat.yaml) and
 * bare-metal at EL1 without the hypervisor (build/bare/irqlat.elf), both waiting in wfi; both take the interrupt through libbhpart's vector and bh_irq_dispatch.
 * Each round arms CNTV_CVAL_EL0 about 1 ms ahead, unmasks IRQs and waits; the handler
 * (handler.S) reads the counter as its first instruction. Latency = read - CVAL:
 *   tick:  (R - CVAL) * 16 ns, R that first counter value (a multiple of 16);
 *   exact: the instruction time of that read (a stamp) - CVAL * 16, counting the read itself.
 * Minimum over ROUNDS rounds (all rounds are identical under -icount). */
#include "bench.h"

#define ROUNDS      100u
#define AHEAD_TICKS 62500ull   /* 1 ms at 62.5 MHz */
#define CNTV_CTL_ENABLE 1ul

void irqlat_handler(unsigned intid);
volatile struct bench_reads irqlat_reads;
volatile unsigned irqlat_fired;

static void arm_vtimer(unsigned long long cval)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(cval), "r"(CNTV_CTL_ENABLE) : "memory");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long tick_min = ~0ull, tick_max = 0, exact_min = ~0ull, exact_max = 0;
	char name[64];

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (bench_init())
		bench_exit();
	bh_irq_set_handler(BH_VIRQ_VTIMER, irqlat_handler);
	for (unsigned i = 0; i < ROUNDS; i++) {
		unsigned long long cval = bench_cntvct() + AHEAD_TICKS;
		struct bench_reads s;

		irqlat_fired = 0;
		arm_vtimer(cval);
		bh_irq_enable();
		while (!irqlat_fired)
			bench_wait();
		bh_irq_disable();

		for (unsigned j = 0; j < BENCH_STAMP_READS; j++)
			s.r[j] = irqlat_reads.r[j];
		unsigned long long tick = (s.r[0] - cval) * BENCH_NS_PER_TICK;
		unsigned long long exact = bench_stamp_decode(&s) - cval * BENCH_NS_PER_TICK;
		tick_min = tick < tick_min ? tick : tick_min;
		tick_max = tick > tick_max ? tick : tick_max;
		exact_min = exact < exact_min ? exact : exact_min;
		exact_max = exact > exact_max ? exact : exact_max;
	}
	bh_printf("BENCH-INFO irqlat %s rounds %u tick %llu..%llu exact %llu..%llu\n",
		  bench_platform, ROUNDS, tick_min, tick_max, exact_min, exact_max);
	bh_snprintf(name, sizeof(name), "timer_irq_latency_%s", bench_platform);
	bench_report(name, tick_min, "ns");
	bh_snprintf(name, sizeof(name), "timer_irq_latency_%s_exact", bench_platform);
	bench_report(name, exact_min, "ns");
	bh_printf("BENCH-DONE\n");
	bench_exit();
}
