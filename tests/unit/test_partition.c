#include "console.h"
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "fixture.h"
#include "hm.h"
#include "partition.h"
#include "main.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "virq.h"
#include "unit.h"

TEST(boot_loads_segments_and_binds_cores)
{
	memset(fake_ram, 0xaa, 128);
	fixture_boot();
	EXPECT(memcmp(fake_ram, SEG_TEXT, sizeof(SEG_TEXT)) == 0);
	EXPECT_EQ(fake_ram[sizeof(SEG_TEXT)], 0);
	EXPECT_EQ(fake_ram[63], 0);
	EXPECT_EQ(fake_ram[64], 0xaa);
	EXPECT(percpu[0].sched.vcpus[0] == &partitions[0].vcpus[0]);
	EXPECT(percpu[2].sched.vcpus[0] == &partitions[1].vcpus[1]);
	EXPECT_EQ(percpu[3].sched.count, 0);
	EXPECT(partitions[0].stage2_root != 0);
	EXPECT_EQ(partitions[1].vcpus[0].request, VCPU_REQ_RESET); /* vCPU 0 starts */
	EXPECT_EQ(partitions[1].vcpus[1].request, 0);              /* the others wait */
}

static bool raise_on(unsigned core, struct vcpu *v, enum bh_hm_event kind)
{
	struct hm_event ev = { .kind = kind, .address = 0x42400000, .pc = 0x40000120,
			       .detail = "write" };
	bool goes_on = false;
	fixture_run(core, v);
	FAKE_RUN(goes_on = hm_raise(v, &ev));
	return goes_on;
}

TEST(hm_logs_event_and_ignores)
{
	fixture_boot();
	EXPECT(raise_on(0, &partitions[0].vcpus[0], BH_HM_PARTITION_ERROR));
	console_flush_all(); /* queued: this fake core has no timer programmed */
	fake.uart[fake.uart_len] = 0;
	EXPECT(strcmp(fake.uart, "[bulkhead] HM: partition alpha (id 0) vcpu 0: partition_error "
				 "at 0x42400000 (write, pc 0x40000120) -> ignore\r\n") == 0);
	EXPECT_EQ(partitions[0].hm_events, 1);
}

TEST(hm_trap_on_a_shared_core_prints_one_line_and_the_summary_in_the_next_turn)
{
	fixture_boot();
	struct vcpu *a = &partitions[0].vcpus[0];
	percpu[0].sched.policy = BH_POLICY_FIXED_PRIORITY; /* a neighbour waits for its traps */
	fake.counter = 1000;
	for (unsigned i = 0; i < 6; i++) /* 5 lines in the window, the 6th only counted */
		raise_on(0, a, BH_HM_PARTITION_ERROR);
	fake.counter += ns_to_ticks(1000000000ull); /* the next window */
	console_flush_all();
	fake.uart_len = 0;
	raise_on(0, a, BH_HM_PARTITION_ERROR);
	fixture_console();
	EXPECT(strstr(fake.uart, "-> ignore") != NULL);
	EXPECT(strstr(fake.uart, "not printed") == NULL); /* not in the same trap */
	EXPECT(a->hm_held);
	hm_print_held(a); /* its next turn (the decision that picks it) */
	fixture_console();
	EXPECT(strstr(fake.uart, "alpha (id 0): 1 more events not printed") != NULL);
	percpu[0].sched.policy = BH_POLICY_DEDICATED;
}

/* An event found in a decision (an EDF overrun, action ignore) when a rate-limit window has
 * closed holds two lines, the window's summary and the event's, for the vCPU's next turn. Both
 * at its switch-in made that path about 4400 instructions of lines (2200 each) besides the
 * switch, more than the longest path a neighbour may be in (4800): one line a turn. */
