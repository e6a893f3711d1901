/* The GIC helpers of the forwarded-interrupt probes (irqhold, irqpend, irqflip, irqrefire,
 * irqstart), beside blkprobe's virtio-blk driver (virtio_blk.h), with interrupts polled from
 * ICC_IAR1_EL1. Each probe defines PROBE_NAME, the prefix of its lines, includes this and writes
 * its own main. */
#ifndef BLK_IRQ_PROBE_H
#define BLK_IRQ_PROBE_H
#include "virtio_blk.h"

#define GICD 0x08000000ul
#define GICR 0x080a0000ul
#define VIRTIO_SLOT0 0x0a000000ul
#define VIRTIO_FIRST_INTID 48u /* QEMU virt: slot n interrupts on SPI 16 + n */
#define SPURIOUS 1023u

#define SYSREG_R(name) ({ uint64_t v_; __asm__ volatile("mrs %0, " name : "=r"(v_)); v_; })
#define SYSREG_W(name, v) __asm__ volatile("msr " name ", %0\n isb" ::"r"((uint64_t)(v)))

static uint64_t counter(void)
{
	uint64_t v;
	__asm__ volatile("isb\n mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

static __attribute__((unused)) void delay_ms(unsigned ms)
{
	uint64_t start = counter(), ticks = SYSREG_R("cntfrq_el0") * ms / 1000;
	while (counter() - start < ticks)
		;
}

/* Distributor (affinity routing, group 1), this CPU's redistributor awake, the CPU interface on. */
static void gic_init(void)
{
	wr32(GICR + 0x14, rd32(GICR + 0x14) & ~2u);  /* GICR_WAKER.ProcessorSleep */
	while (rd32(GICR + 0x14) & 4u)               /* ChildrenAsleep */
		;
	SYSREG_W("S3_0_C12_C12_5", SYSREG_R("S3_0_C12_C12_5") | 1); /* ICC_SRE_EL1.SRE */
	SYSREG_W("S3_0_C4_C6_0", 0xff);  /* ICC_PMR_EL1 */
	SYSREG_W("S3_0_C12_C12_7", 1);   /* ICC_IGRPEN1_EL1 */
	wr32(GICD + 0x0, 0x12);          /* GICD_CTLR: ARE, EnableGrp1 */
}

static uint64_t bit_reg(uint64_t block, unsigned intid)
{
	return GICD + block + 4 * (intid / 32);
}

/* intid: group 1, level-sensitive, a middle priority, routed to this CPU (Aff0 0). */
static void spi_setup(unsigned intid)
{
	wr32(bit_reg(0x80, intid), rd32(bit_reg(0x80, intid)) | 1u << (intid % 32)); /* IGROUPR */
	*(volatile uint8_t *)(GICD + 0x400 + intid) = 0xa0;                           /* IPRIORITYR */
	wr32(GICD + 0xc00 + 4 * (intid / 16), rd32(GICD + 0xc00 + 4 * (intid / 16)) &
	     ~(2u << 2 * (intid % 16)));                                                /* ICFGR: level */
	*(volatile uint64_t *)(GICD + 0x6000 + 8 * intid) = 0;                        /* IROUTER */
}

static void spi_write(uint64_t block, unsigned intid)
{
	wr32(bit_reg(block, intid), 1u << (intid % 32));
}

static __attribute__((unused)) uint32_t spi_pending(unsigned intid)
{
	return rd32(bit_reg(0x200, intid)) >> (intid % 32) & 1; /* ISPENDR */
}

static void device_ack(uint64_t dev)
{
	wr32(dev + VIRTIO_INTERRUPT_ACK, rd32(dev + VIRTIO_INTERRUPT_STATUS));
}

/* The interrupt the CPU interface has for us within `ms` milliseconds, acknowledged, the device's
 * status acknowledged (its line falls) and then ended (EOImode 0: the end deactivates it too), as
 * a driver's handler does; SPURIOUS if none came. */
static __attribute__((unused)) uint32_t take_interrupt(uint64_t dev, unsigned ms)
{
	uint64_t start = counter(), ticks = SYSREG_R("cntfrq_el0") * ms / 1000;
	do {
		uint32_t intid = (uint32_t)SYSREG_R("S3_0_C12_C12_0") & 0xffffff; /* ICC_IAR1_EL1 */
		if (intid != SPURIOUS) {
			device_ack(dev);
			SYSREG_W("S3_0_C12_C12_1", intid); /* ICC_EOIR1_EL1 */
			return intid;
		}
	} while (counter() - start < ticks);
	return SPURIOUS;
}

static void show(const char *what, uint64_t v)
{
	say(what);
	putc_(' ');
	putdec(v);
	putc_('\n');
}

/* "start", then the virtio-mmio disk of the device tree at x0 (RAM_BASE if none) set up, its
 * interrupt announced (*intid) and made a level-sensitive group 1 SPI routed to this CPU, not
 * enabled yet; the probe fails if there is no such disk. */
static uint64_t start_disk(uint64_t x0, unsigned *intid)
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
	*intid = VIRTIO_FIRST_INTID + (unsigned)((dev - VIRTIO_SLOT0) / 0x200);
	show("disk interrupt", *intid);
	init_device(dev, version);
	gic_init();
	spi_setup(*intid);
	return dev;
}

#endif
