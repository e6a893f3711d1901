/* sysreg: reads PMCR_EL0, a register the hypervisor keeps from partitions (trapped to
 * EL2 and treated as a partition error), then the EL1 physical timer, which the hypervisor
 * arms while it waits for a lock (arch_spin_lock): those reads must trap too, or a partition
 * could time other partitions' waits. */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long v, ctl, cval;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("sysreg: reading PMCR_EL0");
	__asm__ volatile("mrs %0, pmcr_el0" : "=r"(v) : : "memory");
	bh_printf("sysreg: PMCR_EL0 read as 0x%lx\n", v);
	bh_test_report("sysreg_continued", 1, "");
	bh_puts("sysreg: reading CNTP_CTL_EL0 and CNTP_CVAL_EL0");
	__asm__ volatile("mrs %0, cntp_ctl_el0" : "=r"(ctl) : : "memory");
	__asm__ volatile("mrs %0, cntp_cval_el0" : "=r"(cval) : : "memory");
	bh_printf("sysreg: CNTP_CTL_EL0 0x%lx CNTP_CVAL_EL0 0x%lx\n", ctl, cval);
	bh_test_report("sysreg_timer_continued", 1, "");
	return 0;
}
