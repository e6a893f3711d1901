/* Waiting for ports and doorbells without polling: the hypervisor raises BH_VIRQ_PORT or
 * BH_VIRQ_DOORBELL when a port becomes ready or a doorbell rings, and BH_HC_IDLE returns once
 * one is pending. Readiness is checked before every idle, and the interrupt is raised only
 * after the state it announces, so no wake-up is lost between the check and the idle. */
#include "bulkhead/bulkhead.h"

long bh_port_wait(unsigned long long mask, unsigned long long *ports,
		  unsigned long long *doorbells)
{
	unsigned long long ready, rung;

	for (;;) {
		long rc = bh_port_ready(&ready, &rung);
		if (rc < 0)
			return rc;
		if ((ready & mask) || rung)
			break;
		bh_idle();
		/* Take the interrupt (its default handler does nothing) so the next idle blocks. */
		bh_irq_poll();
	}
	if (ports)
		*ports = ready;
	if (doorbells)
		*doorbells = rung;
	return BH_OK;
}
