/* flashprobe: a firmware image for QEMU's virt machine that drives the CFI flash of bank 1 the
 * way firmware does (identifier, CFI query, block erase, word and buffered program, status,
 * a broken command sequence) and prints every answer; after an erase or a buffered program it
 * polls the status until the device is ready, as firmware must on real flash. Run by QEMU's -bios and as a Bulkhead
 * partition's `firmware`, it must print the same lines (tests/system/test_firmware.py): the
 * emulated flash must be indistinguishable from QEMU's pflash_cfi01. Only aligned 32-bit
 * accesses: with the MMU off every access is a device access. */
#define PROBE_NAME "flashprobe"
#include "fwprobe.h"

static void identify(void)
{
	flash_cmd(0, 0x90);
	show("manufacturer", flash_rd(0));
	show("device", flash_rd(4));
	show("block 0 lock", flash_rd(8));
	show("block 1 lock", flash_rd(0x40000 + 8));
	flash_cmd(0, 0xff);
}

static void query(void)
{
	flash_cmd(0, 0x98);
	for (unsigned i = 0x10; i < 0x36; i++) {
		puts_("flashprobe: query ");
		puthex(i);
		puts_(" ");
		puthex(flash_rd(4ul * i));
		puts_("\n");
	}
	flash_cmd(0, 0xff);
}

static uint32_t status(void)
{
	flash_cmd(0, 0x70);
	return flash_rd(0);
}

/* Status polls until the device is ready (SR.7), as firmware does after an erase or a program:
 * real flash, and the emulation, are busy for a while (QEMU's pflash_cfi01 is ready at once).
 * Bounded: a device that never gets ready prints its last status. */
static uint32_t wait_ready(void)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < 1u << 20 && !(s & 0x80); i++)
		s = flash_rd(0);
	return s;
}

static void erase_and_program(void)
{
	flash_cmd(0, 0x20);
	flash_cmd(0, 0xd0);
	show("erase status", wait_ready());
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	show("erased word 0", flash_rd(0));
	show("erased word 0x3fffc", flash_rd(0x3fffc));

	flash_cmd(0x10, 0x40);
	flash_wr(0x10, 0x12345678);
	show("program status", status());
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	show("programmed 0x10", flash_rd(0x10));

	flash_cmd(0x80, 0xe8);
	show("buffer setup status", flash_rd(0x80));
	flash_wr(0x80, 3 << 16 | 3); /* four bus words */
	for (unsigned i = 0; i < 4; i++)
		flash_wr(0x80 + 4 * i, 0xa0b0c0d0u + i);
	flash_cmd(0x80, 0xd0);
	show("buffer status", wait_ready());
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	for (unsigned i = 0; i < 4; i++)
		show("buffered", flash_rd(0x80 + 4 * i));
}

static void broken_sequence(void)
{
	flash_cmd(0, 0x20);
	flash_cmd(0, 0x70); /* not the erase confirm */
	show("after a broken erase, read", flash_rd(0)); /* erased: QEMU erases at the setup */
	flash_cmd(0, 0x70);
	show("status", wait_ready());
	flash_cmd(0, 0x50);
	show("status after clear", status());
	flash_cmd(0, 0xff);
	show("word 0x10 still", flash_rd(0x10));
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
