/* Scheduling policies on one core, driven by the fake counter (62.5 MHz: 62.5 ticks/us). */
#include "console.h"
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "main.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "unit.h"

#define US(n) ((uint64_t)(n) * 125 / 2)
#define T0 1000u
#define LEAD (percpu[0].sched.lead) /* the timer fires this long before a cyclic boundary:
				     * SLOT_LEAD_TICKS, more for 3 vCPUs (sched_set_lead) */

static const uint8_t image[16];
static const struct bh_segment_cfg seg = { .ipa = 0x40000000, .data = image, .file_size = 16,
					   .mem_size = 16 };
static const struct bh_area_cfg areas[3] = {
	{ .phys = 0x42000000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
	{ .phys = 0x42100000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
	{ .phys = 0x42200000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
};
static struct bh_vcpu_cfg vcpus[3];
static struct bh_partition_cfg parts[3];
static const struct bh_slot_cfg plan0[] = {
	{ .start_ns = 0, .duration_ns = 200000, .partition = 0 },
	{ .start_ns = 300000, .duration_ns = 300000, .partition = 1, .flags = BH_SLOT_NOTIFY },
	{ .start_ns = 600000, .duration_ns = 400000, .partition = 2 },
};
static const struct bh_slot_cfg plan1[] = {
	{ .start_ns = 0, .duration_ns = 1000000, .partition = 2 },
};
static struct bh_plan_cfg plans[2] = {
	{ .name = "normal", .major_frame_ns = 1000000 },
	{ .name = "solo", .major_frame_ns = 1000000 },
};
/* 4 KiB stage-2 pages: a root, a level-2 and a level-3 table per partition. */
static uint64_t stage2_pool[9][512] __attribute__((aligned(4096)));
static struct bh_system_cfg sys = {
	.magic = BH_CONFIG_MAGIC, .version = BH_CONFIG_VERSION, .name = "sched", .core_count = 1,
	.partition_count = 3, .partitions = parts, .plans = plans, .hyp_base = 0x40000000,
	.hyp_size = 0x2000000, .ram_base = 0x40000000, .ram_size = 0x40000000,
	.stage2_block_max = 0x1000, .stage2_pool_pages = 9, .stage2_pool = stage2_pool,
};

static void boot(enum bh_policy policy)
{
	static const char *const names[] = { "a", "b", "c" };
	for (unsigned i = 0; i < 3; i++)
		parts[i] = (struct bh_partition_cfg){
			.name = names[i], .id = i, .entry = 0x40000000, .area_count = 1,
			.segment_count = 1, .vcpu_count = 1, .areas = &areas[i], .segments = &seg,
			.vcpus = &vcpus[i],
		};
	sys.cores[0].policy = policy;
	sys.plan_count = policy == BH_POLICY_CYCLIC ? 2 : 0;
	plans[0].cores[0] = (struct bh_plan_core_cfg){ .slot_count = 3, .slots = plan0 };
	plans[1].cores[0] = (struct bh_plan_core_cfg){ .slot_count = 1, .slots = plan1 };
	partition_init_all(&sys);
	plan_init(&sys, T0);
}

static struct vcpu *vcpu_of(unsigned p) { return &partitions[p].vcpus[0]; }

/* Partitions a, b, c at priorities 1, 5 and 3 on one fixed-priority core. */
static void boot_fixed_priority_1_5_3(void)
{
	vcpus[0].priority = 1;
	vcpus[1].priority = 5;
	vcpus[2].priority = 3;
	boot(BH_POLICY_FIXED_PRIORITY);
}

/* Serve the starts still posted after the first decision, which served only the vCPU it picked
 * (the others' wait for their own time, or the core's spare time). */
static void start_every_vcpu(void)
{
	for (unsigned p = 0; p < 3; p++)
		vcpu_serve_requests(vcpu_of(p));
	percpu[0].exit_work = 0; /* as if served in the first decision */
}

/* Run the core's exit work at `now`; returns the vCPU it runs, or NULL if it idles. */
static struct vcpu *at(uint64_t now)
{
	fake.counter = now;
	exit_work_set(EXIT_RESCHED);
	FAKE_RUN(core_exit_work());
	return fake.exit == FAKE_IDLED ? NULL : percpu[0].vcpu;
}

/* at(now) for a decision that waits for the instant it stands for (a lead's), reading the counter
 * as the core does: fake.counter ends at or past that instant. */
static struct vcpu *at_waiting(uint64_t now)
{
	fake.counter_step = 1;
	struct vcpu *v = at(now);
	fake.counter_step = 0;
	return v;
}

TEST(cyclic_follows_the_slots_and_idles_between_them)
{
	boot(BH_POLICY_CYCLIC);
	EXPECT(at(T0) == vcpu_of(0));
	EXPECT_EQ(fake.timer, T0 + US(200) - LEAD);
	EXPECT(at(T0 + US(200)) == NULL);
	EXPECT_EQ(fake.timer, T0 + US(300) - LEAD);
	EXPECT(at(T0 + US(300)) == vcpu_of(1));
	EXPECT(vcpu_of(1)->virq.pending[0] & (1u << BH_VIRQ_SLOT_START));
	EXPECT(at(T0 + US(999)) == vcpu_of(2));
	EXPECT_EQ(fake.timer, T0 + US(1000) - LEAD);
	EXPECT(at(T0 + US(1000)) == vcpu_of(0)); /* next major frame */
	EXPECT(at(T0 + US(5000) + US(450)) == vcpu_of(1));
	EXPECT_EQ(fake.timer, T0 + US(5600) - LEAD);
}

TEST(cyclic_decides_early_and_starts_the_slot_on_its_boundary)
{
	boot(BH_POLICY_CYCLIC);
	EXPECT(at(T0) == vcpu_of(0));
	fake.counter_step = 1; /* the core waits for the boundary by reading the counter */
	EXPECT(at(T0 + US(200) - LEAD) == NULL);
	EXPECT(fake.counter >= T0 + US(200));
	EXPECT(at(T0 + US(300) - LEAD) == vcpu_of(1));
	EXPECT(fake.counter >= T0 + US(300));
	EXPECT(fake.counter <= T0 + US(300) + 1);
	EXPECT_EQ(fake.timer, T0 + US(600) - LEAD);
}

TEST(cyclic_slot_owner_idling_leaves_its_slot_empty)
{
	boot(BH_POLICY_CYCLIC);
	EXPECT(at(T0) == vcpu_of(0));
	vcpu_of(0)->state = VCPU_IDLE;
	EXPECT(at(T0 + US(50)) == NULL);
	EXPECT_EQ(fake.timer, T0 + US(200) - LEAD);
}

TEST(plan_switch_at_major_frame_end_and_at_once)
{
	uint32_t cur, next;
	uint64_t frames;
	boot(BH_POLICY_CYCLIC);
	EXPECT(at(T0 + US(100)) == vcpu_of(0));
	EXPECT_EQ(plan_request(1, BH_PLAN_AT_MAJOR_FRAME_END, T0 + US(100)), BH_OK);
	plan_status(T0 + US(150), &cur, &next, &frames);
	EXPECT_EQ(cur, 0);
	EXPECT_EQ(next, 1);
	EXPECT(at(T0 + US(650)) == vcpu_of(2));
	EXPECT_EQ(fake.timer, T0 + US(1000) - LEAD);
	EXPECT(at(T0 + US(1000)) == vcpu_of(2)); /* plan 1: c owns the whole frame */
	plan_status(T0 + US(1001), &cur, &next, &frames);
	EXPECT_EQ(cur, 1);
	EXPECT_EQ(frames, 1);
	EXPECT_EQ(plan_request(0, BH_PLAN_NOW, T0 + US(1500)), BH_OK);
	EXPECT(at(T0 + US(1500)) == vcpu_of(0)); /* a new frame starts at the switch */
	EXPECT_EQ(plan_request(5, BH_PLAN_NOW, T0), BH_INVALID_PARAM);
	EXPECT_EQ(plan_request(0, 9, T0), BH_INVALID_PARAM);
}

TEST(fixed_priority_runs_the_highest_ready_vcpu)
{
	boot_fixed_priority_1_5_3();
	EXPECT(at(10) == vcpu_of(1));
	EXPECT_EQ(fake.timer, UINT64_MAX); /* no tick */
	vcpu_of(1)->state = VCPU_IDLE;
	EXPECT(at(20) == vcpu_of(2));
	vcpu_of(2)->state = VCPU_SUSPENDED;
	EXPECT(at(30) == vcpu_of(0));
	virq_inject(vcpu_of(1), BH_VIRQ_TIMER, false); /* wakes the highest: it preempts */
	EXPECT(at(40) == vcpu_of(1));
	memset(vcpus, 0, sizeof(vcpus));
}

/* A vCPU made ready by a message hand-over is compared with the running vCPU alone; a second
 * change before the decision takes the full one. */
TEST(fixed_priority_decides_a_single_wake_up_by_one_comparison)
{
	struct percpu *c = &percpu[0];

	boot_fixed_priority_1_5_3();
	fake.vtimer_deadline = UINT64_MAX; /* idle vCPUs wait for their wake-up alone */
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	vcpu_of(1)->state = VCPU_IDLE;
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(10) == vcpu_of(0));
	fake.counter = 20;
	vcpu_of(2)->state = VCPU_READY;
	sched_vcpu_woken(vcpu_of(2));
	EXPECT_EQ(c->exit_work, EXIT_PREEMPT);
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(2)); /* 3 outranks 1 */
	EXPECT_EQ(c->exit_work, 0);
	vcpu_of(0)->state = VCPU_READY;
	sched_vcpu_woken(vcpu_of(0));
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(2)); /* 1 does not outrank 3 */
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(30) == vcpu_of(0));
	/* An interrupt that wakes an idle vCPU of this core is such a single change too. */
	virq_inject(vcpu_of(2), BH_VIRQ_TIMER, false);
	EXPECT_EQ(c->exit_work, EXIT_PREEMPT);
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(2));
	vcpu_of(2)->virq.pending[0] = 0;
	vcpu_of(2)->virq.count = 0;
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(35) == vcpu_of(0));
	/* b (5) then c (3) wake: the second change makes it a full decision, which finds b. */
	vcpu_of(1)->state = VCPU_READY;
	sched_vcpu_woken(vcpu_of(1));
	vcpu_of(2)->state = VCPU_READY;
	sched_vcpu_woken(vcpu_of(2));
	EXPECT(c->exit_work & EXIT_RESCHED);
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(1));
	fake.vtimer_deadline = 0;
	memset(vcpus, 0, sizeof(vcpus));
}

