/* stopline: a neighbour whose health-monitor events stop it (cold_restart), aimed at the
 * victim's instants (tests/system/test_stopline.py, beside latvictim).
 *
 * An event whose action goes on (ignore, propagate) has its console lines printed in the
 * faulting vCPU's own time, and one found inside a scheduling decision (an EDF budget used up)
 * waits for the vCPU's next turn. An action that restarts the partition had its lines (the
 * flushed unfinished line, the event's, the restart's) printed at once, in the trap. This
 * neighbour aims a trapped register access (trapped_instruction: cold_restart) at each due
 * instant of the victim (less the decision's lead), with an unfinished console
 * line to flush, then restarts and aims at the next one. Window 0 of attacks.h is quiet (it
 * sleeps), every later one attacks. (The same lines inside an EDF decision: the unit test
 * hm_restart_lines_wait_for_the_reload_in_vcpu0s_time; aiming a budget's end at an instant
 * needs the period's phase, which a neighbour that restarts at each overrun cannot learn.) */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define AIM_AHEAD 4ull /* ticks before the instant the hypervisor must act: the trap starts */

static char letters[150];

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	unsigned long long f0_ns, due_base = ATTACK_T0, lead = 0;

	if (bh_plan_frame_start(&f0_ns) == BH_OK) { /* cyclic: its slots */
		due_base = bh_ns_to_ticks(f0_ns);
		lead = HYP_SLOT_LEAD_TICKS;
	} else { /* fixed priority (stop_fp.yaml): the wake-ups, led too */
		lead = HYP_FP_LEAD_TICKS;
	}
	if (!restarts) {
		bh_puts("stopline: waiting for the first attack window");
		bh_sleep_until_ns(bh_ticks_to_ns(ATTACK_T0 + ATTACK_WINDOW));
	}
	for (unsigned i = 0; i < sizeof(letters); i++)
		letters[i] = (char)('a' + i % 26);
	if (bh_counter() >= ATTACK_END - ATTACK_WINDOW / 2) {
		if (restarts)
			bh_printf("stopline: done after %u restarts\n", restarts);
		for (;;)
			bh_idle();
	}
	/* An unfinished line, which the stop flushes before its event's line. */
	bh_console_write(letters, sizeof(letters));
	/* Aim a trapped access at the next due instant (less the decision's lead). */
	unsigned long long first = due_base + VICTIM_SLOT_OFFSET, now = bh_counter() + 200;
	unsigned long long k = now > first ? (now - first) / VICTIM_SLOT_PERIOD + 1 : 0;
	unsigned long long aim = first + k * VICTIM_SLOT_PERIOD - lead - AIM_AHEAD;
	unsigned long v;
	while (bh_counter() < aim)
		;
	__asm__ volatile("mrs %0, pmcr_el0" : "=r"(v) : : "memory");
	(void)v;
	bh_puts("stopline: the trap went on (trapped_instruction is not cold_restart?)");
	for (;;)
		bh_idle();
}
