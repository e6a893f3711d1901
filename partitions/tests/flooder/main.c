/* flooder: floods the hypervisor with cheap hypercalls (bh_get_time) forever, to show
 * that a hypercall storm from one partition does not disturb the others. */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long ns;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("flooder: flooding");
	for (;;)
		bh_get_time(&ns);
	return 0;
}