/* A start is served in its vCPU's own time: when its policy first gives it the core. */
TEST(a_start_waits_for_its_vcpus_own_time)
{
	boot_fixed_priority_1_5_3();
	EXPECT(at(5) == vcpu_of(1)); /* the highest: started, it runs */
	EXPECT_EQ(vcpu_of(0)->state, VCPU_HALTED);
	EXPECT_EQ(vcpu_of(2)->state, VCPU_HALTED);
	EXPECT_EQ(vcpu_public_state(vcpu_of(2)), VCPU_READY); /* a posted start cannot fail */
	vcpu_of(1)->state = VCPU_IDLE;
	EXPECT(at(10) == vcpu_of(2)); /* its time: started, it runs */
	EXPECT_EQ(vcpu_of(0)->state, VCPU_HALTED);
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(20) == vcpu_of(0));
}

/* A stop posted by another core for a vCPU that does not run: its core is kicked only when the
 * vCPU outranks the running one or the core has time to spare, and it is served then, never in
 * another vCPU's time (req_fp.yaml: stops served at a victim's wake-up made it late). */
TEST(a_stop_is_served_in_its_vcpus_own_time_or_spare_time_only)
{
	boot_fixed_priority_1_5_3();
	fake.vtimer_deadline = UINT64_MAX;
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	fake.core = 1;
	partition_halt(&partitions[2]); /* c (3), below b (5), which runs */
	fake.core = 0;
	EXPECT_EQ(fake.kicks[0], 0);
	EXPECT(at(10) == vcpu_of(1));
	EXPECT_EQ(vcpu_of(2)->arch.released, 0);
	vcpu_of(1)->state = VCPU_IDLE;
	EXPECT(at(20) == vcpu_of(0)); /* c's turn came first: its stop */
	EXPECT_EQ(vcpu_of(2)->arch.released, 1);
	EXPECT_EQ(vcpu_of(2)->state, VCPU_HALTED);
	fake.core = 1;
	partition_halt(&partitions[1]); /* b (5) outranks a (1), which runs */
	fake.core = 0;
	EXPECT_EQ(fake.kicks[0], 1);
	EXPECT(at(30) == vcpu_of(0));
	EXPECT_EQ(vcpu_of(1)->arch.released, 1);
	vcpu_of(0)->state = VCPU_IDLE;
	EXPECT(at(40) == NULL); /* nothing to run and no instant: time to spare */
	fake.core = 1;
	partition_halt(&partitions[0]);
	fake.core = 0;
	EXPECT_EQ(fake.kicks[0], 2);
	EXPECT(at(50) == NULL);
	EXPECT_EQ(vcpu_of(0)->arch.released, 1);
}

/* An interrupt for a vCPU of this core that stays as it is (ready but preempted, suspended)
 * asks for no decision: the core's choice cannot change. It reaches the vCPU once it runs. */
