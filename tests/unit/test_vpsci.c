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

/* vCPU 1 started (CPU_ON), halted before its core served the start (BH_VCPU_HALT: the stop
 * cancels it), and started again: its core serves the stop and the start together. Halted all
 * along, it reads halted during that serve, and the request word keeps what is served shifted
 * out of the posted bits. A start returned SUCCESS and is being served: AFFINITY_INFO must say
 * ON, as CPU_ON (ALREADY_ON) does; said OFF, a guest's CPU_ON then fails (psciodd's symptom). */
static int64_t affinity_in_serve = -100, cpu_on_in_serve = -100;

static void ask_affinity_from_core_1(struct vcpu *v)
{
	struct vcpu *v0 = &partitions[1].vcpus[0];
	unsigned self = fake.core;

	if (v != &partitions[1].vcpus[1] || affinity_in_serve != -100)
		return;
	fake.core = 1;
	affinity_in_serve = psci(v0, PSCI_AFFINITY_INFO, 1, 0, 0);
	cpu_on_in_serve = psci(v0, PSCI_CPU_ON, 1, ALPHA_RAM_IPA, 7);
	fake.core = self;
}

TEST(vpsci_affinity_info_says_on_while_a_start_is_served_with_a_stop)
{
	fixture_partitions[1].vmachine = &machine;
	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0], *v1 = &partitions[1].vcpus[1];
	fixture_run(1, v0);
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 1, ALPHA_RAM_IPA, 7), 0);
	EXPECT_EQ(vcpu_control(v0, BH_VCPU_HALT, 1, 0), BH_OK);
	EXPECT_EQ(psci(v0, PSCI_CPU_ON, 1, ALPHA_RAM_IPA, 7), 0);
	EXPECT_EQ(v1->request, VCPU_REQ_STOP | VCPU_REQ_RESET);
	affinity_in_serve = cpu_on_in_serve = -100;
	fake.release_hook = ask_affinity_from_core_1;
	fixture_serve(2);
	fake.release_hook = NULL;
	printf("    during the serve of the stop and the start: AFFINITY_INFO %lld, CPU_ON %lld\n",
	       (long long)affinity_in_serve, (long long)cpu_on_in_serve);
	EXPECT_EQ(cpu_on_in_serve, -4); /* ALREADY_ON */
	EXPECT_EQ(affinity_in_serve, 0); /* ON */
	EXPECT_EQ(v1->state, VCPU_READY);
	EXPECT_EQ(psci(v0, PSCI_AFFINITY_INFO, 1, 0, 0), 0);
	fixture_partitions[1].vmachine = NULL;
}
