/* Reproductions from an outside review of the vCPU and partition life cycle. Each test plays
 * another core at a chosen instant inside a core's own work (fake.release_hook,
 * fake.irq_release_hook, fake.counter_hook) and expects what docs/architecture.md, "Life
 * cycle", promises. */
#include "console.h"
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "fixture.h"
#include "hm.h"
#include "main.h"
#include "partition.h"
#include "percpu.h"
#include "sched.h"
#include "virq.h"
#include "unit.h"

static void core1_exits(void)
{
	fake.core = 1;
	percpu[1].sched.timer_at = TIME_NEVER;
	FAKE_RUN(core_exit_work());
}

/* beta (id 1, system): vCPU 0 on core 1 and vCPU 1 on core 2, both started and running. */
static struct partition *beta_running(void)
{
	struct partition *p = &partitions[1];
	fixture_boot();
	fixture_serve(1);
	fixture_run(1, &p->vcpus[0]);
	EXPECT_EQ(vcpu_control(&p->vcpus[0], BH_VCPU_START, 1, 0), BH_OK);
	fixture_serve(2);
	EXPECT_EQ(p->vcpus[1].state, VCPU_READY);
	return p;
}

/* --- 1. A restart posted while a core is in the middle of a stop's release --------------- */

static void core0_restarts_beta(struct vcpu *v)
{
	(void)v;
	fake.release_hook = NULL;
	unsigned self = fake.core;
	fake.core = 0; /* alpha's core: a system partition (beta is halted: only one restarts it) */
	partition_restart(&partitions[1], true, BH_RESTART_SYSTEM_PARTITION);
	fake.core = self;
}

TEST(attack_restart_during_a_release_counts_that_vcpu_twice_and_never_reloads)
{
	struct partition *p = beta_running();
	struct vcpu *v0 = &p->vcpus[0], *v1 = &p->vcpus[1];

	partition_halt(p); /* or vCPU 0's BH_VCPU_CTL HALT of vCPU 1, or its PSCI CPU_OFF */
	/* Core 2 has taken vCPU 1's stop and is releasing it when core 0 restarts beta. */
	fake.release_hook = core0_restarts_beta;
	fixture_serve(2);
	EXPECT_EQ(p->state, PARTITION_RESTARTING);
	fixture_serve(2); /* the restart's own stop of vCPU 1 */
	/* vCPU 0 has not been released yet: the reload must not be handed to it. */
	EXPECT(v0->state != VCPU_LOADING);
	fixture_serve(1); /* now vCPU 0's core releases it */
	EXPECT_EQ(v0->state, VCPU_LOADING);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT_EQ(v0->state, VCPU_READY);
	EXPECT_EQ(v1->state, VCPU_HALTED);
}

/* --- 2. A halt and a restart between a reload's check and its step ------------------------ */

static void core0_halts_and_restarts_beta(void)
{
	fake.counter_hook = NULL;
	unsigned self = fake.core;
	fake.core = 0;
	partition_halt(&partitions[1]);
	partition_restart(&partitions[1], false, BH_RESTART_SYSTEM_PARTITION);
	fake.core = self;
}

TEST(attack_halt_and_restart_during_the_last_reload_step_leave_a_running_partition_with_no_vcpu)
{
	struct partition *p = beta_running();
	struct vcpu *v0 = &p->vcpus[0];

	partition_restart(p, false, BH_RESTART_SELF); /* warm: the reload is a single step */
	fixture_serve(1);
	fixture_serve(2);
	EXPECT_EQ(v0->state, VCPU_LOADING);
	fake.core = 1;
	percpu[1].sched.timer_at = TIME_NEVER;
	percpu[1].exit_work = 0;
	percpu[1].requests = 0;
	/* Core 1 has found nothing due (core_busy reads the counter last) and is about to take
	 * beta's lock for the step when core 0 halts and restarts beta. */
	fake.counter_hook = core0_halts_and_restarts_beta;
	partition_load_steps(v0);
	EXPECT_EQ(p->state, PARTITION_RESTARTING); /* the second restart has not been released */
	fixture_serve(2);
	fixture_serve(1);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT_EQ(v0->state, VCPU_READY); /* the second restart runs vCPU 0 again */
}

/* --- 3. A propagated health event outlives a restart not made by the health monitor ------- */

static bool raise_on(unsigned core, struct vcpu *v, enum bh_hm_event kind)
{
	struct hm_event ev = { .kind = kind, .address = 0x42400000, .pc = 0x40000120,
			       .detail = "attack" };
	bool goes_on = false;
	fixture_run(core, v);
	FAKE_RUN(goes_on = hm_raise(v, &ev));
	return goes_on;
}

