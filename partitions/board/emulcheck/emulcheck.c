/* emulcheck: the emulated machine's answers to the accesses the emulation fast path takes and
 * to the ones it must leave to the full path (tests/system/test_boards.py). A bare-metal
 * program for QEMU's virt machine (board: qemu-virt). Each line is `emulcheck: <what> <hex>`;
 * the bad accesses come with the health-monitor events the test expects (its partition
 * ignores memory violations and SMCs: a bad read gives 0 and the program goes on). */
#include <stdint.h>
#include "pl011_print.h"

#define UART UART_DR
#define GICD 0x08000000ul
#define GICD_TYPER (GICD + 0x0004)
#define GICD_ISENABLER1 (GICD + 0x0104)
#define GICD_ICENABLER1 (GICD + 0x0184)
#define GICR_BEYOND (0x080a0000ul + 0x20000ul) /* a second vCPU's redistributor: there is none */
#define PSCI_VERSION 0x84000000ul

uint32_t read_x19(uint64_t addr);
void write_x21(uint64_t addr, uint32_t value);
uint64_t read64(uint64_t addr);
uint32_t read16(uint64_t addr);
int64_t smc_imm1(uint64_t fn);
int64_t smc_call(uint64_t fn);
int64_t hvc_call(uint64_t fn);

static void line(const char *what, uint64_t v)
{
	puts_("emulcheck: ");
	puts_(what);
	putc_(' ');
	puthex(v);
	putc_('\n');
}

void unexpected(uint64_t esr, uint64_t elr)
{
	line("unexpected exception, esr", esr);
	line("elr", elr);
	for (;;)
		__asm__ volatile("wfi");
}

int main(void)
{
	line("typer", rd32(GICD_TYPER));
	line("typer_x19", read_x19(GICD_TYPER));
	wr32(GICD_ISENABLER1, 1u << 1);          /* SPI 33, the UART's */
	line("isenabler1", rd32(GICD_ISENABLER1));
	line("icenabler1", rd32(GICD_ICENABLER1));
	wr32(GICD_ICENABLER1, 1u << 1);
	line("isenabler1_after_clear", rd32(GICD_ISENABLER1));
	line("psci_version_hvc", (uint64_t)hvc_call(PSCI_VERSION));
	line("psci_version_smc", (uint64_t)smc_call(PSCI_VERSION));
	puts_("emulcheck: x21 ");
	write_x21(UART, 'X');                    /* the UART's data register, from x21 */
	putc_('\n');
	/* Bad accesses: each a memory_violation (or smc) event, ignored; reads give 0. */
	line("uart_read64", read64(UART));       /* the PL011 has no 64-bit registers */
	line("uart_read16_at_2", read16(UART + 2)); /* not a register's start */
	line("gicr_beyond", rd32(GICR_BEYOND));
	wr32(GICR_BEYOND, 1);
	line("smc_imm1", (uint64_t)smc_imm1(PSCI_VERSION));
	puts_("emulcheck: done\n");
	return 0;
}
