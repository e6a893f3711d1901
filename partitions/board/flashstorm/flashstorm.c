/* flashstorm: a firmware partition with 4 vCPUs that keeps its board's lock (vm->board_lock,
 * hypervisor/arch/aarch64/vflash.c: every trapped flash access takes it and steps the operation
 * in progress once under it, an erase step being 2 KiB) busy from three cores, while its vCPU 0,
 * on a core it shares with latvictim, aims a read of the busy bank just before each of the
 * victim's wake-ups (the hypervisor's lead before them): the read waits in the ticket queue for
 * the steps ahead, interrupts masked (tests/system/test_flashlockwait.py).
 *
 * CPU 1 erases block 0 of bank 1 over and over (20, D0, then status polls until ready, never back
 * to read-array mode, so that the bank stays unmapped and every read traps); CPUs 2 and 3 read
 * the bank back to back (each read of a busy bank steps the erase). Windows are hostile's
 * (partitions/tests/hostile/attacks.h). Every CPU keeps its virtual timer armed, masked, a few
 * ticks ahead while it runs (short turns under -icount). Figures live in RAM at FIGS.
 *
 * At the end CPU 0 prints per window:
 *   flashstorm: window W <cpu0> <others> aimed N longest T accesses A1 A2 A3 erases E */
#define PROBE_NAME "flashstorm"
#include "smp_guest.h"
#include "../../tests/hostile/attacks.h"

#define SR_READY 0x80u
#define BLOCK 0x00000ul
#define CPUS 4u
#define AIM_SPREAD 48ull

enum cpu0_mode { SPIN, AIM };
enum others_mode { IDLE, STORM };

static const unsigned char win_cpu0[ATTACK_COUNT] = { SPIN, AIM, SPIN, AIM, AIM, AIM,
						      SPIN, AIM, SPIN, SPIN, SPIN, SPIN };
static const unsigned char win_others[ATTACK_COUNT] = { IDLE, IDLE, STORM, STORM, IDLE, STORM,
							STORM, STORM, IDLE, IDLE, IDLE, IDLE };

struct figs {
	volatile uint64_t aimed[ATTACK_COUNT], longest[ATTACK_COUNT];
	volatile uint64_t accesses[CPUS][ATTACK_COUNT], erases[ATTACK_COUNT];
	volatile uint32_t up[CPUS];
};
#define FIGS ((struct figs *)0x40400000ul)

extern char second[];

static uint64_t window_end(int w)
{
	return ATTACK_T0 + ((uint64_t)w + 1) * ATTACK_WINDOW;
}

void cpu_main(unsigned cpu)
{
	struct figs *f = FIGS;

	gic_init_cpu(cpu, 1u << VTIMER_INTID);
	f->up[cpu] = 1;
	sleep_until(ATTACK_T0);
	for (int w = 0; w < ATTACK_COUNT; w++) {
		uint64_t end = window_end(w) - 4000;
		if (win_others[w] == STORM) {
			if (cpu == 1) {
				while (now() < end) {
					flash_cmd(BLOCK, 0x20);
					flash_cmd(BLOCK, 0xd0);
					f->accesses[cpu][w] += 2;
					/* Until ready, whatever the time: no erase is left
					 * in progress for the windows after. */
					for (uint64_t t; ; ) {
						t = now();
						keep_turns_short(t);
						f->accesses[cpu][w]++;
						if (flash_rd(0) & SR_READY)
							break;
					}
					f->erases[w]++;
				}
			} else {
				for (uint64_t t, n = 0; (t = now()) < end; n++) {
					keep_turns_short(t);
					(void)flash_rd(BLOCK + 4 * (n % 1024));
					f->accesses[cpu][w]++;
				}
			}
		}
		sleep_until(window_end(w));
	}
	for (;;)
		sleep_until(now() + 1000000);
}

static void aim_window(int w, uint64_t end)
{
	struct figs *f = FIGS;
	uint64_t lead = HYP_FP_LEAD_TICKS, base = ATTACK_T0 + VICTIM_SLOT_OFFSET;

	for (uint64_t k = 0;; k++) {
		uint64_t t = now() + lead + 200;
		uint64_t d = base + (t - base + VICTIM_SLOT_PERIOD - 1) / VICTIM_SLOT_PERIOD *
					    VICTIM_SLOT_PERIOD;
		if (d + 1000 >= end)
			break;
		spin_until(d - lead - 1 - k % AIM_SPREAD);
		uint64_t t0 = now();
		(void)flash_rd(BLOCK + 4 * (k % 1024));
		uint64_t dt = now() - t0;
		f->aimed[w]++;
		if (dt > f->longest[w])
			f->longest[w] = dt;
	}
	spin_until(end);
}

int main(void)
{
	struct figs *f = FIGS;
	static const char *const cpu0_names[] = { "spin", "aim" };
	static const char *const others_names[] = { "idle", "storm" };

	puts_("flashstorm: start\n");
	for (unsigned i = 0; i < sizeof(*f) / 8; i++)
		((volatile uint64_t *)f)[i] = 0;
	/* Status mode: the bank unmapped, every read traps (an aimed read alone is its trap). */
	flash_cmd(0, 0x70);
	for (unsigned c = 1; c < CPUS; c++) {
		register unsigned long x0 __asm__("x0") = 0xc4000003ul; /* CPU_ON */
		register unsigned long x1 __asm__("x1") = c;
		register unsigned long x2 __asm__("x2") = (unsigned long)second;
		register unsigned long x3 __asm__("x3") = 0;
		__asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
		if (x0)
			show("cpu_on failed", c);
	}
	spin_until(ATTACK_T0);
	for (int w = 0; w < ATTACK_COUNT; w++) {
		if (win_cpu0[w] == AIM)
			aim_window(w, window_end(w) - 2000);
		spin_until(window_end(w));
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr");
	for (int w = 0; w < ATTACK_COUNT; w++) {
		puts_("flashstorm: window ");
		putdec((uint64_t)w);
		puts_(" ");
		puts_(cpu0_names[win_cpu0[w]]);
		puts_(" ");
		puts_(others_names[win_others[w]]);
		puts_(" aimed ");
		putdec(f->aimed[w]);
		puts_(" longest ");
		putdec(f->longest[w]);
		puts_(" accesses");
		for (unsigned c = 1; c < CPUS; c++) {
			puts_(" ");
			putdec(f->accesses[c][w]);
		}
		puts_(" erases ");
		putdec(f->erases[w]);
		puts_("\n");
	}
	show("CPUs up", f->up[1] | f->up[2] << 1 | f->up[3] << 2);
	puts_("flashstorm: done\n");
	for (;;)
		__asm__ volatile("wfi");
}
