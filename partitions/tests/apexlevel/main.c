/* apexlevel: errors the system description declares partition-level (apex.partition_errors in
 * tests/system/configs/apex_levels.yaml: application_error and numeric_error) go to Bulkhead's
 * health monitor although the partition has an error handler; an error of another code still
 * reaches the handler (tests/system/test_apex.py). The health monitor's counts come from
 * BH_HC_HM_STATUS (its console lines are rate-limited, the counts are not).
 */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define MS 1000000ll
#define INF INFINITE_TIME_VALUE

/* Bulkhead's health-monitor event numbers (configuration.md, health). */
enum { HM_PARTITION_ERROR = 3, HM_DEADLINE_MISS = 6 };

static volatile unsigned handled;
static volatile ERROR_CODE_TYPE last_code;
static volatile int numeric_survived;
static PROCESS_ID_TYPE checker, late, numeric;

static unsigned long long hm_count(unsigned event)
{
	struct bh_hm_status st;

	if (bh_hm_status(bh_partition_id(), &st) != BH_OK)
		return ~0ull;
	return st.counts[event];
}

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	for (GET_ERROR_STATUS(&e, &rc); rc == NO_ERROR; GET_ERROR_STATUS(&e, &rc)) {
		last_code = e.ERROR_CODE;
		handled++;
	}
	STOP_SELF();
}

static void late_body(void)
{
	SYSTEM_TIME_TYPE t0 = apexutil_now();

	while (apexutil_now() - t0 < 2 * MS) /* its capacity is 1 ms */
		;
}

static void numeric_body(void)
{
	APEX_NUMERIC_CHECK(0);
	numeric_survived = 1;
}

static void checker_body(void)
{
	RETURN_CODE_TYPE rc;
	unsigned long long errors = hm_count(HM_PARTITION_ERROR), misses = hm_count(HM_DEADLINE_MISS);

	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"lvl", 3, &rc);
	bh_test_report("apex_level_application_error_goes_to_the_health_monitor",
		       rc == NO_ERROR && hm_count(HM_PARTITION_ERROR) == errors + 1 && handled == 0,
		       "the declared partition-level application error reached the handler");
	START(numeric, &rc);
	apexutil_sleep(1 * MS);
	bh_test_report("apex_level_numeric_error_goes_to_the_health_monitor",
		       rc == NO_ERROR && hm_count(HM_PARTITION_ERROR) == errors + 2 && handled == 0 &&
			       !numeric_survived,
		       "the declared partition-level numeric error reached the handler");
	START(late, &rc);
	apexutil_sleep(3 * MS);
	bh_test_report("apex_level_an_undeclared_error_reaches_the_handler",
		       rc == NO_ERROR && handled == 1 && last_code == DEADLINE_MISSED &&
			       hm_count(HM_DEADLINE_MISS) == misses,
		       "the deadline miss, not declared partition-level, did not reach the handler");
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc);
}

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
			    SYSTEM_TIME_TYPE capacity)
{
	return apexutil_make(name, entry, prio, INF, capacity, 4096, SOFT);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	checker = make("checker", checker_body, 10, INF);
	late = make("late", late_body, 20, 1 * MS);
	numeric = make("numeric", numeric_body, 20, INF);
	CREATE_ERROR_HANDLER(error_handler, 4096, &rc);
	/* Without a handler every error is partition-level: the checks below would prove nothing. */
	bh_test_report("apex_level_the_partition_has_an_error_handler", rc == NO_ERROR && checker &&
		       late && numeric, "CREATE_ERROR_HANDLER or CREATE_PROCESS failed");
	START(checker, &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
