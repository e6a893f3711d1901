/* Attacks on 5e675f8 (requests served in their vCPU's own time or the core's spare time), from an
 * outside review. Each test states what a user would expect. Fixed since (they failed on
 * 5e675f8): a stream of changes keeping a core deciding (decide re-picks, sched.c
 * changed_meanwhile), a restart waiting for a vCPU that was halted anyway (counted at once,
 * partition.c stop_all), a start lost on an idle core whose loaded vCPU's timer had passed
 * (service_idle), a suspend of a vCPU that cannot run kicking the running one, a message handed
 * to a halted waiter. Since, a restart waiting for a started vCPU that gets no time on its core
 * (counted at once, partition.c stop_all) and an interrupt sent after a start that the start's
 * reset dropped (dropped when the start is posted instead). A second review (atk2): the ended
 * incarnation's timer reaching the next one's started vCPU, a restart posted during the switch
 * away from a vCPU waiting for it for good, a restart during the serve of vCPU 0's start
 * leaving the partition restarting for good, a taken virtual timer PPI dropped from another
 * core left active, an EDF resume after the vCPU ran not kicked. No known flaw is left here (an
 * EDF resume kicking the running vCPU before the suspend after it is bounded: once per
 * deadline and switch-in of the resumed vCPU, architecture.md, Life cycle).
 *
 * The system: core 0 fixed priority (or EDF, or cyclic) with
 *   victim  "v"  (prio 5)       - another partition, the one that must not be disturbed
 *   hostile "h"  vCPU 0 (prio 3), on core 0, and vCPU 1 on core 1 (dedicated): the poster
 *   plain   "p"  vCPU 0 on core 2 (dedicated) and vCPU 1 on core 0 (prio 1): a partition with
 *                one vCPU below the victim, used for the restart test. */
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "main.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "unit.h"
#include "virq.h"

#define US(n) ((uint64_t)(n) * 125 / 2)

static const uint8_t image[16];
static const struct bh_segment_cfg seg = { .ipa = 0x40000000, .data = image, .file_size = 16,
					   .mem_size = 16 };
