/* The windows of a lock storm (partitions/board/lockstorm, uartstorm): a bare-metal program for
 * QEMU's virt machine with 4 CPUs that keeps a lock of the hypervisor's busy from several cores,
 * while its CPU 0, on a core it shares with latvictim (partitions/tests/latvictim), aims an
 * access that takes the same lock just before each instant the victim is due (the hypervisor's
 * lead before it), so that the trap waits for the other cores' holders there
 * (docs/performance.md, "Waits for a lock other cores hold"; tests/system/test_lockwait.py).
 *
 * Its windows are hostile's (partitions/tests/hostile/attacks.h): latvictim's samples of
 * window w are taken while window w of this file runs. In each window CPU 0 spins (no trap),
 * aims, or hammers (accesses back to back, nothing aimed); CPUs 1-3 (on dedicated cores) either
 * sleep (WFI on their virtual timer), storm (access back to back) or burst (access only from
 * BURST_BEFORE ticks before the hypervisor's lead to BURST_AFTER after the instant, sleep
 * otherwise).
 *
 * CPU 0 finds whether its core is cyclic: before ATTACK_T0 the victim sleeps on a fixed-priority
 * core (no gap in CPU 0's counter), while on a cyclic core CPU 0 loses the core for the victim's
 * 100 us slots; the end of such a gap is the start of CPU 0's next slot, the victim's slots start
 * 100 us (half a period) from there. Otherwise the victim is due at ATTACK_T0 + VICTIM_SLOT_OFFSET
 * + k * VICTIM_SLOT_PERIOD.
 *
 * While a CPU spins or accesses it keeps its virtual timer armed, masked, TURN_TICKS ahead (an
 * arming ends the CPU's turn at once: each CPU goes on one step a round). Under -icount
 * QEMU 7.2 runs the cores in turn, and each turn of a round may run a share of the time to the
 * next timer deadline of any core as the round starts: with no deadline near, a writing core
 * ran long turns after the victim's timer fired, before the victim's core had its turn, whatever
 * the hypervisor did (450 to 1100 ticks of lateness with CPU 0 only spinning). With a deadline
 * always near, the turns are a few ticks long, the cores' instructions interleave finely (as
 * cores running in parallel) and the victim's lateness is the hypervisor's.
 *
 * Every aimed access is timed by the counter (its trap, whatever it waited for). At the end it
 * prints one line per window:
 *   PROBE_NAME: window W <cpu0 mode> <others mode> aimed N longest T hammer T writes P0..P3
 * (the number of aimed accesses, the longest aimed one, the longest unaimed one of the hammer
 * window, the accesses of each CPU).
 *
 * The program defines PROBE_NAME and, before it includes this file, the storm's accesses:
 *   storm_prepare()          before the other CPUs start
 *   storm_step(cpu, k)       CPU cpu's k-th access of a storm (CPUs 1-3)
 *   aimed_step(k)            CPU 0's k-th aimed (or hammering) access, timed
 *   aimed_after(k)           what follows it, untimed
 *   storm_before_report()    before the window lines */
#ifndef STORM_H
#define STORM_H

#include "smp_guest.h"
#include "../../tests/hostile/attacks.h"

#define CPUS 4u

#define AIM_FIRST 1ull
#define AIM_SPREAD 16ull
#define BURST_BEFORE 1500ull /* the others start this long before the lead */
#define BURST_AFTER 1000ull  /* and stop this long after the instant */
#define CYCLIC_GAP 5000ull   /* a gap this long: the victim's 100 us slot */
#define CYCLIC_GAP_MAX 7500ull
#define CYCLIC_SWITCH 10ull  /* from a slot start to CPU 0's first instruction in it */

enum cpu0_mode { SPIN, AIM, HAMMER };
enum others_mode { IDLE, STORM, BURST };
static const char *const cpu0_names[] = { "spin", "aim", "hammer" };
static const char *const others_names[] = { "idle", "storm", "burst" };

struct window {
	unsigned char cpu0, others;
};

