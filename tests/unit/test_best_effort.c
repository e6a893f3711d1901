/* Best-effort vCPUs against the fake architecture: the queue, picking on idle cores, giving
 * the core back before its own instants, round robin, wake-ups and the life cycle.
 *
 * The system: partition "rt" has vCPU 0 on cyclic core 0 (slots 0-200 us and 600-700 us of a
 * 1 ms frame) and vCPU 1 on fixed-priority core 1; core 2 is dedicated with no vCPU. Partition
 * "be" has three best-effort vCPUs: be.0 may use cores 0 to 2, be.1 cores 0 and 2, be.2 core 2
 * only; be.0 owns the forwarded interrupt 40. The fake counter runs at 62.5 MHz (62.5 ticks/us). */
#include <string.h>
#include "arch/fake.h"
#include "best_effort.h"
#include "bulkhead/abi.h"
#include "main.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "unit.h"

#define US(n) ((uint64_t)(n) * 125 / 2)
#define T0 1000u
#define LEAD SLOT_LEAD_TICKS

static const uint8_t image[16];
static const struct bh_segment_cfg seg = { .ipa = 0x40000000, .data = image, .file_size = 16,
					   .mem_size = 16 };
static const struct bh_area_cfg areas[2] = {
	{ .phys = 0x42000000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
	{ .phys = 0x42100000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
};
static const struct bh_vcpu_cfg rt_vcpus[] = { { .core = 0 }, { .core = 1, .priority = 5 } };
static const struct bh_vcpu_cfg be_vcpus[] = {
	{ .core = 0, .flags = BH_VCPU_BEST_EFFORT, .core_mask = 0x7 },
	{ .core = 0, .flags = BH_VCPU_BEST_EFFORT, .core_mask = 0x5 },
	{ .core = 2, .flags = BH_VCPU_BEST_EFFORT, .core_mask = 0x4 },
};
static const uint32_t be_irqs[] = { 40 };
static const struct bh_partition_cfg parts[2] = {
	{ .name = "rt", .id = 0, .entry = 0x40000000, .area_count = 1, .segment_count = 1,
	  .vcpu_count = 2, .areas = &areas[0], .segments = &seg, .vcpus = rt_vcpus },
	{ .name = "be", .id = 1, .entry = 0x40000000, .area_count = 1, .segment_count = 1,
	  .vcpu_count = 3, .areas = &areas[1], .segments = &seg, .vcpus = be_vcpus,
	  .irq_count = 1, .irqs = be_irqs },
};
static const struct bh_slot_cfg slots[] = {
	{ .start_ns = 0, .duration_ns = 200000, .partition = 0 },
	{ .start_ns = 600000, .duration_ns = 100000, .partition = 0 },
};
static struct bh_plan_cfg plan = { .name = "normal", .major_frame_ns = 1000000,
				   .cores = { [0] = { .slot_count = 2, .slots = slots } } };
static uint64_t stage2_pool[6][512] __attribute__((aligned(4096)));
static const struct bh_system_cfg sys = {
	.magic = BH_CONFIG_MAGIC, .version = BH_CONFIG_VERSION, .name = "be", .core_count = 3,
	.partition_count = 2, .partitions = parts, .hyp_base = 0x40000000, .hyp_size = 0x2000000,
	.ram_base = 0x40000000, .ram_size = 0x40000000,
	.cores = { [0] = { BH_POLICY_CYCLIC }, [1] = { BH_POLICY_FIXED_PRIORITY },
		   [2] = { BH_POLICY_DEDICATED } },
	.plan_count = 1, .plans = &plan, .stage2_block_max = 0x1000, .stage2_pool_pages = 6,
	.stage2_pool = stage2_pool,
};

static struct vcpu *rt(unsigned j) { return &partitions[0].vcpus[j]; }
static struct vcpu *be(unsigned j) { return &partitions[1].vcpus[j]; }

static void boot(void)
{
	partition_init_all(&sys);
	plan_init(&sys, T0);
	EXPECT_EQ(vcpu_control(rt(0), BH_VCPU_START, 1, 0), BH_OK); /* as rt.0 would */
	fake.counter_step = 1; /* a cyclic core waits for its boundary by reading the counter */
}

/* Core `core` leaves the hypervisor at `now`, after an event (a timer, a kick): returns the vCPU
 * it runs, or NULL if it idles. */
static struct vcpu *on(unsigned core, uint64_t now)
{
	fake.core = core;
	fake.counter = now;
	exit_work_set(EXIT_RESCHED);
	FAKE_RUN(core_exit_work());
	return fake.exit == FAKE_IDLED ? NULL : percpu[core].vcpu;
}

/* The core's hypervisor timer fires, in its guest as aarch64_guest_irq takes it (the hand-back's
 * test first, and then the hand-back's exit; else the timer's event), or on the idle core, and
 * the core does its exit's work. Under FAKE_RUN: a sleep leaves. */
static void timer_fires(void)
{
	if (this_cpu()->vcpu && sched_timer_hands_back()) {
		sched_hand_back_and_exit();
		return;
	}
	sched_timer_event();
	core_exit_work();
}

/* Core `core`'s hypervisor timer fires at `now` (timer_fires), and the core leaves the
 * hypervisor: returns the vCPU it runs, or NULL if it idles. */
static struct vcpu *timer_on(unsigned core, uint64_t now)
{
	fake.core = core;
	fake.counter = now;
	FAKE_RUN(timer_fires());
	return fake.exit == FAKE_IDLED ? NULL : percpu[core].vcpu;
}

/* Every best-effort vCPU started (the guest's vCPU 0 would start the others). */
static void start_all(void)
{
	for (unsigned j = 1; j < 3; j++)
		EXPECT_EQ(vcpu_control(be(0), BH_VCPU_START, j, 0), BH_OK);
}

TEST(best_effort_vcpus_are_queued_at_boot_and_started_by_the_first_core_that_idles)
{
	boot();
	EXPECT(be_is_queued(be(0)) && be_is_queued(be(1)) && be_is_queued(be(2)));
	EXPECT_EQ(percpu[2].sched.count, 0);
	EXPECT(percpu[0].sched.be_allowed && percpu[2].sched.be_allowed);
	EXPECT_EQ(be(0)->request, VCPU_REQ_RESET);
	EXPECT(on(2, T0) == be(0)); /* the empty dedicated core takes it and serves its start */
	EXPECT_EQ(be(0)->state, VCPU_READY);
	EXPECT(!be_is_queued(be(0)));
	EXPECT_EQ(be(0)->core, 2);
	EXPECT_EQ(fake.resets, 1);
	EXPECT(percpu[2].sched.be == be(0));
	EXPECT(be(0)->arch.loaded);
	/* No instant of its own: the quantum (the fake counter moves a tick at every read). */
	EXPECT(fake.timer >= T0 + be_quantum_ticks() && fake.timer < T0 + be_quantum_ticks() + 8);
}

TEST(a_core_with_something_of_its_own_to_run_never_takes_best_effort_work)
{
	boot();
	EXPECT(on(0, T0) == rt(0)); /* its slot */
	EXPECT(be_is_queued(be(0)));
	EXPECT(on(1, T0) == rt(1)); /* its ready vCPU */
	EXPECT(be_is_queued(be(0)));
	EXPECT(on(0, T0 + US(200)) == be(0)); /* the gap after the slot */
}

/* In a gap of the cyclic core the best-effort vCPU runs until BE_LEAD_TICKS before the next
 * slot's lead; then the core loads its own vCPU again and waits for the lead like an idle
 * core, so the slot starts exactly as without best-effort work. */
TEST(a_best_effort_vcpu_gives_the_core_back_before_its_next_slot)
{
	uint64_t slot = T0 + US(600);

	boot();
	EXPECT(on(0, T0) == rt(0));
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT_EQ(fake.timer, slot - LEAD - BE_LEAD_TICKS);
	EXPECT(!rt(0)->arch.loaded && be(0)->arch.loaded);
	unsigned loads = fake.loads;
	EXPECT(on(0, slot - LEAD - BE_LEAD_TICKS) == NULL); /* handed back: the core idles */
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(be(0)->arch.detached, 1);  /* its FP/SIMD state left the core first */
	EXPECT(rt(0)->arch.loaded && !be(0)->arch.loaded); /* as it found the core */
	EXPECT(percpu[0].loaded == rt(0));
	EXPECT(percpu[0].sched.be == NULL);
	EXPECT_EQ(fake.timer, slot - LEAD);  /* the slot's own lead, as on an idle core */
	EXPECT_EQ(fake.loads, loads + 1);
	EXPECT(on(0, slot - LEAD) == rt(0));
	EXPECT_EQ(fake.loads, loads + 1);    /* it is loaded already: nothing to switch */
	EXPECT(fake.counter >= slot);        /* entered at its boundary */
}

/* No room before the core's own instant: the core idles instead. */
TEST(a_gap_shorter_than_the_lead_and_the_minimum_run_is_left_idle)
{
	uint64_t slot = T0 + US(600);

	boot();
	EXPECT(on(0, slot - LEAD - BE_LEAD_TICKS - BE_MIN_RUN_TICKS + 2) == NULL);
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(fake.timer, slot - LEAD);
}

/* Core 1 (fixed priority) runs rt.1 at `start`, which then idles until its virtual timer at
 * `wake`; at `lend` the core's idle time goes to be.0. */
static void lend_core_1_until(uint64_t start, uint64_t lend, uint64_t wake)
{
	boot();
	EXPECT(on(1, start) == rt(1));
	rt(1)->arch.vtimer_set = 1;
	rt(1)->arch.vtimer_at = wake;
	sched_vcpu_idle(rt(1)); /* BH_HC_IDLE */
	EXPECT(on(1, lend) == be(0));
}

/* When core 1 (fixed priority) decides for a wake-up at `wake`: a lead ahead of it. */
static uint64_t led_1(uint64_t wake)
{
	return wake - percpu[1].sched.lead;
}

/* A fixed-priority core's own instant is the virtual timer of its idle vCPU: loaded and idle,
 * its timer is live in hardware, and the core decides for it a lead ahead; the best-effort
 * vCPU goes before that decision. */
TEST(a_best_effort_vcpu_gives_the_core_back_before_a_wake_up_of_its_own)
{
	uint64_t wake = US(500);

	lend_core_1_until(US(10), US(20), wake);
	EXPECT_EQ(fake.timer, led_1(wake) - BE_LEAD_TICKS);
	EXPECT(on(1, led_1(wake) - BE_LEAD_TICKS) == NULL);
	EXPECT(percpu[1].loaded == rt(1)); /* its timer live again */
	EXPECT_EQ(fake.timer, led_1(wake));
	EXPECT(be_is_queued(be(0)));
	fake.counter_step = 1; /* the core waits for the wake-up, reading the counter */
	EXPECT(timer_on(1, led_1(wake)) == rt(1));
	fake.counter_step = 0;
	EXPECT(fake.counter >= wake); /* decided ahead, entered at its wake-up */
}

/* Three ready vCPUs on one core: each gets a quantum in turn, in queue order. */
TEST(best_effort_vcpus_share_a_core_round_robin)
{
	uint64_t q, t = T0;
	struct vcpu *order[7];

	boot();
	start_all();
	q = be_quantum_ticks();
	for (unsigned i = 0; i < 7; i++, t += q)
		order[i] = on(2, t);
	EXPECT(order[0] == be(0) && order[1] == be(1) && order[2] == be(2));
	EXPECT(order[3] == be(0) && order[4] == be(1) && order[5] == be(2));
	EXPECT(order[6] == be(0));
	/* Before its quantum ends, a decision (a kick) keeps the one that runs. */
	EXPECT(on(2, t - q + 10) == be(0));
}

/* With nobody waiting, a quantum's end changes nothing. */
TEST(a_best_effort_vcpu_alone_keeps_its_core_from_quantum_to_quantum)
{
	boot();
	EXPECT(on(2, T0) == be(0));
	unsigned saves = fake.saves;
	EXPECT(on(2, T0 + be_quantum_ticks()) == be(0));
	EXPECT(on(2, T0 + 2 * be_quantum_ticks()) == be(0));
	EXPECT_EQ(fake.saves, saves);
}

/* A vCPU restricted to one core is not taken by another, however idle. */
TEST(a_best_effort_vcpu_runs_only_on_its_cores)
{
	boot();
	be(0)->request = 0; /* only be.2 started */
	EXPECT_EQ(vcpu_control(be(0), BH_VCPU_START, 2, 0), BH_OK);
	EXPECT(on(1, T0) == rt(1));
	sched_vcpu_idle(rt(1));
	EXPECT(on(1, T0 + 10) == NULL); /* core 1 has room, but nothing it may run */
	EXPECT(be_is_queued(be(2)));
	EXPECT(on(2, T0 + 20) == be(2));
}

/* A best-effort vCPU handed back by one core moves to another: the first gave it back with
 * all its state in memory; the second loads it and traces it as its own. */
TEST(a_best_effort_vcpu_migrates_to_another_idle_core)
{
	uint64_t slot = T0 + US(600);

	boot();
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT_EQ(be(0)->core, 0);
	EXPECT(on(0, slot - LEAD - BE_LEAD_TICKS) == NULL);
	EXPECT(on(2, slot - LEAD) == be(0));
	EXPECT_EQ(be(0)->core, 2);
	EXPECT(be(0)->arch.loaded);
	EXPECT_EQ((be(0)->trace_source >> 16) & 0xff, 2);
}

TEST(a_forwarded_interrupt_follows_its_best_effort_vcpu_to_the_core_that_takes_it)
{
	uint64_t slot = T0 + US(600);

	boot();
	fake.irq_core[40] = 99;
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT_EQ(fake.irq_core[40], 99); /* routed to core 0 at boot already: no move */
	EXPECT(on(0, slot - LEAD - BE_LEAD_TICKS) == NULL);
	EXPECT(on(2, slot - LEAD) == be(0));
	EXPECT_EQ(fake.irq_core[40], 2);
}

/* Stolen time: from the hand-back that leaves it ready to the take that runs it again. */
TEST(a_best_effort_vcpu_given_back_while_ready_counts_the_wait_as_stolen)
{
	uint64_t slot = T0 + US(600), back = slot - LEAD - BE_LEAD_TICKS;

	boot();
	be(0)->steals = true; /* its guest reads its stolen time (a virtual machine) */
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT_EQ(be(0)->stolen_ticks, 0);
	EXPECT(on(0, back) == NULL);
	EXPECT(on(2, back + US(10)) == be(0));
	EXPECT_EQ(be(0)->stolen_ticks, US(10));
	be(0)->state = VCPU_IDLE; /* it waits for an interrupt: leaving now steals nothing */
	EXPECT(on(2, back + US(20)) == NULL);
	be(0)->state = VCPU_READY;
	EXPECT(on(2, back + US(30)) == be(0));
	EXPECT_EQ(be(0)->stolen_ticks, US(10));
}

/* A paravirtual guest cannot read its stolen time: none is kept, and its switches do not pay
 * for it (a port hand-over between two paravirtual partitions). */
TEST(a_vcpu_whose_guest_cannot_read_stolen_time_keeps_none)
{
	uint64_t slot = T0 + US(600), back = slot - LEAD - BE_LEAD_TICKS;

	boot();
	EXPECT(!be(0)->steals);
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT(on(0, back) == NULL);
	EXPECT_EQ(be(0)->ready_since, 0);
	EXPECT(on(2, back + US(10)) == be(0));
	EXPECT_EQ(be(0)->stolen_ticks, 0);
}

/* A vCPU given back while a core that may run it sleeps with room wakes that core. */
TEST(a_core_asleep_with_room_is_kicked_for_best_effort_work)
{
	uint64_t slot = T0 + US(600);

	boot();
	be(0)->request = 0;
	EXPECT(on(2, T0) == NULL); /* nothing started yet: core 2 sleeps, with room */
	EXPECT_EQ(fake.kicks[2], 0);
	EXPECT_EQ(vcpu_control(be(1), BH_VCPU_START, 0, 0), BH_OK); /* from another core */
	EXPECT_EQ(fake.kicks[2], 1);
	EXPECT(on(0, T0 + US(200)) == be(0)); /* core 0 was not asleep: not kicked, it looked */
	EXPECT(on(2, T0 + US(201)) == NULL);
	EXPECT(on(0, slot - LEAD - BE_LEAD_TICKS) == NULL); /* handed back: core 2 is asleep */
	EXPECT_EQ(fake.kicks[2], 2);
	EXPECT(on(2, slot - LEAD - BE_LEAD_TICKS + 10) == be(0));
}

/* An idle queued vCPU's virtual timer is watched by a core asleep with room for it; the
 * wake-up makes it ready and it runs. */
TEST(an_idle_best_effort_vcpu_wakes_on_its_virtual_timer)
{
	boot();
	EXPECT(on(2, T0) == be(0));
	be(0)->arch.vtimer_set = 1;
	be(0)->arch.vtimer_at = T0 + US(300);
	sched_vcpu_idle(be(0));
	EXPECT(on(2, T0 + US(1)) == NULL);
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(be(0)->state, VCPU_IDLE);
	EXPECT_EQ(fake.timer, T0 + US(300));
	EXPECT(on(2, T0 + US(300)) == be(0));
	EXPECT_EQ(be(0)->state, VCPU_READY);
}

/* An interrupt for an idle queued vCPU makes it ready and kicks a core asleep with room. */
TEST(an_interrupt_wakes_an_idle_queued_best_effort_vcpu)
{
	boot();
	EXPECT(on(2, T0) == be(0));
	sched_vcpu_idle(be(0));
	EXPECT(on(2, T0 + 10) == NULL);
	unsigned kicks = fake.kicks[2];
	fake.core = 1;
	virq_inject(be(0), BH_VIRQ_PORT, false);
	EXPECT_EQ(be(0)->state, VCPU_READY);
	EXPECT_EQ(fake.kicks[2], kicks + 1);
	EXPECT(on(2, T0 + 20) == be(0));
}

/* A stop posted to a vCPU that a core runs goes to that core, which releases it at its next
 * exit and gives it back, halted. */
TEST(halting_a_partition_stops_its_running_best_effort_vcpu_on_its_core)
{
	boot();
	EXPECT(on(2, T0) == be(0));
	fake.core = 1;
	EXPECT(partition_halt(&partitions[1]));
	EXPECT_EQ(fake.kicks[2], 1);
	EXPECT(percpu[2].requests);
	EXPECT(on(2, T0 + 10) == NULL);
	EXPECT_EQ(be(0)->state, VCPU_HALTED);
	EXPECT_EQ(be(0)->arch.released, 1);
	EXPECT(be_is_queued(be(0)));
}

/* A stop posted to a queued vCPU waits in it: the next core that takes it serves it. */
TEST(a_request_to_a_queued_best_effort_vcpu_is_served_by_the_core_that_takes_it)
{
	boot();
	start_all();
	EXPECT(on(2, T0) == be(0));
	fake.core = 1;
	EXPECT_EQ(vcpu_control(be(0), BH_VCPU_HALT, 1, 0), BH_OK);
	EXPECT_EQ(be(1)->request, VCPU_REQ_STOP); /* its start, still posted, is cancelled */
	EXPECT_EQ(be(1)->arch.released, 0);
	/* core 0 takes be.1 in its gap: serves its requests, finds it halted, takes the next */
	EXPECT(on(0, T0 + US(200)) == NULL);
	EXPECT_EQ(be(1)->state, VCPU_HALTED);
	EXPECT_EQ(be(1)->arch.released, 1);
	EXPECT_EQ(be(1)->request, 0);
	EXPECT(be_is_queued(be(1)));
}

/* Suspending the partition leaves its vCPUs queued; resuming kicks a core asleep with room. */
TEST(a_suspended_partition_keeps_its_best_effort_vcpus_queued_until_resumed)
{
	boot();
	EXPECT(on(2, T0) == be(0));
	fake.core = 1;
	EXPECT(partition_suspend(&partitions[1]));
	EXPECT(on(2, T0 + 10) == NULL);
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(be(0)->state, VCPU_READY);
	unsigned kicks = fake.kicks[2];
	fake.core = 1;
	EXPECT(partition_resume(&partitions[1]));
	EXPECT(fake.kicks[2] > kicks);
	EXPECT(on(2, T0 + 20) == be(0));
}

/* A restart stops every vCPU wherever it is; the last one released makes vCPU 0 load the
 * image, which a core reloads in vCPU 0's (best-effort) time; then vCPU 0 starts again. */
TEST(a_partition_with_best_effort_vcpus_restarts)
{
	boot();
	start_all();
	EXPECT(on(2, T0) == be(0));
	EXPECT(on(0, T0 + US(200)) == be(1));
	fake.core = 1;
	partition_restart(&partitions[1], true, BH_RESTART_SELF);
	EXPECT_EQ(partitions[1].state, PARTITION_RESTARTING);
	EXPECT(on(2, T0 + US(201)) == NULL); /* be.0 released; be.2, queued, taken and released */
	EXPECT_EQ(be(2)->state, VCPU_HALTED);
	EXPECT(on(0, T0 + US(202)) == be(0)); /* be.1 released last: be.0 loading, core 0 takes it */
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING); /* reloaded in its time */
	EXPECT_EQ(be(0)->state, VCPU_READY);
	EXPECT_EQ(be(1)->state, VCPU_HALTED);
	EXPECT_EQ(be(0)->arch.released, 1);
	EXPECT_EQ(be(1)->arch.released, 1);
	EXPECT_EQ(be(2)->arch.released, 1);
}

/* A restart counts queued best-effort vCPUs at once (partition.c stop_all): no core may have
 * time for them for long, and a core that takes one serves its stop before it runs it. */
TEST(a_restart_does_not_wait_for_queued_best_effort_vcpus_to_be_taken)
{
	boot();
	for (unsigned j = 0; j < 3; j++) { /* started, ran, and given back */
		be(j)->request = 0;
		be(j)->state = VCPU_READY;
		EXPECT(be_is_queued(be(j)));
	}
	fake.core = 1;
	EXPECT(partition_restart(&partitions[1], false, BH_RESTART_SYSTEM_PARTITION));
	EXPECT_EQ(partitions[1].stopping, 0);
	EXPECT_EQ(be(0)->state, VCPU_LOADING);
	EXPECT(be(1)->request & VCPU_REQ_STOP);
	EXPECT(on(2, T0) == be(0)); /* its stop served, then the reload in its time */
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING);
	EXPECT_EQ(be(0)->arch.released, 1);
	EXPECT(on(0, T0 + US(200)) == NULL); /* be.1 taken, stopped, given back */
	EXPECT_EQ(be(1)->state, VCPU_HALTED);
	EXPECT_EQ(be(1)->arch.released, 1);
	EXPECT_EQ(be(1)->request, 0);
	EXPECT(be_is_queued(be(2)) && (be(2)->request & VCPU_REQ_STOP)); /* core 2 only: not yet */
}

