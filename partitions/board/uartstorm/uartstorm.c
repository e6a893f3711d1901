/* uartstorm: a bare-metal program for QEMU's virt machine with 4 CPUs that keeps its emulated
 * UART's lock (u->lock, hypervisor/arch/aarch64/vpl011.c) busy from several cores, while its
 * CPU 0, on a core it shares with latvictim (partitions/tests/latvictim), aims a UART register
 * read (UARTFR, which takes the same lock) just before each instant the victim is due (the
 * hypervisor's lead before it): tests/system/test_uartwait.py.
 *
 * The UART's transmit interrupt is unmasked (UARTIMSC.TXIM), so that every data write takes the
 * locked path (vuart_access: write_reg), not the unlocked one (vuart_data_write), and under the
 * UART's lock the hypervisor queues the byte (console_vuart_write: the console ring's lock) and
 * drains the console (drain: up to CONSOLE_DRAIN_CHUNK bytes to the physical UART, two accesses
 * a byte, when its wire lock is free and its writer's core has room: a dedicated core has).
 * The partition has the console's input focus (the only one with an emulated UART): its bytes
 * are interactive records of one byte, and while the three writers race for the wire a drain
 * finds many of them queued.
 *
 * Windows, timing, the short-turn timer and the per-window lines are lockstorm's
 * (partitions/board/lockstorm): CPU 0 spins, aims (one UARTFR read timed per instant) or
 * hammers (reads back to back); CPUs 1-3 sleep, storm (UARTDR writes back to back) or burst
 * (writes only around the victim's instants). At the end, one line per window:
 *   uartstorm: window W <cpu0 mode> <others mode> aimed N longest T hammer T writes P0..P3 */
#define PROBE_NAME "uartstorm"
#include "smp_guest.h"
#include "../../tests/hostile/attacks.h"

#define UART_DR 0x00
#define UART_FR 0x18
#define UART_IMSC 0x38
#define IMSC_TX 0x20
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
static volatile uint32_t writes[CPUS][ATTACK_COUNT]; /* UARTDR writes of each CPU per window */
static volatile int cur_window[CPUS];

extern char secondary_entry[], stack1_top[], stack2_top[], stack3_top[];

/* The first instant the victim is due at or after t. */
static uint64_t next_due(uint64_t t)
{
	uint64_t k = t <= due_base ? 0 : (t - due_base + VICTIM_SLOT_PERIOD - 1) / VICTIM_SLOT_PERIOD;
	return due_base + k * VICTIM_SLOT_PERIOD;
}

/* A line of 64 bytes per CPU: letters, a newline every 64th write. */
static void write_byte(unsigned cpu, uint64_t k)
{
	mmio_wr(FW_UART + UART_DR, (k & 63) == 63 ? '\n' : 'a' + (char)(cpu * 7 + k % 26) % 26);
}

static uint32_t aimed_read(void)
{
	return mmio_rd(FW_UART + UART_FR);
}

/* CPUs 1-3: back to back until `end`. */
static void storm_until(unsigned cpu, uint64_t end)
{
	for (uint64_t k = 0, t; (t = now()) < end; k++) {
		keep_turns_short(t);
		write_byte(cpu, k);
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

/* CPU 0, aimed: one UARTFR read AIM_FIRST + k % AIM_SPREAD ticks before the lead before
 * each instant k, timed. */
static void aim_window(struct figures *f, uint64_t end)
{
	for (uint64_t k = 0;; k++) {
		uint64_t d = next_due(now() + lead + 200);
		uint64_t at = d - lead - AIM_FIRST - k % AIM_SPREAD;
		if (d + 1000 >= end)
			break;
		spin_until(at);
		uint64_t t0 = now();
		(void)aimed_read();
		uint64_t dt = now() - t0;
		writes[0][f - figs]++;
		f->aimed++;
		if (dt > f->longest)
			f->longest = dt;
	}
	spin_until(end);
}

static void hammer_window(struct figures *f, uint64_t end)
{
	for (unsigned k = 0; now() < end - QUIET_TAIL; k++) {
		uint64_t t0 = now();
		(void)k;
		keep_turns_short(t0);
		(void)aimed_read();
		uint64_t dt = now() - t0;
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

	puts_("uartstorm: start\n");
	/* The transmit interrupt unmasked: every data write takes the UART's lock. Its SPI stays
	 * disabled in the distributor: raised, it kicks nobody. */
	mmio_wr(FW_UART + UART_IMSC, IMSC_TX);
	for (unsigned c = 1; c < CPUS; c++)
		if (smc_call(PSCI_CPU_ON, c, (uint64_t)secondary_entry, (uint64_t)stacks[c]) != 0)
			show("CPU_ON failed for", c);
	learn_core();
	puts_(lead == HYP_SLOT_LEAD_TICKS ? "uartstorm: cyclic, due from " : "uartstorm: timer, due from ");
	put_dec(due_base);
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
	puts_("\n"); /* ends the writers' line in progress */
	for (int w = 0; w < ATTACK_COUNT; w++) {
		const struct figures *f = &figs[w];
		puts_("uartstorm: window ");
		put_dec((uint64_t)w);
		puts_(" ");
		puts_(cpu0_names[windows[w].cpu0]);
		puts_(" ");
		puts_(others_names[windows[w].others]);
		puts_(" aimed ");
		put_dec(f->aimed);
		puts_(" longest ");
		put_dec(f->longest);
		puts_(" hammer ");
		put_dec(f->hammer_longest);
		puts_(" writes");
		for (unsigned c = 0; c < CPUS; c++) {
			puts_(" ");
			put_dec(writes[c][w]);
		}
		puts_("\n");
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr"); /* so that CPU 0's WFI waits */
	show("CPUs up", up[1] | up[2] << 1 | up[3] << 2);
	puts_("uartstorm: done\n");
	for (;;)
		__asm__ volatile("wfi");
}