static const struct bh_area_cfg areas[3] = {
	{ .phys = 0x42000000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
	{ .phys = 0x42100000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
	{ .phys = 0x42200000, .ipa = 0x40000000, .size = 0x100000, .flags = 7 },
};
static struct bh_vcpu_cfg vv[1], hv[2], pv[2];
static struct bh_partition_cfg parts[3];
static const struct bh_slot_cfg plan0[] = {
	{ .start_ns = 0, .duration_ns = 300000, .partition = 0 },     /* victim */
	{ .start_ns = 300000, .duration_ns = 300000, .partition = 1 }, /* hostile */
	{ .start_ns = 600000, .duration_ns = 400000, .partition = 2, .vcpu = 1 }, /* plain */
};
/* A second plan (a mode): core 0's whole frame is the victim's; p's vCPU 1 has no slot in it. */
static const struct bh_slot_cfg plan_victim[] = {
	{ .start_ns = 0, .duration_ns = 1000000, .partition = 0 },
};
static struct bh_plan_cfg plans[2] = { { .name = "normal", .major_frame_ns = 1000000 },
				       { .name = "victim", .major_frame_ns = 1000000 } };
static uint64_t stage2_pool[9][512] __attribute__((aligned(4096)));
static struct bh_system_cfg sys = {
	.magic = BH_CONFIG_MAGIC, .version = BH_CONFIG_VERSION, .name = "reqatk", .core_count = 3,
	.partition_count = 3, .partitions = parts, .plans = plans, .hyp_base = 0x40000000,
	.hyp_size = 0x2000000, .ram_base = 0x40000000, .ram_size = 0x40000000,
	.stage2_block_max = 0x1000, .stage2_pool_pages = 9, .stage2_pool = stage2_pool,
};

static struct vcpu *victim(void) { return &partitions[0].vcpus[0]; }
static struct vcpu *hostile(void) { return &partitions[1].vcpus[0]; }   /* on core 0 */
static struct vcpu *poster(void) { return &partitions[1].vcpus[1]; }    /* on core 1 */
static struct vcpu *plain0(void) { return &partitions[2].vcpus[0]; }    /* on core 2 */
static struct vcpu *plain1(void) { return &partitions[2].vcpus[1]; }    /* on core 0 */

static void boot(enum bh_policy policy)
{
	vv[0] = (struct bh_vcpu_cfg){ .core = 0, .priority = 5, .period_ns = 1000000,
				      .budget_ns = 500000, .deadline_ns = 1000000 };
	hv[0] = (struct bh_vcpu_cfg){ .core = 0, .priority = 3, .period_ns = 100000,
				      .budget_ns = 10000, .deadline_ns = 100000 };
	hv[1] = (struct bh_vcpu_cfg){ .core = 1 };
	pv[0] = (struct bh_vcpu_cfg){ .core = 2 };
	pv[1] = (struct bh_vcpu_cfg){ .core = 0, .priority = 1, .period_ns = 1000000,
				      .budget_ns = 100000, .deadline_ns = 1000000 };
	static const char *const names[] = { "v", "h", "p" };
	struct bh_vcpu_cfg *vc[] = { vv, hv, pv };
	unsigned n[] = { 1, 2, 2 };
	for (unsigned i = 0; i < 3; i++)
		parts[i] = (struct bh_partition_cfg){
			.name = names[i], .id = i, .entry = 0x40000000, .area_count = 1,
			.segment_count = 1, .vcpu_count = n[i], .areas = &areas[i], .segments = &seg,
			.vcpus = vc[i],
			.hm_actions = { BH_HM_HALT_PARTITION, BH_HM_HALT_PARTITION,
					BH_HM_HALT_PARTITION, BH_HM_IGNORE, BH_HM_HALT_SYSTEM },
		};
	sys.cores[0].policy = policy;
	sys.cores[1].policy = BH_POLICY_DEDICATED;
	sys.cores[2].policy = BH_POLICY_DEDICATED;
	sys.plan_count = policy == BH_POLICY_CYCLIC ? 2 : 0;
	plans[0].cores[0] = (struct bh_plan_core_cfg){ .slot_count = 3, .slots = plan0 };
	plans[1].cores[0] = (struct bh_plan_core_cfg){ .slot_count = 1, .slots = plan_victim };
	partition_init_all(&sys);
	plan_init(&sys, 1000);
	fake.vtimer_deadline = UINT64_MAX;
}

/* Run `core`'s exit work at `now`; returns the vCPU it runs, or NULL if it idles. */
static struct vcpu *at_core(unsigned core, uint64_t now)
{
	unsigned self = fake.core;
	fake.core = core;
	fake.counter = now;
	exit_work_set(EXIT_RESCHED);
	FAKE_RUN(core_exit_work());
	fake.core = self;
	return fake.exit == FAKE_IDLED ? NULL : percpu[core].vcpu;
}

/* Every vCPU started (its boot start served), as after the first decisions. */
static void start_all(void)
{
	for (unsigned p = 0; p < 3; p++)
		for (unsigned j = 0; j < partitions[p].cfg->vcpu_count; j++)
			vcpu_serve_requests(&partitions[p].vcpus[j]);
	for (unsigned c = 0; c < 3; c++)
		percpu[c].exit_work = 0;
}

/* --- 1. decide is unbounded: another core's posts keep it looping ----------------------- */

static unsigned posts_left, counter_reads;
static bool in_hook;

/* The hostile partition's vCPU 1, on core 1, suspends and resumes its own vCPU 0 (on core 0) as
 * fast as it can: each is a BH_HC_VCPU_CTL of its own partition, nothing privileged. Modelled as
 * one suspend or resume per counter read of core 0 while it decides. */
static void spam_hook(void)
{
	if (in_hook || fake.core != 0)
		return;
	counter_reads++;
	if (!posts_left)
		return;
	in_hook = true;
	posts_left--;
	fake.core = 1;
	if (vcpu_control(poster(), BH_VCPU_SUSPEND, 0, 0) != BH_OK)
		vcpu_control(poster(), BH_VCPU_RESUME, 0, 0);
	fake.core = 0;
	in_hook = false;
}

/* The victim (highest priority) wakes: its core's decision must end in a bounded number of
 * steps, whatever another partition does on another core. Before 5e675f8 a post only kicked
 * the core (an interrupt, taken after the decision); now every post sets core 0's requests
 * flag, and decide loops while the flag is up (the fence re-check, serve_in_spare_time's
 * `changed`): 5000 posts -> thousands of passes, the victim late by all of them. */
TEST(reqatk_a_hostile_poster_cannot_keep_a_core_deciding)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	victim()->state = VCPU_IDLE;
	hostile()->state = VCPU_IDLE;
	plain1()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == NULL);
	victim()->state = VCPU_READY; /* its wake-up */
	posts_left = 5000;
	counter_reads = 0;
	fake.counter_hook = spam_hook;
	fake.counter_step = 1;
	uint64_t t0 = 3000;
	struct vcpu *ran = at_core(0, t0);
	fake.counter_hook = NULL;
	fake.counter_step = 0;
	EXPECT(ran == victim());
	printf("    decision of the victim's core: %u counter reads, %llu posts absorbed, "
	       "victim entered %llu ticks after its wake-up\n",
	       counter_reads, (unsigned long long)(5000 - posts_left),
	       (unsigned long long)(fake.counter - t0));
	EXPECT(counter_reads < 100);
}

/* The same on a cyclic core, at the victim's slot start: the hostile partition's vCPU 1 posts
 * for its vCPU 0, which is not in its slot. */
