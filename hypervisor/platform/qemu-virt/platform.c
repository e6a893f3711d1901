/* QEMU virt board: PL011 output and the core-to-affinity map. */
#include "platform.h"

#define UART_DR 0x00
#define UART_FR 0x18
#define UART_FR_TXFF (1u << 5)

static inline volatile uint32_t *uart_reg(unsigned off)
{
	return (volatile uint32_t *)(PLAT_UART_BASE + off);
}

void plat_uart_putc(char c)
{
	/* The FIFO drains on its own; QEMU's never fills. */
	while (*uart_reg(UART_FR) & UART_FR_TXFF)
		__asm__ volatile("yield");
	*uart_reg(UART_DR) = (uint32_t)(unsigned char)c;
}

uint64_t plat_core_affinity(unsigned core)
{
	/* QEMU virt with GICv3 puts up to 16 cores in cluster 0: Aff0 = core index. */
	return ((uint64_t)(core / 16) << 8) | (core % 16);
}
