/* sethog: arms a 10 us periodic BH_HC_SET_TIMER and halts. A halted partition's timers must go
 * with it, not fire for ever on whichever vCPU has the core. */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_set_timer(BH_CLOCK_HW, bh_now_ns() + 10000, 10000);
	bh_printf("sethog: periodic timer armed, halting\n");
	bh_halt_self();
}
