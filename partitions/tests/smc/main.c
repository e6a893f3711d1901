/* smc: issues a PSCI SYSTEM_OFF through SMC. The hypervisor must trap it (HCR_EL2.TSC)
 * and treat it as a partition error instead of powering the machine off. */
#include "bhtest.h"

#define PSCI_SYSTEM_OFF 0x84000008ul

/* Same register convention as a hypercall: SMCCC lets the callee clobber x0..x17. */
static long smc_call(unsigned long fn)
{
	register unsigned long x0 __asm__("x0") = fn;

	__asm__ volatile("smc #0"
			 : "+r"(x0)
			 :
			 : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",
			   "x12", "x13", "x14", "x15", "x16", "x17", "cc", "memory");
	return (long)x0;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("smc: calling PSCI SYSTEM_OFF");
	long rc = smc_call(PSCI_SYSTEM_OFF);

	bh_printf("smc: returned %ld\n", rc);
	bh_test_report("smc_contained", 1, "");
	return 0;
}
