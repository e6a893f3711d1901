/* counter: a steady, observable workload: prints "counter <n>" every 10 ms forever, on
 * absolute deadlines so a late wake-up does not shift the later ones. After a long stop
 * (suspended by a supervisor) it starts again from the current time instead of printing
 * the missed lines in a burst. */
#include "bhtest.h"

#define COUNTER_PERIOD_NS 10000000ull  /* 10 ms */

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long deadline = bh_now_ns();

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	for (unsigned long n = 1;; n++) {
		deadline += COUNTER_PERIOD_NS;
		unsigned long long now = bh_now_ns();

		if (now > deadline + COUNTER_PERIOD_NS)
			deadline = now;
		bh_sleep_until_ns(deadline);
		bh_printf("counter %lu\n", n);
	}
	return 0;
}
