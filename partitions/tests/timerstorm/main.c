/* timerstorm: a neighbour with a periodic BH_HC_SET_TIMER timer at the shortest interval the
 * hypervisor accepts (10 us), on the wall clock, that then waits in BH_HC_IDLE
 * (tests/system/configs/timer_storm.yaml, tests/system/test_timerstorm.py). Its timer fires
 * in its own slot and in the victim's; in the victim's it can change nothing there (its vCPU
 * may not run before its next slot), so it must not interrupt the victim's slot. */
#include "bhtest.h"

#define INTERVAL_NS 10000ull

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	bh_set_timer(BH_CLOCK_HW, bh_now_ns() + INTERVAL_NS, INTERVAL_NS);
	bh_puts("timerstorm: armed");
	for (;;) {
		bh_idle();
		bh_irq_poll();
	}
}