/* The restart is posted from core 2 while core 1 gives be.0 back for its own vCPU, woken: be.0
 * has left the core (no longer its best-effort vCPU) and is not in the queue yet, so the
 * restart neither counts it as queued nor finds a holder that serves its stop; it waits for a
 * core with spare time to take it, which may never come (every core busy). Given back with its
 * stop posted, it runs nothing before a taker serves it: counted then, as a queued one. */
static bool be_restart_posted;

static void restart_be_in_switch(void)
{
	if (be_restart_posted || fake.core != 1)
		return;
	be_restart_posted = true;
	fake.core = 2;
	EXPECT(partition_restart(&partitions[1], false, BH_RESTART_SYSTEM_PARTITION));
	fake.core = 1;
}

TEST(a_restart_posted_while_a_best_effort_vcpu_is_given_back_does_not_wait_for_a_taker)
{
	boot();
	for (unsigned j = 1; j < 3; j++) { /* started, ran, and given back */
		be(j)->request = 0;
		be(j)->state = VCPU_READY;
	}
	EXPECT(on(1, T0) == rt(1));
	sched_vcpu_idle(rt(1));
	EXPECT(on(1, T0 + 10) == be(0));
	fake.core = 2;
	virq_inject(rt(1), BH_VIRQ_PORT, false);
	be_restart_posted = false;
	fake.switch_hook = restart_be_in_switch;
	EXPECT(on(1, T0 + 20) == rt(1));
	fake.switch_hook = NULL;
	EXPECT(be_restart_posted);
	EXPECT(be_is_queued(be(0)) && (be(0)->request & VCPU_REQ_STOP));
	printf("    restart posted while be.0 was given back: %u vCPU(s) left to count\n",
	       partitions[1].stopping);
	EXPECT_EQ(partitions[1].stopping, 0);
	EXPECT_EQ(be(0)->state, VCPU_LOADING);
}

