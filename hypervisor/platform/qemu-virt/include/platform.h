/* QEMU `virt` (virtualization=on, gic-version=3): the one place its addresses live. */
#ifndef BULKHEAD_PLATFORM_H
#define BULKHEAD_PLATFORM_H

#include <stdint.h>

#define PLAT_NAME        "qemu-virt"
#define PLAT_UART_BASE   0x09000000ul /* PL011, owned by the hypervisor */
#define PLAT_UART_INTID  33u          /* its interrupt (SPI 1) */
#define PLAT_GICD_BASE   0x08000000ul
#define PLAT_GICR_BASE   0x080A0000ul
#define PLAT_GICR_STRIDE 0x20000ul    /* RD_base + SGI_base frames */
#define PLAT_GICR_MAX    123u         /* frames in QEMU's redistributor region */

void plat_uart_putc(char c);
/* Receive: interrupt on every received byte; getc returns -1 when nothing is waiting. */
void plat_uart_rx_enable(void);
int plat_uart_getc(void);
/* MPIDR affinity of a core index, as PSCI CPU_ON wants it (never bit 31). */
uint64_t plat_core_affinity(unsigned core);

#endif
