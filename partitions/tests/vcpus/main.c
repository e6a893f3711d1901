/* vcpus: vCPU control within one partition (three vCPUs). vCPU 1 counts forever, vCPU 2
 * sleeps forever; vCPU 0 starts, suspends, resumes, halts and restarts vCPU 1 and checks
 * each step through BH_HC_VCPU_STATUS and the counter. */
#include "bhtest.h"

#define V1               1u
#define V2               2u
#define WINDOW_MS        5u   /* how long the counter is watched */
#define SETTLE_MS        1u   /* lets a stop requested for another core take effect */
#define BAD_VCPU         9u
#define BAD_OP           7u
#define FOREVER_SLEEP_MS 1000u

/* volatile: written by vCPU 1, read by vCPU 0. */
static volatile unsigned long v1_counter;
static volatile unsigned v1_starts;

static unsigned state_of(unsigned vcpu)
{
	unsigned state = ~0u;
	long rc = bh_vcpu_status(vcpu, &state, 0);

	if (rc < 0)
		bh_printf("vcpus: vcpu_status(%u) failed: %ld\n", vcpu, rc);
	return state;
}

static int counter_advances(void)
{
	unsigned long before = v1_counter;

	bh_sleep_ms(WINDOW_MS);
	return v1_counter != before;
}

static int counter_frozen(void)
{
	bh_sleep_ms(SETTLE_MS);
	unsigned long before = v1_counter;

	bh_sleep_ms(WINDOW_MS);
	return v1_counter == before;
}

BH_TEST(start_secondaries)
{
	BH_EXPECT_EQ(bh_vcpu_start(V1), BH_OK);
	BH_EXPECT_EQ(bh_vcpu_start(V2), BH_OK);
	BH_EXPECT_EQ(bh_vcpu_start(V1), BH_NO_ACTION);
}

BH_TEST(v1_ready_and_counting)
{
	BH_EXPECT_EQ(state_of(V1), BH_VCPU_STATE_READY);
	BH_EXPECT(counter_advances());
}

BH_TEST(v2_idle)
{
	bh_sleep_ms(WINDOW_MS);
	BH_EXPECT_EQ(state_of(V2), BH_VCPU_STATE_IDLE);
}

BH_TEST(suspend_v1)
{
	BH_EXPECT_EQ(bh_vcpu_suspend(V1), BH_OK);
	BH_EXPECT_EQ(state_of(V1), BH_VCPU_STATE_SUSPENDED);
	BH_EXPECT(counter_frozen());
}

BH_TEST(resume_v1)
{
	BH_EXPECT_EQ(bh_vcpu_resume(V1), BH_OK);
	BH_EXPECT_EQ(state_of(V1), BH_VCPU_STATE_READY);
	BH_EXPECT(counter_advances());
}

BH_TEST(halt_v1)
{
	BH_EXPECT_EQ(bh_vcpu_halt(V1), BH_OK);
	BH_EXPECT_EQ(state_of(V1), BH_VCPU_STATE_HALTED);
	BH_EXPECT(counter_frozen());
}

BH_TEST(restart_v1)
{
	BH_EXPECT_EQ(bh_vcpu_start(V1), BH_OK);
	BH_EXPECT(counter_advances());
	BH_EXPECT_EQ(v1_starts, 2);
}

BH_TEST(bad_arguments)
{
	BH_EXPECT_EQ(bh_vcpu_ctl(BH_VCPU_START, BAD_VCPU, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_vcpu_ctl(BAD_OP, V1, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_vcpu_status(BAD_VCPU, 0, 0), BH_INVALID_PARAM);
}

BH_TEST(v1_exec_time)
{
	unsigned long long ns = 0;

	BH_EXPECT_EQ(bh_vcpu_status(V1, 0, &ns), BH_OK);
	BH_EXPECT(ns > 0);
}

/* An SGI from one vCPU to another of its partition (msr ICC_SGI1R_EL1, which the hypervisor
 * serves for paravirtual partitions too): it wakes v2 from its sleep, whose idle loop takes it. */
#define SGI_TEST 3u
#define SGI_TARGET(vcpu) ((unsigned long)SGI_TEST << 24 | 1ul << (vcpu))
#define SGI_SETTLE_MS 2u

static volatile unsigned sgis_taken;

static void sgi_handler(unsigned intid)
{
	if (intid == SGI_TEST && bh_vcpu_self() == V2)
		sgis_taken = sgis_taken + 1;
}

static void send_sgi(unsigned long value)
{
	__asm__ volatile("msr S3_0_C12_C11_5, %0\n\tisb" : : "r"(value) : "memory");
}

BH_TEST(sgi_to_another_vcpu)
{
	unsigned before = sgis_taken;

	send_sgi(SGI_TARGET(V2));
	bh_sleep_ms(SGI_SETTLE_MS);
	BH_EXPECT_EQ(sgis_taken, before + 1);
	send_sgi(SGI_TARGET(BAD_VCPU)); /* no such vCPU: nobody */
	bh_sleep_ms(SGI_SETTLE_MS);
	BH_EXPECT_EQ(sgis_taken, before + 1);
	send_sgi(SGI_TARGET(V2));
	bh_sleep_ms(SGI_SETTLE_MS);
	BH_EXPECT_EQ(sgis_taken, before + 2);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_irq_set_handler(SGI_TEST, sgi_handler);
	bh_test_run_all();
	bh_halt_self();
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind;
	(void)restarts;
	if (vcpu == V1) {
		v1_starts = v1_starts + 1;
		bh_puts("vcpus: v1 started");
		for (;;)
			v1_counter = v1_counter + 1;
	}
	if (vcpu == V2) {
		bh_puts("vcpus: v2 started");
		for (;;)
			bh_sleep_ms(FOREVER_SLEEP_MS);
	}
}
