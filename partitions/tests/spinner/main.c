/* spinner: a CPU hog that never yields: prints one line, then counts forever without a
 * hypercall, so only preemption by the hypervisor takes the core away from it. */
#include "bhtest.h"

/* volatile: the loop must really run, not be optimised into nothing. */
static volatile unsigned long count;

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("spinner: spinning");
	for (;;)
		count++;
	return 0;
}
