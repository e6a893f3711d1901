/* lineprintwait: lineprint's numbered lines, each byte written only once the PL011 says its
 * transmit FIFO has room (UARTFR.TXFF clear), as a polling driver writes: nothing may be lost,
 * however busy the shared console (attack test, test_attack.py). */
#define PROBE_NAME "lw"
#include "fwprobe.h"

#define UART_FR 0x018
#define FR_TXFF (1u << 5)

static void wait_putc(char c)
{
	while (mmio_rd(FW_UART + UART_FR) & FR_TXFF)
		;
	mmio_wr(FW_UART, (uint32_t)c);
}

static void wait_puts(const char *s)
{
	while (*s)
		wait_putc(*s++);
}

int main(void)
{
	static const char digits[] = "0123456789abcdef";

	for (uint32_t i = 0; i < 3000; i++) {
		wait_puts("lw: 0123456789abcdefghijklmnopqrstuvwxyz 0x");
		for (int shift = 28; shift >= 0; shift -= 4)
			wait_putc(digits[(i >> shift) & 15]);
		wait_puts("\r\n");
	}
	wait_puts("lw: done\r\n");
	return 0;
}
