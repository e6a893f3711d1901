/* halter: a system partition that stops the whole system. */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("halting the system");
	long rc = bh_halt_system();

	bh_printf("halt_system returned %ld\n", rc);
	return 0;
}
