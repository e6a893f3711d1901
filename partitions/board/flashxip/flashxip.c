/* flashxip: code executed in place from bank 1 right after the firmware programmed it and sent
 * read array without polling the status (QEMU's flash is never busy, so firmware tested only
 * there may do so). Under QEMU's -bios the code runs; in a partition the bank is busy a few
 * accesses more, and must read as it will be -- instruction fetches and loads without a syndrome
 * too (tests/system/test_fwatk.py). */
#define PROBE_NAME "flashxip"
#include "fwprobe.h"

#define SR_READY 0x80u
#define CODE 0x10000ul

static void wait_ready(void)
{
	flash_cmd(0, 0x70);
	for (unsigned i = 0; i < 1u << 20; i++)
		if (flash_rd(0) & SR_READY)
			break;
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
}

static uint32_t call(unsigned long addr)
{
	register uint64_t x0 __asm__("x0");
	__asm__ volatile("blr %1" : "=r"(x0) : "r"(addr) : "x30", "memory");
	return (uint32_t)x0;
}

int main(void)
{
	static const uint32_t code[] = {
		0x52800540u, /* mov w0, #42 */
		0xd65f03c0u, /* ret */
	};
	puts_("flashxip: start\n");
	flash_cmd(0, 0x20); /* block 0: erased */
	flash_cmd(0, 0xd0);
	wait_ready();
	/* 512 words (4 steps of a partition's buffered program), the code in the last two */
	flash_cmd(CODE, 0xe8);
	flash_wr(CODE, 511u << 16 | 511u);
	for (unsigned i = 0; i < 510; i++)
		flash_wr(CODE + 4 * i, 0xd503201fu); /* nop */
	flash_wr(CODE + 4 * 510, code[0]);
	flash_wr(CODE + 4 * 511, code[1]);
	flash_cmd(CODE, 0xd0);
	flash_cmd(0, 0xff); /* no poll */
	show("code returned", call(FW_BANK1 + CODE));
	wait_ready();
	show("code returned again", call(FW_BANK1 + CODE));
	/* the same for a load with writeback (no syndrome either), as a checksum loop reads */
	flash_cmd(CODE, 0xe8);
	flash_wr(CODE, 511u << 16 | 511u);
	for (unsigned i = 0; i < 512; i++)
		flash_wr(CODE + 4 * i, 0x1000u + i);
	flash_cmd(CODE, 0xd0);
	flash_cmd(0, 0xff); /* no poll */
	unsigned long at = FW_BANK1 + CODE + 4 * 508;
	uint32_t sum = 0, w;
	for (unsigned i = 0; i < 4; i++) {
		__asm__ volatile("ldr %w0, [%1], #4" : "=r"(w), "+r"(at) : : "memory");
		sum += w;
	}
	show("post-index loads sum", sum);
	wait_ready();
	puts_("flashxip: done\n");
	return 0;
}
