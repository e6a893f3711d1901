/* smccc: the SMC Calling Convention by HVC in a paravirtual partition (configs/arch_smccc.yaml,
 * two vCPUs): SMCCC_VERSION, SMCCC_ARCH_FEATURES, PSCI, NOT_SUPPORTED for any other function
 * ID outside Bulkhead's range, BH_UNKNOWN_HYPERCALL inside it. */
#include "bhtest.h"

#define SMCCC_SIP_SMC32 0x82000000ul
#define SMCCC_SIP_SMC64 0xC2000000ul
#define SMCCC_SOC_ID 0x80000002ul
#define TRNG_VERSION 0x84000050ul
#define PSCI_CPU_SUSPEND 0xC4000001ul
#define PSCI_CPU_ON_SMC32 0x84000003ul
#define WAIT_STEPS 1000u

static volatile unsigned secondary_ran;

BH_TEST(smccc_version_and_arch_features)
{
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_VERSION, 0, 0, 0, 0, 0), BH_SMCCC_VERSION_1_1);
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_ARCH_FEATURES, BH_SMCCC_VERSION, 0, 0, 0, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_ARCH_FEATURES, BH_SMCCC_ARCH_FEATURES, 0, 0, 0, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_ARCH_FEATURES, BH_SMCCC_ARCH_WORKAROUND_1, 0, 0, 0, 0),
		     BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_ARCH_FEATURES, BH_SMCCC_ARCH_WORKAROUND_2, 0, 0, 0, 0),
		     BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_ARCH_FEATURES, BH_SMCCC_ARCH_WORKAROUND_3, 0, 0, 0, 0),
		     BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(BH_SMCCC_ARCH_FEATURES, SMCCC_SOC_ID, 0, 0, 0, 0),
		     BH_SMCCC_NOT_SUPPORTED);
}

BH_TEST(smccc_unknown_functions)
{
	BH_EXPECT_EQ(bh_hypercall(SMCCC_SIP_SMC32, 0, 0, 0, 0, 0), BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(SMCCC_SIP_SMC64, 0, 0, 0, 0, 0), BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(TRNG_VERSION, 0, 0, 0, 0, 0), BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(SMCCC_SOC_ID, 0, 0, 0, 0, 0), BH_SMCCC_NOT_SUPPORTED);
	/* Bulkhead's own range keeps its own error; its calls work as before. */
	BH_EXPECT_EQ(bh_hypercall(BH_HC(BH_HC_COUNT), 0, 0, 0, 0, 0), BH_UNKNOWN_HYPERCALL);
	BH_EXPECT_EQ(bh_hypercall(0xC600FFFFul, 0, 0, 0, 0, 0), BH_UNKNOWN_HYPERCALL);
	unsigned part = 0, vcpu = 9;
	BH_EXPECT_EQ(bh_get_ids(&part, &vcpu), BH_OK);
	BH_EXPECT_EQ(vcpu, 0);
}

BH_TEST(psci_queries_by_hvc)
{
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_VERSION, 0, 0, 0, 0, 0), 0x10000);
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_FEATURES, BH_PSCI_CPU_ON, 0, 0, 0, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_FEATURES, BH_PSCI_SYSTEM_RESET, 0, 0, 0, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_FEATURES, BH_SMCCC_VERSION, 0, 0, 0, 0), 0);
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_FEATURES, PSCI_CPU_SUSPEND, 0, 0, 0, 0),
		     BH_SMCCC_NOT_SUPPORTED);
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_MIGRATE_INFO_TYPE, 0, 0, 0, 0, 0), 2);
}

/* vCPU 1 started by PSCI CPU_ON (SMC32 form) at the partition entry, then off by CPU_OFF. */
BH_TEST(psci_cpu_on_and_off_by_hvc)
{
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_AFFINITY_INFO, 1, 0, 0, 0, 0), 1); /* off */
	BH_EXPECT_EQ(bh_hypercall(BH_PSCI_CPU_ON, 2, 0x40000000ul, 2, 0, 0), -2); /* no vCPU 2 */
	BH_EXPECT_EQ(bh_hypercall(PSCI_CPU_ON_SMC32, 1, 0x40000000ul, 1, 0, 0), 0);
	for (unsigned i = 0; i < WAIT_STEPS && !secondary_ran; i++)
		bh_sleep_ns(100000);
	BH_EXPECT_EQ(secondary_ran, 1);
	long state = 0;
	for (unsigned i = 0; i < WAIT_STEPS; i++) {
		state = bh_hypercall(BH_PSCI_AFFINITY_INFO, 1, 0, 0, 0, 0);
		if (state == 1)
			break;
		bh_sleep_ns(100000);
	}
	BH_EXPECT_EQ(state, 1); /* off again */
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_test_run_all();
	return 0;
}

/* vCPU 1 (crt0 sends every vCPU but 0 here): runs once, then powers itself off. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	secondary_ran = 1;
	bh_hypercall(BH_PSCI_CPU_OFF, 0, 0, 0, 0, 0);
	bh_puts("smccc: CPU_OFF returned");
	for (;;)
		bh_idle();
}
