/* What the firmware probes (flashprobe, flashcut, rtcprobe) share: output on QEMU virt's PL011
 * and CFI flash bank 1, both by plain aligned 32-bit accesses (with the MMU off every access is a
 * device access, and a load or store with writeback has no syndrome a hypervisor could emulate).
 * Each probe defines PROBE_NAME, the prefix of its lines. */
#ifndef BOARD_FWPROBE_H
#define BOARD_FWPROBE_H

#include <stdint.h>

#define FW_UART 0x09000000ul
#define FW_BANK1 0x04000000ul

static inline void putc_(char c)
{
	volatile uint32_t *uart = (volatile uint32_t *)FW_UART;
	if (c == '\n')
		*uart = '\r';
	*uart = (uint32_t)c;
}

static inline void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

/* v in decimal. */
static inline void putdec(uint64_t v)
{
	char s[24];
	int n = 0;
	do {
		s[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n--)
		putc_(s[n]);
}

static inline void puthex(uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	puts_("0x");
	for (int shift = 28; shift >= 0; shift -= 4)
		putc_(digits[(v >> shift) & 15]);
}

/* One line: "<probe>: <what> 0x<v>". */
static inline void show(const char *what, uint32_t v)
{
	puts_(PROBE_NAME ": ");
	puts_(what);
	puts_(" ");
	puthex(v);
	puts_("\n");
}

static inline uint32_t mmio_rd(unsigned long addr)
{
	uint32_t v;
	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

static inline void mmio_wr(unsigned long addr, uint32_t v)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(v), "r"(addr) : "memory");
}

/* Bank 1, by offset; a command goes to both 16-bit devices (its byte in each half). */
static inline uint32_t flash_rd(unsigned long off)
{
	return mmio_rd(FW_BANK1 + off);
}

static inline void flash_wr(unsigned long off, uint32_t v)
{
	mmio_wr(FW_BANK1 + off, v);
}

static inline void flash_cmd(unsigned long off, uint32_t c)
{
	flash_wr(off, c << 16 | c);
}

/* The power goes: PSCI SYSTEM_RESET (in a Bulkhead partition, a restart of the partition only),
 * by HVC unless the probe defines FW_RESET_INSN. Says so first. */
#define PSCI_SYSTEM_RESET 0x84000009ul
#ifndef FW_RESET_INSN
#define FW_RESET_INSN "hvc #0"
#endif
static inline __attribute__((noreturn)) void power_loss(void)
{
	puts_(PROBE_NAME ": power lost\n");
	register unsigned long x0 __asm__("x0") = PSCI_SYSTEM_RESET;
	__asm__ volatile(FW_RESET_INSN : "+r"(x0) : : "memory");
	for (;;)
		__asm__ volatile("wfi");
}

#endif