static const struct window windows[ATTACK_COUNT] = {
	{ SPIN, IDLE },    /* 0: quiet */
	{ AIM, IDLE },     /* 1: the aimed write alone: one write's path */
	{ SPIN, STORM },   /* 2: the storm alone: round robin under -icount */
	{ AIM, STORM },    /* 3: the attack */
	{ SPIN, BURST },   /* 4: bursts alone */
	{ AIM, BURST },    /* 5: the attack, the others only near the instant */
	{ AIM, IDLE },     /* 6: the aimed write alone again */
	{ AIM, STORM },    /* 7: the attack again */
	{ AIM, BURST },    /* 8 */
	{ SPIN, STORM },   /* 9: the storm alone again */
	{ HAMMER, STORM }, /* 10: all four write back to back, nothing aimed */
	{ SPIN, IDLE },    /* 11 */
};

struct figures {
	uint64_t aimed, longest, hammer_longest;
};

static struct figures figs[ATTACK_COUNT];
static volatile uint64_t due_base; /* the victim's instants: due_base + k * VICTIM_SLOT_PERIOD */
static volatile uint64_t lead;     /* how long before an instant the hypervisor decides for it */
static volatile unsigned ready, up[CPUS];
static volatile uint32_t writes[CPUS][ATTACK_COUNT]; /* accesses of each CPU per window */
static volatile int cur_window[CPUS];

extern char secondary_entry[], stack1_top[], stack2_top[], stack3_top[];

/* The first instant the victim is due at or after t. */
static uint64_t next_due(uint64_t t)
{
	uint64_t k = t <= due_base ? 0 : (t - due_base + VICTIM_SLOT_PERIOD - 1) / VICTIM_SLOT_PERIOD;
	return due_base + k * VICTIM_SLOT_PERIOD;
}

/* CPUs 1-3: back to back until `end`. */
static void storm_until(unsigned cpu, uint64_t end)
{
	for (uint64_t k = 0, t; (t = now()) < end; k++) {
		keep_turns_short(t);
		storm_step(cpu, k);
		writes[cpu][cur_window[cpu]]++;
	}
}

/* The others are busy from the window's start to QUIET_TAIL before its end; CPU 0 stops aiming
 * AIM_TAIL before it. */
#define QUIET_TAIL 4000ull
#define AIM_TAIL 2000ull

static void others_window(unsigned cpu, enum others_mode mode, uint64_t window_end)
{
	uint64_t end = window_end - QUIET_TAIL;

	/* Not one CPU alone: a core that writes back to back with nobody waiting for the lock
	 * arms no timer, and under -icount it ran whole turns of QEMU's round robin (CPU 0 made
	 * 1 aimed write in 5 ms). */
	if (mode == IDLE) {
		sleep_until(end);
	} else if (mode == STORM) {
		storm_until(cpu, end);
	} else {
		for (;;) {
			uint64_t d = next_due(now() + lead + BURST_BEFORE);
			if (d - lead - BURST_BEFORE >= end)
				break;
			sleep_until(d - lead - BURST_BEFORE);
			storm_until(cpu, d + BURST_AFTER);
		}
	}
	sleep_until(window_end);
}

/* CPU 0, aimed: one aimed_step AIM_FIRST + k % AIM_SPREAD ticks before the lead before each
 * instant k, timed; aimed_after after it (the victim has run by then). */
static void aim_window(struct figures *f, uint64_t end)
{
	for (uint64_t k = 0;; k++) {
		uint64_t d = next_due(now() + lead + 200);
		uint64_t at = d - lead - AIM_FIRST - k % AIM_SPREAD;
		if (d + 1000 >= end)
			break;
		spin_until(at);
		uint64_t t0 = now();
		aimed_step(k);
		uint64_t dt = now() - t0;
		aimed_after(k);
		writes[0][f - figs]++;
		f->aimed++;
		if (dt > f->longest)
			f->longest = dt;
	}
	spin_until(end);
}

