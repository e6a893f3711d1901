/* uartstorm: a bare-metal program for QEMU's virt machine with 4 CPUs that keeps its emulated
 * UART's lock (u->lock, hypervisor/arch/aarch64/vpl011.c) busy from several cores, while its
 * CPU 0, on a core it shares with latvictim (partitions/tests/latvictim), aims a UART register
 * read (UARTFR, which takes the same lock) just before each instant the victim is due (the
 * hypervisor's lead before it): tests/system/test_uartwait.py.
 *
 * The UART's transmit interrupt is unmasked (UARTIMSC.TXIM), so that every data write takes the
 * locked path (vuart_access: write_reg), not the unlocked one (vuart_data_write), and under the
 * UART's lock the hypervisor queues the byte (console_vuart_write: the console ring's lock) and
 * drains the console (drain: up to CONSOLE_DRAIN_CHUNK bytes to the physical UART, two accesses
 * a byte, when its wire lock is free and its writer's core has room: a dedicated core has).
 * The partition has the console's input focus (the only one with an emulated UART): its bytes
 * are interactive records of one byte, and while the three writers race for the wire a drain
 * finds many of them queued.
 *
 * Windows, timing, the short-turn timer and the per-window lines are a lock storm's
 * (partitions/board/include/storm.h): CPU 0 spins, aims (one UARTFR read timed per instant) or
 * hammers (reads back to back); CPUs 1-3 sleep, storm (UARTDR writes back to back) or burst
 * (writes only around the victim's instants). At the end, one line per window:
 *   uartstorm: window W <cpu0 mode> <others mode> aimed N longest T hammer T writes P0..P3 */
#define PROBE_NAME "uartstorm"
#include "smp_guest.h"

#define UART_DR 0x00
#define UART_FR 0x18
#define UART_IMSC 0x38
#define IMSC_TX 0x20

static void storm_prepare(void)
{
	/* The transmit interrupt unmasked: every data write takes the UART's lock. Its SPI stays
	 * disabled in the distributor, so it is never taken; raised, it still kicks CPU 0's core
	 * while CPU 0 runs there (virq.c notify), never within the victim's lead. */
	mmio_wr(FW_UART + UART_IMSC, IMSC_TX);
}

/* A line of 64 bytes per CPU: letters, a newline every 64th write. */
static void storm_step(unsigned cpu, uint64_t k)
{
	mmio_wr(FW_UART + UART_DR, (k & 63) == 63 ? '\n' : 'a' + (char)(cpu * 7 + k % 26) % 26);
}

static void aimed_step(uint64_t k)
{
	(void)k;
	(void)mmio_rd(FW_UART + UART_FR);
}

static void aimed_after(uint64_t k)
{
	(void)k;
}

static void storm_before_report(void)
{
	puts_("\n"); /* ends the writers' line in progress */
}

#include "storm.h"
