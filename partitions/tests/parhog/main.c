/* parhog: a CPU hog, like spinner, that lets the emulator run the other cores beside it.
 *
 * It prints one line, then counts forever without a hypercall, so only preemption by the
 * hypervisor takes the core away from it. Every YIELD_EVERY counts it executes YIELD: a hint
 * that does nothing on hardware, where cores run side by side, but under QEMU's round-robin
 * -icount (one host thread for every emulated core) it hands the thread to the next core.
 * Without it, a core that never leaves its code runs alone until the next timer event of any
 * core, and whatever another core should do meanwhile (a best-effort vCPU in its spare time)
 * does not happen at all (docs and ../shared/qemu-virt-notes.md). */
#include "bhtest.h"

#define YIELD_EVERY 1024u

/* volatile: the loop must really run, not be optimised into nothing. */
static volatile unsigned long count;

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("parhog: spinning");
	for (;;) {
		count++;
		if (count % YIELD_EVERY == 0)
			__asm__ volatile("yield");
	}
	return 0;
}