TEST(reqatk_a_hostile_poster_cannot_keep_a_cyclic_core_out_of_the_victims_slot)
{
	boot(BH_POLICY_CYCLIC);
	start_all();
	uint64_t frame = 1000 + US(1000); /* the second frame's victim slot */
	posts_left = 5000;
	counter_reads = 0;
	fake.counter_hook = spam_hook;
	fake.counter_step = 1;
	struct vcpu *ran = at_core(0, frame);
	fake.counter_hook = NULL;
	fake.counter_step = 0;
	EXPECT(ran == victim());
	printf("    cyclic: %u counter reads, %llu posts absorbed, decision ended %lld ticks after "
	       "the slot start\n", counter_reads, (unsigned long long)(5000 - posts_left),
	       (long long)(fake.counter - frame));
	EXPECT(counter_reads < 100);
}

/* --- 2. kicks from changes that do not make the vCPU want the core ---------------------- */

/* EDF: the hostile vCPU 0 idles with budget and an earlier deadline than the running victim.
 * Its sibling on core 1 suspends it (it then wants nothing) and resumes it (it wants the core,
 * a kick is fair) - back to back, before core 0 could run it, so it is never charged. Every
 * suspend kicks core 0 although h does not want the core (outranks() ignores that); with
 * resume+suspend pairs, h's budget is never spent and the kicks never stop. Expected: no kick
 * for a change that leaves h not wanting the core (the suspend), so at most one per resume. */
TEST(reqatk_a_suspend_of_a_vcpu_that_cannot_run_does_not_kick_edf)
{
	boot(BH_POLICY_EDF);
	start_all();
	hostile()->state = VCPU_IDLE;
	plain1()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == victim());
	EXPECT(hostile()->budget_left > 0);
	EXPECT(hostile()->abs_deadline < victim()->abs_deadline);
	unsigned k0 = fake.kicks[0];
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_SUSPEND, 0, 0), BH_OK);
	fake.core = 0;
	unsigned suspend_kicks = fake.kicks[0] - k0;
	printf("    EDF: suspend of idle h (not wanting the core) -> %u kick(s) into the victim\n",
	       suspend_kicks);
	EXPECT_EQ(suspend_kicks, 0);
	/* and the victim's core, kicked, decides the same: the kick was for nothing */
	EXPECT(at_core(0, 2100) == victim());
}

/* Not new in 5e675f8, which kicked for every change before: a resume of the idle h makes it
 * ready and outranking, so the kick is by the rule; its sibling suspends it again before core
 * 0 runs it, so h is never charged. 1000 resume+suspend pairs from core 1 cost the running
 * victim 999 kicks (each an exit and a decision, charged to the victim's budget) and h
 * nothing. Expected: h's interference bounded per period of h, not by the rate of its
 * sibling's calls. Now a change kicks at most once per deadline of h (sched.c
 * first_kick_for_deadline). */
TEST(reqatk_resume_suspend_pairs_do_not_kick_an_edf_victim_at_no_cost)
{
	boot(BH_POLICY_EDF);
	start_all();
	hostile()->state = VCPU_IDLE;
	plain1()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == victim());
	unsigned k0 = fake.kicks[0];
	uint64_t budget = hostile()->budget_left;
	for (unsigned i = 0; i < 1000; i++) {
		fake.core = 1;
		vcpu_control(poster(), BH_VCPU_RESUME, 0, 0);
		vcpu_control(poster(), BH_VCPU_SUSPEND, 0, 0);
		fake.core = 0;
		at_core(0, 2200 + i); /* the kick's decision: the victim again */
	}
	printf("    EDF: 1000 resume+suspend pairs -> %u kicks into the running victim, h's budget "
	       "%llu -> %llu ticks (never charged)\n", fake.kicks[0] - k0,
	       (unsigned long long)budget, (unsigned long long)hostile()->budget_left);
	EXPECT(fake.kicks[0] - k0 <= 10);
}

/* The limit above must not cost a legitimate change its preemption: h's sibling resumes h (a
 * kick, h runs), suspends it while it runs (a kick: it runs there) and resumes it again within
 * the same deadline of h, budget left. h outranks the victim and wants the core: without a
 * kick it waits for the victim's next decision (its budget end, 500 us, or a release: h's
 * own, at its deadline), and misses the deadline its budget was meant for. h ran since the
 * first kick, so that one is paid for: the second resume kicks too. */
TEST(reqatk_an_edf_resume_after_the_vcpu_ran_kicks_again)
{
	boot(BH_POLICY_EDF);
	start_all();
	hostile()->state = VCPU_IDLE;
	plain1()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == victim());
	uint64_t deadline = hostile()->abs_deadline;
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_SUSPEND, 0, 0), BH_OK);
	unsigned k0 = fake.kicks[0];
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_RESUME, 0, 0), BH_OK);
	EXPECT_EQ(fake.kicks[0], k0 + 1);
	fake.core = 0;
	EXPECT(at_core(0, 2100) == hostile()); /* the kick's decision: h runs */
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_SUSPEND, 0, 0), BH_OK);
	fake.core = 0;
	EXPECT(at_core(0, 2200) == victim());
	EXPECT(hostile()->budget_left > 0);
	EXPECT_EQ(hostile()->abs_deadline, deadline); /* the same deadline of h */
	unsigned k1 = fake.kicks[0];
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_RESUME, 0, 0), BH_OK);
	fake.core = 0;
	printf("    EDF: h resumed again after it ran, same deadline: %u kick(s); core 0's timer "
	       "at %llu (h's deadline %llu)\n", fake.kicks[0] - k1, (unsigned long long)fake.timer,
	       (unsigned long long)deadline);
	EXPECT_EQ(fake.kicks[0], k1 + 1);
}

