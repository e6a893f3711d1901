/* bepsci: a firmware guest of two best-effort vCPUs on latvictim's cyclic core
 * (tests/system/configs/be_psci.yaml), which take turns by PSCI: the running one starts the
 * other (CPU_ON) and then turns itself off (CPU_OFF) just early enough that the core still has
 * room for best-effort work before the next victim slot. The core's decision that follows takes
 * the other vCPU and performs its reset on the spot, in that little room; a virtual machine's
 * vCPU reset includes its redistributor's state (vgic_reset_redist). From 25 ms on (after the
 * first, quiet window of latvictim's measurement: partitions/tests/hostile/attacks.h) to 85 ms;
 * then "BP turns <n>" and "BP DONE".
 *
 * Timing, in counter ticks (62.5 MHz): the victim's slots start every 200 us from 100 us into
 * each 1 ms frame, the one at 900 us lasts 100 us and the others 190.7 us, so a vCPU that was
 * switched out for 5000 to 9000 ticks is at a frame start, 6250 ticks before a slot; the core
 * gives best-effort work back BE_LEAD_TICKS (400) before the slot's lead (50), and takes
 * another vCPU only with BE_MIN_RUN_TICKS (128) of room: the turn aims at 6250 - 578 - 40 to
 * 6250 - 578 - 8 ticks after the frame start (the resumption is some ticks late itself). */
#define PROBE_NAME "BP"
#include "fwprobe.h"

#define PSCI_CPU_OFF 0x84000002ul
#define PSCI_CPU_ON 0xc4000003ul
#define START_TICKS 1562500ull /* 25 ms */
#define END_TICKS 5312500ull   /* 85 ms */
#define SWITCHED_OUT_MIN 5000ull
#define SWITCHED_OUT_MAX 9000ull
#define AIM (6250ull - 578ull - 8ull)
#define TURNS ((volatile uint32_t *)0x40400000ul) /* RAM both vCPUs see */

extern char second[];
extern char _start[];

static unsigned long psci(unsigned long fn, unsigned long a1, unsigned long a2, unsigned long a3)
{
	register unsigned long x0 __asm__("x0") = fn;
	register unsigned long x1 __asm__("x1") = a1;
	register unsigned long x2 __asm__("x2") = a2;
	register unsigned long x3 __asm__("x3") = a3;
	__asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}

static uint64_t counter(void)
{
	uint64_t t;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(t));
	return t;
}

static void turn(unsigned self)
{
	uint64_t prev = counter();

	for (;;) {
		uint64_t t = counter(), out = t - prev;
		prev = t;
		if (t >= END_TICKS) {
			show("turns", *TURNS);
			puts_("BP DONE\n");
			for (;;)
				__asm__ volatile("wfi");
		}
		if (t < START_TICKS || out < SWITCHED_OUT_MIN || out > SWITCHED_OUT_MAX)
			continue;
		uint32_t k = (*TURNS)++;
		uint64_t aim = t + AIM - k % 32;
		psci(PSCI_CPU_ON, !self, (unsigned long)(self ? _start : second), 0);
		while (counter() < aim)
			;
		psci(PSCI_CPU_OFF, 0, 0, 0);
	}
}

void main2(void)
{
	turn(1);
}

int main(void)
{
	if (counter() < START_TICKS)
		*TURNS = 0;
	turn(0);
	return 0;
}