TEST(an_interrupt_for_a_preempted_vcpu_asks_for_no_decision)
{
	struct percpu *c = &percpu[0];

	boot_fixed_priority_1_5_3();
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	virq_inject(vcpu_of(0), BH_VIRQ_PORT, false); /* ready, below the running one */
	vcpu_of(2)->state = VCPU_SUSPENDED;
	virq_inject(vcpu_of(2), BH_VIRQ_PORT, false);
	EXPECT_EQ(c->exit_work, 0);
	EXPECT(virq_has_pending(vcpu_of(0)));
	vcpu_of(1)->state = VCPU_IDLE;
	EXPECT(at(10) == vcpu_of(0)); /* runs with its interrupt pending */
	EXPECT(virq_has_pending(vcpu_of(0)));
	memset(vcpus, 0, sizeof(vcpus));
}

/* Attack review 2: interrupts the notify() shortcut leaves alone are not lost. One for an idle
 * vCPU of this core that has it disabled asks for nothing; enabling it (a distributor write on
 * this core) wakes the vCPU by itself. One for a suspended vCPU asks for nothing; its resume
 * (a request from any core) takes the decision, which runs it with the interrupt pending. */
TEST(an_interrupt_held_back_while_disabled_or_suspended_wakes_its_vcpu_later)
{
	struct percpu *c = &percpu[0];

	boot_fixed_priority_1_5_3();
	fake.vtimer_deadline = UINT64_MAX;
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	vcpu_of(1)->state = VCPU_IDLE;
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(10) == vcpu_of(0));
	virq_enable(vcpu_of(2), BH_VIRQ_PORT, false);
	virq_inject(vcpu_of(2), BH_VIRQ_PORT, false);
	EXPECT_EQ(c->exit_work, 0);
	EXPECT_EQ(vcpu_of(2)->state, VCPU_IDLE);
	virq_enable(vcpu_of(2), BH_VIRQ_PORT, true);
	EXPECT_EQ(vcpu_of(2)->state, VCPU_READY);
	EXPECT(c->exit_work & (EXIT_PREEMPT | EXIT_RESCHED));
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(2));
	/* Suspended: idle again first, its interrupt taken. */
	virq_clear_pending(vcpu_of(2), BH_VIRQ_PORT);
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(20) == vcpu_of(0));
	EXPECT(vcpu_transition(vcpu_of(2), VCPU_IDLE, VCPU_SUSPENDED));
	EXPECT(at(25) == vcpu_of(0));
	virq_inject(vcpu_of(2), BH_VIRQ_PORT, false);
	EXPECT_EQ(c->exit_work, 0);
	EXPECT(vcpu_transition(vcpu_of(2), VCPU_SUSPENDED, VCPU_READY));
	EXPECT(c->exit_work & EXIT_RESCHED);
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(2));
	EXPECT(virq_has_pending(vcpu_of(2)));
	fake.vtimer_deadline = 0;
	memset(vcpus, 0, sizeof(vcpus));
}

/* The one comparison does not look at the running vCPU's state: suspended by another core
 * before its kick is taken, it is simply left, for the woken vCPU the full decision would
 * pick too; a wake-up that does not outrank it still takes the full decision. */
TEST(a_single_wake_up_leaves_a_running_vcpu_suspended_meanwhile)
{
	struct percpu *c = &percpu[0];

	boot_fixed_priority_1_5_3();
	fake.vtimer_deadline = UINT64_MAX;
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	vcpu_of(1)->state = VCPU_IDLE;
	vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(10) == vcpu_of(0));
	fake.counter = 20;
	vcpu_of(0)->state = VCPU_SUSPENDED;
	vcpu_of(2)->state = VCPU_READY;
	sched_vcpu_woken(vcpu_of(2));
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(2));
	vcpu_of(2)->state = VCPU_SUSPENDED;
	vcpu_of(0)->state = VCPU_READY;
	sched_vcpu_woken(vcpu_of(0));
	EXPECT_EQ(c->exit_work, EXIT_PREEMPT);
	FAKE_RUN(core_exit_work());
	EXPECT(c->vcpu == vcpu_of(0)); /* 1 does not outrank 3, which no longer runs */
	fake.vtimer_deadline = 0;
	memset(vcpus, 0, sizeof(vcpus));
}

/* --- A running vCPU that blocks (sched.c block_switch) ------------------------------------ */

static unsigned counter_reads;
static void count_counter_read(void) { counter_reads++; }

/* The running vCPU blocks at `now` (a receive wait, BH_HC_IDLE): returns what the core runs
 * then, or NULL if it idles; counter_reads tells the decision taken: the pick alone reads the
 * counter once, the full decision more (its decision time, its wait for it). */
static struct vcpu *block_at(uint64_t now)
{
	struct percpu *c = &percpu[0];
	struct vcpu *v = c->vcpu;

	fake.counter = now;
	v->state = VCPU_IDLE;
	sched_vcpu_block(v);
	EXPECT_EQ(c->exit_work, EXIT_BLOCKED); /* the one change: it blocked */
	counter_reads = 0;
	fake.counter_hook = count_counter_read;
	FAKE_RUN(core_exit_work());
	fake.counter_hook = NULL;
	return fake.exit == FAKE_IDLED ? NULL : c->vcpu;
}

/* When core 0 (fixed priority) decides for a wake-up at `t`: a lead ahead of it (sched.c led). */
static uint64_t led_0(uint64_t t)
{
	return t > percpu[0].sched.lead ? t - percpu[0].sched.lead : 0;
}

/* b (5) runs, a (1) and c (3) are ready, all started, decided in full at 10. */
static void fixed_priority_b_runs(void)
{
	boot_fixed_priority_1_5_3();
	fake.vtimer_deadline = UINT64_MAX;
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	EXPECT(at(10) == vcpu_of(1));
}

/* The only change since the last decision is the block: the highest ready vCPU runs, decided by
 * the pick alone; the blocked vCPU's virtual timer, now unloaded, is the core's next wake-up. */
TEST(fixed_priority_decides_a_block_by_the_pick_alone)
{
	fixed_priority_b_runs();
	vcpu_of(1)->arch.vtimer_set = 1;
	vcpu_of(1)->arch.vtimer_at = 500;
	EXPECT(block_at(20) == vcpu_of(2));
	EXPECT_EQ(counter_reads, 1);
	EXPECT_EQ(fake.timer, led_0(500));
	EXPECT_EQ(percpu[0].exit_work, 0);
	EXPECT(block_at(30) == vcpu_of(0)); /* 1: the only one ready */
	EXPECT_EQ(counter_reads, 1);
	EXPECT_EQ(fake.timer, led_0(500));
	EXPECT(at_waiting(led_0(500)) == vcpu_of(1)); /* its timer: decided a lead ahead, it preempts */
	EXPECT(fake.counter >= 500);           /* at its wake-up */
	memset(vcpus, 0, sizeof(vcpus));
}

/* The pick has a request posted (a stop from another core, left for its own time by a full
 * decision since): its own time begins, the full decision serves it first. */
