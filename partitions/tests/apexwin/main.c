/* apexwin: ARINC 653's partition period starts at the partition's first window
 * (tests/system/configs/apex_window.yaml: windows at 300 us and 700 us of each 1 ms major frame,
 * 200 us and 100 us long; tests/system/test_apex.py). A periodic process of the partition period
 * checks, at each of its activations, that its release point lies 300 us into a major frame,
 * that it runs inside a window, and GET_PARTITION_STATUS's PERIOD and DURATION. */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE
#define ACTIVATIONS 20

static volatile unsigned aligned, inside, seen;

static SYSTEM_TIME_TYPE into_frame(SYSTEM_TIME_TYPE t, unsigned long long frame_start)
{
	return (SYSTEM_TIME_TYPE)((unsigned long long)t - frame_start) % (1 * MS);
}

static void periodic_body(void)
{
	RETURN_CODE_TYPE rc;
	PROCESS_ID_TYPE self;
	PROCESS_STATUS_TYPE st;
	unsigned long long frame_start;

	GET_MY_ID(&self, &rc);
	for (unsigned k = 0; k < ACTIVATIONS; k++) {
		SYSTEM_TIME_TYPE now = apexutil_now();

		GET_PROCESS_STATUS(self, &st, &rc);
		if (bh_plan_frame_start(&frame_start) >= 0) {
			SYSTEM_TIME_TYPE release = st.DEADLINE_TIME - st.ATTRIBUTES.TIME_CAPACITY;
			SYSTEM_TIME_TYPE at = into_frame(now, frame_start);
			aligned += into_frame(release, frame_start) == 300 * US;
			inside += (at >= 300 * US && at < 500 * US) || (at >= 700 * US && at < 800 * US);
		}
		seen++;
		PERIODIC_WAIT(&rc);
	}
	STOP_SELF();
}

static void checker_body(void)
{
	PARTITION_STATUS_TYPE ps;
	RETURN_CODE_TYPE rc;

	GET_PARTITION_STATUS(&ps, &rc);
	bh_test_report("apex_window_partition_status_period_and_duration",
		       rc == NO_ERROR && ps.PERIOD == 1 * MS && ps.DURATION == 300 * US,
		       "PERIOD or DURATION is not the description's (1 ms, 300 us of windows)");
	while (seen < ACTIVATIONS)
		apexutil_sleep(1 * MS);
	bh_test_report("apex_window_releases_at_the_first_window", aligned == ACTIVATIONS,
		       "a release point is not 300 us into its major frame");
	bh_test_report("apex_window_activations_run_in_the_windows", inside == ACTIVATIONS,
		       "an activation started outside the partition's windows");
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	START(apexutil_make("periodic", periodic_body, 20, 1 * MS, 1 * MS, 4096, SOFT), &rc);
	START(apexutil_make("checker", checker_body, 10, INF, INF, 4096, SOFT), &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
