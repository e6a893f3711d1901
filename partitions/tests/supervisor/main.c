/* supervisor: a system partition that manages another partition and the cyclic plans.
 *
 * Expected configuration: this is a system partition; partition id 1 runs `counter`;
 * plans 0 ("normal") and 1 ("degraded") exist, each with a 1 ms major frame.
 */
#include "bhtest.h"

#define TARGET        1u
#define BAD_PARTITION 99u
#define STARTUP_MS    20u  /* lets the target run before the first check */
#define WINDOW_MS     20u  /* how long the target's execution time is watched */
#define SETTLE_MS     1u   /* lets a stop requested for another core take effect */
#define PLAN_NORMAL   0u
#define PLAN_DEGRADED 1u
#define PLAN_WAIT_MS  3u   /* more than two 1 ms major frames */
#define BAD_PLAN      9u
#define BAD_WHEN      5u

static volatile unsigned plan_switch_irqs;

static void on_plan_switch(unsigned intid)
{
	(void)intid;
	plan_switch_irqs = plan_switch_irqs + 1;
}

/* Pre-filled with values the hypervisor must overwrite. */
static long target_status(struct bh_partition_status *st)
{
	st->state = ~0u;
	st->restarts = ~0u;
	st->exec_ns = 0;
	return bh_partition_status(TARGET, st);
}

static unsigned long long target_exec_ns(void)
{
	struct bh_partition_status st;

	BH_EXPECT_EQ(target_status(&st), BH_OK);
	return st.exec_ns;
}

static void expect_target_state(unsigned state)
{
	struct bh_partition_status st;

	BH_EXPECT_EQ(target_status(&st), BH_OK);
	BH_EXPECT_EQ(st.state, state);
}

static unsigned current_plan(void)
{
	unsigned current = ~0u;

	BH_EXPECT_EQ(bh_plan_status(&current, 0, 0, 0), BH_OK);
	return current;
}

BH_TEST(target_running)
{
	struct bh_partition_status st;

	BH_EXPECT_EQ(target_status(&st), BH_OK);
	BH_EXPECT_EQ(st.state, BH_PARTITION_STATE_RUNNING);
	BH_EXPECT_EQ(st.restarts, 0);
	BH_EXPECT(st.exec_ns > 0);
}

BH_TEST(suspend_stops_target)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_SUSPEND, TARGET, 0), BH_OK);
	expect_target_state(BH_PARTITION_STATE_SUSPENDED);
	bh_sleep_ms(SETTLE_MS);
	unsigned long long before = target_exec_ns();

	bh_sleep_ms(WINDOW_MS);
	BH_EXPECT_EQ(target_exec_ns(), before);
}

BH_TEST(resume_runs_target)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_RESUME, TARGET, 0), BH_OK);
	expect_target_state(BH_PARTITION_STATE_RUNNING);
	unsigned long long before = target_exec_ns();

	bh_sleep_ms(WINDOW_MS);
	BH_EXPECT(target_exec_ns() > before);
}

BH_TEST(cold_restart_target)
{
	struct bh_partition_status st;

	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_RESTART, TARGET, BH_RESET_COLD), BH_OK);
	BH_EXPECT_EQ(target_status(&st), BH_OK);
	BH_EXPECT_EQ(st.restarts, 1);
	BH_EXPECT_EQ(st.state, BH_PARTITION_STATE_RUNNING);
}

BH_TEST(status_bad_partition)
{
	struct bh_partition_status st;

	BH_EXPECT_EQ(bh_partition_status(BAD_PARTITION, &st), BH_INVALID_PARAM);
}

BH_TEST(status_null_buffer)
{
	BH_EXPECT_EQ(bh_partition_status(TARGET, 0), BH_INVALID_PARAM);
}

BH_TEST(plan_initially_normal)
{
	BH_EXPECT_EQ(current_plan(), PLAN_NORMAL);
}

BH_TEST(plan_switch_at_frame_end)
{
	unsigned next = ~0u;

	BH_EXPECT_EQ(bh_plan_switch(PLAN_DEGRADED, BH_PLAN_AT_MAJOR_FRAME_END), BH_OK);
	BH_EXPECT_EQ(bh_plan_status(0, &next, 0, 0), BH_OK);
	BH_EXPECT_EQ(next, PLAN_DEGRADED);
	bh_sleep_ms(PLAN_WAIT_MS);
	BH_EXPECT_EQ(current_plan(), PLAN_DEGRADED);
}

BH_TEST(plan_switch_now)
{
	BH_EXPECT_EQ(bh_plan_switch(PLAN_NORMAL, BH_PLAN_NOW), BH_OK);
	BH_EXPECT_EQ(current_plan(), PLAN_NORMAL);
}

BH_TEST(plan_switch_bad_arguments)
{
	BH_EXPECT_EQ(bh_plan_switch(BAD_PLAN, BH_PLAN_AT_MAJOR_FRAME_END), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_plan_switch(PLAN_DEGRADED, BAD_WHEN), BH_INVALID_PARAM);
}

BH_TEST(halt_target)
{
	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_HALT, TARGET, 0), BH_OK);
	expect_target_state(BH_PARTITION_STATE_HALTED);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	/* Plan switches may be signalled to this partition; count them instead of letting
	 * the default handler call them unexpected. */
	bh_irq_set_handler(BH_VIRQ_PLAN_SWITCH, on_plan_switch);
	bh_sleep_ms(STARTUP_MS);
	bh_test_run_all();
	bh_printf("supervisor: %u plan switch interrupts\n", plan_switch_irqs);
	long rc = bh_halt_system();

	bh_printf("supervisor: halt_system failed: %ld\n", rc);
	bh_halt_self();
}