TEST(a_block_whose_pick_has_a_request_takes_the_full_decision)
{
	fixed_priority_b_runs();
	fake.core = 1;
	partition_halt(&partitions[2]); /* c (3), below b: no kick */
	fake.core = 0;
	EXPECT(at(15) == vcpu_of(1)); /* a full decision: c's stop waits for c's time */
	EXPECT(vcpu_of(2)->request);
	EXPECT(block_at(20) == vcpu_of(0));
	EXPECT_EQ(vcpu_of(2)->state, VCPU_HALTED);
	EXPECT_EQ(vcpu_of(2)->arch.released, 1);
	memset(vcpus, 0, sizeof(vcpus));
}

/* Another core resumed c, whose deadline passed while it was suspended (the last full pass over
 * the core's timers did not count it), and the core took its requests flag down since: the
 * full decision, whose pass after the switch serves c's deadline. */
TEST(a_block_after_a_change_the_timers_were_not_counted_for_takes_the_full_decision)
{
	fixed_priority_b_runs();
	vcpu_of(2)->state = VCPU_SUSPENDED;
	vcpu_of(2)->timer_deadline = 15;
	EXPECT(at(12) == vcpu_of(1)); /* c's deadline not counted: suspended */
	fake.core = 1;
	EXPECT(vcpu_transition(vcpu_of(2), VCPU_SUSPENDED, VCPU_READY)); /* no kick: below b */
	fake.core = 0;
	EXPECT_EQ(fake.kicks[0], 0);
	core_process_requests(); /* b's next exit takes the flag down */
	EXPECT(block_at(20) == vcpu_of(2));
	EXPECT(vcpu_of(2)->virq.pending[0] & (1u << BH_VIRQ_TIMER));
	EXPECT_EQ(vcpu_of(2)->timer_deadline, TIME_NEVER);
	memset(vcpus, 0, sizeof(vcpus));
}

/* A wake-up is due (c's virtual timer, c idle): the full decision wakes c, which outranks a. */
TEST(a_block_with_a_wake_up_due_takes_the_full_decision)
{
	fixed_priority_b_runs();
	vcpu_of(2)->state = VCPU_IDLE;
	vcpu_of(2)->arch.vtimer_set = 1;
	vcpu_of(2)->arch.vtimer_at = 18;
	EXPECT(at(15) == vcpu_of(1));
	EXPECT_EQ(fake.timer, led_0(18));
	EXPECT(block_at(20) == vcpu_of(2)); /* the timer's event is not taken yet */
	EXPECT(counter_reads > 1);
	memset(vcpus, 0, sizeof(vcpus));
}

/* A deadline of a waiting vCPU is due (a ready one's is no instant of the core's): the full
 * decision serves it (its timer interrupt, which wakes it) and counts the core's next wake-up
 * afresh, without it: the core's timer is not left at the instant gone by. */
TEST(a_block_with_a_deadline_due_counts_the_wake_ups_afresh)
{
	fixed_priority_b_runs();
	vcpu_of(0)->state = VCPU_IDLE;
	vcpu_of(0)->timer_deadline = 18;
	EXPECT(at(15) == vcpu_of(1));
	EXPECT_EQ(fake.timer, led_0(18));
	EXPECT(block_at(20) == vcpu_of(2));
	EXPECT(vcpu_of(0)->virq.pending[0] & (1u << BH_VIRQ_TIMER));
	EXPECT_EQ(fake.timer, UINT64_MAX);
	memset(vcpus, 0, sizeof(vcpus));
}

/* Nothing else is ready: the full decision, which idles the core with its spare time published
 * (for the requests of vCPUs that do not run). */
TEST(a_block_leaving_nothing_to_run_takes_the_full_decision)
{
	fixed_priority_b_runs();
	vcpu_of(0)->state = vcpu_of(2)->state = VCPU_IDLE;
	EXPECT(at(15) == vcpu_of(1));
	EXPECT(block_at(20) == NULL);
	EXPECT(percpu[0].vcpu == NULL);
	EXPECT(percpu[0].sched.be_until != 0);
	memset(vcpus, 0, sizeof(vcpus));
}

/* A deadline of the pick's execution clock starts with the switch: the full decision, which
 * arms the core's timer for it. */
TEST(a_block_whose_pick_has_an_execution_clock_deadline_takes_the_full_decision)
{
	fixed_priority_b_runs();
	vcpu_of(2)->timer_clock = BH_CLOCK_EXEC;
	vcpu_of(2)->timer_deadline = vcpu_of(2)->exec_ticks + 100;
	EXPECT(at(15) == vcpu_of(1));
	EXPECT(block_at(20) == vcpu_of(2));
	EXPECT_EQ(fake.timer, 20 + 100);
	memset(vcpus, 0, sizeof(vcpus));
}

/* The pick was ready, preempted, with a BH_HC_SET_TIMER deadline of the wall clock: no instant of
 * the core's while it did not run (sched.c service_set_timer), so the last full pass did not
 * count it. Switched in by the block, it runs now: the core's timer must be armed for it, as
 * the full decision's pass after the switch arms it, or its timer interrupt waits for whatever
 * event comes next (none, here: b waits for ever). */
TEST(a_block_whose_pick_has_a_wall_clock_deadline_arms_the_timer_for_it)
{
	fixed_priority_b_runs();
	vcpu_of(2)->timer_deadline = 100;
	EXPECT(at(15) == vcpu_of(1)); /* c's deadline not counted: ready, not run */
	EXPECT_EQ(fake.timer, UINT64_MAX);
	EXPECT(block_at(20) == vcpu_of(2));
	EXPECT_EQ(fake.timer, led_0(100));
	EXPECT(at(100) == vcpu_of(2));
	EXPECT(vcpu_of(2)->virq.pending[0] & (1u << BH_VIRQ_TIMER));
	memset(vcpus, 0, sizeof(vcpus));
}

/* The same deadline already due at the block: the full decision, whose pass after the switch
 * serves it (c's timer interrupt pending at its switch-in). */
TEST(a_block_whose_pick_has_a_wall_clock_deadline_due_takes_the_full_decision)
{
	fixed_priority_b_runs();
	vcpu_of(2)->timer_deadline = 18;
	EXPECT(at(15) == vcpu_of(1));
	EXPECT(block_at(20) == vcpu_of(2));
	EXPECT(counter_reads > 1);
	EXPECT(vcpu_of(2)->virq.pending[0] & (1u << BH_VIRQ_TIMER));
	EXPECT_EQ(vcpu_of(2)->timer_deadline, TIME_NEVER);
	memset(vcpus, 0, sizeof(vcpus));
}

/* The blocked vCPU's own virtual timer is due by the time it is unloaded: the pass after the
 * switch wakes it, and the full decision gives it the core back. */
TEST(a_blocked_vcpu_woken_by_the_switch_gets_the_core_back)
{
	fixed_priority_b_runs();
	vcpu_of(1)->arch.vtimer_set = 1;
	vcpu_of(1)->arch.vtimer_at = 20;
	EXPECT(block_at(20) == vcpu_of(1));
	EXPECT_EQ(vcpu_of(1)->state, VCPU_READY);
	memset(vcpus, 0, sizeof(vcpus));
}