/* vCPU 0 of p starts its vCPU 1 from core 2 (as PSCI CPU_ON), posted for core 0 to serve. */
static void vcpu_0_starts_vcpu_1_from_core_2(void)
{
	fake.core = 2;
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_START, 1, 0), BH_OK);
	fake.core = 0;
}

/* --- 3. a restart never completes because one vCPU is starved on its core --------------- */

/* Partition p: vCPU 0 alone on dedicated core 2, vCPU 1 at priority 1 on fixed-priority core 0,
 * below the victim (5), which computes without a pause. p restarts itself (BH_HC_RESET_SELF
 * from vCPU 0). Before 5e675f8 vCPU 1's stop was served at core 0's next exit and vCPU 0 ran
 * the reload and came back on core 2 (vCPU 1 starved as before, as FP says). Now the stop
 * waits for vCPU 1's own time, which never comes: the restart never completes, and vCPU 0 -
 * alone on its own core - is down for good. A user would expect at least vCPU 0 back. */
static void restart_with_vcpu1(bool started)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	if (started) { /* vCPU 0 started vCPU 1 (as Linux's PSCI CPU_ON), served in spare time */
		vcpu_0_starts_vcpu_1_from_core_2();
		vcpu_serve_requests(plain1());
		percpu[0].exit_work = 0;
		EXPECT_EQ(plain1()->state, VCPU_READY);
	}
	EXPECT(at_core(0, 2000) == victim());
	EXPECT(at_core(2, 2000) == plain0());
	fake.core = 2;
	EXPECT(partition_restart(&partitions[2], false, BH_RESTART_SELF));
	fake.core = 0;
	/* core 0: the victim runs on and exits now and then (its timer, hypercalls) */
	for (unsigned i = 0; i < 100; i++) {
		EXPECT(at_core(0, 3000 + US(1000) * i) == victim());
		at_core(2, 3000 + US(1000) * i + 10);
	}
	printf("    vCPU 1 %s: after 100 ms p's state %u (0 = running), vCPU 0 state %u, vCPU 1 "
	       "request %u state %u\n", started ? "started" : "never started",
	       partitions[2].state, plain0()->state, plain1()->request, plain1()->state);
	EXPECT(plain0()->state == VCPU_LOADING || plain0()->state == VCPU_READY);
	EXPECT_EQ(partitions[2].state, PARTITION_RUNNING);
	EXPECT_EQ(vcpu_public_state(plain1()), VCPU_HALTED);
}

/* Counted while it did not run (stop_all), vCPU 1 keeps its stop posted: the victim idles, and
 * core 0 serves it (its time, or the core's spare time) instead of running the ended
 * incarnation's vCPU 1 from its old registers. */
TEST(reqatk_a_restart_completes_while_one_vcpu_is_starved)
{
	restart_with_vcpu1(true);
	EXPECT(plain1()->request & VCPU_REQ_STOP);
	victim()->state = VCPU_IDLE;
	hostile()->state = VCPU_IDLE;
	EXPECT(at_core(0, 3000 + US(1000) * 101) == NULL);
	EXPECT_EQ(plain1()->request, 0);
	EXPECT_EQ(plain1()->state, VCPU_HALTED);
	/* and the next incarnation's start of it runs it from its entry */
	vcpu_0_starts_vcpu_1_from_core_2();
	EXPECT(at_core(0, 3000 + US(1000) * 102) == plain1());
	EXPECT_EQ(plain1()->state, VCPU_READY);
}

/* The next incarnation's vCPU 0 starts vCPU 1 (PSCI CPU_ON at its boot) just as core 0, in its
 * spare time, serves the stop that the restart counted at once: the start must be taken (the
 * guest sees the stop being served, halted), not refused because the old incarnation's state
 * (ready) still shows until the release ends. lifeport saw it once in 300 boots. */
static int start_during_release = 1;

static void start_plain1_from_core_2(struct vcpu *v)
{
	if (v != plain1() || start_during_release != 1)
		return;
	fake.core = 2;
	start_during_release = vcpu_control(plain0(), BH_VCPU_START, 1, 0);
	fake.core = 0;
}

TEST(reqatk_a_start_during_the_release_of_a_counted_vcpu_is_taken)
{
	restart_with_vcpu1(true);
	victim()->state = VCPU_IDLE;
	hostile()->state = VCPU_IDLE;
	start_during_release = 1;
	fake.release_hook = start_plain1_from_core_2;
	EXPECT(at_core(0, 3000 + US(1000) * 101) == plain1()); /* stopped, then started */
	fake.release_hook = NULL;
	EXPECT_EQ(start_during_release, BH_OK);
	EXPECT_EQ(plain1()->state, VCPU_READY);
	EXPECT_EQ(plain1()->request, 0);
}

