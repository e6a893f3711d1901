/* gicdstorm: a bare-metal program for QEMU's virt machine that sets 32 interrupts pending with
 * one write of the distributor's GICD_ISPENDR, for every SPI word, and times each write by the
 * virtual counter (tests/system/configs/board_gicdstorm.yaml, tests/system/test_gicdstorm.py).
 * In a partition each write is one trap that makes 32 virtual interrupts pending; alone on a
 * dedicated core, its time is the hypervisor's path. With a second CPU it starts it (PSCI CPU_ON)
 * spinning on its own core and routes every SPI there first (GICD_IROUTER), so that each
 * interrupt made pending is for a vCPU another core runs. Prints the longest, in counter ticks. */
#define PROBE_NAME "gicdstorm"
#include "smp_guest.h"

#define GICD 0x08000000ul
#define GICD_ISENABLER 0x100
#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define WORDS 9u /* INTIDs 0-287: word 0 is the redistributor's */
#define ROUNDS 50u
#define GICD_IROUTER 0x6100 /* INTID 32's */

extern char secondary_entry[], stack1_top[];

/* The second CPU spins, interrupts masked: the SPIs routed to it stay pending. */
void cpu_main(unsigned cpu)
{
	(void)cpu;
	for (;;)
		;
}

int main(void)
{
	uint32_t longest = 0;

	if (smc_call(PSCI_CPU_ON, 1, (uint64_t)secondary_entry, (uint64_t)stack1_top) == 0) {
		for (unsigned i = 0; i < 32 * (WORDS - 1); i++)
			mmio_wr(GICD + GICD_IROUTER + 8 * i, 1); /* Aff0 1: the second CPU */
		show("second CPU started, SPIs routed to it", 1);
		for (volatile unsigned i = 0; i < 100000; i++) /* it is up and spinning */
			;
	}
	for (unsigned w = 1; w < WORDS; w++)
		mmio_wr(GICD + GICD_ISENABLER + 4 * w, ~0u);
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned w = 1; w < WORDS; w++) {
			uint64_t t0 = now();
			mmio_wr(GICD + GICD_ISPENDR + 4 * w, ~0u);
			uint64_t d = now() - t0;
			if (d > longest)
				longest = (uint32_t)d;
			mmio_wr(GICD + GICD_ICPENDR + 4 * w, ~0u);
		}
	}
	show("longest ISPENDR write, ticks", longest);
	puts_(PROBE_NAME ": done\n");
	for (;;)
		__asm__ volatile("wfi");
}
