/* execaim: a lower vCPU on a fixed-priority core that aims the deadline of its execution clock
 * (BH_HC_SET_TIMER, BH_CLOCK_EXEC) just before each due instant of latvictim (attacks.h: its
 * virtual timer's deadlines from ATTACK_T0), within the lead the core decides a wake-up with
 * (tests/system/test_crowd.py). It spins with interrupts masked otherwise: its own timer
 * interrupt is never taken. While it runs and nobody else does, its execution clock and the
 * counter advance together, so the deadline lands AIM_FIRST + 4 * (k % 24) ticks before due
 * instant k, within a few ticks. */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define AIM_FIRST   2ull
#define AIM_SETUP   2500ull /* the timer is set this long before the due instant: before its lead */

static void spin_until(unsigned long long t)
{
	while (bh_counter() < t)
		;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	unsigned long long first = ATTACK_T0 + VICTIM_SLOT_OFFSET, set = 0;

	for (unsigned long long k = 0; first + k * VICTIM_SLOT_PERIOD < ATTACK_END; k++) {
		unsigned long long due = first + k * VICTIM_SLOT_PERIOD, exec_ns;
		if (bh_counter() + AIM_SETUP > due)
			continue;
		spin_until(due - AIM_SETUP);
		unsigned long long t = bh_counter();
		if (bh_get_exec_time(&exec_ns) != BH_OK)
			break;
		unsigned long long before = due - (AIM_FIRST + 4 * (k % 24)) - t;
		if (bh_set_timer(BH_CLOCK_EXEC, exec_ns + bh_ticks_to_ns(before), 0) == BH_OK)
			set++;
		spin_until(due + 1);
	}
	bh_printf("execaim: %llu deadlines aimed\n", set);
	for (;;)
		bh_idle();
}
