/* flashodd: odd-sized loads (1, 2, 4 and 8 bytes, at every offset of a bus word) of bank 1 while
 * an operation is in progress and read array was sent while busy (read_in_progress), and in
 * status mode; each value printed, so that the lines compare with QEMU's -bios (attack test). */
#define PROBE_NAME "flashodd"
#include "fwprobe.h"

#define SR_READY 0x80u
#define B 0x3f000ul

static uint64_t rd(unsigned long off, int size)
{
	unsigned long a = FW_BANK1 + off;
	uint64_t v = 0;
	switch (size) {
	case 1: { uint32_t w; __asm__ volatile("ldrb %w0, [%1]" : "=r"(w) : "r"(a) : "memory"); v = w; break; }
	case 2: { uint32_t w; __asm__ volatile("ldrh %w0, [%1]" : "=r"(w) : "r"(a) : "memory"); v = w; break; }
	case 4: { uint32_t w; __asm__ volatile("ldr %w0, [%1]" : "=r"(w) : "r"(a) : "memory"); v = w; break; }
	default: __asm__ volatile("ldr %0, [%1]" : "=r"(v) : "r"(a) : "memory");
	}
	return v;
}

static void show_reads(const char *what, unsigned long base)
{
	static const struct { unsigned long off; int size; } r[] = {
		{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1},
		{0, 2}, {2, 2}, {4, 2}, {6, 2}, {0, 4}, {4, 4}, {0, 8}, {8, 8}, {24, 8},
	};
	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		uint64_t v = rd(base + r[i].off, r[i].size);
		puts_(PROBE_NAME ": ");
		puts_(what);
		puts_(" off ");
		puthex((uint32_t)r[i].off);
		puts_(" size ");
		puthex((uint32_t)r[i].size);
		puts_(" = ");
		puthex((uint32_t)(v >> 32));
		puts_(" ");
		puthex((uint32_t)v);
		puts_("\n");
	}
}

static void wait_ready(void)
{
	flash_cmd(0, 0x70);
	for (unsigned i = 0; i < 1u << 20; i++)
		if (flash_rd(0) & SR_READY)
			break;
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
}

int main(void)
{
	puts_("flashodd: start\n");
	flash_cmd(0, 0x20);
	flash_cmd(0, 0xd0);
	wait_ready();
	/* a buffered program of 1024 words, read array right after its confirm */
	flash_cmd(B, 0xe8);
	flash_wr(B, 1023u << 16 | 1023u);
	for (unsigned i = 0; i < 1024; i++)
		flash_wr(B + 4 * i, 0x11223344u + 0x01010101u * i);
	flash_cmd(B, 0xd0);
	flash_cmd(0, 0xff);
	show_reads("program busy array", B + 4 * 1016);
	wait_ready();
	show_reads("program done array", B + 4 * 1016);
	/* an erase, read array right after its confirm */
	flash_cmd(0, 0x20);
	flash_cmd(0, 0xd0);
	flash_cmd(0, 0xff);
	show_reads("erase busy array", B + 4 * 1016);
	wait_ready();
	puts_("flashodd: done\n");
	return 0;
}