TEST(attack_a_restart_by_bh_hc_reset_or_partition_ctl_keeps_a_propagated_event)
{
	struct partition *p = &partitions[1];
	uint8_t saved = fixture_partitions[1].hm_actions[BH_HM_PARTITION_ERROR];
	struct bh_hm_log_entry e;

	fixture_partitions[1].hm_actions[BH_HM_PARTITION_ERROR] = BH_HM_PROPAGATE;
	fixture_boot();
	fixture_serve(1);
	struct vcpu *v0 = &p->vcpus[0];
	EXPECT(raise_on(1, v0, BH_HM_PARTITION_ERROR)); /* propagated, not taken yet */
	/* beta restarts itself (BH_HC_RESET, PSCI SYSTEM_RESET) or a system partition restarts
	 * it (BH_HC_PARTITION_CTL): "a restart forgets an untaken propagated event". */
	partition_restart(p, true, BH_RESTART_SELF);
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT(!hm_take(v0, &e)); /* the new incarnation holds nothing */
	/* Put it back as it was, then show the consequence: the new incarnation's first event. */
	fixture_boot();
	fixture_serve(1);
	EXPECT(raise_on(1, v0, BH_HM_PARTITION_ERROR));
	partition_restart(p, true, BH_RESTART_SELF);
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT(raise_on(1, v0, BH_HM_PARTITION_ERROR)); /* reaches its handler... */
	EXPECT_EQ(p->state, PARTITION_RUNNING);         /* ...instead of halting the partition */
	hm_take(v0, &e);
	fixture_partitions[1].hm_actions[BH_HM_PARTITION_ERROR] = saved;
}

TEST(attack_a_vcpu_not_yet_released_propagates_into_the_new_incarnation)
{
	struct partition *p = beta_running();
	struct vcpu *v0 = &p->vcpus[0], *v1 = &p->vcpus[1];
	uint8_t saved_err = fixture_partitions[1].hm_actions[BH_HM_PARTITION_ERROR];
	struct bh_hm_log_entry e;

	fixture_partitions[1].hm_actions[BH_HM_PARTITION_ERROR] = BH_HM_PROPAGATE;
	/* vCPU 0 faults: cold_restart, which forgets what was propagated... */
	EXPECT(!raise_on(1, v0, BH_HM_MEMORY_VIOLATION));
	/* ...but vCPU 1 is still in its guest until core 2 serves the stop, and raises one
	 * (BH_HC_RAISE_EVENT), its stop still posted. */
	EXPECT(v1->request & VCPU_REQ_STOP);
	struct hm_event ev = { .kind = BH_HM_PARTITION_ERROR, .detail = "attack" };
	bool goes_on = false;
	fake.core = 2;
	percpu[2].vcpu = percpu[2].loaded = v1;
	percpu[2].regs = &v1->regs;
	FAKE_RUN(goes_on = hm_raise(v1, &ev));
	EXPECT(goes_on);
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT(!hm_take(v1, &e)); /* the new incarnation's vCPU 1 holds the old one's event */
	hm_take(v1, &e);
	fixture_partitions[1].hm_actions[BH_HM_PARTITION_ERROR] = saved_err;
}

/* --- 4. virq_release against an injection from another core ------------------------------- */

static void core0_rings_betas_doorbell(unsigned intid)
{
	if (intid != 40)
		return;
	fake.irq_release_hook = NULL;
	unsigned self = fake.core;
	fake.core = 0; /* alpha's BH_HC_SHM_DOORBELL: notify() -> virq_inject(&beta.vcpus[0]) */
	virq_inject(&partitions[1].vcpus[0], BH_VIRQ_DOORBELL, false);
	fake.core = self;
}

TEST(attack_a_doorbell_rung_while_vcpu0_is_reset_is_lost_and_so_are_all_later_ones)
{
	struct partition *p = beta_running();
	struct vcpu *v0 = &p->vcpus[0];
	bool fw;

	partition_restart(p, true, BH_RESTART_SELF);
	fixture_serve(1);
	fixture_serve(2);
	EXPECT_EQ(v0->state, VCPU_LOADING);
	/* Its device (SPI 40, routed to core 1) fires during the reload. */
	fake.core = 1;
	virq_inject(v0, 40, true);
	/* vCPU 0's reset ends it at the GIC (virq_release); meanwhile alpha rings the doorbell. */
	fake.irq_release_hook = core0_rings_betas_doorbell;
	core1_exits();
	fake.irq_release_hook = NULL;
	EXPECT_EQ(v0->state, VCPU_READY);
	EXPECT(virq_is_pending(v0, BH_VIRQ_DOORBELL));
	EXPECT(virq_has_pending(v0)); /* the new incarnation is told */
	/* And the next doorbell, much later, is delivered too. */
	while (virq_take(v0, &fw) >= 0)
		;
	virq_inject(v0, BH_VIRQ_DOORBELL, false);
	EXPECT_EQ(virq_take(v0, &fw), BH_VIRQ_DOORBELL);
}

