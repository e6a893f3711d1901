/* The SMC Calling Convention as a partition sees it on either conduit (arch/aarch64/vpsci.c). */
#include "arch/fake.h"
#include "arch/vmachine.h"
#include "fixture.h"
#include "partition.h"
#include "unit.h"

static int64_t smccc(struct vcpu *v, uint64_t fn, uint64_t a1)
{
	struct arch_regs r = { .x = { fn, a1 } };
	return vpsci_smccc_call(v, &r);
}

TEST(smccc_version_features_and_not_supported)
{
	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0];
	fixture_run(1, v0);
	EXPECT_EQ(smccc(v0, BH_SMCCC_VERSION, 0), 0x10001);
	EXPECT_EQ(smccc(v0, BH_SMCCC_ARCH_FEATURES, BH_SMCCC_VERSION), 0);
	EXPECT_EQ(smccc(v0, BH_SMCCC_ARCH_FEATURES, BH_SMCCC_ARCH_WORKAROUND_1), -1);
	EXPECT_EQ(smccc(v0, BH_PSCI_VERSION, 0), 0x10000);
	EXPECT_EQ(smccc(v0, BH_PSCI_FEATURES, BH_SMCCC_VERSION), 0);
	EXPECT_EQ(smccc(v0, BH_PSCI_FEATURES, 0x84000003ul /* CPU_ON, SMC32 */), 0);
	EXPECT_EQ(smccc(v0, 0x82000000ul, 0), -1);  /* SiP */
	EXPECT_EQ(smccc(v0, 0xC4000001ul, 0), -1);  /* CPU_SUSPEND: not emulated */
}

TEST(smccc_which_smc_is_a_call)
{
	EXPECT(vpsci_smc_is_smccc(BH_PSCI_VERSION, 0));
	EXPECT(vpsci_smc_is_smccc(0xC2000000u, 0));      /* unknown, yet a call: NOT_SUPPORTED */
	EXPECT(!vpsci_smc_is_smccc(BH_PSCI_VERSION, 1)); /* immediate other than 0 */
	EXPECT(!vpsci_smc_is_smccc(0x02000000u, 0));     /* a yielding call */
	EXPECT(!vpsci_smc_is_smccc(0x84010000u, 0));     /* bits 23:16 set */
}

/* Paravirtualized time (Arm DEN 0057A): only a partition with a virtual machine has it, and
 * PV_TIME_ST names the caller's own record. */
TEST(smccc_paravirtualized_time_only_with_a_virtual_machine)
{
	static const struct bh_vmachine_cfg machine = { .uart_intid = 33, .steal_ipa = 0x0b002000 };

	fixture_boot();
	struct vcpu *v0 = &partitions[1].vcpus[0], *v1 = &partitions[1].vcpus[1];
	fixture_run(1, v0);
	EXPECT_EQ(smccc(v0, BH_SMCCC_ARCH_FEATURES, BH_PV_TIME_FEATURES), -1); /* paravirtual */
	EXPECT_EQ(smccc(v0, BH_PV_TIME_FEATURES, BH_PV_TIME_ST), -1);
	EXPECT_EQ(smccc(v0, BH_PV_TIME_ST, 0), -1);
	fixture_partitions[1].vmachine = &machine;
	fixture_boot();
	v0 = &partitions[1].vcpus[0];
	v1 = &partitions[1].vcpus[1];
	fixture_run(1, v0);
	EXPECT_EQ(smccc(v0, BH_SMCCC_ARCH_FEATURES, BH_PV_TIME_FEATURES), 0);
	EXPECT_EQ(smccc(v0, BH_PV_TIME_FEATURES, BH_PV_TIME_ST), 0);
	EXPECT_EQ(smccc(v0, BH_PV_TIME_FEATURES, BH_PV_TIME_FEATURES), 0);
	EXPECT_EQ(smccc(v0, BH_PV_TIME_FEATURES, 0xC5000022u), -1); /* PV_TIME_LPT: not offered */
	EXPECT_EQ(smccc(v0, BH_PV_TIME_ST, 0), 0x0b002000);
	EXPECT_EQ(smccc(v1, BH_PV_TIME_ST, 0), 0x0b002000 + BH_PV_TIME_RECORD);
	fixture_partitions[1].vmachine = NULL;
}