/* A restart posted from another core while core 0 preempts for a vCPU it counts: p's vCPU 1
 * (raised to priority 4 here) wakes on core 0 above h's vCPU 0, which runs; p's vCPU 0 restarts
 * p from core 2 just after the one-comparison preemption (sched.c preempt) looked for
 * requests. The restart sees vCPU 1 switched out and counts it; core 0 must not run it before
 * it serves the stop. */
static bool restart_posted;

/* p restarts itself from core 2, once, while core 0 is where the hook is called. */
static void restart_p_hook(void)
{
	if (restart_posted || fake.core != 0)
		return;
	restart_posted = true;
	fake.core = 2;
	EXPECT(partition_restart(&partitions[2], false, BH_RESTART_SELF));
	fake.core = 0;
}

TEST(reqatk_a_vcpu_counted_for_a_restart_does_not_run_after_a_preemption)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	pv[1].priority = 4;
	start_all();
	victim()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == hostile());
	EXPECT(at_core(2, 2000) == plain0());
	plain1()->state = VCPU_READY; /* started, and woken by its timer on core 0 */
	fake.core = 0;
	fake.counter = 2100;
	percpu[0].sched.woken = plain1();
	exit_work_set(EXIT_PREEMPT);
	restart_posted = false;
	fake.counter_hook = restart_p_hook;
	FAKE_RUN(core_exit_work());
	fake.counter_hook = NULL;
	EXPECT(restart_posted);
	printf("    core 0 runs %s; p's vCPU 1 request %u state %u\n",
	       percpu[0].vcpu == plain1() ? "p's vCPU 1" : "another", plain1()->request,
	       plain1()->state);
	EXPECT(percpu[0].vcpu != plain1() || !(plain1()->request & VCPU_REQ_STOP));
	EXPECT(plain1()->state != VCPU_READY);
}

/* The ended incarnation's vCPU 1 had armed a BH_HC_SET_TIMER deadline. Counted at once and
 * never run since, it keeps it until core 0 serves its stop; the next incarnation runs and
 * starts vCPU 1 (PSCI CPU_ON at its boot), and the old deadline passes before core 0 serves
 * the stop and the start. What the ended incarnation armed must not reach the next one: the
 * started vCPU's first run finds no timer interrupt it never asked for. */
TEST(reqatk_a_counted_vcpus_old_timer_does_not_reach_the_next_incarnation)
{
	restart_with_vcpu1(true);
	uint64_t t = 3000 + US(1000) * 101;
	plain1()->timer_deadline = t + US(50); /* armed by the ended incarnation, one-shot */
	fake.core = 2;
	fake.counter = t;
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_START, 1, 0), BH_OK);
	fake.core = 0;
	EXPECT(at_core(0, t + US(60)) == victim()); /* a full decision past the old deadline */
	victim()->state = VCPU_IDLE;
	hostile()->state = VCPU_IDLE;
	EXPECT(at_core(0, t + US(100)) == plain1()); /* stopped, then started */
	EXPECT_EQ(plain1()->request, 0);
	printf("    the ended incarnation's timer interrupt at the started vCPU 1's first run: %s\n",
	       virq_is_pending(plain1(), BH_VIRQ_TIMER) ? "PENDING" : "none");
	EXPECT(!virq_is_pending(plain1(), BH_VIRQ_TIMER));
	EXPECT_EQ(plain1()->virq.count, 0);
	EXPECT_EQ(plain1()->timer_deadline, TIME_NEVER);
}

/* The restart is posted from core 2 while core 0 switches p's vCPU 1 (priority 1, running
 * alone) out for the victim, woken: the restart reads core 0's running vCPU before the switch
 * stores the victim, so it does not count vCPU 1 (it runs), and waits for its stop. Switched
 * out, vCPU 1 runs nothing more before its stop is served, as for a vCPU the restart counts;
 * but the victim computes without a pause and the core has no spare time, so the stop is never
 * served: the restart never completes, and vCPU 0, alone on its core, is down for good. */
TEST(reqatk_a_restart_posted_during_the_switch_away_from_a_vcpu_completes)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	vcpu_0_starts_vcpu_1_from_core_2();
	vcpu_serve_requests(plain1());
	percpu[0].exit_work = 0;
	victim()->state = VCPU_IDLE;
	hostile()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == plain1());
	EXPECT(at_core(2, 2000) == plain0());
	victim()->state = VCPU_READY; /* woken: core 0 switches plain1 out for it */
	restart_posted = false;
	fake.switch_hook = restart_p_hook; /* the restart from core 2, once, in core 0's switch */
	EXPECT(at_core(0, 2100) == victim());
	fake.switch_hook = NULL;
	EXPECT(restart_posted);
	for (unsigned i = 0; i < 100; i++) {
		EXPECT(at_core(0, 3000 + US(1000) * i) == victim());
		at_core(2, 3000 + US(1000) * i + 10);
	}
	printf("    restart posted during the switch: after 100 ms p's state %u (0 = running), "
	       "vCPU 0 state %u, vCPU 1 request %u\n", partitions[2].state, plain0()->state,
	       plain1()->request);
	EXPECT_EQ(partitions[2].state, PARTITION_RUNNING);
	EXPECT(plain0()->state == VCPU_READY);
	EXPECT_EQ(vcpu_public_state(plain1()), VCPU_HALTED);
}