TEST(hm_lines_held_from_a_decision_come_one_per_turn)
{
	fixture_boot();
	struct vcpu *a = &partitions[0].vcpus[0];
	struct hm_event ev = { .kind = BH_HM_PARTITION_ERROR, .address = 0x42400000,
			       .pc = 0x40000120, .detail = "write" };
	fake.counter = 1000;
	for (unsigned i = 0; i < 6; i++) /* 5 lines in the window, the 6th only counted */
		raise_on(0, a, BH_HM_PARTITION_ERROR);
	fake.counter += ns_to_ticks(1000000000ull); /* the next window */
	console_flush_all();
	fake.uart_len = 0;
	fixture_run(0, a);
	FAKE_RUN(hm_raise_in_decision(a, &ev));
	EXPECT(a->hm_held);
	hm_print_held(a); /* its next turn */
	fixture_console();
	EXPECT(strstr(fake.uart, "1 more events not printed") != NULL);
	EXPECT(strstr(fake.uart, "-> ignore") == NULL);
	EXPECT(a->hm_held);
	fake.uart_len = 0;
	hm_print_held(a); /* the turn after */
	fixture_console();
	EXPECT(strstr(fake.uart, "vcpu 0: partition_error at 0x42400000 (write, pc 0x40000120) "
				 "-> ignore") != NULL);
	EXPECT(!a->hm_held);
}

TEST(hm_event_line_leaves_the_unfinished_line_of_a_vcpu_that_goes_on)
{
	fixture_boot();
	console_guest_write(&partitions[0].vcpus[0], "before ", 7);
	EXPECT(raise_on(0, &partitions[0].vcpus[0], BH_HM_PARTITION_ERROR));
	fixture_console();
	/* Not flushed by the event (that made a trap with its line the longest path): the
	 * vCPU ends its line itself, after the event's. */
	EXPECT(strstr(fake.uart, "[bulkhead] HM: partition alpha") == fake.uart);
	EXPECT(strstr(fake.uart, "before") == NULL);
	console_guest_write(&partitions[0].vcpus[0], "after\n", 6);
	fixture_console();
	EXPECT(strstr(fake.uart, "-> ignore\r\n[alpha] before after\r\n") != NULL);
}

/* Core 2 idles (beta's vCPU 1 not started) with time to spare: a request for its vCPU kicks it. */
static void core2_idles_with_time_to_spare(void)
{
	percpu[2].sched.be_until = TIME_NEVER;
}

TEST(hm_halts_a_partition_on_every_core)
{
	fixture_boot();
	core2_idles_with_time_to_spare();
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_TRAPPED_INSTRUCTION));
	EXPECT_EQ(partitions[1].state, PARTITION_HALTED);
	EXPECT_EQ(partitions[1].vcpus[1].state, VCPU_HALTED);
	EXPECT_EQ(fake.kicks[2], 1);
	EXPECT_EQ(fake.kicks[0], 0);
	EXPECT(percpu[1].exit_work & EXIT_RESCHED);
	EXPECT_EQ(partitions[0].state, PARTITION_RUNNING);
}

static void core2_serves_requests(void) { fixture_serve(2); }


/* Core 1 runs beta's vCPU 0 on its way out: the reload, if it is the one loading. */
static void core1_exits(void)
{
	fake.core = 1;
	percpu[1].sched.timer_at = TIME_NEVER;
	FAKE_RUN(core_exit_work());
}

TEST(a_restart_never_waits_for_other_cores)
{
	fixture_boot();
	core2_idles_with_time_to_spare();
	partitions[1].vcpus[1].state = VCPU_READY; /* started: it holds what its core releases */
	/* Core 2 never answers: the restart still returns at once, and nothing panics. */
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION));
	EXPECT_EQ(fake.exit, FAKE_NONE);
	EXPECT_EQ(partitions[1].state, PARTITION_RESTARTING);
	EXPECT_EQ(partitions[1].restarts, 1);
	EXPECT(partitions[1].vcpus[1].request & VCPU_REQ_STOP);
	EXPECT_EQ(fake.kicks[2], 1);
	/* The faulting vCPU is not touched inside its own trap: its core releases it on the way
	 * out, like every other core. */
	EXPECT_EQ(partitions[1].vcpus[0].arch.released, 0);
	fixture_serve(1);
	EXPECT_EQ(partitions[1].vcpus[0].arch.released, 1);
	/* vCPU 1 did not run when its stop was posted: counted at once, it still holds its own
	 * until its core serves the stop, and runs nothing before (sched.c, run). */
	EXPECT_EQ(partitions[1].stopping, 0);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING);
	EXPECT_EQ(partitions[1].vcpus[1].arch.released, 0);
	fixture_serve(2);
	EXPECT_EQ(partitions[1].vcpus[1].arch.released, 1);
	EXPECT_EQ(partitions[1].vcpus[1].state, VCPU_HALTED);
}

