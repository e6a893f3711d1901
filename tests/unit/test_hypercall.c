#include "console.h"
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "fixture.h"
#include "hypercall.h"
#include "main.h"
#include "partition.h"
#include "percpu.h"
#include "sched.h"
#include "hm.h"
#include "trace.h"
#include "unit.h"

static struct arch_regs regs;

static int64_t call(struct vcpu *v, uint64_t fn, uint64_t a1, uint64_t a2)
{
	memset(&regs, 0, sizeof(regs));
	regs.x[0] = fn;
	regs.x[1] = a1;
	regs.x[2] = a2;
	FAKE_RUN(regs.x[0] = (uint64_t)hypercall_dispatch(v, &regs));
	return (int64_t)regs.x[0];
}

static struct vcpu *alpha(void)
{
	fixture_run(0, &partitions[0].vcpus[0]);
	return &partitions[0].vcpus[0];
}
static struct vcpu *beta(void) { return &partitions[1].vcpus[0]; }

TEST(unknown_hypercalls_are_reported)
{
	fixture_boot();
	EXPECT_EQ(call(alpha(), BH_HC(BH_HC_COUNT), 0, 0), BH_UNKNOWN_HYPERCALL);
	EXPECT_EQ(call(alpha(), 0xC600FFFF, 0, 0), BH_UNKNOWN_HYPERCALL);
	EXPECT_EQ(call(alpha(), 0x84000008, 0, 0), BH_UNKNOWN_HYPERCALL);
	EXPECT_EQ(call(alpha(), 0xC5000000, 0, 0), BH_UNKNOWN_HYPERCALL);
	EXPECT_EQ(call(alpha(), 0, 0, 0), BH_UNKNOWN_HYPERCALL);
}

TEST(console_write_checks_buffer_and_length)
{
	fixture_boot();
	memcpy(fake_ram, "hi\n", 3);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_RAM_IPA, 3), 3);
	console_flush_all(); /* queued: this fake core has no timer programmed */
	fake.uart[fake.uart_len] = 0;
	EXPECT(strcmp(fake.uart, "[alpha] hi\r\n") == 0);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, 0, 3), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_RAM_IPA, 1ul << 40), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_RAM_IPA, ~0ul), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_RAM_IPA, BH_CONSOLE_MAX_WRITE + 1),
		  BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_RAM_IPA + ALPHA_RAM_SIZE - 2, 4),
		  BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_DEV_IPA, 4), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ~0ul - 1, 4), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_CONSOLE_WRITE, ALPHA_RAM_IPA, 0), 0);
	EXPECT(strcmp(fake.uart, "[alpha] hi\r\n") == 0);
}

