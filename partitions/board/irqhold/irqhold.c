/* irqhold: a bare-metal program for QEMU's `virt` machine (blkprobe's virtio-blk driver) that plays
 * with the pending state of its disk's interrupt, as a hostile or careless guest may: it completes a
 * request while the interrupt is disabled at the distributor, acknowledges the device (the line
 * falls) and clears the interrupt's pending state (GICD_ICPENDR) before enabling it again. On QEMU's
 * GIC that leaves nothing pending and the next request interrupts as the first did. In a Bulkhead
 * partition the interrupt is the physical one forwarded (the disk's virtio-mmio slot passed
 * through): the hypervisor took it from the GIC while it was disabled, and clearing its pending
 * state must give it back, or it stays active in the physical GIC and the device never interrupts
 * again (tests/system/test_emuatk.py compares the two runs). Interrupts stay masked (PSTATE.I):
 * the program polls ICC_IAR1_EL1 for them. Every line starts with "irqhold: ". */
#define PROBE_NAME "irqhold"
#include "blk_irq_probe.h"

void main(uint64_t x0)
{
	unsigned intid;
	uint64_t dev = start_disk(x0, &intid);

	spi_write(0x100, intid); /* ISENABLER */
	read_sector(dev, 0, 1);
	show("request 1 (enabled), interrupt", take_interrupt(dev, 100));

	spi_write(0x180, intid); /* ICENABLER */
	read_sector(dev, 1, 2);
	delay_ms(20); /* the interrupt reached the GIC (and, in a partition, the hypervisor) */
	device_ack(dev);
	spi_write(0x280, intid); /* ICPENDR: the line is low, nothing is pending any more */
	delay_ms(20);
	show("request 2 (disabled, acknowledged, ICPENDR), pending", spi_pending(intid));
	spi_write(0x100, intid);
	show("request 2, interrupt after enabling", take_interrupt(dev, 50));

	read_sector(dev, 2, 3);
	show("request 3 (enabled), interrupt", take_interrupt(dev, 200));
	read_sector(dev, 3, 4);
	show("request 4 (enabled), interrupt", take_interrupt(dev, 200));
	power_off();
}