static void hammer_window(struct figures *f, uint64_t end)
{
	for (uint64_t k = 0; now() < end - QUIET_TAIL; k++) {
		uint64_t t0 = now();
		keep_turns_short(t0);
		aimed_step(k);
		uint64_t dt = now() - t0;
		aimed_after(k);
		writes[0][f - figs]++;
		/* Switched out meanwhile (the victim's turn): not one path. */
		if (dt > f->hammer_longest && dt < 3000)
			f->hammer_longest = dt;
	}
}

/* Before ATTACK_T0: a gap longer than CYCLIC_GAP is the victim's cyclic slot. */
static void learn_core(void)
{
	uint64_t prev = now(), t, stop = ATTACK_T0 - 4 * VICTIM_SLOT_PERIOD;

	due_base = ATTACK_T0 + VICTIM_SLOT_OFFSET;
	lead = HYP_FP_LEAD_TICKS;
	while ((t = now()) < stop) {
		if (t - prev > CYCLIC_GAP && t - prev < CYCLIC_GAP_MAX) {
			uint64_t slot = t - CYCLIC_SWITCH + VICTIM_SLOT_OFFSET; /* the victim's next */
			due_base = ATTACK_T0 + (slot - ATTACK_T0 % VICTIM_SLOT_PERIOD) % VICTIM_SLOT_PERIOD;
			lead = HYP_SLOT_LEAD_TICKS;
			break;
		}
		prev = t;
	}
}

void cpu_main(unsigned cpu)
{
	gic_init_cpu(cpu, 1u << VTIMER_INTID);
	up[cpu] = 1;
	while (!ready)
		sleep_until(now() + 6250);
	sleep_until(ATTACK_T0);
	for (int w = 0; w < ATTACK_COUNT; w++)
		cur_window[cpu] = w, others_window(cpu, (enum others_mode)windows[w].others,
			      ATTACK_T0 + ((uint64_t)w + 1) * ATTACK_WINDOW);
	for (;;)
		sleep_until(now() + 1000000);
}

int main(void)
{
	char *stacks[CPUS] = { 0, stack1_top, stack2_top, stack3_top };

	puts_(PROBE_NAME ": start\n");
	storm_prepare();
	for (unsigned c = 1; c < CPUS; c++)
		if (smc_call(PSCI_CPU_ON, c, (uint64_t)secondary_entry, (uint64_t)stacks[c]) != 0)
			show("CPU_ON failed for", c);
	learn_core();
	puts_(lead == HYP_SLOT_LEAD_TICKS ? PROBE_NAME ": cyclic, due from " : PROBE_NAME ": timer, due from ");
	putdec(due_base);
	puts_("\n");
	ready = 1;
	spin_until(ATTACK_T0);
	for (int w = 0; w < ATTACK_COUNT; w++) {
		uint64_t end = ATTACK_T0 + ((uint64_t)w + 1) * ATTACK_WINDOW;
		struct figures *f = &figs[w];
		switch (windows[w].cpu0) {
		case SPIN: break;
		case AIM: aim_window(f, end - AIM_TAIL); break;
		case HAMMER: hammer_window(f, end); break;
		}
		spin_until(end);
	}
	storm_before_report();
	for (int w = 0; w < ATTACK_COUNT; w++) {
		const struct figures *f = &figs[w];
		puts_(PROBE_NAME ": window ");
		putdec((uint64_t)w);
		puts_(" ");
		puts_(cpu0_names[windows[w].cpu0]);
		puts_(" ");
		puts_(others_names[windows[w].others]);
		puts_(" aimed ");
		putdec(f->aimed);
		puts_(" longest ");
		putdec(f->longest);
		puts_(" hammer ");
		putdec(f->hammer_longest);
		puts_(" writes");
		for (unsigned c = 0; c < CPUS; c++) {
			puts_(" ");
			putdec(writes[c][w]);
		}
		puts_("\n");
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr"); /* so that CPU 0's WFI waits */
	show("CPUs up", up[1] | up[2] << 1 | up[3] << 2);
	puts_(PROBE_NAME ": done\n");
	for (;;)
		__asm__ volatile("wfi");
}

#endif
