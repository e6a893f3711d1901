/* irqpend: irqhold's virtio-blk driver, pending its disk's interrupt by hand (GICD_ISPENDR) and
 * taking it, then -- while that software interrupt is still active -- letting the disk raise the
 * same interrupt for real, acknowledging the disk and ending both. On QEMU's GIC the disk's next
 * requests interrupt again. In a Bulkhead partition the software one sits in a list register not
 * linked to the physical interrupt, and the physical one, taken by the hypervisor meanwhile, is
 * merged into that list register as pending (vgic.c place()): its link is lost, the guest's end
 * never deactivates it, and the disk never interrupts again (tests/system/test_emuatk.py). Every
 * line starts with "irqpend: ". */
#define PROBE_NAME "irqpend"
#include "blk_irq_probe.h"

void main(uint64_t x0)
{
	unsigned intid;
	uint64_t dev = start_disk(x0, &intid);
	spi_write(0x100, intid); /* ISENABLER */

	read_sector(dev, 0, 1);
	show("request 1, interrupt", take_interrupt(dev, 100));

	spi_write(0x200, intid); /* ISPENDR: by hand */
	uint32_t got = (uint32_t)SYSREG_R("S3_0_C12_C12_0") & 0xffffff; /* ICC_IAR1_EL1: active */
	show("pended by hand, taken", got);
	read_sector(dev, 1, 2); /* the disk raises it while the hand-made one is active */
	delay_ms(20);
	device_ack(dev);
	SYSREG_W("S3_0_C12_C12_1", got); /* ICC_EOIR1_EL1 */
	take_interrupt(dev, 50); /* whatever the end left pending (a spurious one in a partition) */

	read_sector(dev, 2, 3);
	show("request 3, interrupt", take_interrupt(dev, 200));
	read_sector(dev, 3, 4);
	show("request 4, interrupt", take_interrupt(dev, 200));
	power_off();
}
