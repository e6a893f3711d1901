/* linesteady: a victim that prints numbered lines at a steady, moderate rate (a 60-byte line
 * every LINE_NS, about 30 KB/s), far below what the wire takes: alone it loses nothing. Beside a
 * focus partition that keeps its own line open (lineholder), every byte it wrote must still
 * reach the console: its lines, counted by the test, and no "... (N bytes dropped)" note. */
#include "bhtest.h"

#define LINES   600u
#define LINE_NS 2000000ull /* 2 ms */

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long next = bh_now_ns();

	(void)vcpu, (void)boot_kind, (void)restarts;
	for (unsigned i = 0; i < LINES; i++) {
		bh_printf("ls: %04u 0123456789abcdefghijklmnopqrstuvwxyz0123456789\n", i);
		next += LINE_NS;
		bh_sleep_until_ns(next);
	}
	/* Long enough for what a hold keeps queued to go out before the test stops QEMU. */
	bh_sleep_until_ns(next + 300000000ull);
	bh_puts("ls: done");
	bh_halt_self();
}