/* A vCPU halted, with nothing posted, holds nothing: a restart counts it at once rather than
 * wait for its core to give it time (reqatk: below a vCPU that never blocks, it never came). */
TEST(a_restart_counts_a_halted_vcpu_at_once)
{
	fixture_boot();
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION));
	EXPECT_EQ(partitions[1].vcpus[1].request, 0);
	EXPECT_EQ(fake.kicks[2], 0);
	EXPECT_EQ(partitions[1].stopping, 1); /* vCPU 0's own release is left */
	fixture_serve(1);
	EXPECT_EQ(partitions[1].stopping, 0);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING);
}

TEST(hm_cold_restart_releases_then_reloads_in_vcpu0s_time)
{
	fixture_boot();
	memset(&fake_ram[0x200000], 'Z', 16);
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION));
	fixture_serve(1);
	fixture_serve(2);
	EXPECT_EQ(partitions[1].vcpus[1].state, VCPU_HALTED);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING); /* the last release hands over */
	EXPECT_EQ(memcmp(&fake_ram[0x200000], "ZZZZ", 4), 0); /* nothing reloaded yet */
	core1_exits();
	EXPECT(memcmp(&fake_ram[0x200000], SEG_TEXT, sizeof(SEG_TEXT)) == 0);
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_READY);
	EXPECT_EQ(fake.stage2_flushes, 1);
	EXPECT_EQ(fake.reset_args[0], 0);
	EXPECT_EQ(fake.reset_args[1], BH_BOOT_COLD_RESTART);
	EXPECT_EQ(fake.reset_args[2], 1);
	EXPECT(percpu[1].vcpu == &partitions[1].vcpus[0]);
	EXPECT_EQ(partitions[1].vcpus[1].state, VCPU_HALTED); /* vCPU 0 starts the others */
}

/* A partition that restarts itself by its health events can aim them at a neighbour's instant
 * at will: the event's line and the restart's, formatted in the trap (about 2200 instructions
 * each), made it the longest path before it (tests/system/test_stopline.py). They wait for the
 * reload, in vCPU 0's time, and name the vCPU the event came from. */
TEST(hm_restart_lines_wait_for_the_reload_in_vcpu0s_time)
{
	fixture_boot();
	partitions[1].vcpus[1].state = VCPU_READY; /* started by vCPU 0 */
	EXPECT(!raise_on(2, &partitions[1].vcpus[1], BH_HM_MEMORY_VIOLATION));
	fixture_console();
	EXPECT(strstr(fake.uart, "HM:") == NULL);
	EXPECT(strstr(fake.uart, "restart #") == NULL);
	fixture_serve(1);
	fixture_serve(2);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING);
	core1_exits();
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_READY);
	fixture_console();
	const char *hm = strstr(fake.uart, "[bulkhead] HM: partition beta (id 1) vcpu 1: "
				"memory_violation at 0x42400000 (write, pc 0x40000120) -> cold_restart\r\n");
	const char *restart = strstr(fake.uart, "[bulkhead] partition beta cold restart #1\r\n");
	EXPECT(hm != NULL && restart != NULL && hm < restart);
	/* The same inside a scheduling decision (an EDF overrun whose action restarts): the
	 * decision's time is the next vCPU's. */
	fake.uart_len = 0;
	struct hm_event ev = { .kind = BH_HM_MEMORY_VIOLATION, .address = 0x42400000,
			       .pc = 0x40000120, .detail = "write" };
	fixture_run(1, &partitions[1].vcpus[0]);
	FAKE_RUN(hm_raise_in_decision(&partitions[1].vcpus[0], &ev));
	fixture_console();
	EXPECT(strstr(fake.uart, "HM:") == NULL);
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	fixture_console();
	EXPECT(strstr(fake.uart, "vcpu 0: memory_violation") != NULL);
	EXPECT(strstr(fake.uart, "partition beta cold restart #2") != NULL);
}