/* Another core posts a stop to the pick during the switch, seeing the blocked vCPU still there
 * (no kick: the pick is below it): after the switch's barrier the core sees the flag, and the
 * full decision serves the stop in the pick's own time, which has begun. */
static void halt_c_from_core_1(void)
{
	fake.switch_hook = NULL;
	fake.core = 1;
	partition_halt(&partitions[2]);
	fake.core = 0;
}

TEST(a_request_posted_during_the_switch_of_a_block_is_served_at_once)
{
	fixed_priority_b_runs();
	fake.switch_hook = halt_c_from_core_1;
	EXPECT(block_at(20) == vcpu_of(0));
	EXPECT_EQ(fake.kicks[0], 0);
	EXPECT_EQ(vcpu_of(2)->state, VCPU_HALTED);
	EXPECT_EQ(vcpu_of(2)->arch.released, 1);
	memset(vcpus, 0, sizeof(vcpus));
}

/* On a cyclic core the slot owner that blocks within the lead before the next slot: the
 * decision stands for the boundary, where the next slot's owner runs, with the core's timer
 * armed for that slot's end (the lead before it), as the full decision arms it. */
TEST(a_slot_owner_that_blocks_in_the_lead_hands_over_at_the_boundary)
{
	boot(BH_POLICY_CYCLIC);
	EXPECT(at(T0) == vcpu_of(0));
	start_every_vcpu();
	EXPECT(at(T0 + US(600)) == vcpu_of(2));
	EXPECT_EQ(fake.timer, T0 + US(1000) - LEAD);
	fake.counter_step = 1; /* the core waits for the boundary by reading the counter */
	EXPECT(block_at(T0 + US(1000) - LEAD + 1) == vcpu_of(0)); /* the next frame's slot 0 */
	EXPECT_EQ(fake.timer, T0 + US(1200) - LEAD);
}

/* On a cyclic core the slot owner that blocks leaves its slot empty: no other vCPU runs
 * outside its own slot, ready or not. */
TEST(a_slot_owner_that_blocks_leaves_its_slot_empty)
{
	boot(BH_POLICY_CYCLIC);
	EXPECT(at(T0) == vcpu_of(0));
	start_every_vcpu();
	EXPECT(at(T0 + US(10)) == vcpu_of(0));
	EXPECT(block_at(T0 + US(50)) == NULL);
	EXPECT_EQ(fake.timer, T0 + US(200) - LEAD);
}

/* Core 0 of fixed priority with every vCPU idle and nothing posted (not the boot's starts), the
 * counter at 10, the UART empty and the writer's own drains emitting nothing (its timer due at
 * once); line: 100 x's and a newline. */
static void idle_core_and_a_line(char line[101])
{
	vcpus[0].priority = 1;
	boot(BH_POLICY_FIXED_PRIORITY);
	fake.counter_step = 0;
	for (unsigned i = 0; i < 3; i++) {
		vcpu_of(i)->state = VCPU_IDLE;
		vcpu_of(i)->request = 0;
	}
	memset(line, 'x', 100);
	line[100] = '\n';
	fake.counter = 10;
	fake.uart_len = 0;
	percpu[0].sched.timer_at = fake.counter + 1;
}

/* Output left queued when its writers have gone quiet goes out all the same: a core with
 * nothing loaded and no instant of its own (a console helper) drains again and again, its timer
 * armed for the console, until nothing is left; then its timer is off again. */
TEST(an_idle_core_with_time_to_spare_drains_the_console_until_all_is_out)
{
	char line[101];
	idle_core_and_a_line(line);
	for (int i = 0; i < 8; i++)
		console_guest_write(vcpu_of(0), line, sizeof(line));
	EXPECT_EQ(fake.uart_len, 0);
	EXPECT(at(20) == NULL);
	EXPECT(percpu[0].sched.console_helper);
	unsigned passes = 0;
	for (; fake.timer != TIME_NEVER && passes < 20; passes++) {
		EXPECT_EQ(fake.timer, fake.counter + ns_to_ticks(CONSOLE_RETRY_NS));
		sched_timer_event();
		EXPECT(at(fake.timer) == NULL);
	}
	EXPECT_EQ(fake.timer, TIME_NEVER);
	EXPECT(passes > 1); /* a drain moves a chunk at most */
	fake.uart[fake.uart_len] = 0;
	unsigned lines = 0;
	for (const char *p = strstr(fake.uart, "[a] xxx"); p; p = strstr(p + 1, "[a] xxx"))
		lines++;
	EXPECT_EQ(lines, 8);
	/* All out, it sleeps marked asleep; a write of a vCPU on a dedicated core (which may wait
	 * in hardware next, unseen) whose drain leaves its line queued (no time before that core's
	 * next event) wakes it, once. */
	EXPECT(percpu[0].sched.console_asleep);
	fake.core = 1;
	percpu[1].sched.policy = BH_POLICY_DEDICATED;
	percpu[1].vcpu = vcpu_of(1);
	percpu[1].sched.timer_at = fake.counter + 1;
	console_guest_write(vcpu_of(1), line, sizeof(line));
	console_guest_write(vcpu_of(1), line, sizeof(line));
	EXPECT_EQ(fake.kicks[0], 1);
	EXPECT(!percpu[0].sched.console_asleep);
	percpu[1].vcpu = NULL;
	fake.core = 0;
	EXPECT(at(fake.counter + 1) == NULL); /* the kick */
	EXPECT_EQ(fake.timer, fake.counter + ns_to_ticks(CONSOLE_RETRY_NS)); /* one line a drain */
	console_flush_all();
	memset(vcpus, 0, sizeof(vcpus));
}

/* A console helper keeps its drains off another core's led instant: while core 1 (cyclic) leads a
 * slot start within a chunk's wire time, decides, or is about to enter its vCPU, the helper
 * emits nothing and looks again just after that instant; then it drains. */
