/* uartregs: a firmware image for QEMU's virt machine that reads the PL011's registers as the
 * machine resets them and after the writes a driver makes (control, line control, baud rate,
 * FIFO levels, interrupt mask and clear), and prints what it read, so that QEMU's own PL011
 * (-bios) and a Bulkhead board partition's print the same lines (tests/system/test_emuatk.py).
 * Every value is read before anything is printed: printing goes through the same UART. */
#define PROBE_NAME "uartregs"
#include "fwprobe.h"

#define UART_FR 0x018
#define UART_IBRD 0x024
#define UART_FBRD 0x028
#define UART_LCR_H 0x02c
#define UART_CR 0x030
#define UART_IFLS 0x034
#define UART_IMSC 0x038
#define UART_RIS 0x03c
#define UART_MIS 0x040
#define UART_ICR 0x044
#define UART_DMACR 0x048

#define READS 16
static const char *const names[READS] = {
	"reset fr", "reset cr", "reset ifls", "reset imsc", "reset lcr_h", "reset ibrd",
	"ibrd written", "fbrd written", "lcr_h written", "ifls written", "cr written",
	"imsc written", "dmacr written", "ris after a byte", "mis after a byte", "ris after icr",
};

static uint32_t rd(unsigned off) { return mmio_rd(FW_UART + off); }
static void wr(unsigned off, uint32_t v) { mmio_wr(FW_UART + off, v); }

int main(void)
{
	uint32_t v[READS];
	unsigned n = 0;

	v[n++] = rd(UART_FR) & ~(1u << 3); /* BUSY: whether the last byte is still going */
	v[n++] = rd(UART_CR);
	v[n++] = rd(UART_IFLS);
	v[n++] = rd(UART_IMSC);
	v[n++] = rd(UART_LCR_H);
	v[n++] = rd(UART_IBRD);
	wr(UART_IBRD, 0x1234);
	v[n++] = rd(UART_IBRD);
	wr(UART_FBRD, 0x2a);
	v[n++] = rd(UART_FBRD);
	wr(UART_LCR_H, 0x70);
	v[n++] = rd(UART_LCR_H);
	wr(UART_IFLS, 0x2d);
	v[n++] = rd(UART_IFLS);
	wr(UART_CR, 0x301);
	v[n++] = rd(UART_CR);
	wr(UART_IMSC, 0x20); /* TX */
	v[n++] = rd(UART_IMSC);
	wr(UART_DMACR, 0x7);
	v[n++] = rd(UART_DMACR);
	putc_('\n');
	v[n++] = rd(UART_RIS) & 0x20;
	v[n++] = rd(UART_MIS) & 0x20;
	wr(UART_ICR, 0x20);
	v[n++] = rd(UART_RIS) & 0x20;
	wr(UART_IMSC, 0);
	puts_("uartregs: start\n");
	for (unsigned i = 0; i < n; i++)
		show(names[i], v[i]);
	puts_("uartregs: done\n");
	return 0;
}
