/* PSCI as an unmodified guest's vCPUs see it (arch/aarch64/vpsci.c, which only uses core/). */
#include "arch/fake.h"
#include "arch/vmachine.h"
#include "fixture.h"
#include "partition.h"
#include "percpu.h"
#include "unit.h"

#define PSCI_VERSION 0x84000000ul
#define PSCI_CPU_OFF 0x84000002ul
#define PSCI_CPU_ON 0xc4000003ul
#define PSCI_AFFINITY_INFO 0xc4000004ul
#define PSCI_FEATURES 0x8400000aul

static int64_t psci(struct vcpu *v, uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct arch_regs r = { .x = { fn, a1, a2, a3 } };
	EXPECT(vpsci_call(v, &r));
	return (int64_t)r.x[0];
}

TEST(vpsci_version_features_and_unknown_calls)
{
	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0];
	struct arch_regs r = { .x = { 0xc2000001ul } };
	fixture_run(1, v0);
	EXPECT_EQ(psci(v0, PSCI_VERSION, 0, 0, 0), 0x10000);
	EXPECT_EQ(psci(v0, PSCI_FEATURES, PSCI_CPU_ON, 0, 0), 0);
	EXPECT_EQ(psci(v0, PSCI_FEATURES, 0xc4000001ul /* CPU_SUSPEND */, 0, 0), -1);
	EXPECT(!vpsci_call(v0, &r)); /* not PSCI: the caller raises a health-monitor event */
}

static const struct bh_vmachine_cfg machine = { .uart_intid = 33 };

TEST(vpsci_cpu_on_starts_a_vcpu_at_the_entry_with_its_context)
{
	fixture_partitions[1].vmachine = &machine;
	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0], *v1 = &partitions[1].vcpus[1];
	fixture_run(1, v0);
	EXPECT_EQ(psci(v0, PSCI_AFFINITY_INFO, 1, 0, 0), 1); /* off */
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 2, ALPHA_RAM_IPA, 7), -2);      /* no vCPU 2 */
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 1, 0x7000000, 7), -9);          /* not its memory */
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 0x100, ALPHA_RAM_IPA, 7), -2);  /* Aff1 is not used */
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 1, ALPHA_RAM_IPA + 0x40, 7), 0);
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 1, ALPHA_RAM_IPA, 7), -4);      /* already on */
	EXPECT_EQ(psci(v0, PSCI_AFFINITY_INFO, 1, 0, 0), 0);
	fixture_serve(2);
	EXPECT_EQ(v1->state, VCPU_READY);
	EXPECT_EQ(v1->regs.elr, ALPHA_RAM_IPA + 0x40);
	EXPECT_EQ(v1->regs.x[0], 7); /* the context id, as the arm64 boot protocol wants */
	EXPECT_EQ(v1->regs.x[1], 0);
	fixture_partitions[1].vmachine = NULL;
}