/* An asynchronous wake-up of the core's own vCPU (another core's interrupt or message) takes
 * the core from the best-effort vCPU at once. */
TEST(a_wake_up_of_its_own_vcpu_takes_the_core_from_best_effort_work)
{
	boot();
	EXPECT(on(1, T0) == rt(1));
	sched_vcpu_idle(rt(1));
	EXPECT(on(1, T0 + 10) == be(0));
	unsigned kicks = fake.kicks[1];
	fake.core = 2;
	virq_inject(rt(1), BH_VIRQ_PORT, false);
	EXPECT_EQ(fake.kicks[1], kicks + 1);
	EXPECT(on(1, T0 + 20) == rt(1));
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(be(0)->arch.detached, 1);
}

/* The best-effort vCPU blocks before the kick for its core's own vCPU, woken by another core,
 * is taken: the full decision, which gives the best-effort vCPU back to the queue. */
TEST(a_best_effort_vcpu_that_blocks_under_a_woken_vcpu_of_the_core_is_given_back)
{
	boot();
	EXPECT(on(1, T0) == rt(1));
	sched_vcpu_idle(rt(1));
	EXPECT(on(1, T0 + 10) == be(0));
	fake.core = 2;
	virq_inject(rt(1), BH_VIRQ_PORT, false); /* ready; core 1's kick not taken yet */
	fake.core = 1;
	fake.counter = T0 + 20;
	sched_vcpu_idle(be(0));
	EXPECT_EQ(percpu[1].exit_work, EXIT_BLOCKED); /* the one change seen: it blocked */
	FAKE_RUN(core_exit_work());
	EXPECT(percpu[1].vcpu == rt(1));
	EXPECT(percpu[1].sched.be == NULL);
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(be(0)->arch.detached, 1);
}

