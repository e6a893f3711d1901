/* flashpair: loads without a syndrome (LDP, as memcpy, U-Boot's cmp and edk2's CopyMem read) from
 * bank 1 where a Bulkhead partition's reads trap: the erased part beyond the variables image, and a
 * block in read-status mode. Each value printed, so that the lines compare with QEMU's -bios
 * (tests/system/test_fwatk.py). */
#define PROBE_NAME "flashpair"
#include "fwprobe.h"

#define SR_READY 0x80u
#define TAIL 0x100000ul /* beyond a 256K variables image */

static void show_pair(const char *what, unsigned long off)
{
	uint64_t a, b;
	uint32_t c, d;
	unsigned long addr = FW_BANK1 + off;
	__asm__ volatile("ldp %0, %1, [%2]" : "=&r"(a), "=&r"(b) : "r"(addr) : "memory");
	__asm__ volatile("ldp %w0, %w1, [%2]" : "=&r"(c), "=&r"(d) : "r"(addr) : "memory");
	puts_(PROBE_NAME ": ");
	puts_(what);
	puts_(" ");
	puthex((uint32_t)(a >> 32));
	puthex((uint32_t)a);
	puts_(" ");
	puthex((uint32_t)(b >> 32));
	puthex((uint32_t)b);
	puts_(" ");
	puthex(c);
	puts_(" ");
	puthex(d);
	puts_("\n");
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

/* Post-index and pre-index writeback, LDPSW, and XZR as a destination, in status mode (the
 * status repeated, bit 7 set: sign-extended by LDPSW). */
static void show_forms(void)
{
	unsigned long base = FW_BANK1 + 0x40, post = base, pre = base;
	uint64_t a, b, c, d, e, f;
	__asm__ volatile("ldp %w0, %w1, [%2], #16" : "=&r"(a), "=&r"(b), "+r"(post) : : "memory");
	__asm__ volatile("ldp %0, %1, [%2, #-16]!" : "=&r"(c), "=&r"(d), "+r"(pre) : : "memory");
	__asm__ volatile("ldpsw %0, %1, [%2, #8]" : "=&r"(e), "=&r"(f) : "r"(base) : "memory");
	__asm__ volatile("ldp xzr, %0, [%1]" : "=&r"(a) : "r"(base) : "memory");
	show("post-index base moved", (uint32_t)(post - base));
	show("pre-index base moved", (uint32_t)(base - pre));
	show("post-index second", (uint32_t)b);
	show("pre-index second high", (uint32_t)(d >> 32));
	show("ldpsw high", (uint32_t)(e >> 32));
	show("ldpsw low", (uint32_t)f);
	show("xzr pair second", (uint32_t)a);
	(void)c;
}

int main(void)
{
	puts_("flashpair: start\n");
	flash_cmd(TAIL, 0x20); /* erased under QEMU too */
	flash_cmd(TAIL, 0xd0);
	wait_ready();
	show("tail word", flash_rd(TAIL));
	show_pair("tail pair", TAIL);
	uint64_t e, f;
	__asm__ volatile("ldpsw %0, %1, [%2]" : "=&r"(e), "=&r"(f) : "r"(FW_BANK1 + TAIL) : "memory");
	show("tail ldpsw high", (uint32_t)(e >> 32));
	/* single loads with writeback (no syndrome either): a checksum loop's */
	unsigned long at = FW_BANK1 + TAIL;
	uint64_t g, h, k;
	__asm__ volatile("ldr %w0, [%1], #4" : "=r"(g), "+r"(at) : : "memory");
	__asm__ volatile("ldrsh %0, [%1, #2]!" : "=r"(h), "+r"(at) : : "memory");
	__asm__ volatile("ldrb %w0, [%1], #-6" : "=r"(k), "+r"(at) : : "memory");
	show("tail post-index word", (uint32_t)g);
	show("tail pre-index signed half high", (uint32_t)(h >> 32));
	show("tail byte", (uint32_t)k);
	show("tail base moved back", (uint32_t)(FW_BANK1 + TAIL - at));
	flash_cmd(0, 0x70);
	show_pair("status pair", 0);
	flash_cmd(0, 0x40); /* a word program of ones: status ready again, nothing changed */
	flash_wr(0x40, 0xffffffffu);
	show_forms();
	flash_cmd(0, 0xff);
	puts_("flashpair: done\n");
	return 0;
}
