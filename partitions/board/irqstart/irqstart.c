/* irqstart: a hostile unmodified guest with three vCPUs (tests/system/test_emuatk.py,
 * configs/board_irqstart.yaml). Its disk's interrupt is routed to its second vCPU (GICD_IROUTER),
 * never started, on a cyclic core beside a victim; a request completes and the device is never
 * acknowledged, so the line stays high and the hypervisor holds the interrupt for that vCPU. The
 * first vCPU starts the third and switches itself off (PSCI CPU_OFF); the third then starts the
 * first again (CPU_ON, at an entry that switches straight back off) as soon as it is off
 * (AFFINITY_INFO), in a loop for STORM_MS. Were each start of the first vCPU to give back every
 * device interrupt of the partition, the one held for the second vCPU would be taken again at
 * once on its core, in the victim's time, once per round. Prints the rounds, then "done". */
#define PROBE_NAME "irqstart"
#include "blk_irq_probe.h"

#define STORM_MS 1500u
#define PSCI_CPU_OFF 0x84000002u
#define PSCI_CPU_ON 0xc4000003u
#define PSCI_AFFINITY_INFO 0xc4000004u

extern char cpu2_entry[], cpu0_off[], stack2_top[];

void starter(void);
void starter(void)
{
	uint64_t rounds = 0, start = counter(), ticks = SYSREG_R("cntfrq_el0") * STORM_MS / 1000;

	line("storm");
	while (counter() - start < ticks) {
		while (smc_call(PSCI_AFFINITY_INFO, 0, 0, 0) != 1) /* 1: OFF */
			if (counter() - start >= ticks)
				break;
		if (smc_call(PSCI_CPU_ON, 0, (uint64_t)cpu0_off, 0) == 0)
			rounds++;
	}
	show("rounds", rounds);
	line("done");
}

void main(uint64_t x0)
{
	unsigned intid;
	uint64_t dev = start_disk(x0, &intid);
	*(volatile uint64_t *)(GICD + 0x6000 + 8 * intid) = 1; /* IROUTER: Aff0 1, the second CPU */
	spi_write(0x100, intid);                               /* ISENABLER */
	read_sector(dev, 0, 1); /* completed: the line is high, and stays so (never acknowledged) */
	delay_ms(20);           /* taken on the second CPU's core, held for it */
	if (smc_call(PSCI_CPU_ON, 2, (uint64_t)cpu2_entry, (uint64_t)stack2_top) != 0)
		fail("CPU_ON of the third CPU", 0);
	smc_call(PSCI_CPU_OFF, 0, 0, 0);
	fail("CPU_OFF returned", 0);
}
