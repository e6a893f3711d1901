/* blkprobe: a bare-metal program for QEMU's `virt` machine that reads sector 0 of a virtio-blk disk
 * by DMA and prints what it read. Written against the board alone (no Bulkhead library, no
 * hypercall): it runs unmodified on bare QEMU and in a Bulkhead partition with `board: qemu-virt`
 * and the disk's virtio-mmio slot passed through, whose RAM is then identity mapped, so the guest
 * addresses it gives the device are the physical ones the device writes (tests/system/
 * test_board_dma.py compares the two runs). It finds the device in the device tree, drives the
 * legacy (version 1) or the modern (version 2) virtio-mmio interface, polls one request to
 * completion, and checks every answer of the device. Every line starts with "blkprobe: ". */
#define PROBE_NAME "blkprobe"
#include "virtio_blk.h"

static void putbyte(uint8_t b)
{
	putc_("0123456789abcdef"[b >> 4]);
	putc_("0123456789abcdef"[b & 15]);
}

/* Sector n, the only request: polled to completion, every answer of the device checked, its
 * interrupt acknowledged. */
static void read_sector_checked(uint64_t dev, uint64_t n)
{
	read_sector(dev, n, 1);
	if (queue.used_ring[0].id != 0)
		fail("used ring names another descriptor", queue.used_ring[0].id);
	if (queue.used_ring[0].len != SECTOR + 1)
		fail("device wrote an unexpected length", queue.used_ring[0].len);
	wr32(dev + VIRTIO_INTERRUPT_ACK, rd32(dev + VIRTIO_INTERRUPT_STATUS));
}

static uint32_t fnv1a(const volatile uint8_t *p, unsigned n)
{
	uint32_t h = 0x811c9dc5u;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x01000193u;
	return h;
}

static void print_bytes(const char *what, unsigned from, unsigned count)
{
	say(what);
	for (unsigned i = from; i < from + count; i++) {
		putc_(' ');
		putbyte(sector[i]);
	}
	putc_('\n');
}

static void print_text(const char *what, unsigned from, unsigned count)
{
	say(what);
	puts_(" '");
	for (unsigned i = from; i < from + count; i++)
		putc_(sector[i] >= 0x20 && sector[i] < 0x7f ? (char)sector[i] : '.');
	puts_("'\n");
}

static void report_sector(void)
{
	say("sector 0: 512 bytes, FNV-1a ");
	puthex(fnv1a(sector, SECTOR));
	putc_('\n');
	print_bytes("sector 0 bytes 0-15:", 0, 16);
	print_bytes("sector 0 bytes 510-511:", 510, 2);
	/* A FAT boot sector: OEM name at 3, file system type at 0x36 (FAT12/16) or 0x52 (FAT32). */
	print_text("sector 0 text at 0x03:", 0x03, 8);
	print_text("sector 0 text at 0x36:", 0x36, 8);
	print_text("sector 0 text at 0x52:", 0x52, 8);
}

void main(uint64_t x0)
{
	const volatile uint8_t *dtb = (const volatile uint8_t *)(x0 ? x0 : RAM_BASE);

	line("hello from a bare-metal virtio-blk reader for qemu virt");
	if (be32(dtb) != 0xd00dfeedu)
		fail("no device tree", be32(dtb));
	uint64_t dev = find_block_device(dtb);
	if (!dev)
		fail("no virtio-mmio block device in the device tree", 0);
	uint32_t version = rd32(dev + VIRTIO_VERSION);
	if (version != 1 && version != 2)
		fail("unknown virtio-mmio version", version);
	say("virtio-blk at ");
	puthex(dev);
	puts_(", virtio-mmio version ");
	putdec(version);
	putc_('\n');
	init_device(dev, version);
	say("capacity ");
	putdec((uint64_t)rd32(dev + VIRTIO_CONFIG) | (uint64_t)rd32(dev + VIRTIO_CONFIG + 4) << 32);
	puts_(" sectors\n");
	read_sector_checked(dev, 0);
	say("read sector 0 by DMA into ");
	puthex((uint64_t)sector);
	putc_('\n');
	report_sector();
	power_off();
}
