/* hmtest: the health monitor's counts, log, rate-limited printing and actions, one role per
 * partition id (tests/system/configs/hm.yaml, tests/system/test_hm.py):
 *   0 (system): watches partitions 2 and 3 suspend and warm-restart themselves through their
 *     actions and 1 halt; then raises HM_STORM partition_error events (ignore) and checks
 *     that the counts say exactly that and the log holds the newest entries and counts the
 *     rest as lost.
 *   1: a normal partition: the system calls are refused; its memory_violation is propagated
 *     to its handler (BH_VIRQ_HM, BH_HC_HM_TAKE); a second one left untaken halts it.
 *   2: smc -> suspend.   3: trapped_instruction -> warm_restart. */
#include "bhtest.h"

#define HM_STORM 1000u
#define LOG_SIZE 64u            /* HM_LOG_SIZE of hypervisor/core/hm.c */
#define OUTSIDE_IPA 0x80000000ul
#define EV_MEMORY_VIOLATION 0u
#define EV_TRAPPED 1u
#define EV_SMC 2u
#define EV_PARTITION_ERROR 3u
#define ACT_IGNORE 0u
#define ACT_PROPAGATE 6u

static struct bh_hm_log_entry entries[BH_HM_LOG_READ_MAX];

/* --- 0: the system partition --------------------------------------------------------------- */

static unsigned state_of(unsigned id)
{
	struct bh_partition_status st;

	return bh_partition_status(id, &st) == BH_OK ? st.state : ~0u;
}

BH_TEST(hm_suspend_and_warm_restart_actions)
{
	struct bh_partition_status st;
	struct bh_hm_status hs;

	for (int i = 0; i < 2000 && state_of(2) != BH_PARTITION_STATE_SUSPENDED; i++)
		bh_sleep_ms(1);
	BH_EXPECT_EQ(state_of(2), BH_PARTITION_STATE_SUSPENDED);
	BH_EXPECT_EQ(bh_hm_status(2, &hs), BH_OK);
	BH_EXPECT_EQ(hs.counts[EV_SMC], 1);
	for (int i = 0; i < 2000; i++) {
		if (bh_partition_status(3, &st) == BH_OK && st.restarts >= 1)
			break;
		bh_sleep_ms(1);
	}
	BH_EXPECT_EQ(st.restarts, 1);
	BH_EXPECT_EQ(bh_hm_status(3, &hs), BH_OK);
	BH_EXPECT_EQ(hs.counts[EV_TRAPPED], 1);
	/* The storm below counts the log's entries: partition 1's events must be over. */
	for (int i = 0; i < 2000 && state_of(1) != BH_PARTITION_STATE_HALTED; i++)
		bh_sleep_ms(1);
	BH_EXPECT_EQ(state_of(1), BH_PARTITION_STATE_HALTED);
}



static void storm(void)
{
	struct bh_hm_status st;
	unsigned long lost = 0, total = 0;
	long n;
	int fields_ok = 1;

	while ((n = bh_hm_read(entries, BH_HM_LOG_READ_MAX, &lost)) > 0) /* boot's events */
		;
	for (unsigned i = 0; i < HM_STORM; i++)
		bh_raise_event(0x1000 + i);
	BH_EXPECT_EQ(bh_hm_status(0, &st), BH_OK);
	BH_EXPECT_EQ(st.counts[EV_PARTITION_ERROR], HM_STORM);
	BH_EXPECT_EQ(st.events, HM_STORM);
	BH_EXPECT_EQ(st.not_printed, HM_STORM - 5);
	BH_EXPECT_EQ(st.log_pending, LOG_SIZE);
	unsigned long first = ~0ul, read = 0;
	while ((n = bh_hm_read(entries, BH_HM_LOG_READ_MAX, &lost)) > 0) {
		if (first == ~0ul)
			total += lost; /* what the storm pushed out, reported with the first read */
		for (long i = 0; i < n; i++, read++) {
			if (first == ~0ul)
				first = entries[i].address;
			fields_ok &= entries[i].partition == 0 && entries[i].vcpu == 0 &&
				     entries[i].event == EV_PARTITION_ERROR &&
				     entries[i].action == ACT_IGNORE &&
				     entries[i].address == first + read && entries[i].time_ns > 0;
		}
	}
	BH_EXPECT_EQ(read, LOG_SIZE);
	BH_EXPECT_EQ(total, HM_STORM - LOG_SIZE);
	BH_EXPECT_EQ(first, 0x1000 + HM_STORM - LOG_SIZE); /* the newest are kept */
	BH_EXPECT(fields_ok);
	bh_printf("BHSTAT hm_storm_events %llu log_read %lu log_lost %lu\n",
		  st.counts[EV_PARTITION_ERROR], read, total);
}