/* A core asleep past its be_until waits for an instant of its own: no kick for best-effort
 * work reaches it then, whatever it marked when it went to sleep. */
TEST(a_core_in_its_lead_before_an_instant_is_not_kicked_for_best_effort_work)
{
	uint64_t slot = T0 + US(600);

	boot();
	be(0)->request = 0;
	EXPECT(on(2, T0) == NULL);           /* nothing started: core 2 sleeps with room */
	EXPECT(on(0, T0 + US(200)) == NULL); /* and core 0, until its next slot's lead */
	EXPECT_EQ(percpu[0].sched.be_until, slot - LEAD - BE_LEAD_TICKS);
	fake.core = 1;
	fake.counter = slot - LEAD - BE_LEAD_TICKS; /* its room is over */
	EXPECT_EQ(vcpu_control(be(1), BH_VCPU_START, 0, 0), BH_OK);
	EXPECT_EQ(fake.kicks[0], 0);
	EXPECT_EQ(fake.kicks[2], 1); /* core 2, with no instant of its own, is */
}

/* A core asleep with room and nothing to run wakes where its room ends, be_until, and sleeps on
 * to its own instant without room: the instant's own path has no asleep mark to take down. */
TEST(a_core_asleep_with_room_ends_its_room_at_be_until)
{
	uint64_t slot = T0 + US(600), back = slot - LEAD - BE_LEAD_TICKS;

	boot();
	be(0)->request = 0; /* nothing to run: core 0 sleeps with room */
	EXPECT(on(0, T0) == rt(0));
	EXPECT(on(0, T0 + US(200)) == NULL);
	EXPECT_EQ(percpu[0].sched.be_until, back);
	EXPECT_EQ(fake.timer, back);
	EXPECT(timer_on(0, back) == NULL);
	EXPECT_EQ(percpu[0].sched.be_until, 0);
	EXPECT_EQ(fake.timer, slot - LEAD); /* the slot's own lead, as on an idle core */
	EXPECT(timer_on(0, slot - LEAD) == rt(0));
}

