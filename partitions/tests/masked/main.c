/* masked: keeps every interrupt masked (DAIF) and spins forever without hypercalls; the
 * hypervisor must still be able to take its core back (its own interrupts go to EL2). */
#include "bhtest.h"

/* DAIFSet immediate: D, A, I and F. */
#define DAIF_ALL 0xf

static volatile unsigned long count;

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("masked: interrupts masked forever");
	__asm__ volatile("msr daifset, %0" : : "i"(DAIF_ALL) : "memory");
	for (;;)
		count++;
	return 0;
}
