/* timervictim: shares its core with vtimerhog and sethog (higher priorities, so they have run
 * first). It sleeps on its own virtual timer, a watchdog BH_HC_SET_TIMER catching a timer
 * that never fires, then spins and adds up the time it lost while nothing else is runnable
 * on its core: a halted partition's timer or an interrupt left active would show here. */
#include "bhtest.h"

#define SLEEPS        20u
#define SLEEP_NS      1000000ull
#define WATCHDOG_NS   5000000ull
#define SPIN_NS       20000000ull
#define GAP_TICKS     32u

static void ignore(unsigned intid) { (void)intid; }

/* The largest overshoot of SLEEPS sleeps on the virtual timer, in ns. */
static unsigned long long sleep_overshoot(void)
{
	unsigned long long worst = 0;

	for (unsigned i = 0; i < SLEEPS; i++) {
		unsigned long long target = bh_now_ns() + SLEEP_NS;
		bh_sleep_until_ns(target);
		unsigned long long late = bh_now_ns() - target;
		if (late > worst)
			worst = late;
	}
	return worst;
}

/* Time taken from this vCPU while it spins for SPIN_NS, in ticks. */
static unsigned long long stolen_ticks(void)
{
	unsigned long long end = bh_counter() + bh_ns_to_ticks(SPIN_NS), prev = bh_counter();
	unsigned long long lost = 0;

	for (unsigned long long now = prev; now < end; prev = now) {
		now = bh_counter();
		if (now - prev > GAP_TICKS)
			lost += now - prev;
	}
	return lost;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	char detail[96];

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_irq_set_handler(BH_VIRQ_TIMER, ignore);
	bh_set_timer(BH_CLOCK_HW, bh_now_ns() + WATCHDOG_NS, WATCHDOG_NS);
	unsigned long long late = sleep_overshoot();
	bh_set_timer(BH_CLOCK_HW, 0, 0);
	unsigned long long lost = stolen_ticks();
	bh_printf("BHSTAT sleep_overshoot_ns %llu\n", late);
	bh_printf("BHSTAT stolen_ticks %llu\n", lost);
	bh_snprintf(detail, sizeof(detail), "worst sleep %llu ns late", late);
	bh_test_report("timervictim_own_timer_fires", late < 50000, detail);
	bh_snprintf(detail, sizeof(detail), "%llu of %llu ticks lost", lost,
		    bh_ns_to_ticks(SPIN_NS));
	bh_test_report("timervictim_nothing_charged_to_it", lost < bh_ns_to_ticks(SPIN_NS) / 1000,
		       detail);
	bh_halt_self();
}