/* The timer at be_until, alone: the hand-back without a decision leaves the core as the full
 * decision does (its own vCPU loaded, the best-effort one queued, the timer at its own lead). */
TEST(the_timer_at_be_until_hands_back_as_the_full_decision_does)
{
	uint64_t slot = T0 + US(600), back = slot - LEAD - BE_LEAD_TICKS;

	boot();
	be(0)->steals = true;
	EXPECT(on(0, T0) == rt(0));
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT_EQ(fake.timer, back);
	unsigned loads = fake.loads;
	EXPECT(timer_on(0, back) == NULL);
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(be(0)->arch.detached, 1);
	EXPECT(rt(0)->arch.loaded && !be(0)->arch.loaded);
	EXPECT(percpu[0].loaded == rt(0) && percpu[0].vcpu == NULL);
	EXPECT(percpu[0].sched.be == NULL);
	EXPECT_EQ(percpu[0].sched.be_until, 0);
	EXPECT_EQ(fake.timer, slot - LEAD);
	EXPECT_EQ(fake.loads, loads + 1);
	/* Asleep, its mark left for the decision's loop to take down when it wakes. */
	EXPECT_EQ(percpu[0].exit_work & EXIT_DECIDE, EXIT_HAND_BACK);
	EXPECT(be(0)->ready_since != 0); /* given back ready: its wait is stolen time */
	EXPECT(timer_on(0, slot - LEAD) == rt(0));
	EXPECT(!(percpu[0].exit_work & EXIT_DECIDE));
	EXPECT(fake.counter >= slot);
	EXPECT(on(2, slot) == be(0)); /* another core takes it */
}

