/* bemanager: a system partition that suspends, resumes, restarts and halts a partition whose
 * vCPUs are all best-effort (bework, partition id 1) while they run on other cores, and checks
 * each step through BH_HC_PARTITION_STATUS (tests/system/test_best_effort.py). A stop reaches a
 * best-effort vCPU through the core that holds it, or the core that takes it next; either way
 * its execution time stops growing, and a restart starts it afresh. */
#include "bhtest.h"

#define TARGET 1u
#define STARTUP_MS 5u /* lets the target start its workers */
#define WINDOW_MS 2u  /* how long its execution time is watched */
#define SETTLE_MS 1u  /* lets the other cores serve a stop or a suspension */

static struct bh_partition_status status(void)
{
	struct bh_partition_status st = { .state = ~0u, .restarts = ~0u };

	BH_EXPECT_EQ(bh_partition_status(TARGET, &st), BH_OK);
	return st;
}

static int runs(void)
{
	unsigned long long before = status().exec_ns;

	bh_sleep_ms(WINDOW_MS);
	return status().exec_ns > before;
}

static int frozen(void)
{
	bh_sleep_ms(SETTLE_MS);
	unsigned long long before = status().exec_ns;

	bh_sleep_ms(WINDOW_MS);
	return status().exec_ns == before;
}

BH_TEST(best_effort_partition_runs)
{
	bh_sleep_ms(STARTUP_MS);
	BH_EXPECT_EQ(status().state, BH_PARTITION_STATE_RUNNING);
	BH_EXPECT_EQ(status().vcpu_count, 3);
	BH_EXPECT(runs());
}

BH_TEST(suspended_best_effort_vcpus_do_not_run)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_SUSPEND, TARGET, 0), BH_OK);
	BH_EXPECT_EQ(status().state, BH_PARTITION_STATE_SUSPENDED);
	BH_EXPECT(frozen());
}

BH_TEST(resumed_best_effort_vcpus_run_again)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_RESUME, TARGET, 0), BH_OK);
	BH_EXPECT_EQ(status().state, BH_PARTITION_STATE_RUNNING);
	BH_EXPECT(runs());
}

BH_TEST(restarted_best_effort_partition_starts_afresh)
{
	unsigned restarts = status().restarts;

	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_RESTART, TARGET, BH_RESET_COLD), BH_OK);
	bh_sleep_ms(STARTUP_MS);
	BH_EXPECT_EQ(status().restarts, restarts + 1);
	BH_EXPECT_EQ(status().state, BH_PARTITION_STATE_RUNNING);
	BH_EXPECT(runs());
}

BH_TEST(halted_best_effort_vcpus_stop)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_HALT, TARGET, 0), BH_OK);
	BH_EXPECT_EQ(status().state, BH_PARTITION_STATE_HALTED);
	BH_EXPECT(frozen());
}

/* A restart after the halt: the target then runs to its end and reports its own checks. */
BH_TEST(a_halted_best_effort_partition_restarts)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_RESTART, TARGET, BH_RESET_COLD), BH_OK);
	bh_sleep_ms(STARTUP_MS);
	BH_EXPECT_EQ(status().state, BH_PARTITION_STATE_RUNNING);
	BH_EXPECT(runs());
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_test_run_all();
	for (;;)
		bh_idle();
}
