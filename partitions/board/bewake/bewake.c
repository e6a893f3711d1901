/* bewake: a bare-metal program for QEMU's virt machine with 3 CPUs (attack review 59): CPU 2 is
 * a best-effort vCPU that waits in WFI (PSTATE.I masked, no timer armed: only an interrupt made
 * pending for it ends the wait) and acknowledges what comes by polling. CPU 0 makes interrupts
 * pending for it in the ways vgic_dist.c write_bits now tells a best-effort vCPU once per write:
 *   A  one GICD_ISPENDR write mixing SPIs of pinned CPU 1 and of CPU 2, a disabled one of CPU 2
 *      before the enabled one;
 *   B  the same with the enabled one first, the disabled one after;
 *   C  a disabled SPI of CPU 2 made pending, then enabled by GICD_ISENABLER (with others);
 *   D  CPU 2's SGI 5 made pending through CPU 2's redistributor (GICR_ISPENDR0) by CPU 0;
 *   E  CPU 2's PPI 20 disabled and pending, enabled by GICR_ISENABLER0 by CPU 0.
 * Each round waits for CPU 2's acknowledgement of the expected INTID with a timeout; a round that
 * times out is a lost wake-up. Prints: bewake: case X rounds N lost L longest T. */
#define PROBE_NAME "bewake"
#include "smp_guest.h"

#define BGICD 0x08000000ul
#define GICD_CTLR 0x0
#define GICD_IGROUPR 0x080
#define GICD_ISENABLER 0x100
#define GICD_ICENABLER 0x180
#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define GICD_IPRIORITYR 0x400
#define GICD_IROUTER 0x6000
#define CPUS 3u
#define ROUNDS 40u
#define TIMEOUT 2000000ull /* 32 ms at 62.5 MHz */

#define SPI_P1_FIRST 32u  /* 32-47: pinned CPU 1 */
#define SPI_BE_OFF 48u    /* CPU 2, kept disabled */
#define SPI_BE_ON 49u     /* CPU 2, enabled */
#define SPI_BE_LATE 50u   /* CPU 2, pending while disabled, then enabled */
#define SPI_P1_LATE 51u   /* CPU 1, enabled with SPI_BE_LATE */
#define EITHER_LATE 0xffffffffu /* case C: SPI_BE_OFF or SPI_BE_LATE, in either order */
#define SGI_BE 5u
#define PPI_BE 20u

extern char secondary_entry[], stack1_top[], stack2_top[];

static volatile uint32_t last_ack[CPUS];
static volatile uint32_t acks[CPUS];
static volatile unsigned up[CPUS];

void cpu_main(unsigned cpu)
{
	gic_init_cpu(cpu, (1u << SGI_BE) | (cpu == 2 ? 0 : 0));
	if (cpu == 2) { /* PPI 20: group 1, priority, left disabled (CPU 0 enables it) */
		uint64_t sgi = SMP_GICR + 2 * SMP_GICR_STRIDE + 0x10000;
		mmio_wr(sgi + 0x80, mmio_rd(sgi + 0x80) | 1u << PPI_BE);
		mmio_wr(sgi + 0x400 + (PPI_BE & ~3u),
			mmio_rd(sgi + 0x400 + (PPI_BE & ~3u)) | 0xa0u << (8 * (PPI_BE & 3)));
	}
	up[cpu] = 1;
	for (;;) {
		__asm__ volatile("dsb sy\n\twfi" : : : "memory");
		uint32_t intid = (uint32_t)SYSREG_R(ICC_IAR1);
		if (intid >= 1020)
			continue;
		SYSREG_W(ICC_EOIR1, intid);
		last_ack[cpu] = intid;
		acks[cpu] = acks[cpu] + 1;
		__asm__ volatile("dmb ish" : : : "memory");
	}
}

static uint32_t lost, longest;

static void expect(uint32_t before, uint32_t intid)
{
	uint64_t t0 = now();
	/* Turns kept short while it waits (smp_guest.h): without a deadline near, QEMU's round
	 * robin under -icount ran this spin until its own 100 ms kick before core 3, kicked at
	 * once by the hypervisor, had its turn (30 of 40 rounds "lost"). */
	for (uint64_t n; acks[2] == before;) {
		keep_turns_short(n = now());
		if (n - t0 > TIMEOUT) {
			lost++;
			return;
		}
	}
	uint64_t d = now() - t0;
	if (d > longest)
		longest = (uint32_t)d;
	if (intid != EITHER_LATE ? last_ack[2] != intid
				 : last_ack[2] != SPI_BE_OFF && last_ack[2] != SPI_BE_LATE)
		show("unexpected INTID acknowledged", last_ack[2]);
}

static void report(const char *name)
{
	puts_("bewake: case ");
	puts_(name);
	puts_(" rounds ");
	putdec(ROUNDS);
	puts_(" lost ");
	putdec(lost);
	puts_(" longest ");
	putdec(longest);
	puts_("\n");
	lost = longest = 0;
}

static void settle(void)
{
	for (volatile unsigned i = 0; i < 20000; i++)
		;
}

#define GICD_SPI_WORD 4  /* SPIs 32-63: the second word of each bit block */
#define GICR2_SGI (SMP_GICR + 2 * SMP_GICR_STRIDE + 0x10000) /* CPU 2's SGI frame */