TEST(a_console_helper_keeps_its_drains_off_another_cores_led_instant)
{
	char line[101];
	idle_core_and_a_line(line);
	console_guest_write(vcpu_of(0), line, sizeof(line));
	struct sched_core *other = &percpu[1].sched;
	other->policy = BH_POLICY_CYCLIC;
	other->lead = 450;
	uint64_t instant = US(30) + other->lead;
	other->timer_at = US(30); /* its lead, within a chunk's wire time (768 ticks) */
	other->entering_at = 0;
	EXPECT(at(US(25)) == NULL);
	EXPECT(percpu[0].sched.console_helper);
	EXPECT_EQ(fake.uart_len, 0);
	EXPECT(fake.timer > instant && fake.timer <= instant + US(2));
	other->timer_at = 0; /* it fired: the core decides */
	EXPECT(at(US(30) + 100) == NULL);
	EXPECT_EQ(fake.uart_len, 0);
	other->timer_at = US(1000); /* its next lead, far; it waits for the instant */
	other->entering_at = instant;
	EXPECT(at(instant - 10) == NULL);
	EXPECT_EQ(fake.uart_len, 0);
	EXPECT(fake.timer > instant && fake.timer <= instant + US(2));
	for (unsigned passes = 0; fake.timer != TIME_NEVER && passes < 4; passes++) {
		sched_timer_event(); /* past it: out (a pass that finds the writers quiet drains) */
		EXPECT(at(fake.timer) == NULL);
	}
	EXPECT_EQ(fake.timer, TIME_NEVER);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strstr(fake.uart, "[a] xxx") != NULL);
	/* Instants closer together than a lead, a chunk and an entry would hold the output for ever:
	 * looks kept off them for CONSOLE_RETRY_NS drain all the same. */
	percpu[0].sched.timer_at = fake.counter + 1; /* the writer's own drain emits nothing */
	console_guest_write(vcpu_of(0), line, sizeof(line));
	unsigned before = fake.uart_len, passes = 0;
	uint64_t look = fake.counter + 1;
	other->timer_at = 0; /* deciding at every look */
	for (; passes < 20; passes++) {
		EXPECT(at(look) == NULL);
		if (fake.uart_len > before)
			break;
		EXPECT(fake.timer != TIME_NEVER); /* it looks again */
		look = fake.timer;
		sched_timer_event();
	}
	EXPECT(fake.uart_len > before);
	EXPECT(passes > 2 && fake.counter - instant >= ns_to_ticks(CONSOLE_RETRY_NS));
	other->policy = BH_POLICY_DEDICATED;
	console_flush_all();
	memset(vcpus, 0, sizeof(vcpus));
}

/* A dedicated core's vCPU waiting in place with output queued wakes a console helper rather than
 * drain on its own core (the drain would delay its wake-up); with no helper, it drains itself
 * and arms its timer for what is left. */
TEST(a_dedicated_core_whose_vcpu_waits_in_place_wakes_a_console_helper)
{
	char line[101];
	boot(BH_POLICY_DEDICATED);
	fake.counter_step = 0;
	EXPECT(at(10) == vcpu_of(0));
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	fake.uart_len = 0;
	percpu[0].sched.timer_at = fake.counter + 1; /* the writer's own drains emit nothing */
	for (int i = 0; i < 8; i++)
		console_guest_write(vcpu_of(0), line, sizeof(line));
	percpu[0].sched.timer_at = TIME_NEVER;
	/* Core 1 idles with time to spare, asleep: it is woken; then awake: it is left alone. */
	percpu[1].sched.console_helper = percpu[1].sched.console_asleep = true;
	for (unsigned kicks = 1; kicks <= 2; kicks++) {
		vcpu_of(0)->state = VCPU_READY;
		FAKE_RUN(sched_vcpu_idle(vcpu_of(0)));
		EXPECT_EQ(fake.exit, FAKE_IDLED);
		EXPECT_EQ(fake.kicks[1], 1);
		EXPECT(!percpu[1].sched.console_asleep);
		EXPECT_EQ(fake.uart_len, 0);
		EXPECT_EQ(fake.timer, TIME_NEVER);
	}
	percpu[1].sched.console_helper = false; /* none */
	vcpu_of(0)->state = VCPU_READY;
	FAKE_RUN(sched_vcpu_idle(vcpu_of(0)));
	EXPECT_EQ(fake.exit, FAKE_IDLED);
	EXPECT_EQ(fake.kicks[1], 1);
	EXPECT(fake.uart_len > 0);
	EXPECT_EQ(fake.timer, fake.counter + ns_to_ticks(CONSOLE_RETRY_NS));
	/* Its timer brings its vCPU out of the wait, and the decision drains for it, again and
	 * again while anything is left; then its timer is off. */
	unsigned passes = 0;
	for (; fake.timer != TIME_NEVER && passes < 20; passes++) {
		sched_timer_event();
		vcpu_of(0)->state = VCPU_READY; /* the timer's interrupt ends its wait */
		EXPECT(at(fake.timer) == vcpu_of(0));
	}
	EXPECT_EQ(fake.timer, TIME_NEVER);
	EXPECT(passes > 1);
	fake.uart[fake.uart_len] = 0;
	unsigned lines = 0;
	for (const char *p = strstr(fake.uart, "[a] xxx"); p; p = strstr(p + 1, "[a] xxx"))
		lines++;
	EXPECT_EQ(lines, 8);
	/* A write of its running vCPU whose drain leaves output arms its timer the same way (the
	 * vCPU may wait in hardware after it, unseen). */
	char two[2 * sizeof(line)]; /* its drain emits one of its lines: the other does not fit */
	memcpy(two, line, sizeof(line));
	memcpy(two + sizeof(line), line, sizeof(line));
	console_guest_write(vcpu_of(0), two, sizeof(two));
	EXPECT_EQ(fake.timer, fake.counter + ns_to_ticks(CONSOLE_RETRY_NS));
	EXPECT(percpu[0].sched.console_retry);
	console_flush_all();
}

TEST(edf_runs_earliest_deadline_and_enforces_budgets)
{
	vcpus[0] = (struct bh_vcpu_cfg){ .period_ns = 10000000, .budget_ns = 2000000,
					 .deadline_ns = 10000000 };
	vcpus[1] = (struct bh_vcpu_cfg){ .period_ns = 5000000, .budget_ns = 1000000,
					 .deadline_ns = 5000000 };
	boot(BH_POLICY_EDF);
	vcpu_of(2)->state = VCPU_HALTED;
	EXPECT(at(0) == vcpu_of(1));                /* deadline 5 ms before 10 ms */
	EXPECT_EQ(fake.timer, US(1000));            /* its budget ends */
	EXPECT(at(US(1000)) == vcpu_of(0));         /* b used it all up: an overrun */
	EXPECT_EQ(partitions[1].hm_events, 1);
	console_flush_all();
	fake.uart[fake.uart_len] = 0;
	/* Its line is not formatted in the decision, which is a's time: b prints it itself. */
	EXPECT(strstr(fake.uart, "budget_overrun") == NULL);
	EXPECT_EQ(fake.timer, US(3000));
	EXPECT(at(US(3000)) == NULL);               /* both out of budget until b's release */
	EXPECT_EQ(fake.timer, US(5000) - LEAD);     /* the idle core leads it (sched.c edf_idle) */
	EXPECT(at_waiting(US(5000) - LEAD) == vcpu_of(1)); /* released again, entered at 5000 */
	EXPECT(fake.counter >= US(5000));
	EXPECT_EQ(vcpu_of(1)->abs_deadline, US(10000));
	console_flush_all();
	fake.uart[fake.uart_len] = 0;
	EXPECT(strstr(fake.uart, "HM: partition b (id 1) vcpu 0: budget_overrun") != NULL);
	EXPECT(!vcpu_of(1)->hm_held);
	memset(vcpus, 0, sizeof(vcpus));
}