/* A halt (or a suspend) has no later time of the partition's to print in, and on a shared core
 * the trap's end may be a neighbour's due instant: the event's line and "halted", formatted in
 * the trap, put about 400 ticks in front of the neighbour (tests/system/test_haltline.py). They
 * wait for spare time (sched.c idle_drain: partition_print_stopped_line), in their order. */
TEST(hm_halt_lines_on_a_shared_core_wait_for_spare_time)
{
	fixture_boot();
	percpu[0].sched.policy = BH_POLICY_FIXED_PRIORITY;
	percpu[0].sched.timer_at = fake.counter + 300; /* a neighbour's instant, 300 ticks on */
	EXPECT(!partition_stopped_lines_waiting());
	EXPECT(!raise_on(0, &partitions[0].vcpus[0], BH_HM_MEMORY_VIOLATION));
	EXPECT_EQ(partitions[0].state, PARTITION_HALTED);
	fixture_console();
	EXPECT(strstr(fake.uart, "HM:") == NULL);
	EXPECT(strstr(fake.uart, "halted") == NULL);
	EXPECT(partition_stopped_lines_waiting());
	EXPECT(partition_print_stopped_line());
	EXPECT(partition_print_stopped_line());
	EXPECT(!partition_print_stopped_line());
	EXPECT(!partition_stopped_lines_waiting());
	fixture_console();
	const char *hm = strstr(fake.uart, "[bulkhead] HM: partition alpha (id 0) vcpu 0: "
				"memory_violation at 0x42400000 (write, pc 0x40000120) -> halt_partition\r\n");
	const char *halted = strstr(fake.uart, "[bulkhead] partition alpha halted\r\n");
	EXPECT(hm != NULL && halted != NULL && hm < halted);
	/* Far from the core's next instant the lines delay nobody: printed at once, as before. */
	fixture_boot();
	percpu[0].sched.policy = BH_POLICY_FIXED_PRIORITY;
	percpu[0].sched.timer_at = fake.counter + 100000;
	EXPECT(!raise_on(0, &partitions[0].vcpus[0], BH_HM_MEMORY_VIOLATION));
	fixture_console();
	EXPECT(strstr(fake.uart, "-> halt_partition") != NULL);
	EXPECT(strstr(fake.uart, "partition alpha halted") != NULL);
	EXPECT(!partition_stopped_lines_waiting());
	/* On a dedicated core nobody else waits: printed at once, as before. */
	fixture_boot();
	EXPECT(!raise_on(0, &partitions[0].vcpus[0], BH_HM_MEMORY_VIOLATION));
	fixture_console();
	EXPECT(strstr(fake.uart, "-> halt_partition") != NULL);
	EXPECT(strstr(fake.uart, "partition alpha halted") != NULL);
	EXPECT(!partition_stopped_lines_waiting());
}

/* A halted partition restarted by the system partition before spare time came: its reload
 * prints the waiting lines first, in vCPU 0's time, then its own. */
TEST(a_reload_prints_the_lines_a_halt_left_waiting_first)
{
	fixture_boot();
	percpu[1].sched.policy = BH_POLICY_FIXED_PRIORITY;
	fixture_run(1, &partitions[1].vcpus[0]);
	percpu[1].sched.timer_at = fake.counter + 300;
	FAKE_RUN(partition_halt(&partitions[1]));
	fixture_serve(1);
	fixture_console();
	EXPECT(strstr(fake.uart, "halted") == NULL);
	EXPECT(partition_restart(&partitions[1], true, BH_RESTART_SYSTEM_PARTITION));
	fixture_serve(1);
	fixture_serve(2);
	core1_exits();
	fixture_console();
	const char *halted = strstr(fake.uart, "partition beta halted\r\n");
	const char *restart = strstr(fake.uart, "partition beta cold restart #1\r\n");
	EXPECT(halted != NULL && restart != NULL && halted < restart);
}

