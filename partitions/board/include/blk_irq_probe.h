/* The virtio-blk driver and GIC helpers of the forwarded-interrupt probes (irqhold, irqpend):
 * blkprobe's driver, with interrupts polled from ICC_IAR1_EL1. Each probe defines PROBE_NAME, the
 * prefix of its lines, includes this and writes its own main. */
#ifndef BLK_IRQ_PROBE_H
#define BLK_IRQ_PROBE_H
#include <stdint.h>
#include "pl011_print.h"

#define RAM_BASE 0x40000000ul
#define PSCI_SYSTEM_OFF 0x84000008u

/* virtio-mmio registers (virtio 1.2, 4.2.2; legacy 4.2.4) */
#define VIRTIO_MAGIC 0x000
#define VIRTIO_VERSION 0x004
#define VIRTIO_DEVICE_ID 0x008
#define VIRTIO_DEVICE_FEATURES 0x010
#define VIRTIO_DEVICE_FEATURES_SEL 0x014
#define VIRTIO_DRIVER_FEATURES 0x020
#define VIRTIO_DRIVER_FEATURES_SEL 0x024
#define VIRTIO_GUEST_PAGE_SIZE 0x028 /* legacy */
#define VIRTIO_QUEUE_SEL 0x030
#define VIRTIO_QUEUE_NUM_MAX 0x034
#define VIRTIO_QUEUE_NUM 0x038
#define VIRTIO_QUEUE_ALIGN 0x03c     /* legacy */
#define VIRTIO_QUEUE_PFN 0x040       /* legacy */
#define VIRTIO_QUEUE_READY 0x044
#define VIRTIO_QUEUE_NOTIFY 0x050
#define VIRTIO_INTERRUPT_STATUS 0x060
#define VIRTIO_INTERRUPT_ACK 0x064
#define VIRTIO_STATUS 0x070
#define VIRTIO_QUEUE_DESC 0x080
#define VIRTIO_QUEUE_DRIVER 0x090
#define VIRTIO_QUEUE_DEVICE 0x0a0
#define VIRTIO_CONFIG 0x100          /* virtio-blk: capacity in 512-byte sectors, 64 bits */

#define MAGIC 0x74726976u            /* "virt" */
#define DEVICE_BLOCK 2u
#define STATUS_ACK 1u
#define STATUS_DRIVER 2u
#define STATUS_DRIVER_OK 4u
#define STATUS_FEATURES_OK 8u
#define FEATURE_VERSION_1 (1u << 0)  /* bit 32: in the second 32-bit word */

#define QUEUE_SIZE 4u
#define DESC_NEXT 1u
#define DESC_WRITE 2u
#define BLK_T_IN 0u
#define SECTOR 512u
#define POLLS 200000000ul

int64_t smc_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

struct blk_req {
	uint32_t type, reserved;
	uint64_t sector;
};

/* One virtqueue in the legacy layout (descriptors, then the driver ring, the device ring on the
 * next 4K page), which the modern interface accepts as well, each part at its own address. */
static struct {
	struct desc desc[QUEUE_SIZE];
	volatile uint16_t avail_flags, avail_idx, avail_ring[QUEUE_SIZE];
	uint8_t pad[4096 - QUEUE_SIZE * sizeof(struct desc) - (2 + QUEUE_SIZE) * 2];
	volatile uint16_t used_flags, used_idx;
	volatile struct { uint32_t id, len; } used_ring[QUEUE_SIZE];
} queue __attribute__((aligned(4096)));

static struct blk_req request __attribute__((aligned(16)));
static volatile uint8_t sector[SECTOR] __attribute__((aligned(16)));
static volatile uint8_t request_status;

static inline void dsb(void) { __asm__ volatile("dsb sy" ::: "memory"); }

static void putdec(uint64_t v)
{
	char buf[21];
	int n = 0;
	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		putc_(buf[--n]);
}

static void say(const char *s)
{
	puts_(PROBE_NAME ": ");
	puts_(s);
}

static void line(const char *s)
{
	say(s);
	putc_('\n');
}

static void power_off(void)
{
	line("done, SYSTEM_OFF");
	smc_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	line("SYSTEM_OFF returned");
	for (;;)
		__asm__ volatile("wfi");
}

/* A check that failed: say which and what the device answered, then stop. */
static void fail(const char *what, uint64_t got)
{
	say("FAILED: ");
	puts_(what);
	puts_(", got ");
	puthex(got);
	putc_('\n');
	power_off();
}

void unexpected(uint64_t esr, uint64_t elr, uint64_t far)
{
	say("unexpected exception esr=");
	puthex(esr);
	puts_(" elr=");
	puthex(elr);
	puts_(" far=");
	puthex(far);
	putc_('\n');
	power_off();
}