TEST(edf_reload_uses_the_budget_without_an_overrun)
{
	vcpus[1] = (struct bh_vcpu_cfg){ .period_ns = 5000000, .budget_ns = 1000000,
					 .deadline_ns = 5000000 };
	boot(BH_POLICY_EDF);
	vcpu_of(0)->state = vcpu_of(2)->state = VCPU_HALTED;
	for (unsigned i = 0; i < 3; i++)
		vcpu_of(i)->request = 0; /* not the boot's starts: this test starts nothing */
	/* b is restarting and its vCPU 0 reloads the image in its budget; an interrupt keeps
	 * coming, so the reload never gets a step in. */
	vcpu_of(1)->state = VCPU_LOADING;
	partitions[1].state = PARTITION_RESTARTING;
	partitions[1].reload = true;
	fake.irq_pending = true;
	EXPECT(at(0) == NULL);            /* the core took the interrupt instead */
	EXPECT(percpu[0].vcpu == vcpu_of(1));
	EXPECT(at(US(1000)) == NULL);      /* budget used up: nothing to run until the release */
	EXPECT_EQ(vcpu_of(1)->state, VCPU_LOADING);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strstr(fake.uart, "budget_overrun") == NULL);
	fake.irq_pending = false;
	memset(vcpus, 0, sizeof(vcpus));
}

/* --- The lead and the running vCPU's execution-clock deadline (sched.c led) ---------------- */

/* a (1) runs; b (5) waits for its virtual timer at 1000 (unloaded); c (3) waits for nothing. */
static void a_runs_b_waits_for_1000(void)
{
	boot_fixed_priority_1_5_3();
	fake.vtimer_deadline = UINT64_MAX;
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	vcpu_of(1)->state = vcpu_of(2)->state = VCPU_IDLE;
	vcpu_of(1)->arch.vtimer_set = 1;
	vcpu_of(1)->arch.vtimer_at = 1000;
	EXPECT(at(10) == vcpu_of(0));
	EXPECT_EQ(fake.timer, led_0(1000));
}

/* The running vCPU a sets a deadline of its execution clock that falls 10 ticks before b's
 * wake-up, within the lead (BH_HC_SET_TIMER, which takes the full decision). Its deadline is
 * not led, but b's wake-up must still be: the core's timer fires a lead before it. It fired at
 * a's deadline instead (990, 10 ticks before b's 1000, against 905 with the lead of 95): the
 * decision for b started there, and one after it for b's wake-up, re-armed in the past, so a
 * lower vCPU that runs could take b's lead away at will, and b waited for both decisions. */
TEST(an_execution_clock_deadline_before_a_wake_up_does_not_take_its_lead)
{
	a_runs_b_waits_for_1000();
	fake.counter = 20;
	vcpu_of(0)->timer_clock = BH_CLOCK_EXEC;
	vcpu_of(0)->timer_deadline = sched_exec_ticks(vcpu_of(0)) + (990 - 20);
	EXPECT(at(20) == vcpu_of(0));
	printf("    timer at %llu for b's wake-up at 1000 (lead %u)\n",
	       (unsigned long long)fake.timer, percpu[0].sched.lead);
	EXPECT(fake.timer <= led_0(1000));
	EXPECT(at_waiting(fake.timer) == vcpu_of(1)); /* the decision waits for the wake-up */
	EXPECT(fake.counter >= 1000);
	EXPECT(vcpu_of(0)->virq.pending[0] & (1u << BH_VIRQ_TIMER)); /* charged to 1000: due */
	memset(vcpus, 0, sizeof(vcpus));
}

/* The same deadline, a's, but a then blocks and the core switches to c by the pick alone
 * (block_switch): the deadline counted while a ran must not take b's lead either. */
TEST(a_blocked_vcpus_execution_clock_deadline_does_not_take_a_wake_ups_lead)
{
	a_runs_b_waits_for_1000();
	fake.counter = 20;
	vcpu_of(0)->timer_clock = BH_CLOCK_EXEC;
	vcpu_of(0)->timer_deadline = sched_exec_ticks(vcpu_of(0)) + (990 - 20);
	EXPECT(at(20) == vcpu_of(0));
	vcpu_of(2)->state = VCPU_READY;
	EXPECT(block_at(30) == vcpu_of(2));
	printf("    timer at %llu for b's wake-up at 1000 (lead %u)\n",
	       (unsigned long long)fake.timer, percpu[0].sched.lead);
	EXPECT(fake.timer <= led_0(1000));
	memset(vcpus, 0, sizeof(vcpus));
}

/* --- Two wake-ups closer than the lead (sched.c stand_for_next) ---------------------------- */

/* Every vCPU waits; a (1) for its virtual timer at `a_at`, b (5) for its own at `b_at`. */
static void a_and_b_wait_for_with_c_at(unsigned c_priority, uint64_t a_at, uint64_t b_at)
{
	vcpus[0].priority = 1;
	vcpus[1].priority = 5;
	vcpus[2].priority = c_priority;
	boot(BH_POLICY_FIXED_PRIORITY);
	fake.vtimer_deadline = UINT64_MAX;
	EXPECT(at(5) == vcpu_of(1));
	start_every_vcpu();
	for (unsigned p = 0; p < 3; p++)
		vcpu_of(p)->state = VCPU_IDLE;
	vcpu_of(0)->arch.vtimer_set = vcpu_of(1)->arch.vtimer_set = 1;
	vcpu_of(0)->arch.vtimer_at = a_at;
	vcpu_of(1)->arch.vtimer_at = b_at;
	EXPECT(at(10) == NULL);
}

static void a_and_b_wait_for(uint64_t a_at, uint64_t b_at)
{
	a_and_b_wait_for_with_c_at(3, a_at, b_at);
}

/* a's wake-up at 1000 is led; b's at 1010 comes within the lead after it. The decision for a
 * entered a at 1000 and armed the timer for b's lead, already gone (915): b's decision started
 * only then, after a's wait, and b waited for it (a lower vCPU aiming its virtual timer just
 * before a victim's wake-ups made them 525 ticks late beside a crowd: test_crowd.py). The
 * decision stands for b's wake-up instead: b runs at 1010, a (woken) after it. */
TEST(a_lower_wake_up_just_before_a_higher_one_does_not_take_its_lead)
{
	a_and_b_wait_for(1000, 1010);
	EXPECT_EQ(fake.timer, led_0(1000));
	struct vcpu *v = at_waiting(led_0(1000));
	printf("    the decision for a's wake-up entered %s at %llu\n",
	       v == vcpu_of(1) ? "b" : v == vcpu_of(0) ? "a" : "another", (unsigned long long)fake.counter);
	EXPECT(v == vcpu_of(1));
	EXPECT(fake.counter >= 1010);
	EXPECT_EQ(vcpu_of(0)->state, VCPU_READY);
	memset(vcpus, 0, sizeof(vcpus));
}

/* The other way round: b (5) due at 1000, a (1) at 1010. b runs at its own instant, not at a's. */
TEST(a_higher_wake_up_just_before_a_lower_one_runs_at_its_own_instant)
{
	a_and_b_wait_for(1010, 1000);
	EXPECT_EQ(fake.timer, led_0(1000));
	EXPECT(at_waiting(led_0(1000)) == vcpu_of(1));
	EXPECT(fake.counter >= 1000);
	EXPECT(fake.counter < 1010);
	memset(vcpus, 0, sizeof(vcpus));
}

