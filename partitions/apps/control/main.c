/* control: a periodic control loop, the demo's critical partition.
 *
 * Every 100 ms it advances a simulated plant (a heater whose temperature follows the
 * setpoint as a first-order lag, time constant 1 s) in integer milli-degrees. The
 * setpoint alternates every 5 s. Once a second it prints the state and the largest
 * deviation of the measured period from 100 ms since the previous print: the jitter is
 * what another partition misbehaving must not disturb.
 */
#include "bulkhead/bulkhead.h"

#define PERIOD_NS        100000000ull  /* 100 ms */
#define PRINT_EVERY      10            /* cycles: once a second */
#define SETPOINT_EVERY   50            /* cycles: every 5 s */
#define SETPOINT_LOW_MC  40000         /* milli-degrees Celsius */
#define SETPOINT_HIGH_MC 60000
#define AMBIENT_MC       20000
#define LAG_DIVISOR      10            /* tau / period: first-order step = error / 10 */

struct plant {
	long setpoint_mc;
	long value_mc;
};

static void plant_step(struct plant *p, unsigned long cycle)
{
	if (cycle % SETPOINT_EVERY == 0)
		p->setpoint_mc = (cycle / SETPOINT_EVERY) % 2 ? SETPOINT_LOW_MC : SETPOINT_HIGH_MC;
	p->value_mc += (p->setpoint_mc - p->value_mc) / LAG_DIVISOR;
}

/* Prints a non-negative milli-unit value as <int>.<one decimal>. */
static void print_state(unsigned long cycle, const struct plant *p, unsigned long jitter_us)
{
	bh_printf("cycle %lu: setpoint %ld.%ld C, value %ld.%ld C, jitter max %lu us\n", cycle,
		  p->setpoint_mc / 1000, (p->setpoint_mc % 1000) / 100, p->value_mc / 1000,
		  (p->value_mc % 1000) / 100, jitter_us);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	struct plant p = { SETPOINT_HIGH_MC, AMBIENT_MC };
	unsigned long long deadline = bh_now_ns(), last_wake = 0;
	unsigned long jitter_max_ns = 0;

	bh_printf("control: started on vCPU %u (boot %u, restart #%u), period 100 ms\n", vcpu,
		  boot_kind, restarts);
	for (unsigned long cycle = 1;; cycle++) {
		/* Absolute deadlines: a late wake-up does not shift later periods. */
		deadline += PERIOD_NS;
		bh_sleep_until_ns(deadline);
		unsigned long long now = bh_now_ns();

		if (last_wake) {
			unsigned long long period = now - last_wake;
			unsigned long long dev = period > PERIOD_NS ? period - PERIOD_NS
								    : PERIOD_NS - period;
			if (dev > jitter_max_ns)
				jitter_max_ns = dev;
		}
		last_wake = now;
		plant_step(&p, cycle);
		if (cycle % PRINT_EVERY == 0) {
			print_state(cycle, &p, jitter_max_ns / 1000);
			jitter_max_ns = 0;
		}
	}
	return 0;
}