static uint32_t be32(const volatile uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The address in a node name "virtio_mmio@a003c00", or 0 if name is not such a node. */
static uint64_t virtio_node_address(const volatile uint8_t *name)
{
	const char *want = "virtio_mmio@";
	uint64_t addr = 0;
	unsigned i = 0;

	for (; want[i]; i++)
		if (name[i] != (uint8_t)want[i])
			return 0;
	for (;; i++) {
		uint8_t c = name[i];
		if (c >= '0' && c <= '9')
			addr = addr << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			addr = addr << 4 | (uint64_t)(c - 'a' + 10);
		else
			return c == 0 ? addr : 0;
	}
}

/* The first virtio-mmio node of the device tree whose device is a block device. Only the
 * device tree's nodes are read: in a partition, other slots are not mapped. */
static uint64_t find_block_device(const volatile uint8_t *dtb)
{
	uint32_t off = be32(dtb + 8), size = be32(dtb + 36);

	for (uint32_t i = off; i + 4 < off + size; i += 4) {
		if (be32(dtb + i) != 1) /* FDT_BEGIN_NODE, then the name */
			continue;
		uint64_t base = virtio_node_address(dtb + i + 4);
		if (base && rd32(base + VIRTIO_MAGIC) == MAGIC && rd32(base + VIRTIO_DEVICE_ID) == DEVICE_BLOCK)
			return base;
	}
	return 0;
}

static void set_status(uint64_t dev, uint32_t bits)
{
	wr32(dev + VIRTIO_STATUS, rd32(dev + VIRTIO_STATUS) | bits);
}

static void wr64(uint64_t reg, uint64_t v)
{
	wr32(reg, (uint32_t)v);
	wr32(reg + 4, (uint32_t)(v >> 32));
}

/* Features: none for the legacy interface; VIRTIO_F_VERSION_1 alone for the modern one, which the
 * device must accept (FEATURES_OK reads back). */
static void negotiate(uint64_t dev, uint32_t version)
{
	if (version == 1) {
		wr32(dev + VIRTIO_DRIVER_FEATURES, 0);
		return;
	}
	wr32(dev + VIRTIO_DEVICE_FEATURES_SEL, 1);
	if (!(rd32(dev + VIRTIO_DEVICE_FEATURES) & FEATURE_VERSION_1))
		fail("modern device without VIRTIO_F_VERSION_1", rd32(dev + VIRTIO_DEVICE_FEATURES));
	wr32(dev + VIRTIO_DRIVER_FEATURES_SEL, 0);
	wr32(dev + VIRTIO_DRIVER_FEATURES, 0);
	wr32(dev + VIRTIO_DRIVER_FEATURES_SEL, 1);
	wr32(dev + VIRTIO_DRIVER_FEATURES, FEATURE_VERSION_1);
	set_status(dev, STATUS_FEATURES_OK);
	if (!(rd32(dev + VIRTIO_STATUS) & STATUS_FEATURES_OK))
		fail("FEATURES_OK not accepted", rd32(dev + VIRTIO_STATUS));
}

static void setup_queue(uint64_t dev, uint32_t version)
{
	wr32(dev + VIRTIO_QUEUE_SEL, 0);
	uint32_t max = rd32(dev + VIRTIO_QUEUE_NUM_MAX);
	if (max < QUEUE_SIZE)
		fail("queue 0 too small (QueueNumMax)", max);
	wr32(dev + VIRTIO_QUEUE_NUM, QUEUE_SIZE);
	if (version == 1) {
		wr32(dev + VIRTIO_GUEST_PAGE_SIZE, 4096);
		wr32(dev + VIRTIO_QUEUE_ALIGN, 4096);
		wr32(dev + VIRTIO_QUEUE_PFN, (uint32_t)((uint64_t)&queue >> 12));
		return;
	}
	wr64(dev + VIRTIO_QUEUE_DESC, (uint64_t)queue.desc);
	wr64(dev + VIRTIO_QUEUE_DRIVER, (uint64_t)&queue.avail_flags);
	wr64(dev + VIRTIO_QUEUE_DEVICE, (uint64_t)&queue.used_flags);
	wr32(dev + VIRTIO_QUEUE_READY, 1);
}

static void init_device(uint64_t dev, uint32_t version)
{
	wr32(dev + VIRTIO_STATUS, 0); /* reset */
	set_status(dev, STATUS_ACK);
	set_status(dev, STATUS_DRIVER);
	negotiate(dev, version);
	setup_queue(dev, version);
	set_status(dev, STATUS_DRIVER_OK);
}

static void set_desc(unsigned i, const volatile void *addr, uint32_t len, uint16_t flags)
{
	queue.desc[i].addr = (uint64_t)addr;
	queue.desc[i].len = len;
	queue.desc[i].flags = flags;
	queue.desc[i].next = (uint16_t)(i + 1);
}

/* Sector n into `sector`, the program's `count`th request (1, 2, ...): header (device reads),
 * buffer and status (device writes); polled to completion. The device's interrupt is left as it
 * is (asserted: the status is not acknowledged here). */
static void read_sector(uint64_t dev, uint64_t n, uint16_t count)
{
	request.type = BLK_T_IN;
	request.sector = n;
	request_status = 0xff;
	set_desc(0, &request, sizeof(request), DESC_NEXT);
	set_desc(1, sector, SECTOR, DESC_NEXT | DESC_WRITE);
	set_desc(2, &request_status, 1, DESC_WRITE);
	queue.avail_ring[(count - 1) % QUEUE_SIZE] = 0;
	dsb(); /* the descriptors before the index that publishes them */
	queue.avail_idx = count;
	dsb();
	wr32(dev + VIRTIO_QUEUE_NOTIFY, 0);
	uint64_t polls = 0;
	while (queue.used_idx != count)
		if (++polls == POLLS)
			fail("no answer to the request (used ring index)", queue.used_idx);
	dsb();
	if (request_status != 0)
		fail("request status not VIRTIO_BLK_S_OK", request_status);
}

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