/* The hand-back looks for cores to kick only if one of the vCPU's cores sleeps: a core asleep
 * with room that may run it is kicked, and takes it. */
TEST(a_vcpu_given_back_at_be_until_kicks_a_core_asleep_that_may_run_it)
{
	uint64_t slot = T0 + US(600), back = slot - LEAD - BE_LEAD_TICKS;

	boot();
	EXPECT(on(0, T0) == rt(0));
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT(on(2, T0 + US(210)) == NULL); /* nothing queued with work: asleep, with room */
	unsigned kicks = fake.kicks[2];
	EXPECT(timer_on(0, back) == NULL);
	EXPECT(be_is_queued(be(0)));
	EXPECT_EQ(fake.kicks[2], kicks + 1);
	EXPECT(on(2, back + 10) == be(0));
	EXPECT(!be_is_queued(be(0)) && be(0)->core == 2);
}

/* On a fixed-priority core, the timer at be_until before the loaded idle vCPU's own wake-up:
 * that vCPU's virtual timer is live again and the core's timer leads it, as after a full
 * decision. */
TEST(the_timer_at_be_until_leaves_the_core_its_own_vcpus_wake_up_led)
{
	uint64_t wake = US(500);

	lend_core_1_until(US(10), US(20), wake);
	EXPECT_EQ(fake.timer, led_1(wake) - BE_LEAD_TICKS);
	EXPECT(timer_on(1, led_1(wake) - BE_LEAD_TICKS) == NULL);
	EXPECT(percpu[1].loaded == rt(1));
	EXPECT_EQ(fake.timer, led_1(wake));
	EXPECT_EQ(percpu[1].sched.live_wake, wake);
	EXPECT_EQ(percpu[1].sched.boundary, wake);
	EXPECT(be_is_queued(be(0)));
}

static void wake_rt1_from_core_2(void)
{
	unsigned core = fake.core;

	fake.core = 2;
	virq_inject(rt(1), BH_VIRQ_PORT, false); /* kicks core 1 */
	fake.core = core;
}

/* A kick for the core's own vCPU with the timer at be_until, before it or after it: not the
 * one change the hand-back alone covers, so the full decision runs the woken vCPU. */
static void kick_with_the_timer_at_be_until(bool kick_first)
{
	lend_core_1_until(T0, T0 + 10, T0 + US(500));
	uint64_t back = led_1(T0 + US(500)) - BE_LEAD_TICKS;
	EXPECT_EQ(fake.timer, back);
	wake_rt1_from_core_2();
	fake.core = 1;
	fake.counter = back;
	if (kick_first)
		exit_work_set(EXIT_RESCHED); /* the kick's interrupt */
	FAKE_RUN(timer_fires()); /* fixed priority: unless kicked first, it hands back and sleeps */
	if (!kick_first)
		exit_work_set(EXIT_RESCHED);
	FAKE_RUN(core_exit_work());
	EXPECT(fake.exit != FAKE_IDLED && percpu[1].vcpu == rt(1));
	EXPECT(be_is_queued(be(0)));
}

TEST(a_kick_before_the_timer_at_be_until_takes_the_full_decision)
{
	kick_with_the_timer_at_be_until(true);
}

TEST(a_kick_after_the_timer_at_be_until_takes_the_full_decision)
{
	kick_with_the_timer_at_be_until(false);
}

/* The best-effort vCPU wakes the core's own vCPU (a message, an interrupt it sends), then the
 * timer at be_until fires before the exit: two changes, the full decision. */
TEST(a_wake_up_on_the_core_before_the_timer_at_be_until_takes_the_full_decision)
{
	lend_core_1_until(T0, T0 + 10, T0 + US(500));
	fake.core = 1;
	fake.counter = T0 + US(500) - BE_LEAD_TICKS;
	virq_inject(rt(1), BH_VIRQ_PORT, false); /* on its own core: the one-change preemption */
	EXPECT(percpu[1].exit_work & EXIT_PREEMPT);
	EXPECT(percpu[1].sched.woken == rt(1));
	EXPECT(timer_on(1, T0 + US(500) - BE_LEAD_TICKS) == rt(1));
	EXPECT(be_is_queued(be(0)));
}

static bool kick_armed;

