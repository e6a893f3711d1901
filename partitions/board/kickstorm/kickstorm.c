/* kickstorm: a bare-metal program for QEMU's virt machine with 3 CPUs, the neighbour of
 * kickwait (tests/system/test_kickwait.py). Its CPU 0 shares a fixed-priority core with
 * kickwait's CPU 1 at a lower priority; its CPUs 1 and 2 run on dedicated cores. In the windows
 * of kickwin.h CPUs 1-2 keep its virtual-machine lock (m->lock) taken with GICD_ISPENDR and
 * GICD_ICPENDR writes back to back (each ISPENDR write makes 32 disabled SPIs routed to the
 * writer pending under the lock), and CPU 0 writes GICD_ISPENDR/ICPENDR back to back too: on
 * a core whose timer is set, such a trap waits for the lock only until that timer
 * (arch_spin_lock_before), interrupts masked, and the others' tickets keep it taken. The
 * victim's wake-up (a kick of the core from another one) waits meanwhile.
 *
 * At the end CPU 0 prints one line per window:
 *   kickstorm: window W NAME writes P0 P1 P2 longest T
 * (the ISPENDR writes of each CPU, CPU 0's longest one in ticks). */
#define PROBE_NAME "kickstorm"
#include "kickwin.h"
#include "smp_guest.h"

#define KGICD 0x08000000ul

#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define GICD_IROUTER 0x6000
#define CPUS 3u
#define WORDS (1u + 2u * CPUS)
#define OWN_WORD(cpu, k) (1u + 2u * (cpu) + (unsigned)((k) & 1))

extern char secondary_entry[], stack1_top[], stack2_top[];

static volatile uint32_t writes[CPUS][KW_COUNT];
static uint64_t longest[KW_COUNT];
static volatile unsigned up[CPUS];

static uint64_t write_pair(unsigned w)
{
	uint64_t t0 = now();
	mmio_wr(KGICD + GICD_ISPENDR + 4 * w, ~0u);
	uint64_t dt = now() - t0;
	mmio_wr(KGICD + GICD_ICPENDR + 4 * w, ~0u);
	return dt;
}

static int others_storm(int w)
{
	return w == KW_STORM_ALONE || w == KW_ATTACK || w == KW_ATTACK_NO_TIMEOUT;
}

void cpu_main(unsigned cpu)
{
	gic_init_cpu(cpu, 1u << VTIMER_INTID);
	up[cpu] = 1;
	sleep_until(KICK_T0);
	for (int w = 0; w < KW_COUNT; w++) {
		uint64_t end = KICK_T0 + ((uint64_t)w + 1) * KICK_WINDOW;
		if (!others_storm(w)) {
			sleep_until(end);
			continue;
		}
		for (uint64_t k = 0, t; (t = now()) < end; k++) {
			keep_turns_short(t);
			write_pair(OWN_WORD(cpu, k));
			writes[cpu][w]++;
		}
	}
	for (;;)
		sleep_until(now() + 1000000);
}

int main(void)
{
	char *stacks[CPUS] = { 0, stack1_top, stack2_top };

	puts_("kickstorm: start\n");
	for (unsigned i = 32; i < 32 * WORDS; i++)
		mmio_wr(KGICD + GICD_IROUTER + 8 * i, (i / 32 - 1) / 2);
	for (unsigned c = 1; c < CPUS; c++)
		if (smc_call(PSCI_CPU_ON, c, (uint64_t)secondary_entry, (uint64_t)stacks[c]) != 0)
			show("CPU_ON failed for", c);
	spin_until(KICK_T0);
	uint64_t k = 0;
	for (uint64_t t; (t = now()) < KICK_END; k++) {
		int w = kick_window_at(t);
		keep_turns_short(t);
		if (w == KW_STORM_ALONE)
			continue; /* the guest spins: no trap */
		uint64_t dt = write_pair(OWN_WORD(0, k));
		writes[0][w]++;
		if (dt > longest[w])
			longest[w] = dt;
	}
	spin_until(KICK_END + 40000);
	for (int w = 0; w < KW_COUNT; w++) {
		puts_("kickstorm: window ");
		putdec((uint64_t)w);
		puts_(" ");
		puts_(kick_window_names[w]);
		puts_(" writes");
		for (unsigned c = 0; c < CPUS; c++) {
			puts_(" ");
			putdec(writes[c][w]);
		}
		puts_(" longest ");
		putdec(longest[w]);
		puts_("\n");
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr");
	show("CPUs up", up[1] | up[2] << 1);
	puts_("kickstorm: done\n");
	for (;;)
		__asm__ volatile("wfi");
}
