/* flashprobe: a firmware image for QEMU's virt machine that drives the CFI flash of bank 1 the
 * way firmware does (identifier, CFI query, block erase, word and buffered program, status,
 * a broken command sequence) and prints every answer. Run by QEMU's -bios and as a Bulkhead
 * partition's `firmware`, it must print the same lines (tests/system/test_firmware.py): the
 * emulated flash must be indistinguishable from QEMU's pflash_cfi01. Only aligned 32-bit
 * accesses: with the MMU off every access is a device access. */
#include <stdint.h>

#define UART 0x09000000ul
#define BANK1 0x04000000ul

static void putc_(char c)
{
	volatile uint32_t *uart = (volatile uint32_t *)UART;
	if (c == '\n')
		*uart = '\r';
	*uart = (uint32_t)c;
}

static void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

static void puthex(uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	puts_("0x");
	for (int shift = 28; shift >= 0; shift -= 4)
		putc_(digits[(v >> shift) & 15]);
}

static void wr(unsigned long off, uint32_t v)
{
	*(volatile uint32_t *)(BANK1 + off) = v;
}

/* One plain load, as firmware's MMIO accessors do (no writeback addressing: that has no syndrome
 * for a hypervisor to emulate from). */
static uint32_t rd(unsigned long off)
{
	uint32_t v;
	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(BANK1 + off) : "memory");
	return v;
}

/* Both devices get every command: the byte in each 16-bit half. */
static void cmd(unsigned long off, uint32_t c)
{
	wr(off, c << 16 | c);
}

static void show(const char *what, uint32_t v)
{
	puts_("flashprobe: ");
	puts_(what);
	puts_(" ");
	puthex(v);
	puts_("\n");
}

static void identify(void)
{
	cmd(0, 0x90);
	show("manufacturer", rd(0));
	show("device", rd(4));
	show("block 0 lock", rd(8));
	show("block 1 lock", rd(0x40000 + 8));
	cmd(0, 0xff);
}

static void query(void)
{
	cmd(0, 0x98);
	for (unsigned i = 0x10; i < 0x36; i++) {
		puts_("flashprobe: query ");
		puthex(i);
		puts_(" ");
		puthex(rd(4ul * i));
		puts_("\n");
	}
	cmd(0, 0xff);
}

static uint32_t status(void)
{
	cmd(0, 0x70);
	return rd(0);
}

static void erase_and_program(void)
{
	cmd(0, 0x20);
	cmd(0, 0xd0);
	show("erase status", rd(0));
	cmd(0, 0x50);
	cmd(0, 0xff);
	show("erased word 0", rd(0));
	show("erased word 0x3fffc", rd(0x3fffc));

	cmd(0x10, 0x40);
	wr(0x10, 0x12345678);
	show("program status", status());
	cmd(0, 0x50);
	cmd(0, 0xff);
	show("programmed 0x10", rd(0x10));

	cmd(0x80, 0xe8);
	show("buffer setup status", rd(0x80));
	wr(0x80, 3 << 16 | 3); /* four bus words */
	for (unsigned i = 0; i < 4; i++)
		wr(0x80 + 4 * i, 0xa0b0c0d0u + i);
	cmd(0x80, 0xd0);
	show("buffer status", status());
	cmd(0, 0x50);
	cmd(0, 0xff);
	for (unsigned i = 0; i < 4; i++)
		show("buffered", rd(0x80 + 4 * i));
}

static void broken_sequence(void)
{
	cmd(0, 0x20);
	cmd(0, 0x70); /* not the erase confirm */
	show("after a broken erase, read", rd(0));
	show("status", status());
	cmd(0, 0x50);
	show("status after clear", status());
	cmd(0, 0xff);
	show("word 0x10 still", rd(0x10));
}

int main(void)
{
	puts_("flashprobe: start\n");
	uintptr_t reset = 0;
	__asm__("" : "+r"(reset)); /* address 0 is real here: keep the compiler from calling it NULL */
	show("bank 0 word 0", *(volatile uint32_t *)reset);
	identify();
	query();
	erase_and_program();
	broken_sequence();
	puts_("flashprobe: done\n");
	return 0;
}
