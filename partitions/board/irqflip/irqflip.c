/* irqflip: a hostile unmodified guest with two vCPUs (tests/system/test_emuatk.py,
 * configs/board_irqflip.yaml). Its second vCPU, never started, sits on another core, in a cyclic
 * plan beside a victim. The first takes its disk's interrupt (the line stays high: the device is
 * never acknowledged) and, while it is active, routes it to the second vCPU (GICD_IROUTER), ends
 * it (EOIR: the physical one is deactivated, and taken again at once on the second vCPU's core,
 * its new route, when the route moved at once) and routes it back (the held interrupt comes
 * back with it), in a loop for STORM_MS. Prints the rounds it made, then "done". */
#define PROBE_NAME "irqflip"
#include "blk_irq_probe.h"

#define STORM_MS 1500u

static uint32_t ack(void)
{
	for (unsigned i = 0; i < 100000; i++) {
		uint32_t intid = (uint32_t)SYSREG_R("S3_0_C12_C12_0") & 0xffffff; /* ICC_IAR1_EL1 */
		if (intid != SPURIOUS)
			return intid;
	}
	return SPURIOUS;
}

void main(uint64_t x0)
{
	unsigned intid;
	uint64_t dev = start_disk(x0, &intid);
	volatile uint64_t *irouter = (volatile uint64_t *)(GICD + 0x6000 + 8 * intid);
	spi_write(0x100, intid); /* ISENABLER */
	read_sector(dev, 0, 1);  /* completed: the line is high, and stays so (never acknowledged) */
	line("storm");
	uint64_t rounds = 0, start = counter(), ticks = SYSREG_R("cntfrq_el0") * STORM_MS / 1000;
	while (counter() - start < ticks) {
		uint32_t got = ack();
		for (unsigned tries = 0; got != intid && tries < 3; tries++) {
			/* Taken on the other core for the second CPU after the route came back here
			 * (the two crossed): fetch it (a move of the route brings a held one along). */
			*irouter = 1;
			*irouter = 0;
			got = ack();
		}
		if (got != intid) {
			show("no interrupt to take after rounds", rounds);
			break;
		}
		*irouter = 1;                      /* to the second CPU, while active here */
		SYSREG_W("S3_0_C12_C12_1", got);   /* ICC_EOIR1_EL1: ended (deactivated) */
		*irouter = 0;                      /* back here, with what the other core took */
		rounds++;
	}
	show("rounds", rounds);
	line("done");
	for (;;)
		__asm__ volatile("wfi");
}
