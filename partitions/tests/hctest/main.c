/* hctest: checks the hypercall API's argument validation and results.
 *
 * Expected configuration: partition id 0, one vCPU, memory at IPA 0x40000000 (4 MiB),
 * not a system partition, partition_error and deadline_miss mapped to "ignore".
 */
#include "bhtest.h"

#define HCTEST_MEM_BASE 0x40000000ul
#define HCTEST_MEM_SIZE 0x00400000ul   /* 4 MiB */
#define HCTEST_MEM_END  (HCTEST_MEM_BASE + HCTEST_MEM_SIZE)

#define UART_IPA        0x09000000ul   /* the hypervisor's UART, never partition memory */

#define SELF_ID          0u
#define OTHER_PARTITION  1u
#define BAD_CLOCK        7u
#define BAD_IRQ_OP       5u
#define BAD_VCPU         8u
#define FAR_FUTURE_NS    3600000000000ull  /* 1 h: a timer armed by mistake never fires */
#define TIMER_DELAY_NS   1000000ull        /* 1 ms */
#define ONE_SHOT_WAIT_MS 5u
#define PERIODIC_WAIT_NS 5500000ull        /* 5.5 ms: about five 1 ms periods */
#define PERIODIC_MIN     4u
#define PERIODIC_MAX     6u
#define DISARMED_WAIT_MS 3u

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
	/* Outside the vendor hypervisor range (SiP service, SMC32): SMCCC NOT_SUPPORTED. */
	BH_EXPECT_EQ(bh_hypercall(0x82000000ul, 0, 0, 0, 0, 0), BH_SMCCC_NOT_SUPPORTED);
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

BH_TEST(set_timer_bad_clock)
{
	unsigned long long now = 0;

	BH_EXPECT_EQ(bh_get_time(&now), BH_OK);
	BH_EXPECT_EQ(bh_set_timer(BAD_CLOCK, now + FAR_FUTURE_NS, 0), BH_INVALID_PARAM);
}

BH_TEST(irq_ctl_bad_arguments)
{
	BH_EXPECT_EQ(bh_irq_ctl(BAD_IRQ_OP, BH_VIRQ_TIMER), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_irq_ctl(BH_IRQ_ENABLE, BH_VIRQ_MAX), BH_INVALID_PARAM);
}

BH_TEST(vcpu_ctl_bad_vcpu)
{
	BH_EXPECT_EQ(bh_vcpu_ctl(BH_VCPU_START, BAD_VCPU, 0), BH_INVALID_PARAM);
}

/* Arguments that would be harmless should the permission check be missing. */
BH_TEST(system_calls_not_permitted)
{
	struct bh_trace_event ev;

	BH_EXPECT_EQ(bh_partition_ctl(BH_PARTITION_RESUME, SELF_ID, 0), BH_PERM_ERROR);
	BH_EXPECT_EQ(bh_plan_switch(0, BH_PLAN_AT_MAJOR_FRAME_END), BH_PERM_ERROR);
	BH_EXPECT_EQ(bh_trace_read(0, &ev, 1), BH_PERM_ERROR);
}

BH_TEST(partition_status_self)
{
	struct bh_partition_status st = { .state = ~0u, .vcpu_count = ~0u };

	BH_EXPECT_EQ(bh_partition_status(SELF_ID, &st), BH_OK);
	BH_EXPECT_EQ(st.state, BH_PARTITION_STATE_RUNNING);
	BH_EXPECT_EQ(st.vcpu_count, 1);
}

BH_TEST(partition_status_other_not_permitted)
{
	struct bh_partition_status st;

	BH_EXPECT_EQ(bh_partition_status(OTHER_PARTITION, &st), BH_PERM_ERROR);
}

static long status_at(unsigned long addr)
{
	return bh_partition_status(SELF_ID, (struct bh_partition_status *)addr);
}