TEST(ids_and_time)
{
	fixture_boot();
	EXPECT_EQ(call(&partitions[1].vcpus[1], BH_HC_GET_IDS, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 1);
	EXPECT_EQ(regs.x[2], 1);
	fake.counter = 62500000ul * 3 + 625;
	EXPECT_EQ(call(alpha(), BH_HC_GET_TIME, BH_CLOCK_HW, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 3000010000ul);
	EXPECT_EQ(call(alpha(), BH_HC_GET_TIME, 9, 0), BH_INVALID_PARAM);
}

TEST(halt_system_only_for_system_partitions)
{
	fixture_boot();
	EXPECT_EQ(call(alpha(), BH_HC_HALT_SYSTEM, 0, 0), BH_PERM_ERROR);
	EXPECT_EQ(fake.exit, FAKE_NONE);
	call(beta(), BH_HC_HALT_SYSTEM, 0, 0);
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
}

TEST(reset_self_modes)
{
	fixture_boot();
	EXPECT_EQ(call(alpha(), BH_HC_RESET_SELF, 7, 0), BH_INVALID_PARAM);
	fake_ram[0] = 'X';
	EXPECT_EQ(call(alpha(), BH_HC_RESET_SELF, BH_RESET_WARM, 0), BH_OK);
	EXPECT_EQ(partitions[0].vcpus[0].request, VCPU_REQ_STOP); /* served on the way out */
	core_exit_work();
	EXPECT_EQ(fake_ram[0], 'X');
	EXPECT_EQ(fake.reset_args[1], BH_BOOT_WARM_RESTART);
	EXPECT_EQ(fake.reset_args[2], 1);
	EXPECT_EQ(fake.reset_args[3], BH_RESTART_SELF);
	EXPECT(percpu[0].vcpu == &partitions[0].vcpus[0]);
	fake_ram[40] = 'Y';
	call(alpha(), BH_HC_RESET_SELF, BH_RESET_COLD, 0);
	core_exit_work();
	EXPECT_EQ(fake_ram[0], 's');
	EXPECT_EQ(fake_ram[40], 0);
	EXPECT_EQ(fake.reset_entry, ALPHA_RAM_IPA);
	EXPECT_EQ(fake.reset_args[1], BH_BOOT_COLD_RESTART);
	EXPECT_EQ(fake.reset_args[2], 2);
}

TEST(halt_self_leaves_the_core_idle)
{
	fixture_boot();
	EXPECT_EQ(call(alpha(), BH_HC_HALT_SELF, 0, 0), BH_OK);
	EXPECT_EQ(partitions[0].state, PARTITION_HALTED);
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING);
	FAKE_RUN(core_exit_work());
	EXPECT_EQ(fake.exit, FAKE_IDLED);
	EXPECT(percpu[0].vcpu == NULL);
}

TEST(idle_returns_at_once_when_the_timer_fired)
{
	fixture_boot();
	fake.vtimer_fired = true;
	EXPECT_EQ(call(alpha(), BH_HC_IDLE, 0, 0), BH_OK);
	EXPECT_EQ(partitions[0].vcpus[0].state, VCPU_READY);
	EXPECT_EQ(percpu[0].exit_work, 0);
}

TEST(idle_on_a_dedicated_core_waits_in_place_for_a_virtual_interrupt)
{
	fixture_boot();
	struct vcpu *v = alpha();
	call(v, BH_HC_IDLE, 0, 0);
	EXPECT_EQ(fake.exit, FAKE_IDLED); /* waiting for an interrupt, still current */
	EXPECT_EQ(v->state, VCPU_IDLE);
	EXPECT(percpu[0].vcpu == v);
	virq_inject(v, BH_VIRQ_TIMER, false);
	EXPECT(percpu[0].exit_work & EXIT_FLUSH);
	sched_vcpu_block(v); /* what the waiting loop does next */
	EXPECT_EQ(v->state, VCPU_READY);
}

TEST(idle_on_a_shared_core_gives_the_core_away)
{
	fixture_boot();
	percpu[0].sched.policy = BH_POLICY_FIXED_PRIORITY;
	struct vcpu *v = alpha();
	EXPECT_EQ(call(v, BH_HC_IDLE, 0, 0), BH_OK);
	EXPECT_EQ(v->state, VCPU_IDLE);
	FAKE_RUN(core_exit_work());
	EXPECT_EQ(fake.exit, FAKE_IDLED);
	EXPECT(percpu[0].vcpu == NULL);
	virq_inject(v, BH_VIRQ_TIMER, false);
	EXPECT_EQ(v->state, VCPU_READY);
	core_exit_work();
	EXPECT(percpu[0].vcpu == v);
}

TEST(set_timer_programs_the_core_timer)
{
	fixture_boot();
	struct vcpu *v = alpha();
	EXPECT_EQ(call(v, BH_HC_SET_TIMER, 9, 0), BH_INVALID_PARAM);
	memset(&regs, 0, sizeof(regs));
	regs.x[0] = BH_HC_SET_TIMER;
	regs.x[1] = BH_CLOCK_HW;
	regs.x[2] = 2000000; /* 2 ms = 125000 ticks */
	regs.x[3] = 5000;    /* below the minimum interval */
	EXPECT_EQ(hypercall_dispatch(v, &regs), BH_INVALID_PARAM);
	regs.x[3] = 0;
	EXPECT_EQ(hypercall_dispatch(v, &regs), BH_OK);
	core_exit_work();
	EXPECT_EQ(fake.timer, 125000);
	fake.counter = 125000;
	sched_timer_event();
	core_exit_work();
	EXPECT(v->virq.pending[0] & (1u << BH_VIRQ_TIMER));
	EXPECT_EQ(fake.timer, UINT64_MAX);
}

static int64_t partition_ctl(uint64_t op, uint64_t id, uint64_t mode)
{
	memset(&regs, 0, sizeof(regs));
	regs.x[0] = BH_HC_PARTITION_CTL;
	regs.x[1] = op, regs.x[2] = id, regs.x[3] = mode;
	fixture_run(beta()->core, beta()); /* beta is the system partition */
	FAKE_RUN(regs.x[0] = (uint64_t)hypercall_dispatch(beta(), &regs));
	return (int64_t)regs.x[0];
}

TEST(partition_ctl_says_when_the_state_left_nothing_to_do)
{
	fixture_boot();
	EXPECT_EQ(partition_ctl(BH_PARTITION_RESUME, 0, 0), BH_NO_ACTION); /* not suspended */
	EXPECT_EQ(partition_ctl(BH_PARTITION_SUSPEND, 0, 0), BH_OK);
	EXPECT_EQ(partition_ctl(BH_PARTITION_SUSPEND, 0, 0), BH_NO_ACTION);
	EXPECT_EQ(partitions[0].state, PARTITION_SUSPENDED);
	EXPECT_EQ(partition_ctl(BH_PARTITION_RESUME, 0, 0), BH_OK);
	EXPECT_EQ(partition_ctl(BH_PARTITION_RESTART, 0, BH_RESET_WARM), BH_OK);
	EXPECT_EQ(partition_ctl(BH_PARTITION_SUSPEND, 0, 0), BH_NO_ACTION); /* restarting */
	EXPECT_EQ(partitions[0].state, PARTITION_RESTARTING);
	EXPECT_EQ(partition_ctl(BH_PARTITION_HALT, 0, 0), BH_OK);
	EXPECT_EQ(partition_ctl(BH_PARTITION_HALT, 0, 0), BH_NO_ACTION);
	EXPECT_EQ(partition_ctl(BH_PARTITION_SUSPEND, 0, 0), BH_NO_ACTION);
	EXPECT_EQ(partition_ctl(BH_PARTITION_RESTART, 0, BH_RESET_COLD), BH_OK); /* a halted one too */
	EXPECT_EQ(partitions[0].state, PARTITION_RESTARTING);
}

/* The health log's reader (the system partition) gets every entry it takes: the buffer is
 * translated before the take, so that a change of the guest's page tables meanwhile (here the
 * fake's translation failing from the take on, as another vCPU unmapping the buffer would make
 * it) no longer drops them. The same for trace reads. */
static void unmap_guest_buffers(void)
{
	fake.guest_mmu_fault = true;
}

TEST(a_health_log_read_loses_no_entry_it_took)
{
	struct hm_event ev = { .kind = BH_HM_PARTITION_ERROR, .address = 0x1234, .pc = 0x40000120,
			       .detail = "test" };
	const uint64_t buf = ALPHA_RAM_IPA + 0x4000; /* beta's RAM: the IPAs are alike */
	const struct bh_hm_log_entry *got =
		(const void *)(fake_ram + (BETA_RAM_PHYS - ALPHA_RAM_PHYS) + 0x4000);

	fixture_boot();
	bool goes_on = false;
	struct vcpu *a = alpha();
	FAKE_RUN(goes_on = hm_raise(a, &ev));
	(void)goes_on;
	fixture_run(beta()->core, beta());
	fake.lock_hook = unmap_guest_buffers;
	EXPECT_EQ(call(beta(), BH_HC_HM_READ, buf, BH_HM_LOG_READ_MAX), 1);
	fake.lock_hook = NULL;
	fake.guest_mmu_fault = false;
	EXPECT_EQ(got->address, 0x1234);
	EXPECT_EQ(call(beta(), BH_HC_HM_READ, buf, BH_HM_LOG_READ_MAX), 0);
	fake.guest_mmu_fault = true; /* unmapped before the call: nothing taken */
	EXPECT_EQ(call(beta(), BH_HC_HM_READ, buf, 1), BH_INVALID_PARAM);
	fake.guest_mmu_fault = false;
}

TEST(a_trace_read_loses_no_event_it_took)
{
	const struct bh_trace_event *got =
		(const void *)(fake_ram + (BETA_RAM_PHYS - ALPHA_RAM_PHYS) + 0x4000);
	struct bh_trace_event all[64];

	fixture_boot();
	while (trace_read(2, all, 64)) /* core 2's ring emptied */
		;
	fixture_run(2, &partitions[1].vcpus[1]);
	trace_emit_at(BH_TRACE_HYPERCALL, &partitions[1].vcpus[1], 0x77, 5);
	fixture_run(beta()->core, beta());
	memset(&regs, 0, sizeof(regs));
	regs.x[0] = BH_HC_TRACE_READ, regs.x[1] = 2, regs.x[2] = ALPHA_RAM_IPA + 0x4000, regs.x[3] = 64;
	fake.lock_hook = unmap_guest_buffers;
	FAKE_RUN(regs.x[0] = (uint64_t)hypercall_dispatch(beta(), &regs));
	fake.lock_hook = NULL;
	fake.guest_mmu_fault = false;
	EXPECT_EQ(regs.x[0], 1);
	EXPECT_EQ(got->arg, 0x77);
}
