/* blkprobe's virtio-blk driver for QEMU's `virt` machine, written against the board alone: the
 * device found in the device tree, the legacy (version 1) or modern (version 2) virtio-mmio
 * interface, one request at a time polled to completion. Shared by blkprobe and the
 * forwarded-interrupt probes (blk_irq_probe.h); the program defines PROBE_NAME, the prefix of its
 * lines, before it includes this. */
#ifndef VIRTIO_BLK_H
#define VIRTIO_BLK_H
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

#endif