/* Beta's vCPU 0, running on core 1, restarts its partition (cold: its image reloaded), and both
 * of beta's cores serve their stops: vCPU 0 is loading. */
static void beta_restarts_from_core_1(bool cold)
{
	fixture_run(1, &partitions[1].vcpus[0]);
	partition_restart(&partitions[1], cold, BH_RESTART_SELF);
	fixture_serve(1);
	fixture_serve(2);
}

/* A big image: 1 MiB of .bss in beta, to reload in steps. */
static const uint8_t big_text[] = SEG_TEXT;
static const struct bh_segment_cfg big_segments[] = {
	{ .ipa = ALPHA_RAM_IPA, .data = big_text, .file_size = sizeof(big_text),
	  .mem_size = 0x100000 },
};

TEST(a_reload_stops_between_steps_for_whatever_else_is_due)
{
	const struct bh_segment_cfg *saved = fixture_partitions[1].segments;
	fixture_partitions[1].segments = big_segments;
	fixture_boot();
	beta_restarts_from_core_1(true);
	memset(&fake_ram[0x200000], 'Z', 0x100000);
	fake.irq_pending = true; /* an interrupt is due: not one step is taken before it */
	core1_exits();
	EXPECT_EQ(fake.exit, FAKE_IDLED); /* the core takes the interrupt */
	EXPECT_EQ(fake_ram[0x200000], 'Z');
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING);
	fake.irq_pending = false;
	fake.exit = FAKE_NONE;
	/* The core's timer is due in 100 steps' time: the reload stops before it. */
	fake.core = 1;
	fake.counter_step = 1;
	percpu[1].sched.timer_at = fake.counter + 256 + 100; /* each step reads the counter once */
	partition_load_steps(&partitions[1].vcpus[0]);
	EXPECT_EQ(partitions[1].load_segment, 0);
	EXPECT(partitions[1].load_offset > 0 && partitions[1].load_offset <= 100 * 4096);
	EXPECT_EQ(fake_ram[0x200000 + partitions[1].load_offset], 'Z');
	EXPECT_EQ(fake_ram[0x200000 + partitions[1].load_offset - 1], 0);
	/* Given time, it completes. */
	fake.counter_step = 0;
	core1_exits();
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_READY);
	EXPECT_EQ(fake_ram[0x200000 + 0xfffff], 0);
	fixture_partitions[1].segments = saved;
}

/* A virtual interrupt sent to vCPU 0 while it loads waits for the list registers
 * (EXIT_FLUSH), which only its entry fills. The core's timer falling due meanwhile must still be
 * taken: the core used to look again at once instead of waiting for it, find the timer due and
 * take no step, and spin there for good (a best-effort partition's cold restart in
 * test_sampling_stress never ended: its core spun so with EXIT_FLUSH set). */
static unsigned spin_reads;

static void give_up_spinning(void)
{
	if (++spin_reads > 1000000)
		longjmp(fake.escape, 1);
}

TEST(a_reload_takes_its_cores_timer_with_virtual_interrupts_waiting_for_the_list_registers)
{
	fixture_boot();
	beta_restarts_from_core_1(true);
	fake.irq_pending = true; /* the decision, then the interrupt before the first step */
	core1_exits();
	EXPECT_EQ(fake.exit, FAKE_IDLED);
	fake.irq_pending = false;
	percpu[1].exit_work = EXIT_FLUSH;
	percpu[1].sched.timer_at = fake.counter; /* due: no step fits before it */
	spin_reads = 0;
	fake.counter_hook = give_up_spinning;
	FAKE_RUN(core_exit_work());
	fake.counter_hook = NULL;
	EXPECT_EQ(fake.exit, FAKE_IDLED); /* it waits, and so takes the timer's interrupt */
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING);
}

