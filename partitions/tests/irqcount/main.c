/* irqcount: a system partition that counts how often the hypervisor injected INTID 78 (the disk
 * of tests/system/configs/board_irqrefire.yaml) on core 1, from that core's trace ring
 * (BH_TRACE_VIRQ events), for RUN_MS. Each is a physical interrupt taken on core 1: in a cyclic
 * plan, in whoever's slot it came. Prints "BHSTAT core1_injections N". */
#include "bhtest.h"

#define RUN_MS  1200ull
#define CORE    1u
#define INTID   78u

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	static struct bh_trace_event ev[32];
	unsigned long long injections = 0, end = bh_now_ns() + RUN_MS * 1000000ull;

	(void)vcpu, (void)boot_kind, (void)restarts;
	while (bh_now_ns() < end) {
		long n = bh_trace_read(CORE, ev, 32);
		for (long i = 0; i < n; i++)
			if (ev[i].type == BH_TRACE_VIRQ && ev[i].arg == INTID)
				injections++;
	}
	bh_printf("BHSTAT core1_injections %llu\n", injections);
	bh_test_report("irqcount_done", 1, "");
	bh_halt_self();
}
