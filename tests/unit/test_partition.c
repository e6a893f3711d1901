#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "fixture.h"
#include "hm.h"
#include "partition.h"
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
	EXPECT(partition_vcpu_for_core(0) == &partitions[0].vcpus[0]);
	EXPECT(partition_vcpu_for_core(2) == &partitions[1].vcpus[1]);
	EXPECT(partition_vcpu_for_core(3) == NULL);
	EXPECT(partitions[0].stage2_root != 0);
}

static void raise_on(unsigned core, struct vcpu *v, enum bh_hm_event kind)
{
	struct hm_event ev = { .kind = kind, .address = 0x42400000, .pc = 0x40000120,
			       .detail = "write" };
	fake.core = core;
	FAKE_RUN(hm_raise(v, &ev));
}

TEST(hm_logs_event_and_ignores)
{
	fixture_boot();
	raise_on(0, &partitions[0].vcpus[0], BH_HM_PARTITION_ERROR);
	EXPECT_EQ(fake.exit, FAKE_NONE);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strcmp(fake.uart, "[bulkhead] HM: partition alpha (id 0) vcpu 0: partition_error "
				 "at 0x42400000 (write, pc 0x40000120) -> ignore\r\n") == 0);
}

TEST(hm_halts_a_partition_on_every_core)
{
	fixture_boot();
	raise_on(1, &partitions[1].vcpus[0], BH_HM_TRAPPED_INSTRUCTION);
	EXPECT_EQ(fake.exit, FAKE_IDLED);
	EXPECT_EQ(partitions[1].state, PARTITION_HALTED);
	EXPECT_EQ(percpu[2].request, CORE_REQ_PARK);
	EXPECT_EQ(fake.kicks[2], 1);
	EXPECT_EQ(fake.kicks[0], 0);
	EXPECT_EQ(partitions[0].state, PARTITION_RUNNING);
}

TEST(hm_cold_restart_parks_reloads_and_restarts)
{
	fixture_boot();
	percpu[2].parked = 1; /* core 2 obeyed the park request */
	memset(&fake_ram[0x200000], 'Z', 16);
	raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION);
	EXPECT_EQ(fake.exit, FAKE_RESUMED);
	EXPECT(memcmp(&fake_ram[0x200000], SEG_TEXT, sizeof(SEG_TEXT)) == 0);
	EXPECT_EQ(percpu[2].request, CORE_REQ_PARK | CORE_REQ_START);
	EXPECT_EQ(partitions[1].restarts, 1);
	EXPECT_EQ(fake.reset_args[0], 0);
	EXPECT_EQ(fake.reset_args[1], BH_BOOT_COLD_RESTART);
}

TEST(restart_waits_for_parking_then_gives_up_loudly)
{
	fixture_boot();
	raise_on(1, &partitions[1].vcpus[0], BH_HM_MEMORY_VIOLATION);
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strstr(fake.uart, "PANIC: core 2 did not park partition beta") != NULL);
}

TEST(hm_halt_system)
{
	fixture_boot();
	raise_on(0, &partitions[0].vcpus[0], BH_HM_INTERNAL_ERROR);
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
}

TEST(parked_core_starts_its_vcpu_on_request)
{
	fixture_boot();
	fake.core = 2;
	percpu[2].parked = 1;
	percpu[2].request = CORE_REQ_START;
	FAKE_RUN(core_handle_requests());
	EXPECT_EQ(fake.exit, FAKE_RESUMED);
	EXPECT_EQ(percpu[2].parked, 0);
	EXPECT_EQ(fake.reset_args[0], 1);
}