TEST(a_restart_during_a_reload_starts_it_over_and_a_halt_ends_it)
{
	fixture_boot();
	beta_restarts_from_core_1(false);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_LOADING);
	partition_restart(&partitions[1], true, BH_RESTART_SELF); /* joins it, now cold */
	EXPECT(partitions[1].reload);
	EXPECT_EQ(partitions[1].restarts, 1); /* the same restart: one more incarnation */
	partition_halt(&partitions[1]);
	fixture_serve(1);
	fixture_serve(2);
	EXPECT_EQ(partitions[1].vcpus[0].state, VCPU_HALTED);
	EXPECT_EQ(partitions[1].state, PARTITION_HALTED);
	core1_exits(); /* nothing to load, nothing to run */
	EXPECT_EQ(fake.exit, FAKE_IDLED);
}

TEST(a_stop_releases_what_the_vcpu_holds)
{
	fixture_boot();
	struct vcpu *v = &partitions[1].vcpus[1];
	fixture_serve(1);
	fixture_run(2, v);
	v->timer_deadline = 12345; /* BH_HC_SET_TIMER */
	virq_inject(v, 40, true);  /* a forwarded device interrupt it has not taken */
	virq_inject(v, BH_VIRQ_PORT, false);
	partition_halt(&partitions[1]);
	EXPECT(virq_has_pending(v)); /* nothing is released from another core's trap */
	fixture_serve(2);
	EXPECT_EQ(v->timer_deadline, TIME_NEVER);
	EXPECT(!virq_has_pending(v));
	EXPECT_EQ(v->virq.count, 0);
	EXPECT_EQ(fake.irq_released[40], 1); /* ended, so the device can raise it again */
	EXPECT_EQ(v->arch.released, 1);
	EXPECT_EQ(v->state, VCPU_HALTED);
}

TEST(requests_wait_for_the_end_of_the_trap_in_progress)
{
	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0];
	fixture_run(1, v0);
	unsigned resets = fake.resets;
	/* Another core restarted beta and it is being started again, while vCPU 0 is in a call
	 * that has to wait for beta's lock. */
	v0->request = VCPU_REQ_RESET;
	percpu[1].requests = 1;
	partitions[1].lock.word = 1;
	fake.relax_hook = core2_serves_requests;
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_START, 1, 0), BH_OK);
	EXPECT_EQ(fake.resets, resets); /* not reset under the call: its result is not lost */
	core1_exits();
	EXPECT_EQ(fake.resets, resets + 1);
}

TEST(idling_does_not_undo_a_suspend_from_another_core)
{
	fixture_boot();
	struct vcpu *v = &partitions[1].vcpus[0];
	fixture_run(1, v);
	v->state = VCPU_SUSPENDED; /* core 2 suspended it while it was entering BH_HC_IDLE */
	sched_vcpu_idle(v);
	EXPECT_EQ(v->state, VCPU_SUSPENDED);
	virq_inject(v, BH_VIRQ_PORT, false); /* and a wake-up does not resume it */
	EXPECT_EQ(v->state, VCPU_SUSPENDED);
}

TEST(hm_halt_system)
{
	fixture_boot();
	raise_on(0, &partitions[0].vcpus[0], BH_HM_INTERNAL_ERROR);
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
}

