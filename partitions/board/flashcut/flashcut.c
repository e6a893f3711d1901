/* flashcut: a firmware image for QEMU's virt machine that loses power in the middle of flash
 * programming. Its first run erases block 0 of bank 1, programs one word fully, then starts a word
 * program and a buffered program of four words without finishing either, and resets the machine
 * (PSCI SYSTEM_RESET: in a Bulkhead partition, a restart of the partition only). Its second run
 * finds the fully programmed word and prints what the unfinished programs left: each word must
 * hold its previous content (erased) or the new one, never a mix, and bank 1 must be back in read
 * array mode. Run by QEMU's -bios and as a partition's `firmware`, it must print the same lines
 * (tests/system/test_firmware.py). Only aligned 32-bit accesses, MMU off. */
#include <stdint.h>

#define UART 0x09000000ul
#define BANK1 0x04000000ul
#define DONE_WORD 0x10ul        /* programmed in full by the first run */
#define DONE_VALUE 0x11111111u
#define CUT_WORD 0x20ul         /* a word program cut between its setup and its data */
#define CUT_BUFFER 0x80ul       /* a buffered program cut before its confirm */
#define PSCI_SYSTEM_RESET 0x84000009ul

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

static void show(const char *what, uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	puts_("flashcut: ");
	puts_(what);
	puts_(" 0x");
	for (int shift = 28; shift >= 0; shift -= 4)
		putc_(digits[(v >> shift) & 15]);
	puts_("\n");
}

static void wr(unsigned long off, uint32_t v)
{
	*(volatile uint32_t *)(BANK1 + off) = v;
}

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

static void power_loss(void)
{
	puts_("flashcut: power lost\n");
	register unsigned long x0 __asm__("x0") = PSCI_SYSTEM_RESET;
	__asm__ volatile("hvc #0" : "+r"(x0) : : "memory");
	for (;;)
		__asm__ volatile("wfi");
}

static void first_run(void)
{
	cmd(0, 0x20); /* erase block 0 */
	cmd(0, 0xd0);
	cmd(0, 0x50);
	cmd(DONE_WORD, 0x40);
	wr(DONE_WORD, DONE_VALUE);
	cmd(0, 0x50);
	cmd(0, 0xff);
	show("programmed", rd(DONE_WORD));
	cmd(CUT_BUFFER, 0xe8); /* a buffered program: count and data, no confirm */
	wr(CUT_BUFFER, 3 << 16 | 3);
	for (unsigned i = 0; i < 4; i++)
		wr(CUT_BUFFER + 4 * i, 0xa0b0c0d0u + i);
	cmd(0, 0xff); /* (data, not a command, in the middle of a buffered program) */
	cmd(CUT_WORD, 0x40); /* a word program: the setup, then the power goes */
	power_loss();
}

static void second_run(void)
{
	show("after the power loss, read", rd(0));
	show("fully programmed word", rd(DONE_WORD));
	show("word whose program was cut", rd(CUT_WORD));
	for (unsigned i = 0; i < 4; i++)
		show("word of the cut buffered program", rd(CUT_BUFFER + 4 * i));
	cmd(0, 0x70);
	show("status", rd(0));
	cmd(0, 0xff);
	cmd(CUT_WORD, 0x40); /* the flash still works */
	wr(CUT_WORD, 0x22222222u);
	cmd(0, 0xff);
	show("programmed after the power loss", rd(CUT_WORD));
}

int main(void)
{
	puts_("flashcut: start\n");
	if (rd(DONE_WORD) == DONE_VALUE)
		second_run();
	else
		first_run();
	puts_("flashcut: done\n");
	return 0;
}
