/* vtimerhog: disables its virtual timer's interrupt (BH_HC_IRQ_CTL), arms the timer to fire at
 * once, and idles for ever. The timer's interrupt, taken by the hypervisor but never
 * delivered, must not stay active at the GIC for the next vCPU on the core. */
#include "bhtest.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_irq_ctl(BH_IRQ_DISABLE, BH_VIRQ_VTIMER);
	unsigned long long soon = bh_counter() + bh_ns_to_ticks(20000);
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(soon), "r"(1ul) : "memory");
	bh_printf("vtimerhog: timer armed, interrupt disabled, idling\n");
	for (;;)
		bh_idle();
}
