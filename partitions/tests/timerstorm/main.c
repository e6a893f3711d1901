/* timerstorm: a neighbour with a periodic BH_HC_SET_TIMER timer at the shortest interval the
 * hypervisor accepts (10 us), on the wall clock (tests/system/configs/timer_storm*.yaml,
 * tests/system/test_timerstorm.py). Its timer fires in its own slot and in the victim's; in the
 * victim's its vCPU cannot run, so the expiry changes nothing there and must not interrupt it.
 *
 * With one vCPU, vCPU 0 arms the timer and spins (ready, never waiting: its interrupts stay
 * masked). With two, vCPU 0 starts vCPU 1 and waits for ever; vCPU 1 arms the timer and waits in
 * BH_HC_IDLE, so that each slot of the victim begins with it waiting for its timer. */
#include "bhtest.h"

#define INTERVAL_NS 10000ull

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	bh_set_timer(BH_CLOCK_HW, bh_now_ns() + INTERVAL_NS, INTERVAL_NS);
	bh_puts("timerstorm: armed, idling");
	for (;;) {
		bh_idle();
		bh_irq_poll();
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	if (bh_vcpu_start(1) == BH_OK)
		for (;;) /* alone on its core: BH_HC_HALT_SELF would halt the partition */
			bh_idle();
	bh_set_timer(BH_CLOCK_HW, bh_now_ns() + INTERVAL_NS, INTERVAL_NS);
	bh_puts("timerstorm: armed, spinning");
	for (;;)
		__asm__ volatile("" ::: "memory");
}