/* Another core wakes rt.1 while core 1 gives its best-effort vCPU back: the kick comes then. */
static void kick_during_hand_back(void)
{
	if (!kick_armed || fake.core != 1 || percpu[1].sched.be)
		return;
	kick_armed = false;
	wake_rt1_from_core_2();
	exit_work_set(EXIT_RESCHED); /* core 1 takes the kick's interrupt */
}

/* Something of the core's own that comes during the hand-back keeps the core from sleeping
 * (the kick comes as the best-effort vCPU leaves the core). */
TEST(a_kick_during_the_hand_back_is_not_slept_through)
{
	lend_core_1_until(T0, T0 + 10, T0 + US(500));
	kick_armed = true;
	fake.switch_hook = kick_during_hand_back;
	struct vcpu *runs = timer_on(1, T0 + US(500) - BE_LEAD_TICKS);
	fake.switch_hook = NULL;
	EXPECT(!kick_armed);
	EXPECT(runs == rt(1));
	EXPECT(be_is_queued(be(0)));
}

static unsigned locks_taken;

static void count_lock(void)
{
	locks_taken++;
}

/* The hand-back, on the way to its core's own instant, takes no lock: with no core asleep that
 * may run it, its vCPU waits parked, and every look at the queue takes it in first, at the tail
 * (core 2 takes it; a stop posted to it is counted at once, as a queued one's). */
TEST(the_hand_back_parks_its_vcpu_without_a_lock_and_the_next_look_queues_it)
{
	lend_core_1_until(T0, T0 + 10, T0 + US(500));
	locks_taken = 0;
	fake.lock_hook = count_lock;
	EXPECT(timer_on(1, T0 + US(500) - BE_LEAD_TICKS) == NULL);
	fake.lock_hook = NULL;
	EXPECT_EQ(locks_taken, 0);
	EXPECT(!be(0)->be_queued); /* parked */
	EXPECT(be_is_queued(be(0)));
	EXPECT(be(0)->be_queued);
	EXPECT(be(1)->be_queued && be(2)->be_queued);
}

/* A vCPU parked by a hand-back is the FIFO's newest: a core that looks takes the older first. */
TEST(a_vcpu_parked_by_a_hand_back_joins_the_tail)
{
	lend_core_1_until(T0, T0 + 10, T0 + US(500));
	start_all();
	EXPECT(timer_on(1, T0 + US(500) - BE_LEAD_TICKS) == NULL);
	EXPECT(!be(0)->be_queued);
	struct vcpu *first = be_take(2, T0 + US(500));
	EXPECT(first != NULL && first != be(0));
	EXPECT(be(0)->be_queued);
}

/* A restart posted to the partition of a parked vCPU counts it at once (partition.c stop_all:
 * it finds it in the queue) and does not wait for a taker. */
TEST(a_restart_counts_a_vcpu_a_hand_back_parked)
{
	lend_core_1_until(T0, T0 + 10, T0 + US(500));
	for (unsigned j = 1; j < 3; j++) { /* started, ran, and given back */
		be(j)->request = 0;
		be(j)->state = VCPU_READY;
	}
	EXPECT(timer_on(1, T0 + US(500) - BE_LEAD_TICKS) == NULL);
	EXPECT(!be(0)->be_queued);
	fake.core = 2;
	EXPECT(partition_restart(&partitions[1], false, BH_RESTART_SYSTEM_PARTITION));
	EXPECT_EQ(partitions[1].stopping, 0);
	EXPECT_EQ(be(0)->state, VCPU_LOADING);
}

/* The hand-back's one trace record is read as the events the full decision records: the timer
 * in the best-effort vCPU, then the switch to nothing, at one time (the hand-back's); also by a reader with room
 * for one event at a time. */
static void expect_hand_back_events(const struct bh_trace_event *ev, uint64_t at)
{
	EXPECT_EQ(ev[0].type, BH_TRACE_HYP_TIMER);
	EXPECT_EQ(ev[0].core, 1);
	EXPECT_EQ(ev[0].partition, be(0)->partition->cfg->id);
	EXPECT_EQ(ev[0].vcpu, 0);
	EXPECT_EQ(ev[1].type, BH_TRACE_VCPU_SWITCH);
	EXPECT_EQ(ev[1].core, 1);
	EXPECT_EQ(ev[1].partition, BH_TRACE_IDLE_PARTITION);
	EXPECT_EQ(ev[1].vcpu, BH_TRACE_IDLE_VCPU);
	EXPECT(ev[0].time >= at && ev[1].time == ev[0].time && !ev[0].arg && !ev[1].arg);
}

TEST(a_hand_back_reads_from_the_trace_as_its_timer_and_the_switch_to_nothing)
{
	uint64_t at = T0 + US(500) - BE_LEAD_TICKS;
	struct bh_trace_event ev[4];

	for (unsigned one_at_a_time = 0; one_at_a_time < 2; one_at_a_time++) {
		lend_core_1_until(T0, T0 + 10, T0 + US(500));
		while (trace_read(1, ev, 4))
			;
		EXPECT(timer_on(1, at) == NULL);
		if (one_at_a_time) {
			EXPECT_EQ(trace_read(1, &ev[0], 1), 1);
			EXPECT_EQ(trace_read(1, &ev[1], 1), 1);
		} else {
			EXPECT_EQ(trace_read(1, ev, 4), 2);
		}
		expect_hand_back_events(ev, at);
		EXPECT_EQ(trace_read(1, ev, 4), 0);
	}
}

/* The hand-back counts the core's timers as the pass after its switch would, with the core's
 * own vCPU loaded again, also when the last decision gave the core to another best-effort vCPU
 * (the first idled): rt.0 waits in its slot for a timer due before the slot ends. */