TEST(vcpu_services_start_suspend_resume_halt)
{
	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0], *v1 = &partitions[1].vcpus[1];
	fixture_run(1, v0);
	core2_idles_with_time_to_spare();
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_START, 1, 0), BH_OK);
	EXPECT_EQ(v1->request, VCPU_REQ_RESET);
	EXPECT_EQ(fake.kicks[2], 1);
	core2_serves_requests();
	EXPECT_EQ(v1->state, VCPU_READY);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_START, 1, 0), BH_NO_ACTION);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_SUSPEND, 1, 0), BH_OK);
	EXPECT_EQ(v1->state, VCPU_SUSPENDED);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_RESUME, 1, 0), BH_OK);
	EXPECT_EQ(v1->state, VCPU_READY);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_HALT, 1, 0), BH_OK);
	EXPECT_EQ(vcpu_public_state(v1), VCPU_HALTED);
	core2_serves_requests();
	EXPECT_EQ(v1->state, VCPU_HALTED);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_HALT, 2, 0), BH_INVALID_PARAM);
	EXPECT_EQ(vcpu_control(v0, 7, 1, 0), BH_INVALID_PARAM);
	EXPECT_EQ(vcpu_control(v0, 1ull << 48, 1, 0), BH_INVALID_PARAM); /* not START */
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_START, 1, 0x7000000), BH_INVALID_PARAM);
}

/* The health monitor's per-vCPU tables (hm.c: a propagated event, held lines) have a row per
 * partition and BH_MAX_CORES entries in it, as the tool allows a partition one vCPU per core at
 * most. Tables with more (not the tool's) had vCPU 8 of partition 0 use partition 1's vCPU 0
 * entry: an event propagated to it was partition 1's to take, and partition 1's own next one
 * found the slot full and halted it. Boot refuses such tables, as it does other impossible ones. */
TEST(boot_refuses_a_partition_with_more_vcpus_than_cores)
{
	static const struct bh_vcpu_cfg nine[9] = { { .core = 0 }, { .core = 0 }, { .core = 0 },
						    { .core = 0 }, { .core = 0 }, { .core = 0 },
						    { .core = 0 }, { .core = 0 }, { .core = 0 } };
	const struct bh_vcpu_cfg *saved = fixture_partitions[0].vcpus;

	fixture_partitions[0].vcpus = nine;
	fixture_partitions[0].vcpu_count = 9;
	fake.uart_len = 0;
	FAKE_RUN(fixture_boot());
	fixture_partitions[0].vcpus = saved;
	fixture_partitions[0].vcpu_count = 1;
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
}

/* A device interrupt the hypervisor holds for a halted vCPU (taken from the GIC, active there)
 * is given back when the vCPU is started. Given back by the core that posts the start, the
 * interrupt, still asserted, fired again at once at the GIC on the started vCPU's core, in
 * whoever's time that core was running: a partition starting and halting its vCPU 0 from a
 * vCPU on another core (BH_HC_VCPU_CTL, two hypercalls a round) interrupted the neighbour of
 * vCPU 0's core once per round, at will. It is given back by the started vCPU's own core, when
 * that core serves the start (in the vCPU's time, or the core's spare time). */
static unsigned release_core[512];
static void note_release_core(unsigned intid)
{
	release_core[intid % 512] = fake.core + 1;
}

TEST(a_start_gives_held_device_interrupts_back_on_the_started_vcpus_core)
{
	static const uint32_t irqs[] = { 40 };
	struct vcpu *v0 = &partitions[1].vcpus[0], *v1 = &partitions[1].vcpus[1];

	fixture_partitions[1].irqs = irqs;
	fixture_partitions[1].irq_count = 1;
	fixture_boot();
	fixture_run(1, v0);                      /* vCPU 0 runs on core 1 ... */
	fixture_run(2, v1);                      /* ... vCPU 1 on core 2, which halts vCPU 0 */
	EXPECT_EQ(vcpu_control(v1, BH_VCPU_HALT, 0, 0), BH_OK);
	fixture_serve(1);
	EXPECT_EQ(v0->state, VCPU_HALTED);
	fake.core = 1;
	percpu[1].vcpu = NULL;                   /* core 1 runs someone else now */
	EXPECT(virq_forward_physical(40));       /* the device fires: held for the halted vCPU 0 */
	memset(release_core, 0, sizeof(release_core));
	memset(fake.irq_released, 0, sizeof(fake.irq_released));
	fake.irq_release_hook = note_release_core;
	fake.core = 2;
	EXPECT_EQ(vcpu_control(v1, BH_VCPU_START, 0, 0), BH_OK);
	EXPECT_EQ(fake.irq_released[40], 0);    /* not by core 2 */
	fixture_serve(1);
	fake.irq_release_hook = NULL;
	fixture_partitions[1].irqs = NULL;
	fixture_partitions[1].irq_count = 0;
	EXPECT(fake.irq_released[40] >= 1);
	EXPECT_EQ(release_core[40], 1 + 1);      /* by core 1, serving the start */
	EXPECT_EQ(v0->state, VCPU_READY);
}

