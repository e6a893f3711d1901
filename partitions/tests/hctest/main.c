/* hctest: checks the hypercall API's argument validation and results.
 *
 * Expected configuration: partition id 0, one vCPU, memory at IPA 0x40000000 (4 MiB),
 * not a system partition, partition_error mapped to "ignore".
 */
#include "bhtest.h"

#define HCTEST_MEM_BASE 0x40000000ul
#define HCTEST_MEM_SIZE 0x00400000ul   /* 4 MiB */
#define HCTEST_MEM_END  (HCTEST_MEM_BASE + HCTEST_MEM_SIZE)

#define UART_IPA        0x09000000ul   /* the hypervisor's UART, never partition memory */

static const char hello_line[] = "hctest: console write check\n";

/* Valid memory for the length checks, one byte longer than the largest write. */
static char big_buf[BH_CONSOLE_MAX_WRITE + 1];

static long write_at(unsigned long addr, unsigned long len)
{
	return bh_console_write((const void *)addr, len);
}

BH_TEST(unknown_hypercall)
{
	BH_EXPECT_EQ(bh_hypercall(BH_HC(0x7f), 0, 0, 0, 0, 0), BH_UNKNOWN_HYPERCALL);
	BH_EXPECT_EQ(bh_hypercall(BH_HC(BH_HC_COUNT), 0, 0, 0, 0, 0), BH_UNKNOWN_HYPERCALL);
	BH_EXPECT_EQ(bh_hypercall(0xC600FFFFul, 0, 0, 0, 0, 0), BH_UNKNOWN_HYPERCALL);
	/* Outside the vendor hypervisor range (SiP service, SMC32). */
	BH_EXPECT_EQ(bh_hypercall(0x82000000ul, 0, 0, 0, 0, 0), BH_UNKNOWN_HYPERCALL);
}

BH_TEST(console_write_null)
{
	BH_EXPECT_EQ(bh_console_write((const void *)0, 16), BH_INVALID_PARAM);
}

BH_TEST(console_write_outside_memory)
{
	BH_EXPECT_EQ(write_at(0x0, 16), BH_INVALID_PARAM);
	BH_EXPECT_EQ(write_at(UART_IPA, 16), BH_INVALID_PARAM);
	BH_EXPECT_EQ(write_at(0xFFFFFFFFFFFFF000ul, 16), BH_INVALID_PARAM);
	/* Straddles the start of the partition's memory. */
	BH_EXPECT_EQ(write_at(HCTEST_MEM_BASE - 16, 64), BH_INVALID_PARAM);
	/* Starts in the last 16 bytes and runs past the end. */
	BH_EXPECT_EQ(write_at(HCTEST_MEM_END - 16, 32), BH_INVALID_PARAM);
}

BH_TEST(console_write_bad_length)
{
	BH_EXPECT_EQ(bh_console_write(big_buf, 1ul << 40), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_console_write(big_buf, ~0ul), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_console_write(big_buf, BH_CONSOLE_MAX_WRITE + 1), BH_INVALID_PARAM);
}

BH_TEST(console_write_zero_length)
{
	BH_EXPECT_EQ(bh_console_write(hello_line, 0), BH_OK);
}

BH_TEST(console_write_valid)
{
	unsigned long len = sizeof(hello_line) - 1;

	BH_EXPECT_EQ(bh_console_write(hello_line, len), len);
}

BH_TEST(get_ids)
{
	unsigned part = ~0u, vcpu = ~0u;

	BH_EXPECT_EQ(bh_get_ids(&part, &vcpu), BH_OK);
	BH_EXPECT_EQ(part, 0);
	BH_EXPECT_EQ(vcpu, 0);
}

BH_TEST(get_time_monotonic)
{
	unsigned long long prev = 0, t = 0;

	BH_EXPECT_EQ(bh_get_time(&prev), BH_OK);
	for (int i = 0; i < 100; i++) {
		BH_EXPECT_EQ(bh_get_time(&t), BH_OK);
		BH_EXPECT(t >= prev);
		prev = t;
	}
}

BH_TEST(get_time_advances_across_sleep)
{
	unsigned long long before = 0, after = 0;

	BH_EXPECT_EQ(bh_get_time(&before), BH_OK);
	bh_sleep_ms(1);
	BH_EXPECT_EQ(bh_get_time(&after), BH_OK);
	BH_EXPECT(after >= before + 1000000ull);
}

/* BH_HC_IDLE must return once the armed virtual timer condition holds. */
BH_TEST(idle_returns_after_timer)
{
	unsigned long long target = bh_counter() + bh_counter_freq() / 1000; /* 1 ms */

	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(target), "r"(1ul) : "memory");
	long rc = bh_idle();
	unsigned long long now = bh_counter();

	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	BH_EXPECT_EQ(rc, BH_OK);
	BH_EXPECT(now >= target);
}

BH_TEST(reset_self_bad_mode)
{
	BH_EXPECT_EQ(bh_reset_self(7), BH_INVALID_PARAM);
}

BH_TEST(halt_system_not_permitted)
{
	BH_EXPECT_EQ(bh_halt_system(), BH_PERM_ERROR);
}

BH_TEST(raise_event_ignored)
{
	BH_EXPECT_EQ(bh_raise_event(0x1234), BH_OK);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_test_run_all();
	return 0;
}
