/* flashrace: two vCPUs of one firmware partition on the same flash bank. vCPU 0 erases and
 * buffered-programs block 1 of bank 1 over and over, checking every word after each; vCPU 1
 * reads bank 1 (plain loads: each trapped read of a busy bank does a step of the operation)
 * without ever writing. Every program must read back whole, nothing may hang or fault. */
#define PROBE_NAME "flashrace"
#include "fwprobe.h"

#define SR_READY 0x80u
#define BLOCK1 0x40000ul
#define WORDS 1024u
#define ROUNDS 24u

extern char second[];
static volatile uint32_t *const stop_flag = (volatile uint32_t *)0x40400000ul;
static volatile uint32_t *const reads = (volatile uint32_t *)0x40400040ul;

static uint32_t wait_ready(void)
{
	uint32_t s = 0;
	flash_cmd(0, 0x70);
	for (unsigned i = 0; i < 1u << 22 && !(s & SR_READY); i++)
		s = flash_rd(0);
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	return s;
}

void main2(void)
{
	uint32_t n = 0;
	while (!*stop_flag) {
		(void)flash_rd(BLOCK1 + 4 * (n % WORDS));
		n++;
	}
	*reads = n;
	for (;;)
		__asm__ volatile("wfi");
}

int main(void)
{
	uint32_t bad = 0, notready = 0;

	puts_("flashrace: start\n");
	*stop_flag = 0;
	register unsigned long x0 __asm__("x0") = 0xc4000003ul; /* CPU_ON */
	register unsigned long x1 __asm__("x1") = 1;
	register unsigned long x2 __asm__("x2") = (unsigned long)second;
	register unsigned long x3 __asm__("x3") = 0;
	__asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
	show("cpu_on", (uint32_t)x0);
	for (unsigned r = 0; r < ROUNDS; r++) {
		flash_cmd(BLOCK1, 0x20);
		flash_cmd(BLOCK1, 0xd0);
		if (!(wait_ready() & SR_READY))
			notready++;
		for (unsigned i = 0; i < WORDS; i++)
			if (flash_rd(BLOCK1 + 4 * i) != 0xffffffffu)
				bad++;
		flash_cmd(BLOCK1, 0xe8);
		flash_wr(BLOCK1, (WORDS - 1) << 16 | (WORDS - 1));
		for (unsigned i = 0; i < WORDS; i++)
			flash_wr(BLOCK1 + 4 * i, 0x5a000000u + r * 0x10000u + i);
		flash_cmd(BLOCK1, 0xd0);
		if (!(wait_ready() & SR_READY))
			notready++;
		for (unsigned i = 0; i < WORDS; i++)
			if (flash_rd(BLOCK1 + 4 * i) != 0x5a000000u + r * 0x10000u + i)
				bad++;
	}
	*stop_flag = 1;
	show("bad words", bad);
	show("never ready", notready);
	puts_("flashrace: done\n");
	return 0;
}
