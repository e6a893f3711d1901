#include "console.h"
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "fixture.h"
#include "hm.h"
#include "partition.h"
#include "main.h"
#include "percpu.h"
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

TEST(hm_halts_a_partition_on_every_core)
{
	fixture_boot();
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_TRAPPED_INSTRUCTION));
	EXPECT_EQ(partitions[1].state, PARTITION_HALTED);
	EXPECT_EQ(partitions[1].vcpus[1].state, VCPU_HALTED);
	EXPECT_EQ(fake.kicks[2], 1);
	EXPECT_EQ(fake.kicks[0], 0);
	EXPECT(percpu[1].exit_work & EXIT_RESCHED);
	EXPECT_EQ(partitions[0].state, PARTITION_RUNNING);
}

/* Plays core 2 while core 1 waits for it. */
static void core2_serves_requests(void)
{
	unsigned self = fake.core;
	fake.core = 2;
	core_process_requests();
	fake.core = self;
}

TEST(hm_cold_restart_stops_reloads_and_restarts)
{
	fixture_boot();
	fake.relax_hook = core2_serves_requests;
	memset(&fake_ram[0x200000], 'Z', 16);
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION));
	EXPECT_EQ(partitions[1].vcpus[1].stop_ack, 1);
	EXPECT(memcmp(&fake_ram[0x200000], SEG_TEXT, sizeof(SEG_TEXT)) == 0);
	EXPECT_EQ(partitions[1].restarts, 1);
	EXPECT_EQ(partitions[1].vcpus[0].request, VCPU_REQ_RESET);
	EXPECT_EQ(partitions[1].vcpus[1].state, VCPU_HALTED);
	core_exit_work();
	EXPECT_EQ(fake.reset_args[0], 0);
	EXPECT_EQ(fake.reset_args[1], BH_BOOT_COLD_RESTART);
	EXPECT(percpu[1].vcpu == &partitions[1].vcpus[0]);
}

TEST(restart_waits_for_other_cores_then_gives_up_loudly)
{
	fixture_boot();
	EXPECT(!raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION));
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strstr(fake.uart, "PANIC: core 2 did not stop partition beta") != NULL);
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
	EXPECT_EQ(v1->state, VCPU_HALTED);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_HALT, 2, 0), BH_INVALID_PARAM);
	EXPECT_EQ(vcpu_control(v0, 7, 1, 0), BH_INVALID_PARAM);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_START, 1, 0x7000000), BH_INVALID_PARAM);
}
