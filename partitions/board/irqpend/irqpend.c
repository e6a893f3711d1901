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
	const volatile uint8_t *dtb = (const volatile uint8_t *)(x0 ? x0 : RAM_BASE);

	line("start");
	if (be32(dtb) != 0xd00dfeedu)
		fail("no device tree", be32(dtb));
	uint64_t dev = find_block_device(dtb);
	if (!dev)
		fail("no virtio-mmio block device in the device tree", 0);
	uint32_t version = rd32(dev + VIRTIO_VERSION);
	if (version != 1 && version != 2)
		fail("unknown virtio-mmio version", version);
	unsigned intid = VIRTIO_FIRST_INTID + (unsigned)((dev - VIRTIO_SLOT0) / 0x200);
	show("disk interrupt", intid);
	init_device(dev, version);
	gic_init();
	spi_setup(intid);
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
