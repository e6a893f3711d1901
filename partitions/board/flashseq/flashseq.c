/* flashseq: odd CFI command sequences a hostile or careless firmware may send to bank 1 -- writes of
 * every width as commands and data, a buffered program whose data lies outside its window or whose
 * count is beyond the buffer, commands mid-sequence, lock bits, identifier and query reads of
 * every width and beyond the table -- each answer printed, so that the lines compare with QEMU's
 * -bios (tests/system/test_fwatk.py), up to the odd buffered programs, where QEMU 7.2 differs. */
#define PROBE_NAME "flashseq"
#include "fwprobe.h"

#define SR_READY 0x80u

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

static void wr(unsigned long off, int size, uint64_t v)
{
	unsigned long a = FW_BANK1 + off;
	switch (size) {
	case 1: __asm__ volatile("strb %w0, [%1]" : : "r"(v), "r"(a) : "memory"); break;
	case 2: __asm__ volatile("strh %w0, [%1]" : : "r"(v), "r"(a) : "memory"); break;
	case 4: __asm__ volatile("str %w0, [%1]" : : "r"(v), "r"(a) : "memory"); break;
	default: __asm__ volatile("str %0, [%1]" : : "r"(v), "r"(a) : "memory");
	}
}

static void show64(const char *what, uint64_t v)
{
	puts_(PROBE_NAME ": ");
	puts_(what);
	puts_(" ");
	puthex((uint32_t)(v >> 32));
	puts_(" ");
	puthex((uint32_t)v);
	puts_("\n");
}

static uint32_t wait_ready(void)
{
	uint32_t s = 0;
	flash_cmd(0, 0x70);
	for (unsigned i = 0; i < 1u << 20 && !(s & SR_READY); i++)
		s = flash_rd(0);
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	return s;
}

static void erase_block0(void)
{
	flash_cmd(0, 0x20);
	flash_cmd(0, 0xd0);
	wait_ready();
}

/* Word programs of every width, in the erased block. */
static void widths(void)
{
	static const int sizes[] = {1, 2, 4, 8};
	for (unsigned i = 0; i < 4; i++) {
		unsigned long off = 0x100 + 0x10 * i;
		wr(off, sizes[i], 0x40);
		wr(off, sizes[i], 0x0102030405060708ull);
		show64("program width status", rd(0, 4));
		flash_cmd(0, 0x50);
		flash_cmd(0, 0xff);
		show64("program width lo", rd(off, 8));
		show64("program width hi", rd(off + 8, 8));
	}
}

/* Buffered programs: data below the window, beyond the count, a count beyond the buffer, a
 * zero count, a count in one device's half only, a command instead of data. */
static void buffers(void)
{
	static const struct { unsigned long at, data; uint32_t count; } b[] = {
		{0x210, 0x200, 0x00010001},  /* data below the window */
		{0x300, 0x308, 0x00010001},  /* two words announced, the second beyond them first */
		{0x500, 0x500, 0x00000000},  /* one word */
		{0x600, 0x600, 0x00000003},  /* count in the low half only */
		{0x700, 0x700, 0x00ff00ff},  /* 256 words, 2 written */
		{0x400, 0x400, 0x07ff07ff},  /* 2048 words: more than the buffer (last: QEMU 7.2 then
					      * takes every write as data, 0x7ff07ff of them) */
	};
	for (unsigned i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		flash_cmd(b[i].at, 0xe8);
		show64("buffer setup", rd(b[i].at, 4));
		flash_wr(b[i].at, b[i].count);
		show64("buffer count read", rd(b[i].at, 4));
		flash_wr(b[i].data, 0x11110000u + i);
		show64("buffer data read", rd(b[i].data, 4));
		flash_wr(b[i].data + 4, 0x22220000u + i);
		flash_cmd(b[i].at, 0xd0);
		show64("buffer confirm", wait_ready());
		show64("buffer word 0", rd(b[i].at, 8));
		show64("buffer data", rd(b[i].data, 8));
	}
}

static void identifier_and_query(void)
{
	static const struct { unsigned long off; int size; } r[] = {
		{0, 1}, {1, 1}, {2, 2}, {0, 8}, {8, 4}, {0x40008, 4}, {0x400, 4}, {0x1000, 4},
		{0x3fffc, 4},
	};
	for (int mode = 0; mode < 2; mode++) {
		flash_cmd(0, mode ? 0x98 : 0x90);
		for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++)
			show64(mode ? "query" : "identifier", rd(r[i].off, r[i].size));
		show64(mode ? "query 0x40 words" : "identifier 0x40 words", rd(0x100, 4));
		show64(mode ? "query 0x80 words" : "identifier 0x80 words", rd(0x200, 4));
		flash_cmd(0, 0xff);
	}
	/* lock, then the block's lock state; unlock; a wrong confirm */
	flash_cmd(0, 0x60);
	flash_cmd(0, 0x01);
	show64("lock status", rd(0, 4));
	flash_cmd(0, 0x90);
	show64("locked block", rd(8, 4));
	flash_cmd(0, 0x60);
	flash_cmd(0, 0xd0);
	flash_cmd(0, 0x90);
	show64("unlocked block", rd(8, 4));
	flash_cmd(0, 0x60);
	flash_cmd(0, 0x77);
	show64("lock broken", rd(0, 4));
	flash_cmd(0, 0xff);
}

/* Commands of other widths and in one device's half only. */
static void command_widths(void)
{
	wr(0, 1, 0x90);
	show64("byte 90", rd(0, 4));
	wr(0, 4, 0xff);
	wr(0, 2, 0x98);
	show64("half 98", rd(0x40, 4));
	wr(0, 4, 0xff);
	wr(0, 8, 0x0000009000000090ull);
	show64("dword 90", rd(0, 4));
	wr(0, 4, 0xff);
	wr(2, 2, 0x90);
	show64("upper half 90", rd(0, 4));
	wr(0, 4, 0xff);
	wr(1, 1, 0x70);
	show64("byte 1 70", rd(0, 4));
	wr(0, 4, 0xff);
	show64("array", rd(0x100, 4));
}

/* A program set up, then a different command instead of data; an erase setup then a program. */
static void interrupted(void)
{
	flash_cmd(0x800, 0x40);
	flash_cmd(0x800, 0x90);
	show64("program then 90: status", rd(0, 4));
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	show64("program then 90: word", rd(0x800, 4));
	flash_cmd(0x40000, 0x20);
	flash_cmd(0x40000, 0x40);
	show64("erase then 40: read", rd(0x40000, 4));
	flash_cmd(0, 0xff);
	wait_ready();
	show64("erase then 40: block", rd(0x40000, 4));
}

int main(void)
{
	puts_("flashseq: start\n");
	erase_block0();
	widths();
	identifier_and_query();
	command_widths();
	erase_block0();
	interrupted();
	erase_block0();
	/* From here QEMU 7.2 differs: it stores a buffered program's data where each word is
	 * written, window or not, and takes a count beyond its buffer, after which every write is
	 * data. Bulkhead breaks such a sequence (read array): nothing is programmed. */
	puts_("flashseq: buffers\n");
	buffers();
	puts_("flashseq: done\n");
	return 0;
}