/* --- 5. A warm restart joining a cold one: the image is reloaded, x1 says warm ------------ */

TEST(attack_a_warm_restart_joining_a_cold_one_reloads_but_tells_the_guest_warm)
{
	struct partition *p = beta_running();

	memset(&fake_ram[0x200000], 'Z', 16);
	partition_restart(p, true, BH_RESTART_HM); /* the HM's cold_restart */
	partition_restart(p, false, BH_RESTART_SELF); /* and its own BH_HC_RESET warm, before it was released */
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT(memcmp(&fake_ram[0x200000], SEG_TEXT, sizeof(SEG_TEXT)) == 0); /* reloaded: cold */
	EXPECT_EQ(fake.reset_args[1], BH_BOOT_COLD_RESTART); /* what vCPU 0 is told in x1 */
	EXPECT_EQ(fake.reset_args[3], BH_RESTART_HM); /* and in x3: the monitor's, not its own */
}

TEST(attack_a_restart_of_its_own_joining_the_monitors_does_not_hide_the_monitors_cause)
{
	struct partition *p = beta_running();

	partition_restart(p, false, BH_RESTART_SELF);
	partition_restart(p, false, BH_RESTART_HM);
	partition_restart(p, false, BH_RESTART_SYSTEM_PARTITION);
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT_EQ(fake.reset_args[3], BH_RESTART_HM);
	partition_restart(p, false, BH_RESTART_SYSTEM_PARTITION); /* the next one is its own */
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(fake.reset_args[3], BH_RESTART_SYSTEM_PARTITION);
}

/* --- A restart the halted incarnation asked for ------------------------------------------- */

TEST(attack_a_restart_asked_by_a_halted_partition_itself_leaves_it_halted)
{
	struct partition *p = beta_running();
	uint32_t restarts = p->restarts;

	partition_halt(p); /* a system partition, on another core */
	/* Beta's vCPU 1 is still in its trap (BH_HC_RESET_SELF, PSCI SYSTEM_RESET, an event whose
	 * action restarts): its requests come after the halt. */
	EXPECT(!partition_restart(p, false, BH_RESTART_SELF));
	EXPECT(!partition_restart(p, true, BH_RESTART_HM));
	EXPECT_EQ(p->state, PARTITION_HALTED);
	EXPECT_EQ(p->restarts, restarts);
	fixture_serve(1);
	fixture_serve(2);
	EXPECT_EQ(p->vcpus[0].state, VCPU_HALTED);
	EXPECT_EQ(p->vcpus[1].state, VCPU_HALTED);
	/* A system partition's restart brings it back. */
	EXPECT(partition_restart(p, false, BH_RESTART_SYSTEM_PARTITION));
	EXPECT_EQ(p->state, PARTITION_RESTARTING);
}

/* --- A restart the suspended incarnation asked for ----------------------------------------- */

TEST(attack_a_restart_asked_by_a_suspended_partition_itself_ends_suspended)
{
	struct partition *p = beta_running();
	struct vcpu *v0 = &p->vcpus[0];

	EXPECT(partition_suspend(p)); /* a system partition, on another core */
	/* Beta's vCPU 1, still in its trap, asks for a warm restart: it happens, and ends
	 * suspended. */
	EXPECT(partition_restart(p, false, BH_RESTART_SELF));
	EXPECT_EQ(p->state, PARTITION_RESTARTING);
	EXPECT(!partition_suspend(p)); /* it is suspended already, for its system partition */
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_SUSPENDED);
	EXPECT_EQ(v0->state, VCPU_READY);
	EXPECT(!vcpu_runnable(v0));
	EXPECT(partition_resume(p));
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT(vcpu_runnable(v0));
	/* Resumed while the restart is under way, or restarted by a system partition: it ends
	 * running. */
	EXPECT(partition_suspend(p));
	EXPECT(partition_restart(p, false, BH_RESTART_HM));
	EXPECT(partition_resume(p));
	EXPECT(!partition_resume(p));
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
	EXPECT(partition_suspend(p));
	EXPECT(partition_restart(p, false, BH_RESTART_SELF));
	EXPECT(partition_restart(p, false, BH_RESTART_SYSTEM_PARTITION));
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	EXPECT_EQ(p->state, PARTITION_RUNNING);
}