static void set_up(void)
{
	char *stacks[CPUS] = { 0, stack1_top, stack2_top };

	mmio_wr(BGICD + GICD_CTLR, 2); /* EnableGrp1 */
	for (unsigned i = 32; i < 64; i++) {
		unsigned to = (i == SPI_BE_OFF || i == SPI_BE_ON || i == SPI_BE_LATE) ? 2 : 1;
		mmio_wr(BGICD + GICD_IROUTER + 8 * i, to);
		mmio_wr(BGICD + GICD_IPRIORITYR + (i & ~3u),
			mmio_rd(BGICD + GICD_IPRIORITYR + (i & ~3u)) | 0xa0u << (8 * (i & 3)));
	}
	mmio_wr(BGICD + GICD_IGROUPR + GICD_SPI_WORD, ~0u);
	gic_init_cpu(0, 0);
	for (unsigned c = 1; c < CPUS; c++)
		if (smc_call(PSCI_CPU_ON, c, (uint64_t)secondary_entry, (uint64_t)stacks[c]) != 0)
			show("CPU_ON failed for", c);
	while (!up[1] || !up[2])
		;
	/* CPU 1's SPIs and SPI_BE_ON enabled; SPI_BE_OFF and SPI_BE_LATE disabled. */
	mmio_wr(BGICD + GICD_ISENABLER + GICD_SPI_WORD, 0xffffu | 1u << (SPI_BE_ON - 32));
	settle();
}

/* A round after round: `bits` made pending by one write of the ISPENDR word at `ispendr`, CPU 2
 * woken for `intid`, then `left` (disabled ones) cleared through the ICPENDR word after it. */
static void pending_case(const char *name, uint64_t ispendr, uint32_t bits, uint32_t intid,
			 uint32_t left)
{
	for (unsigned r = 0; r < ROUNDS; r++) {
		settle();
		uint32_t before = acks[2];
		mmio_wr(ispendr, bits);
		expect(before, intid);
		mmio_wr(ispendr + (GICD_ICPENDR - GICD_ISPENDR), left);
	}
	report(name);
}

/* C: pending while disabled (no wake), then enabled with CPU 1's SPI_P1_LATE. */
static void enabled_late_case(void)
{
	uint32_t late = 1u << (SPI_BE_OFF - 32) | 1u << (SPI_BE_LATE - 32);

	for (unsigned r = 0; r < ROUNDS; r++) {
		settle();
		uint32_t before = acks[2];
		mmio_wr(BGICD + GICD_ISPENDR + GICD_SPI_WORD, late);
		settle();
		if (acks[2] != before)
			show("woken by a disabled interrupt, INTID", last_ack[2]);
		before = acks[2];
		mmio_wr(BGICD + GICD_ISENABLER + GICD_SPI_WORD, late | 1u << (SPI_P1_LATE - 32));
		/* either may come first: wait for both */
		expect(before, EITHER_LATE);
		uint32_t mid = acks[2];
		if (mid == before + 1)
			expect(mid, EITHER_LATE);
		mmio_wr(BGICD + GICD_ICENABLER + GICD_SPI_WORD, late | 1u << (SPI_P1_LATE - 32));
	}
	report("C");
}

/* E: CPU 2's PPI 20 pending while disabled, enabled through its redistributor. */
static void redist_enable_case(void)
{
	for (unsigned r = 0; r < ROUNDS; r++) {
		settle();
		mmio_wr(GICR2_SGI + GICD_ISPENDR, 1u << PPI_BE);
		settle();
		uint32_t before = acks[2];
		mmio_wr(GICR2_SGI + GICD_ISENABLER, 1u << PPI_BE);
		expect(before, PPI_BE);
		mmio_wr(GICR2_SGI + GICD_ICENABLER, 1u << PPI_BE);
	}
	report("E");
}

int main(void)
{
	uint64_t spis = BGICD + GICD_ISPENDR + GICD_SPI_WORD;

	puts_("bewake: start\n");
	set_up();
	/* A: disabled one of CPU 2 first, then CPU 1's, then the enabled one of CPU 2. */
	pending_case("A", spis, 1u << (SPI_BE_OFF - 32) | 0xffffu | 1u << (SPI_BE_ON - 32), SPI_BE_ON,
		     1u << (SPI_BE_OFF - 32));
	/* B: the enabled one of CPU 2 (49) first, the disabled one (50) after. */
	pending_case("B", spis, 1u << (SPI_BE_ON - 32) | 1u << (SPI_BE_LATE - 32) | 0xffu, SPI_BE_ON,
		     1u << (SPI_BE_LATE - 32));
	enabled_late_case();
	/* D: CPU 2's SGI made pending through its redistributor by CPU 0. */
	pending_case("D", GICR2_SGI + GICD_ISPENDR, 1u << SGI_BE | 1u << PPI_BE, SGI_BE, 1u << PPI_BE);
	redist_enable_case();
	show("CPUs up", up[1] | up[2] << 1);
	show("CPU 1 acks", acks[1]);
	puts_("bewake: done\n");
	for (;;)
		__asm__ volatile("wfi");
}