BH_TEST(partition_status_bad_buffer)
{
	BH_EXPECT_EQ(status_at(0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(status_at(UART_IPA), BH_INVALID_PARAM);
	/* Starts in the last 16 bytes and runs past the end. */
	BH_EXPECT_EQ(status_at(HCTEST_MEM_END - 16), BH_INVALID_PARAM);
}

BH_TEST(exec_clock)
{
	unsigned long long exec = 0, hw = 0;

	BH_EXPECT_EQ(bh_get_exec_time(&exec), BH_OK);
	BH_EXPECT_EQ(bh_get_time(&hw), BH_OK);
	BH_EXPECT(exec > 0);
	BH_EXPECT(exec <= hw);
}

static volatile unsigned timer_irqs;

static void on_timer(unsigned intid)
{
	(void)intid;
	timer_irqs = timer_irqs + 1;
}

/* Arms the BH_VIRQ_TIMER timer TIMER_DELAY_NS from now. */
static long arm_timer(unsigned long long interval_ns)
{
	unsigned long long now = 0;

	BH_EXPECT_EQ(bh_get_time(&now), BH_OK);
	return bh_set_timer(BH_CLOCK_HW, now + TIMER_DELAY_NS, interval_ns);
}

/* bh_sleep_* wait with the lost-wake-up-safe pattern and take pending interrupts. */
BH_TEST(set_timer_one_shot)
{
	timer_irqs = 0;
	BH_EXPECT_EQ(arm_timer(0), BH_OK);
	bh_sleep_ms(ONE_SHOT_WAIT_MS);
	BH_EXPECT_EQ(timer_irqs, 1);
}

BH_TEST(set_timer_periodic)
{
	timer_irqs = 0;
	BH_EXPECT_EQ(arm_timer(TIMER_DELAY_NS), BH_OK);
	bh_sleep_ns(PERIODIC_WAIT_NS);
	unsigned fired = timer_irqs;

	if (fired < PERIODIC_MIN || fired > PERIODIC_MAX)
		bh_printf("hctest: periodic timer fired %u times\n", fired);
	BH_EXPECT(fired >= PERIODIC_MIN && fired <= PERIODIC_MAX);
	BH_EXPECT_EQ(bh_set_timer(BH_CLOCK_HW, 0, 0), BH_OK);
	/* An expiry that was already pending when the timer was disarmed is not a late one. */
	bh_irq_poll();
	fired = timer_irqs;
	bh_sleep_ms(DISARMED_WAIT_MS);
	BH_EXPECT_EQ(timer_irqs, fired);
}

static volatile unsigned vtimer_irqs;

static void on_vtimer(unsigned intid)
{
	(void)intid;
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory"); /* one-shot */
	vtimer_irqs = vtimer_irqs + 1;
}

/* Busy-waits with IRQs as they are (the sleep calls would use the virtual timer). */
static void spin_ns(unsigned long long ns)
{
	unsigned long long end = bh_now_ns() + ns;

	while (bh_now_ns() < end)
		;
}

/* The EL1 virtual timer fires while its virtual interrupt is disabled: it is held, not lost
 * (the hypervisor's direct timer path must step aside for it), and taken once enabled. */
BH_TEST(vtimer_held_while_disabled_then_delivered)
{
	vtimer_irqs = 0;
	BH_EXPECT_EQ(bh_irq_set_handler(BH_VIRQ_VTIMER, on_vtimer), BH_OK);
	BH_EXPECT_EQ(bh_irq_ctl(BH_IRQ_DISABLE, BH_VIRQ_VTIMER), BH_OK);
	unsigned long flags = bh_irq_save();
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_counter() + bh_ns_to_ticks(TIMER_DELAY_NS)), "r"(1ul)
			 : "memory");
	bh_irq_enable();
	spin_ns(ONE_SHOT_WAIT_MS * 1000000ull);
	unsigned while_disabled = vtimer_irqs;
	BH_EXPECT_EQ(bh_irq_ctl(BH_IRQ_ENABLE, BH_VIRQ_VTIMER), BH_OK);
	spin_ns(TIMER_DELAY_NS);
	bh_irq_restore(flags);
	BH_EXPECT_EQ(while_disabled, 0);
	BH_EXPECT_EQ(vtimer_irqs, 1);
	BH_EXPECT_EQ(bh_irq_set_handler(BH_VIRQ_VTIMER, NULL), BH_OK);
}

BH_TEST(deadline_miss_ignored)
{
	BH_EXPECT_EQ(bh_deadline_miss(0), BH_OK);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_irq_set_handler(BH_VIRQ_TIMER, on_timer);
	bh_test_run_all();
	return 0;
}
