/* sysreg: reads PMCR_EL0, a register the hypervisor keeps from partitions (trapped to
 * EL2 and treated as a partition error). */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long v;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("sysreg: reading PMCR_EL0");
	__asm__ volatile("mrs %0, pmcr_el0" : "=r"(v) : : "memory");
	bh_printf("sysreg: PMCR_EL0 read as 0x%lx\n", v);
	bh_test_report("sysreg_continued", 1, "");
	return 0;
}
