/* Time keeping from the EL1 virtual counter, and sleeping on the EL1 virtual timer.
 *
 * The hypervisor sets CNTVOFF_EL2 = 0, so CNTVCT_EL0 is the system counter since power-on,
 * the same base as BH_HC_GET_TIME(BH_CLOCK_HW).
 */
#include "bulkhead/bulkhead.h"

#define NS_PER_S 1000000000ull

/* CNTV_CTL_EL0: ENABLE = bit 0, IMASK = bit 1 (left 0, so the timer raises BH_VIRQ_VTIMER,
 * which also ends BH_HC_IDLE). */
#define CNTV_CTL_ENABLE 1ul

/* Split at whole seconds so neither product can overflow 64 bits (freq < 2^34). */
static unsigned long long ticks_to_ns(unsigned long long t, unsigned long long f)
{
	return (t / f) * NS_PER_S + (t % f) * NS_PER_S / f;
}

/* Rounds up, so a sleep never ends before the requested time. */
static unsigned long long ns_to_ticks_ceil(unsigned long long ns, unsigned long long f)
{
	return (ns / NS_PER_S) * f + ((ns % NS_PER_S) * f + NS_PER_S - 1) / NS_PER_S;
}

unsigned long long bh_ticks_to_ns(unsigned long long ticks)
{
	return ticks_to_ns(ticks, bh_counter_freq());
}

unsigned long long bh_ns_to_ticks(unsigned long long ns)
{
	return ns_to_ticks_ceil(ns, bh_counter_freq());
}

unsigned long long bh_now_ns(void)
{
	return ticks_to_ns(bh_counter(), bh_counter_freq());
}

static void vtimer_arm(unsigned long long target)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\t"
			 "msr cntv_ctl_el0, %1\n\t"
			 "isb"
			 : : "r"(target), "r"(CNTV_CTL_ENABLE) : "memory");
}

/* IRQs stay masked while the deadline is checked and idle is entered, so the timer cannot
 * fire in between and be lost: idle returns at once for an interrupt already pending. After
 * idle returns, bh_irq_poll takes (and EOIs) what is pending, the timer included (its
 * default handler disables it); otherwise idle would keep returning at once. The timer is
 * re-armed on every round because a stale timer interrupt (from an earlier deadline) may
 * have been handled, and so the timer disabled, before this deadline. Idle may also return
 * for other interrupts, or fail (then this spins): the counter, not the hypercall, decides
 * when the sleep is over. Not for use inside interrupt handlers. */
static void sleep_until_ticks(unsigned long long target)
{
	if (bh_counter() >= target)
		return;

	unsigned long flags = bh_irq_save();

	while (bh_counter() < target) {
		vtimer_arm(target);
		bh_idle();
		bh_irq_poll();
	}
	/* Disable the timer so its condition does not stay pending after we return. */
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	bh_irq_restore(flags);
}

void bh_sleep_until_ns(unsigned long long deadline_ns)
{
	sleep_until_ticks(bh_ns_to_ticks(deadline_ns));
}

void bh_sleep_ns(unsigned long long ns)
{
	sleep_until_ticks(bh_counter() + bh_ns_to_ticks(ns));
}

void bh_sleep_ms(unsigned ms)
{
	bh_sleep_ns((unsigned long long)ms * 1000000ull);
}
