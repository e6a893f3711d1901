/* QEMU virt board: PL011 output and the core-to-affinity map. */
#include "platform.h"

#define UART_DR 0x00
#define UART_FR 0x18
#define UART_IMSC 0x38
#define UART_ICR 0x44
#define UART_FR_TXFF (1u << 5)
#define UART_FR_RXFE (1u << 4)
#define UART_INT_RX_RT ((1u << 4) | (1u << 6))

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

void plat_uart_rx_enable(void)
{
	*uart_reg(UART_ICR) = UART_INT_RX_RT;
	*uart_reg(UART_IMSC) = UART_INT_RX_RT;
}

int plat_uart_getc(void)
{
	if (*uart_reg(UART_FR) & UART_FR_RXFE)
		return -1;
	return (int)(*uart_reg(UART_DR) & 0xff);
}

uint64_t plat_core_affinity(unsigned core)
{
	/* QEMU virt with GICv3 puts up to 16 cores in cluster 0: Aff0 = core index. */
	return ((uint64_t)(core / 16) << 8) | (core % 16);
}