/* a (1), b (5) and c (c_priority) wait for a_at, b_at and c_at (their virtual timers). */
static void a_b_and_c_wait_for(unsigned c_priority, uint64_t a_at, uint64_t b_at, uint64_t c_at)
{
	a_and_b_wait_for_with_c_at(c_priority, a_at, b_at);
	vcpu_of(2)->arch.vtimer_set = 1;
	vcpu_of(2)->arch.vtimer_at = c_at;
	EXPECT(at(15) == NULL);
}

/* The decision a lead before 1000 ends with b running at its own instant, 1010, the lower two
 * woken on the way. */
static void expect_b_at_1010_the_others_woken(void)
{
	EXPECT(at_waiting(led_0(1000)) == vcpu_of(1));
	EXPECT(fake.counter >= 1010);
	EXPECT_EQ(vcpu_of(0)->state, VCPU_READY);
	EXPECT_EQ(vcpu_of(2)->state, VCPU_READY);
	memset(vcpus, 0, sizeof(vcpus));
}

/* c (3) due at 1000, a (1) at 1005, b (5) at 1010: the next wake-up after c's is a's, which does
 * not outrank c, but b's within the lead does. Standing only for the next one, the decision
 * entered c at 1000 and b waited for a decision after it (two lower vCPUs of a hostile
 * partition, aimed just before a victim's wake-ups, would so take its lead). */
TEST(a_higher_wake_up_behind_a_lower_one_within_the_lead_keeps_its_lead)
{
	a_b_and_c_wait_for(3, 1005, 1010, 1000);
	EXPECT_EQ(fake.timer, led_0(1000));
	expect_b_at_1010_the_others_woken();
}

/* a (1) at 1000, c (3) at 1005, b (5) at 1010: each outranks the one before; b runs at 1010. */
TEST(a_chain_of_higher_wake_ups_within_the_lead_ends_with_the_highest)
{
	a_b_and_c_wait_for(3, 1000, 1010, 1005);
	expect_b_at_1010_the_others_woken();
}

/* a (1) at 1000, then two alike above it, b and c (5), at 1005 and 1010 one way or the other
 * (whichever the pass looks at first): the decision stands for the earlier, which runs at its
 * own instant, ready first among equals; the later one's wake-up does not preempt it. */
static struct vcpu *earlier_of_two_alike(uint64_t b_at, uint64_t c_at)
{
	a_b_and_c_wait_for(5, 1000, b_at, c_at);
	struct vcpu *v = at_waiting(led_0(1000));
	EXPECT(fake.counter >= 1005);
	EXPECT(fake.counter < 1010); /* not held for the later one's instant */
	memset(vcpus, 0, sizeof(vcpus));
	return v;
}

TEST(of_two_alike_wake_ups_within_the_lead_the_earlier_runs_first)
{
	EXPECT(earlier_of_two_alike(1005, 1010) == vcpu_of(1));
	EXPECT(earlier_of_two_alike(1010, 1005) == vcpu_of(2));
}

/* --- The fake counter (tests/unit) --------------------------------------------------------- */

/* A decision a lead ahead of a wake-up waits for it by reading the counter, which the fake
 * advances only by counter_step: a test that forgets it hung `make unit-test` for ever. The
 * fake now moves a counter read FAKE_STILL_READS times standing still, and the runner fails the test
 * (counter_stuck); here it is expected, and cleared. */
TEST(a_wait_on_a_counter_standing_still_fails_the_test_and_does_not_hang)
{
	a_and_b_wait_for(1010, 1000);
	EXPECT(at(led_0(1000)) == vcpu_of(1)); /* counter_step 0 */
	EXPECT(fake.counter_stuck);
	EXPECT(fake.counter >= 1000);
	fake.counter_stuck = false;
	memset(vcpus, 0, sizeof(vcpus));
}

/* A decision of an idle EDF core leads its next release B (s->boundary). A later decision, made
 * just before B's lead, switches in a vCPU of its own (a), and another core changes the pick
 * during the switch (resumes c): the look again after it came past B - lead and stood for the
 * stale B (decision_time), so a was charged up to B, time it never ran, and raised a false budget
 * overrun (found by an attacker's review). A look again stands for the pass's own instant. */
static void resume_c_from_core_1_at_the_lead(void)
{
	fake.switch_hook = NULL;
	fake.counter = US(5000) - LEAD + 5; /* the decision's own time took it past the lead */
	fake.core = 1;
	partition_resume(&partitions[2]);
	fake.core = 0;
}

TEST(an_edf_vcpu_switched_in_just_before_a_led_release_is_charged_only_its_own_time)
{
	vcpus[0] = (struct bh_vcpu_cfg){ .period_ns = 10000000, .budget_ns = 2000000,
					 .deadline_ns = 10000000 };
	vcpus[1] = (struct bh_vcpu_cfg){ .period_ns = 5000000, .budget_ns = 1000000,
					 .deadline_ns = 5000000 };
	vcpus[2] = (struct bh_vcpu_cfg){ .period_ns = 10000000, .budget_ns = 2000000,
					 .deadline_ns = 3000000 };
	boot(BH_POLICY_EDF);
	start_every_vcpu();
	EXPECT(partition_suspend(&partitions[2]));
	vcpu_of(0)->state = VCPU_IDLE;
	EXPECT(at(0) == vcpu_of(1));
	vcpu_of(1)->state = VCPU_IDLE;
	EXPECT(at(US(100)) == NULL);                 /* idle: b's release at 5 ms is led */
	EXPECT_EQ(fake.timer, US(5000) - LEAD);
	EXPECT(percpu[0].loaded == vcpu_of(1));
	/* a wakes (an interrupt) just before the lead, 40 ticks of budget left */
	vcpu_of(0)->budget_left = 40;
	vcpu_of(0)->state = VCPU_READY;
	unsigned events = partitions[0].hm_events;
	fake.switch_hook = resume_c_from_core_1_at_the_lead;
	uint64_t t = US(5000) - LEAD - 10;
	struct vcpu *v = at_waiting(t);
	fake.switch_hook = NULL;
	printf("    a switched in at %llu, picked again at %llu: budget left %llu of 40\n",
	       (unsigned long long)t, (unsigned long long)(US(5000) - LEAD + 5),
	       (unsigned long long)vcpu_of(0)->budget_left);
	EXPECT(v == vcpu_of(2));                      /* c, resumed, has the earliest deadline */
	EXPECT(vcpu_of(0)->budget_left >= 20);        /* charged only for the time it held the core */
	EXPECT_EQ(partitions[0].hm_events, events);   /* no budget overrun: a never ran it out */
	console_flush_all();
	memset(vcpus, 0, sizeof(vcpus));
}
