/* execaim: a lower vCPU on a fixed-priority core that aims an instant of its own just before
 * each due instant of latvictim (attacks.h: its virtual timer's deadlines from ATTACK_T0), within
 * the lead the core decides a wake-up with (tests/system/test_crowd.py): AIM_FIRST + 4 * (k % 24)
 * ticks before due instant k.
 * - By default, the deadline of its execution clock (BH_HC_SET_TIMER, BH_CLOCK_EXEC); it spins
 *   with interrupts masked meanwhile: its timer interrupt is never taken. While it runs and
 *   nobody else does, its execution clock and the counter advance together, so the deadline
 *   lands within a few ticks of its aim.
 * - With the test parameter `vtimer` (bh_test_param), a wake-up of its own: it waits
 *   (BH_HC_IDLE) for its virtual timer, set to the aim. */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define AIM_FIRST   2ull
#define AIM_SETUP   2500ull /* the timer is set this long before the due instant: before its lead */
#define CNTV_ENABLE 1ul

static void vtimer_at(unsigned long long cval, unsigned long ctl)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(cval), "r"(ctl) : "memory");
}

/* Sleeps on its virtual timer until `aim`: true if it was set. */
static int wake_at(unsigned long long aim)
{
	vtimer_at(aim, CNTV_ENABLE);
	while (bh_counter() < aim)
		bh_idle();
	vtimer_at(0, 0);
	return 1;
}

/* Sets its execution clock's deadline at `aim`, as the counter goes: true if it was set. */
static int exec_deadline_at(unsigned long long aim)
{
	unsigned long long t = bh_counter(), exec_ns;

	if (bh_get_exec_time(&exec_ns) != BH_OK)
		return 0;
	return bh_set_timer(BH_CLOCK_EXEC, exec_ns + bh_ticks_to_ns(aim - t), 0) == BH_OK;
}

static void spin_until(unsigned long long t)
{
	while (bh_counter() < t)
		;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	unsigned long long first = ATTACK_T0 + VICTIM_SLOT_OFFSET, set = 0;
	int vtimer = bh_test_param("vtimer") != 0;

	for (unsigned long long k = 0; first + k * VICTIM_SLOT_PERIOD < ATTACK_END; k++) {
		unsigned long long due = first + k * VICTIM_SLOT_PERIOD;
		if (bh_counter() + AIM_SETUP > due)
			continue;
		spin_until(due - AIM_SETUP);
		unsigned long long aim = due - (AIM_FIRST + 4 * (k % 24));
		set += vtimer ? wake_at(aim) : exec_deadline_at(aim);
		spin_until(due + 1);
	}
	bh_printf("execaim: %llu deadlines aimed\n", set);
	for (;;)
		bh_idle();
}