/* A board guest may route a device interrupt to another of its vCPUs (GICD_IROUTER: the physical
 * one follows, to that vCPU's core). A start of vCPU 0 gave back every device interrupt of the
 * partition, whoever held it: one held for vCPU 1 (taken on vCPU 1's core, active there, its line
 * still high) was deactivated by vCPU 0's core serving the start, and taken again at once on
 * vCPU 1's core, in whoever's time that core ran. A vCPU started and stopped in a loop (PSCI
 * CPU_ON from a third vCPU, CPU_OFF by itself) did that once per round. A start gives back only
 * what its vCPU owns. */
TEST(a_start_of_vcpu_0_leaves_a_device_interrupt_held_for_another_vcpu)
{
	static const uint32_t irqs[] = { 40 };
	struct vcpu *v0 = &partitions[1].vcpus[0], *v1 = &partitions[1].vcpus[1];

	fixture_partitions[1].irqs = irqs;
	fixture_partitions[1].irq_count = 1;
	fixture_boot();
	fixture_run(1, v0);
	virq_set_owner(40, v1);                  /* the guest routed it to vCPU 1 (core 2) */
	fake.core = 2;
	percpu[2].vcpu = NULL;                   /* core 2 runs someone else */
	EXPECT(virq_forward_physical(40));       /* the device fires: held for vCPU 1 */
	fake.core = 1;
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_HALT, 0, 0), BH_OK);
	fixture_serve(1);
	EXPECT_EQ(v0->state, VCPU_HALTED);
	memset(fake.irq_released, 0, sizeof(fake.irq_released));
	fake.core = 2;
	EXPECT_EQ(vcpu_control(v1, BH_VCPU_START, 0, 0), BH_OK);
	fixture_serve(1);
	EXPECT_EQ(v0->state, VCPU_READY);
	EXPECT_EQ(fake.irq_released[40], 0);     /* still vCPU 1's, active for it */
	EXPECT(virq_is_pending(v1, 40));
	fixture_partitions[1].irqs = NULL;
	fixture_partitions[1].irq_count = 0;
}

/* The tool never gives a partition a device of the hypervisor's, but boot checked only RAM areas
 * against the hypervisor: tables with a device area over the GIC's distributor (every core's
 * interrupts), or forwarding the console UART's interrupt, booted. Boot refuses them now. */
TEST(boot_refuses_the_hypervisors_devices_in_a_partition)
{
	static const struct bh_area_cfg gicd_areas[] = {
		{ .phys = 0x08000000, .ipa = ALPHA_DEV_IPA, .size = 0x10000,
		  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_DEVICE },
		{ .phys = ALPHA_RAM_PHYS, .ipa = ALPHA_RAM_IPA, .size = ALPHA_RAM_SIZE,
		  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_EXEC },
	};
	static const uint32_t uart_irq[] = { 33 };
	const struct bh_area_cfg *saved = fixture_partitions[0].areas;

	fixture_partitions[0].areas = gicd_areas;
	FAKE_RUN(fixture_boot());
	fixture_partitions[0].areas = saved;
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);

	fixture_partitions[0].irqs = uart_irq;
	fixture_partitions[0].irq_count = 1;
	FAKE_RUN(fixture_boot());
	fixture_partitions[0].irqs = NULL;
	fixture_partitions[0].irq_count = 0;
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);

	FAKE_RUN(fixture_boot()); /* the fixture's own device area (virtio's range) is fine */
	EXPECT_EQ(fake.exit, FAKE_NONE);
}