/* h's vCPU 1 (core 1) halts and starts h's vCPU 0 (core 0, below the victim): core 0 serves
 * the stop and the start together, outside vCPU 0's time. During that serve h restarts itself
 * from vCPU 1, whose own stop core 1 serves at once: the restart counts vCPU 0 at once (being
 * served, it does not run), vCPU 1 last, and makes vCPU 0 loading. The start's reset then ends
 * the serve and must not make the loading vCPU 0 ready: the stop the restart posted would then
 * halt it, and nobody would load h again (restarting for good). */
static bool h_restarted;

static void restart_h_from_core_1(struct vcpu *v)
{
	if (v != hostile() || h_restarted)
		return;
	h_restarted = true;
	fake.core = 1;
	EXPECT(partition_restart(&partitions[1], false, BH_RESTART_SELF));
	vcpu_serve_requests(poster()); /* vCPU 1's exit from the trap: its stop */
	fake.core = 0;
}

TEST(reqatk_a_restart_during_the_serve_of_vcpu_0s_start_reloads_it)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	EXPECT_EQ(vcpu_control(hostile(), BH_VCPU_START, 1, 0), BH_OK); /* h's secondary */
	EXPECT(at_core(1, 2000) == poster());
	EXPECT(at_core(0, 2000) == victim());
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_HALT, 0, 0), BH_OK);
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_START, 0, 0), BH_OK);
	fake.core = 0;
	EXPECT_EQ(hostile()->request, VCPU_REQ_STOP | VCPU_REQ_RESET);
	h_restarted = false;
	fake.release_hook = restart_h_from_core_1;
	vcpu_serve_requests(hostile()); /* core 0's spare time (the victim's core: any time) */
	fake.release_hook = NULL;
	EXPECT(h_restarted);
	printf("    after the serve: h's vCPU 0 state %u (4 = loading), request %u, h's state %u\n",
	       hostile()->state, hostile()->request, partitions[1].state);
	victim()->state = VCPU_IDLE;
	for (unsigned i = 0; i < 10; i++)
		at_core(0, 3000 + US(100) * i);
	printf("    1 ms later: h's state %u (0 = running), its vCPU 0 state %u\n",
	       partitions[1].state, hostile()->state);
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING);
	EXPECT_EQ(hostile()->state, VCPU_READY);
}

/* h's vCPU 0 waits on core 0, still loaded there (the last vCPU the core ran), when its sibling
 * halts it: the stop waits for its own time. Its virtual timer then fires on core 0: the core
 * takes the physical PPI, which stays active until the guest ends it, and injects it as a
 * forwarded interrupt. The sibling starts vCPU 0 again, from core 1: the start drops what the
 * halted vCPU was sent. A PPI is core 0's own: no other core can end it (arch_irq_release
 * ends only SPIs), and core 0 ends it when it switches the vCPU out or releases it, by
 * withdrawing the forwarded interrupt (aarch64 save_timer_and_gic, virq_withdraw). Dropped
 * from core 1 with its forwarded mark, it stayed active: every vCPU core 0 ran next, of any
 * partition, lost its virtual timer interrupts. */
TEST(reqatk_a_start_from_another_core_leaves_a_taken_vtimer_ppi_to_its_core)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	EXPECT_EQ(vcpu_control(hostile(), BH_VCPU_START, 1, 0), BH_OK); /* h's secondary */
	EXPECT(at_core(1, 2000) == poster());
	hostile()->state = VCPU_IDLE; /* waits, loaded on core 0 */
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_HALT, 0, 0), BH_OK);
	fake.core = 0;
	virq_inject(hostile(), BH_VIRQ_VTIMER, true); /* its timer fired on core 0 */
	fake.core = 1;
	EXPECT_EQ(vcpu_control(poster(), BH_VCPU_START, 0, 0), BH_OK);
	fake.core = 0;
	EXPECT(!virq_is_pending(hostile(), BH_VIRQ_VTIMER)); /* not delivered to the started one */
	bool core_ends_it = virq_withdraw(hostile(), BH_VIRQ_VTIMER);
	printf("    core 0, switching h's vCPU 0 out, %s its taken virtual timer PPI\n",
	       core_ends_it ? "ends" : "does NOT end (active for good)");
	EXPECT(core_ends_it);
}

/* The same with vCPU 1 never started (halted since boot, as a partition's secondaries are): it
 * holds nothing, yet its stop is still posted (stop_all) and counted only when served on core
 * 0, in its own time. */
