/* stopline: a neighbour whose health-monitor events stop it (cold_restart), aimed at the
 * victim's instants (tests/system/test_stopline.py, beside latvictim).
 *
 * An event whose action goes on (ignore, propagate) has its console lines printed in the
 * faulting vCPU's own time, and one found inside a scheduling decision (an EDF budget used up)
 * waits for the vCPU's next turn. An action that stops the vCPU (a restart, a halt, a suspend)
 * cannot wait for that turn: the lines are printed at once. This neighbour overruns its EDF
 * budget every period with budget_overrun: cold_restart, its budget ending just before the
 * victim is due, with an unfinished console line to flush: the decision that finds the overrun
 * is the victim's time. Window 0 of attacks.h is quiet (it sleeps), every later one attacks.
 *
 * On a cyclic or fixed-priority core (no budget) it aims a trapped register access
 * (trapped_instruction: cold_restart) at each due instant instead. */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define THROTTLE_GAP_TICKS 1562ull
#define AIM_AHEAD 4ull /* ticks before the instant the hypervisor must act: the trap starts */

static char letters[150];

static unsigned long long learn_period_start(void)
{
	unsigned long long prev = bh_counter(), t;

	for (;;) {
		t = bh_counter();
		if (t - prev > THROTTLE_GAP_TICKS)
			return t;
		prev = t;
	}
}

/* Published once, at the first boot: the victim reads it before the attacks start. */
static int edf(void)
{
	long port = bh_port_open(EDF_PHASE_PORT);

	if (port < 0)
		return 0;
	unsigned long long base = due_base_from_release(learn_period_start());
	bh_sampling_write((int)port, &base, sizeof(base));
	return 1;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	int on_edf = 1;
	unsigned long long f0_ns, due_base = ATTACK_T0, lead = 0;

	if (bh_plan_frame_start(&f0_ns) == BH_OK) {
		on_edf = 0;
		due_base = bh_ns_to_ticks(f0_ns);
		lead = HYP_SLOT_LEAD_TICKS;
	} else if (!restarts) {
		on_edf = edf();
	} else {
		on_edf = bh_port_open(EDF_PHASE_PORT) >= 0;
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
	if (on_edf)
		for (;;) /* until the budget ends: budget_overrun -> cold_restart */
			__asm__ volatile("" ::: "memory");
	/* Aim a trapped access at the next due instant (less the cyclic decision's lead). */
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
