/* lineholder: a focus partition (a board guest: its PL011 takes input, so it has focus at boot)
 * that never ends its line: a dot every DOT_TICKS, no newline, forever. Each dot continues its
 * open line or, once someone else's line has broken it after its hold, opens a new one, which
 * holds everyone else's lines again (console.c line_held). */
#define PROBE_NAME "lh"
#include "fwprobe.h"

#define DOT_TICKS 625000ull /* 10 ms at QEMU virt's 62.5 MHz */

static uint64_t counter(void)
{
	uint64_t t;
	__asm__ volatile("isb\n mrs %0, cntvct_el0" : "=r"(t));
	return t;
}

int main(void)
{
	puts_("lh: holding");
	for (uint64_t next = counter();; ) {
		next += DOT_TICKS;
		while (counter() < next)
			;
		putc_('.');
	}
	return 0;
}
