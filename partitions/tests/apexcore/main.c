/* apexcore: processes bound to a core by the system description (tests/system/configs/
 * apex_core.yaml: `core` in apex.process_list; tests/system/test_apex.py). CREATE_PROCESS binds
 * each listed process to its declared core, INITIALIZE_PROCESS_CORE_AFFINITY may confirm that core
 * but not change it, and the process runs there. */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define MS 1000000ll
#define INF INFINITE_TIME_VALUE

static PROCESS_ID_TYPE worker;
static volatile PROCESSOR_CORE_ID_TYPE worker_ran_on = -1;
static RETURN_CODE_TYPE to_other, to_same;
static PROCESSOR_CORE_ID_TYPE created_on = -1; /* before any INITIALIZE_PROCESS_CORE_AFFINITY */

static void worker_body(void)
{
	RETURN_CODE_TYPE rc;
	PROCESSOR_CORE_ID_TYPE core;

	GET_MY_PROCESSOR_CORE_ID(&core, &rc);
	worker_ran_on = core;
	for (;;)
		PERIODIC_WAIT(&rc);
}

static void checker_body(void)
{
	RETURN_CODE_TYPE rc;

	bh_test_report("apex_core_create_binds_the_declared_core", created_on == 1,
		       "CREATE_PROCESS did not bind the worker to core 1, the description's");
	bh_test_report("apex_core_affinity_may_not_contradict_the_description",
		       to_other == INVALID_CONFIG && to_same == NO_ERROR,
		       "INITIALIZE_PROCESS_CORE_AFFINITY to another core was not INVALID_CONFIG");
	apexutil_sleep(3 * MS);
	bh_test_report("apex_core_the_process_runs_on_its_core", worker_ran_on == 1,
		       "the worker did not run on core 1");
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	PROCESS_STATUS_TYPE st;

	worker = apexutil_make("worker", worker_body, 20, 1 * MS, 1 * MS, 4096, SOFT);
	GET_PROCESS_STATUS(worker, &st, &rc);
	created_on = rc == NO_ERROR ? st.PROCESSOR_CORE_ID : -1;
	INITIALIZE_PROCESS_CORE_AFFINITY(worker, 0, &to_other);
	INITIALIZE_PROCESS_CORE_AFFINITY(worker, 1, &to_same);
	START(worker, &rc);
	START(apexutil_make("checker", checker_body, 10, INF, INF, 4096, SOFT), &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
