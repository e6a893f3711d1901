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
#include "fwprobe.h"
#include "../../tests/hostile/attacks.h"

#define SR_READY 0x80u
#define BLOCK 0x00000ul
#define CPUS 4u
#define TURN_TICKS 16ull
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

void cpu_main(unsigned cpu);
extern char second[];

static inline uint64_t now(void)
{
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static inline void keep_turns_short(uint64_t n)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1"
			 : : "r"(n + TURN_TICKS), "r"(3ul) : "memory");
}

static void spin_until(uint64_t t)
{
	for (uint64_t n; (n = now()) < t;)
		keep_turns_short(n);
}

static uint64_t window_end(int w)
{
	return ATTACK_T0 + ((uint64_t)w + 1) * ATTACK_WINDOW;
}

static void put_dec(uint64_t v)
{
	char s[24];
	int n = 0;
	do {
		s[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n--)
		putc_(s[n]);
}

/* WFI on the virtual timer until t, interrupts masked (PSTATE.I): the GIC interface is enabled
 * for the timer's PPI only, so its pending state ends the WFI; acknowledged by polling. */
#define GICR 0x080a0000ul
#define GICR_STRIDE 0x20000ul
#define VTIMER_INTID 27u
#define SYSREG_R(name) ({ uint64_t v_; __asm__ volatile("mrs %0, " name : "=r"(v_)); v_; })
#define SYSREG_W(name, v) __asm__ volatile("msr " name ", %0" :: "r"((uint64_t)(v)))

static void gic_init_cpu(unsigned cpu)
{
	uint64_t rd = GICR + cpu * GICR_STRIDE, sgi = rd + 0x10000;

	mmio_wr(rd + 0x14, mmio_rd(rd + 0x14) & ~2u); /* GICR_WAKER.ProcessorSleep */
	mmio_wr(sgi + 0x80, mmio_rd(sgi + 0x80) | (1u << VTIMER_INTID)); /* GICR_IGROUPR0 */
	mmio_wr(sgi + 0x400 + (VTIMER_INTID & ~3u), 0xa0u << (8 * (VTIMER_INTID & 3)));
	mmio_wr(sgi + 0x100, 1u << VTIMER_INTID); /* GICR_ISENABLER0 */
	SYSREG_W("S3_0_C12_C12_5", SYSREG_R("S3_0_C12_C12_5") | 1); /* ICC_SRE_EL1.SRE */
	__asm__ volatile("isb");
	SYSREG_W("S3_0_C4_C6_0", 0xff); /* ICC_PMR_EL1 */
	SYSREG_W("S3_0_C12_C12_7", 1);  /* ICC_IGRPEN1_EL1 */
	__asm__ volatile("isb");
}

static void sleep_until(uint64_t t)
{
	while (now() < t)
		__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb\n\twfi"
				 : : "r"(t), "r"(1ul) : "memory");
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	uint32_t intid = (uint32_t)SYSREG_R("S3_0_C12_C12_0"); /* ICC_IAR1_EL1 */
	if (intid < 1020)
		SYSREG_W("S3_0_C12_C12_1", intid); /* ICC_EOIR1_EL1 */
}

void cpu_main(unsigned cpu)
{
	struct figs *f = FIGS;

	gic_init_cpu(cpu);
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
		put_dec((uint64_t)w);
		puts_(" ");
		puts_(cpu0_names[win_cpu0[w]]);
		puts_(" ");
		puts_(others_names[win_others[w]]);
		puts_(" aimed ");
		put_dec(f->aimed[w]);
		puts_(" longest ");
		put_dec(f->longest[w]);
		puts_(" accesses");
		for (unsigned c = 1; c < CPUS; c++) {
			puts_(" ");
			put_dec(f->accesses[c][w]);
		}
		puts_(" erases ");
		put_dec(f->erases[w]);
		puts_("\n");
	}
	show("CPUs up", f->up[1] | f->up[2] << 1 | f->up[3] << 2);
	puts_("flashstorm: done\n");
	for (;;)
		__asm__ volatile("wfi");
}
