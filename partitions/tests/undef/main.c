/* undef: executes a permanently undefined instruction. It is taken at EL1, where the
 * runtime's vector reports it and raises a partition error (0xE0000000 | EC 0). */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("undef: about to execute udf");
	__asm__ volatile("udf #0" ::: "memory");
	bh_puts("undef: udf did not trap");
	return 0;
}