TEST(after_another_best_effort_vcpus_turn_the_hand_back_counts_the_cores_own_timers)
{
	uint64_t due = T0 + US(150);

	boot();
	start_all();
	EXPECT(on(0, T0) == rt(0));
	rt(0)->timer_deadline = due;
	fake.core = 0;
	sched_vcpu_idle(rt(0)); /* waits for its timer in its slot */
	EXPECT(on(0, T0 + US(20)) == be(0));
	EXPECT_EQ(percpu[0].sched.be_until, due - BE_LEAD_TICKS);
	fake.core = 0;
	sched_vcpu_idle(be(0));
	EXPECT(on(0, T0 + US(40)) == be(1)); /* another's turn: be.0 idles, queued */
	EXPECT(percpu[0].sched.be_home == rt(0) && percpu[0].sched.be_home_counted);
	EXPECT(timer_on(0, due - BE_LEAD_TICKS) == NULL);
	EXPECT(percpu[0].loaded == rt(0) && be_is_queued(be(1)));
	EXPECT_EQ(fake.timer, due);
	EXPECT_EQ(percpu[0].sched.next_wake, due);
}

/* Out of its slot, a waiting vCPU's timer is no instant of the cyclic core's: it cannot run
 * before its slot, whose decision serves the timer. Best-effort work goes on until that slot's
 * lead (before, until the timer: a neighbour's 10 us timer woke the core in the victim's slot). */
TEST(a_waiting_vcpus_timer_out_of_its_slot_does_not_end_best_effort_work)
{
	uint64_t due = T0 + US(400), slot = T0 + US(600);

	boot();
	EXPECT(on(0, T0) == rt(0));
	rt(0)->timer_deadline = due;
	fake.core = 0;
	sched_vcpu_idle(rt(0));
	EXPECT(on(0, T0 + US(200)) == be(0));
	EXPECT_EQ(percpu[0].sched.be_until, slot - LEAD - BE_LEAD_TICKS);
	EXPECT(timer_on(0, slot - LEAD - BE_LEAD_TICKS) == NULL);
	EXPECT_EQ(fake.timer, slot - LEAD);
	EXPECT(on(0, slot) == rt(0)); /* its slot's decision served the timer */
	EXPECT(virq_is_pending(rt(0), BH_VIRQ_TIMER));
}

/* A change to the core's own vCPU that leaves best-effort work on the core (rt.0 suspended in
 * its slot, its timer no longer served) is in the hand-back's count: the core sleeps until the
 * slot's end (its lead), not until the suspended vCPU's timer. */
TEST(a_change_to_the_cores_own_vcpu_under_best_effort_work_is_in_the_hand_backs_count)
{
	uint64_t due = T0 + US(150), end = T0 + US(200);

	boot();
	EXPECT(on(0, T0) == rt(0));
	rt(0)->timer_deadline = due;
	fake.core = 0;
	sched_vcpu_idle(rt(0)); /* waits for its timer in its slot */
	EXPECT(on(0, T0 + US(20)) == be(0));
	EXPECT_EQ(percpu[0].sched.be_until, due - BE_LEAD_TICKS);
	fake.core = 1;
	EXPECT_EQ(vcpu_control(rt(1), BH_VCPU_SUSPEND, 0, 0), BH_OK); /* kicks core 0 */
	EXPECT(on(0, T0 + US(30)) == be(0));
	EXPECT_EQ(percpu[0].sched.be_until, end - LEAD - BE_LEAD_TICKS);
	EXPECT(timer_on(0, end - LEAD - BE_LEAD_TICKS) == NULL);
	EXPECT(percpu[0].loaded == rt(0) && be_is_queued(be(0)));
	EXPECT_EQ(fake.timer, end - LEAD);
	EXPECT_EQ(percpu[0].sched.next_wake, UINT64_MAX);
}

/* The core's own vCPU, idle and loaded when the best-effort vCPU came (its virtual timer live),
 * woken on the core out of its slot while best-effort work goes on: the hand-back does not reuse
 * the live timer counted when it was idle, it counts again (the vCPU is ready, nothing wakes). */
TEST(the_cores_own_vcpu_woken_under_best_effort_work_is_counted_again_at_the_hand_back)
{
	uint64_t slot = T0 + US(600);

	boot();
	EXPECT(on(0, T0) == rt(0));
	rt(0)->arch.vtimer_set = 1;
	rt(0)->arch.vtimer_at = T0 + US(500);
	fake.core = 0;
	sched_vcpu_idle(rt(0)); /* BH_HC_IDLE in its slot */
	EXPECT(on(0, T0 + US(200)) == be(0));
	/* out of its slot: its live timer is no instant of the core's (watched, sched.c) */
	EXPECT_EQ(percpu[0].sched.be_until, slot - LEAD - BE_LEAD_TICKS);
	fake.core = 0;
	virq_inject(rt(0), BH_VIRQ_PORT, false); /* a message from be.0, say */
	EXPECT_EQ(rt(0)->state, VCPU_READY);
	EXPECT(on(0, T0 + US(300)) == be(0)); /* out of its slot: best-effort work goes on */
	EXPECT(!percpu[0].sched.be_home_counted);
	EXPECT_EQ(percpu[0].sched.be_until, slot - LEAD - BE_LEAD_TICKS);
	EXPECT(timer_on(0, slot - LEAD - BE_LEAD_TICKS) == NULL);
	EXPECT(percpu[0].loaded == rt(0) && be_is_queued(be(0)));
	EXPECT_EQ(percpu[0].sched.live_wake, UINT64_MAX);
	EXPECT_EQ(fake.timer, slot - LEAD);
}

/* The timer at be_until taken late, at or after the instant it leads: the full decision, which
 * finds the core's own vCPU due. */
TEST(the_timer_at_be_until_taken_late_takes_the_full_decision)
{
	uint64_t wake = US(500);

	lend_core_1_until(US(10), US(20), wake);
	EXPECT(timer_on(1, wake) == rt(1));
	EXPECT(be_is_queued(be(0)));
}
