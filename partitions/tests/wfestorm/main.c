/* wfestorm: executes WFE forever (with an event pending now and then from its own SEV), never a
 * hypercall: WFE does not trap, so only the end of its slot takes the core away. */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("wfestorm: storming");
	for (unsigned long n = 0;; n++) {
		if (!(n & 0xff))
			__asm__ volatile("sev" ::: "memory");
		__asm__ volatile("wfe" ::: "memory");
	}
	return 0;
}
