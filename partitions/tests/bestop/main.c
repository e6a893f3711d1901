/* bestop: lines up stop requests for latvictim's core. Its vCPU 0 is pinned to a core of its
 * own; its other vCPUs run on latvictim's core. Each round, vCPU 0 starts them all (each writes
 * an unfinished console line, which stopping it flushes, and idles), gives them time to run, then
 * halts them all:
 * - best-effort on a cyclic core whose gaps are short (tests/system/configs/be_stop.yaml): in
 *   the middle of a victim slot. They wait in the queue with a stop request each, and the
 *   decision at the slot's end, with little room before the next slot, takes them one by one
 *   and serves their requests (hypervisor/core/sched.c be_next). Two bestop partitions doing
 *   this at the same instants queue 14.
 * - pinned below latvictim on a fixed-priority core (no plan; req_fp.yaml): just before one of
 *   the victim's wake-ups, so that the core serves the stops when the victim is due.
 * What that costs the victim shows in its lateness against the plan (tests/system/
 * test_best_effort.py). The first window of attacks.h is quiet. With the test parameter no_halt
 * it starts them once and never halts them; on the fixed-priority core they then run just after
 * every wake-up of the victim: the reference, the same vCPUs running between its wake-ups.
 * Prints BESTOP rounds <n> stops <stop requests posted>, then BESTOP-DONE. */
#include <stdbool.h>
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define RUN_TICKS 125000ull /* 2 ms for the started vCPUs to write their lines */
#define MID_SLOT 3125ull    /* 50 us into a victim slot */
#define BEFORE_WAKE 350ull  /* before a wake-up of the victim: before the core decides for it
			     * (its lead: 170 ticks for 8 vCPUs) by about the time the halts
			     * take; halts posted during the lead cost the victim their own
			     * instructions in -icount's one clock */
#define AFTER_WAKE 500ull   /* started just after a wake-up: they start up before the next */

/* The first of the victim's instants (slot starts or wake-ups from f0) after `after`, plus aim. */
static unsigned long long aimed(unsigned long long f0, unsigned long long after, unsigned long long aim)
{
	unsigned long long n = (after - f0 - VICTIM_SLOT_OFFSET) / VICTIM_SLOT_PERIOD + 1;

	return f0 + VICTIM_SLOT_OFFSET + n * VICTIM_SLOT_PERIOD + aim;
}

/* The others: an unfinished line (no newline), then wait to be halted; in the reference (no_halt,
 * on the fixed-priority core) run again just after every wake-up of the victim. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	static char line[150];
	unsigned long long f0_ns;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	for (unsigned i = 0; i < sizeof(line); i++)
		line[i] = (char)('a' + i % 26);
	bh_console_write(line, sizeof(line));
	bool after_every_wake = bh_test_param("no_halt") && bh_plan_frame_start(&f0_ns) != BH_OK;
	for (;;) {
		if (after_every_wake)
			bh_sleep_until_ns(bh_ticks_to_ns(aimed(ATTACK_T0, bh_counter(), AFTER_WAKE)));
		else
			bh_idle();
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long f0_ns;
	struct bh_partition_status st;
	unsigned long rounds = 0, stops = 0;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (bh_partition_status(bh_partition_id(), &st) != BH_OK) {
		bh_puts("bestop: no status");
		for (;;)
			bh_idle();
	}
	/* The victim's instants: slot starts from the frame start, else wake-ups from ATTACK_T0. */
	bool planned = bh_plan_frame_start(&f0_ns) == BH_OK;
	unsigned long long f0 = planned ? bh_ns_to_ticks(f0_ns) : ATTACK_T0;
	unsigned long long aim = planned ? MID_SLOT : VICTIM_SLOT_PERIOD - BEFORE_WAKE;
	bh_sleep_until_ns(bh_ticks_to_ns(ATTACK_T0 + ATTACK_WINDOW));
	bool halting = !bh_test_param("no_halt");
	while (bh_counter() + RUN_TICKS < ATTACK_END) {
		if (!planned) /* a fixed-priority victim: they start up between its wake-ups */
			bh_sleep_until_ns(bh_ticks_to_ns(aimed(f0, bh_counter(), AFTER_WAKE)));
		for (unsigned v = 1; v < st.vcpu_count; v++)
			bh_vcpu_start(v);
		if (!halting)
			break;
		/* Then the aimed instant after their time to run: the same in every bestop partition. */
		bh_sleep_until_ns(bh_ticks_to_ns(aimed(f0, bh_counter() + RUN_TICKS, aim)));
		for (unsigned v = 1; v < st.vcpu_count; v++)
			stops += bh_vcpu_halt(v) == BH_OK;
		rounds++;
		/* Started again at once, they would be queued with a start too, and so be runnable. */
		bh_sleep_until_ns(bh_ticks_to_ns(bh_counter() + VICTIM_SLOT_PERIOD));
	}
	bh_sleep_until_ns(bh_ticks_to_ns(ATTACK_END));
	bh_printf("BESTOP rounds %lu stops %lu\n", rounds, stops);
	bh_puts("BESTOP-DONE");
	for (;;)
		bh_idle();
}
