/* Console output of the bare-metal board guests: QEMU virt's PL011 at its usual address, polled
 * as a simple driver does (it waits while the transmit FIFO is full), and 32-bit device access. */
#ifndef PL011_PRINT_H
#define PL011_PRINT_H
#include <stdint.h>

#define UART_DR 0x09000000ul
#define UART_FR 0x09000018ul

static inline uint32_t rd32(uint64_t a) { return *(volatile uint32_t *)a; }
static inline void wr32(uint64_t a, uint32_t v) { *(volatile uint32_t *)a = v; }

static inline void putc_(char c)
{
	while (rd32(UART_FR) & (1u << 5)) /* TXFF */
		;
	wr32(UART_DR, (uint8_t)c);
}

static inline void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

/* v in decimal. */
static inline void putdec(uint64_t v)
{
	char buf[21];
	int n = 0;

	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		putc_(buf[--n]);
}

/* v in hexadecimal, 0x first, no leading zeros. */
static inline void puthex(uint64_t v)
{
	char buf[17];
	int n = 0;

	do {
		buf[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	puts_("0x");
	while (n)
		putc_(buf[--n]);
}

#endif
