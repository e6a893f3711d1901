/* irqrefire: a hostile unmodified guest with two vCPUs (tests/system/test_emuatk.py,
 * configs/board_irqrefire.yaml). Its disk's interrupt is routed to its second vCPU (GICD_IROUTER),
 * which it never starts and which sits on another core, in a cyclic plan beside a victim. A
 * request completes and the device is never acknowledged: its line stays high, the hypervisor
 * takes the physical interrupt on that core and holds it for the second vCPU. The first vCPU then
 * clears the interrupt's pending state (GICD_ICPENDR) in a loop for STORM_MS. Were each clear to
 * give the physical interrupt back to the GIC, it would be taken again at once on the other core,
 * in the victim's time there, once per write. Prints the writes it made, then "done". */
#define PROBE_NAME "irqrefire"
#include "blk_irq_probe.h"

#define STORM_MS 1500u

void main(uint64_t x0)
{
	unsigned intid;
	uint64_t dev = start_disk(x0, &intid);
	*(volatile uint64_t *)(GICD + 0x6000 + 8 * intid) = 1; /* IROUTER: Aff0 1, the second CPU */
	spi_write(0x100, intid);                               /* ISENABLER */
	read_sector(dev, 0, 1); /* completed: the line is high, and stays so (never acknowledged) */
	delay_ms(20);           /* the physical interrupt reached the hypervisor on the other core */
	line("storm");
	uint64_t writes = 0, start = counter(), ticks = SYSREG_R("cntfrq_el0") * STORM_MS / 1000;
	while (counter() - start < ticks) {
		spi_write(0x280, intid); /* ICPENDR */
		writes++;
	}
	show("ICPENDR writes", writes);
	line("done");
	for (;;)
		__asm__ volatile("wfi");
}