BH_TEST(hm_storm_counts_exact_and_log_keeps_the_newest)
{
	storm();
}

BH_TEST(hm_read_checks_its_buffer)
{
	BH_EXPECT_EQ(bh_hypercall(BH_HC_HM_READ, OUTSIDE_IPA, 4, 0, 0, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_hypercall(BH_HC_HM_READ, ~0ul - 8, 4, 0, 0, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_hypercall(BH_HC_HM_STATUS, 0, OUTSIDE_IPA, 0, 0, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_hypercall(BH_HC_HM_STATUS, 99, (unsigned long)entries, 0, 0, 0),
		     BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_hm_take(entries), BH_NOT_AVAILABLE);
}

/* --- 1: propagate ------------------------------------------------------------------------- */

static volatile unsigned propagated;
static struct bh_hm_log_entry taken;

static void on_hm(unsigned intid)
{
	(void)intid;
	if (bh_hm_take(&taken) == BH_OK)
		propagated++;
}

static void user_role(void)
{
	struct bh_hm_status st;

	bh_test_report("hm_read_refused_to_a_normal_partition",
		       bh_hm_read(entries, 1, 0) == BH_PERM_ERROR, "");
	bh_test_report("hm_status_of_another_refused",
		       bh_hm_status(0, &st) == BH_PERM_ERROR && bh_hm_status(1, &st) == BH_OK, "");
	bh_irq_set_handler(BH_VIRQ_HM, on_hm);
	(void)*(volatile unsigned long *)OUTSIDE_IPA; /* propagated: skipped, then delivered */
	bh_irq_enable();
	for (int i = 0; i < 1000 && !propagated; i++)
		bh_idle();
	bh_irq_disable();
	bh_test_report("hm_propagate_reaches_the_handler",
		       propagated == 1 && taken.event == EV_MEMORY_VIOLATION &&
		       taken.address == OUTSIDE_IPA && taken.action == ACT_PROPAGATE &&
		       taken.partition == 1, "");
	bh_test_summary();
	/* Two more, neither taken (interrupts masked): the second is not handled -> halted. */
	(void)*(volatile unsigned long *)OUTSIDE_IPA;
	(void)*(volatile unsigned long *)(OUTSIDE_IPA + 8);
	bh_puts("hmtest: still running after an unhandled propagated event");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long v;

	(void)vcpu;
	switch (bh_partition_id()) {
	case 0:
		bh_test_run_all();
		break;
	case 1:
		user_role();
		break;
	case 2:
		bh_puts("hmtest: smc, to be suspended");
		__asm__ volatile("mov x0, #0\n\tsmc #0" : : : "x0", "x1", "x2", "x3", "memory");
		bh_puts("hmtest: resumed after the smc");
		break;
	case 3:
		bh_printf("hmtest: boot kind %u, restarts %u\n", boot_kind, restarts);
		if (boot_kind == BH_BOOT_COLD)
			__asm__ volatile("mrs %0, pmcr_el0" : "=r"(v) : : "memory");
		break;
	}
	for (;;)
		bh_idle();
}