TEST(reqatk_a_restart_completes_beside_a_never_started_vcpu)
{
	restart_with_vcpu1(false);
}

/* The same on a cyclic core: the system partition switched to a plan (a mode) in which p's
 * vCPU 1 has no slot on core 0, whose whole frame is the victim's, which computes. p restarts
 * itself: its restart waits for vCPU 1's stop, which waits for a slot the plan does not have.
 * Before 5e675f8 the stop was served at core 0's next exit. */
TEST(reqatk_a_restart_completes_while_the_plan_gives_one_vcpu_no_slot)
{
	boot(BH_POLICY_CYCLIC);
	start_all();
	EXPECT_EQ(plan_request(1, BH_PLAN_NOW, 1000 + US(100)), BH_OK);
	EXPECT(at_core(0, 1000 + US(100)) == victim());
	EXPECT(at_core(2, 1000 + US(100)) == plain0());
	fake.core = 2;
	EXPECT(partition_restart(&partitions[2], false, BH_RESTART_SELF));
	fake.core = 0;
	for (unsigned i = 0; i < 100; i++) {
		EXPECT(at_core(0, 1000 + US(200) + US(1000) * i) == victim());
		at_core(2, 1000 + US(200) + US(1000) * i + 10);
	}
	printf("    cyclic, plan without vCPU 1's slot: after 100 frames p's state %u (0 = running), "
	       "vCPU 0 state %u, vCPU 1 request %u\n", partitions[2].state, plain0()->state,
	       plain1()->request);
	EXPECT(plain0()->state == VCPU_LOADING || plain0()->state == VCPU_READY);
	EXPECT_EQ(partitions[2].state, PARTITION_RUNNING);
}

/* --- 4. an interrupt sent after a start returned was lost --------------------------------- */

/* Cyclic core 0: p's vCPU 1 (slot 600-1000 us) is halted (a secondary never started); p's vCPU 0
 * (core 2) starts it (BH_VCPU_START: BH_OK, its state READY at once, vcpu_public_state) at 100
 * us, in the victim's slot, then sends it a port notification at 110 us. The start is served
 * only at vCPU 1's slot (600 us). Its reset cleared the pending interrupts (virq_release), so
 * the notification, sent after the start was reported done, was gone (before 5e675f8 core 0
 * was kicked and reset vCPU 1 at once, so the window was the kick latency). Now the start
 * drops what was sent before it when it is posted (a doorbell here), and keeps the rest. */
TEST(reqatk_an_interrupt_sent_after_a_start_survives_the_start)
{
	boot(BH_POLICY_CYCLIC);
	start_all();
	EXPECT_EQ(plain1()->state, VCPU_HALTED); /* a secondary: halted since boot */
	EXPECT(at_core(0, 1000 + US(1000)) == victim()); /* next frame, the victim's slot */
	fake.core = 2;
	virq_inject(plain1(), BH_VIRQ_DOORBELL, false); /* sent while it is halted: dropped */
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_START, 1, 0), BH_OK);
	EXPECT_EQ(vcpu_public_state(plain1()), VCPU_READY); /* as PSCI AFFINITY_INFO: ON */
	fake.core = 0;
	printf("    kicks to core 0 for the start: %u\n", fake.kicks[0]);
	/* core 0 exits once (a kick, if any, or the victim's own exit) before the message */
	EXPECT(at_core(0, 1000 + US(1005)) == victim());
	fake.core = 2;
	virq_inject(plain1(), BH_VIRQ_PORT, false); /* a port message to it, 10 us after */
	fake.core = 0;
	EXPECT(at_core(0, 1000 + US(1010)) == victim());
	EXPECT(at_core(0, 1000 + US(1600)) == plain1()); /* its slot: started now */
	bool pending = plain1()->virq.pending[BH_VIRQ_PORT / 32] & (1u << (BH_VIRQ_PORT % 32));
	printf("    port notification sent after START returned BH_OK: %s at vCPU 1's first run\n",
	       pending ? "pending" : "LOST");
	EXPECT(pending);
	EXPECT(!virq_is_pending(plain1(), BH_VIRQ_DOORBELL));
	EXPECT_EQ(plain1()->virq.count, 1);
}

/* --- 5. a core idling with a stale live wake-up has no spare time, and is never kicked ----- */

/* Fixed-priority core 0. The hostile vCPU h idles last, so it stays loaded while the core
 * sleeps; its virtual timer's compare value is in the past (the guest took its timer interrupt
 * and left it active, or disabled it at its vGIC: live_vtimer_deadline still reports the past
 * cval for the loaded vCPU, unlike arch_vtimer_deadline for one not loaded), so it wakes no one.
 * own_instant takes that past live_wake as the core's next instant: no spare time (be_until 0)
 * for as long as h idles. p's vCPU 0 (core 2) then starts p's vCPU 1 on core 0 (PSCI CPU_ON):
 * the core is idle (cur NULL), without spare time, so it is not kicked; its own timer is not
 * armed for anything; the start waits for an unrelated interrupt on core 0 - forever on a quiet
 * core. Before 5e675f8 every change kicked the core. */
