/* rtprobe: a periodic real-time activation that never ends, for measuring what other
 * partitions do to it. The EL1 virtual timer fires every 1 ms (absolute deadlines, so errors
 * never accumulate); every 250 activations it prints the window's lateness range:
 *   rtprobe: window N lateness min A max B ns
 * A test reads the windows that fall into each phase of its neighbours' life. */
#include "bulkhead/bulkhead.h"

#define TICK_NS 1000000ll /* 1 ms */
#define WINDOW 250u
#define CNTV_CTL_ENABLE 1ul

static long long deadline;
static volatile long long late_min, late_max;
static volatile unsigned ticks;

static void vtimer_arm(long long at_ns)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_ns_to_ticks((unsigned long long)at_ns)),
			   "r"(CNTV_CTL_ENABLE) : "memory");
}

static void on_tick(unsigned intid)
{
	long long late = (long long)bh_now_ns() - deadline;

	(void)intid;
	if (ticks % WINDOW == 0 || late < late_min)
		late_min = late;
	if (ticks % WINDOW == 0 || late > late_max)
		late_max = late;
	ticks = ticks + 1;
	deadline += TICK_NS;
	vtimer_arm(deadline); /* moving the compare value drops the timer's level before EOI */
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned printed = 0;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_irq_set_handler(BH_VIRQ_VTIMER, on_tick);
	deadline = (long long)bh_now_ns() + TICK_NS;
	vtimer_arm(deadline);
	bh_irq_enable();
	for (;;) {
		bh_idle();
		if (ticks >= printed + WINDOW) {
			/* The handler starts the next window only at the next tick: read it now. */
			long long lo = late_min, hi = late_max;
			printed += WINDOW;
			bh_printf("rtprobe: window %u lateness min %lld max %lld ns\n",
				  printed / WINDOW, lo, hi);
		}
	}
}
