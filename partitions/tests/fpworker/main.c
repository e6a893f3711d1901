/* fpworker: workload for fixed-priority scheduling of several vCPUs on one core. The
 * role follows the partition id (modulo 3):
 *   low:  spins forever without a hypercall (the background hog);
 *   mid:  every 3 ms (absolute deadlines) spins 300 us of wall-clock time;
 *   high: every 2 ms spins 100 us.
 * Mid and high print how late each wake-up was, so the log shows that the higher
 * priority preempts the lower ones; after ROUNDS activations they report and then sleep
 * forever, which keeps their vCPU (and its priority) in place. */
#include "bhtest.h"

#define ROLE_COUNT         3u
#define ROLE_LOW           0u
#define MID_PERIOD_NS      3000000ull  /* 3 ms */
#define MID_WORK_NS        300000ull   /* 300 us */
#define HIGH_PERIOD_NS     2000000ull  /* 2 ms */
#define HIGH_WORK_NS       100000ull   /* 100 us */
#define ROUNDS             20u
#define FOREVER_SLEEP_MS   1000u

struct role {
	const char *name;
	unsigned long long period_ns;
	unsigned long long work_ns;
};

static const struct role roles[ROLE_COUNT] = {
	{ "low", 0, 0 },
	{ "mid", MID_PERIOD_NS, MID_WORK_NS },
	{ "high", HIGH_PERIOD_NS, HIGH_WORK_NS },
};

static volatile unsigned long spin_count;

_Noreturn static void spin_forever(void)
{
	for (;;)
		spin_count++;
}

/* Wall clock: time stolen by a preempting vCPU counts as work done. */
static void spin_until(unsigned long long end_ns)
{
	while (bh_now_ns() < end_ns)
		spin_count++;
}

_Noreturn static void sleep_forever(void)
{
	for (;;)
		bh_sleep_ms(FOREVER_SLEEP_MS);
}

_Noreturn static void periodic(const struct role *r)
{
	unsigned long long deadline = bh_now_ns(), late_max = 0;
	char name[32];

	for (unsigned k = 0; k < ROUNDS; k++) {
		deadline += r->period_ns;
		bh_sleep_until_ns(deadline);
		/* The sleep never ends before the deadline, so this cannot underflow. */
		unsigned long long wake = bh_now_ns(), late = wake - deadline;

		spin_until(wake + r->work_ns);
		bh_printf("fp %s: woke late %llu\n", r->name, late);
		if (late > late_max)
			late_max = late;
	}
	bh_printf("BHSTAT fp_%s_late_max_ns %llu\n", r->name, late_max);
	bh_snprintf(name, sizeof(name), "fp_%s_ran", r->name);
	bh_test_report(name, 1, "");
	bh_test_summary();
	sleep_forever();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned part = bh_partition_id();

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	const struct role *r = &roles[part % ROLE_COUNT];

	bh_printf("fp %s: start\n", r->name);
	if (r == &roles[ROLE_LOW])
		spin_forever();
	periodic(r);
}