TEST(reqatk_a_start_reaches_an_idle_core_whose_loaded_vcpu_has_a_stale_timer)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	victim()->state = VCPU_IDLE;
	plain1()->state = VCPU_HALTED;
	EXPECT(at_core(0, 2000) == hostile());
	hostile()->arch.vtimer_set = true;
	hostile()->arch.vtimer_at = 1500; /* in the past, and it will not fire */
	hostile()->state = VCPU_IDLE;
	EXPECT(at_core(0, 3000) == NULL);
	EXPECT(percpu[0].loaded == hostile());
	printf("    idle core 0: be_until %llu, its timer %s\n",
	       (unsigned long long)percpu[0].sched.be_until,
	       fake.timer == TIME_NEVER ? "off" : "armed");
	unsigned kicks = fake.kicks[0];
	fake.core = 2;
	fake.counter = 3100;
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_START, 1, 0), BH_OK);
	fake.core = 0;
	bool kicked = fake.kicks[0] != kicks;
	printf("    start of p's vCPU 1 (prio 1, the only ready vCPU then): core 0 %s, its timer %s\n",
	       kicked ? "kicked" : "NOT kicked", fake.timer == TIME_NEVER ? "off" : "armed");
	EXPECT(kicked || fake.timer != TIME_NEVER);
}

/* --- the execution clock across a restart served in the vCPU's own time ------------------- */

/* p's vCPU 1 runs on core 0 from 1000; p's vCPU 0 halts and starts it at 5000, and core 0 serves
 * both in its time (its next exit). Its execution clock counts from the start: a read just after
 * must not include the 4000 ticks it ran before, already reported before the halt. It did: the
 * reset zeroed the count and left the running vCPU's run_start at 1000 (edfreset's status reads
 * summed to 79 % of the wall time for a vCPU on a 50 % budget; BH_CLOCK_EXEC timers fired
 * early). */
TEST(reqatk_the_execution_clock_of_a_vcpu_restarted_while_it_runs_counts_from_its_start)
{
	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	vcpu_0_starts_vcpu_1_from_core_2();
	victim()->state = VCPU_IDLE;
	hostile()->state = VCPU_IDLE;
	EXPECT(at_core(0, 1000) == plain1());
	fake.counter = 5000;
	EXPECT(sched_exec_ticks(plain1()) == 4000);
	fake.core = 2;
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_HALT, 1, 0), BH_OK);
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_START, 1, 0), BH_OK);
	fake.core = 0;
	EXPECT(at_core(0, 5000) == plain1());
	fake.counter = 5100;
	printf("    execution clock 100 ticks after the start: %llu ticks\n",
	       (unsigned long long)sched_exec_ticks(plain1()));
	EXPECT(sched_exec_ticks(plain1()) <= 100);
}

/* --- a fixed-priority core's led wake-up and a lower vCPU's stop ------------------------------ */

/* The victim idles loaded on fixed-priority core 0, its virtual timer live at `wake`; the core's
 * timer leads it. Just before that lead, p's vCPU 0 halts p's vCPU 1 (below the victim): its stop
 * waits for its own time or spare time. The decision the lead brings must wake the victim before
 * it picks; else it picked vCPU 1 (a vCPU with a request wants the core) and served the stop in
 * the victim's lead (req_fp.yaml: 7 stops, the victim 940 ticks late). */
TEST(reqatk_a_led_wake_up_of_the_loaded_vcpu_comes_before_a_lower_vcpus_stop)
{
	uint64_t wake = 10000;

	boot(BH_POLICY_FIXED_PRIORITY);
	start_all();
	vcpu_0_starts_vcpu_1_from_core_2();
	hostile()->state = VCPU_IDLE;
	EXPECT(at_core(0, 2000) == victim());
	vcpu_serve_requests(plain1()); /* started in spare time */
	plain1()->state = VCPU_IDLE;
	victim()->arch.vtimer_set = true;
	victim()->arch.vtimer_at = wake;
	victim()->state = VCPU_IDLE;
	EXPECT(at_core(0, 3000) == NULL);
	EXPECT(percpu[0].loaded == victim());
	uint64_t led = wake - percpu[0].sched.lead;
	EXPECT_EQ(fake.timer, led);
	fake.core = 2;
	fake.counter = led - 5;
	EXPECT_EQ(vcpu_control(plain0(), BH_VCPU_HALT, 1, 0), BH_OK);
	fake.core = 0;
	fake.counter = led;
	fake.counter_step = 1; /* the core waits for the wake-up, reading the counter */
	sched_timer_event();
	FAKE_RUN(core_exit_work());
	fake.counter_step = 0;
	EXPECT(percpu[0].vcpu == victim());
	EXPECT(fake.counter >= wake);
	EXPECT(plain1()->request & VCPU_REQ_STOP); /* its own time or spare time */
}
