/* mmioatk: accesses to the emulated PL011 and GIC distributor that the hardware cannot describe
 * (no syndrome: exclusives, a load pair, loads and stores with writeback, a store pair, DC ZVA)
 * and a cache maintenance by address on a device (tests/system/test_boards.py). Each must be a
 * memory_violation event (its partition ignores them) or nothing at all, never a hypervisor
 * fault, and the program must go on to its last line. */
#include <stdint.h>
#include "pl011_print.h"

#define UART UART_DR
#define GICD 0x08000000ul

uint32_t ldxr_at(uint64_t addr);
uint32_t stxr_at(uint64_t addr, uint32_t value);
uint64_t ldaxp_at(uint64_t addr);
void dc_zva_at(uint64_t addr);
void dc_civac_at(uint64_t addr);
uint32_t ldp_at(uint64_t addr);
uint64_t ldr_post_at(uint64_t addr);
uint64_t str_pre_at(uint64_t addr, uint32_t value);
void stp_at(uint64_t addr, uint32_t value);

static void line(const char *what, uint64_t v)
{
	puts_("mmioatk: ");
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
	line("ldxr_uart", ldxr_at(UART + 0x18));
	line("stxr_uart", stxr_at(UART, 'Z'));
	line("ldaxp_gicd", ldaxp_at(GICD));
	dc_zva_at(UART);
	line("dc_zva_uart", 0);
	dc_civac_at(GICD);
	line("dc_civac_gicd", 0);
	line("ldp_gicd", ldp_at(GICD + 0x100));
	line("ldr_post_uart", ldr_post_at(UART + 0x18) - (UART + 0x18));
	line("str_pre_uart", str_pre_at(UART + 0x40, 0) - (UART + 0x40));
	stp_at(GICD + 0x100, 0xffffffffu);
	line("isenabler1_after_stp", rd32(GICD + 0x104));
	puts_("mmioatk: done\n");
	return 0;
}
