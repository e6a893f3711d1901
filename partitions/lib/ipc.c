/* Port helpers: opening a port as configured, and waiting for ports and doorbells without
 * polling. The hypervisor raises BH_VIRQ_PORT or BH_VIRQ_DOORBELL when a port becomes ready
 * or a doorbell rings, and BH_HC_IDLE returns once one is pending. Readiness is checked before every idle, and the interrupt is raised only
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

long bh_port_open(const char *name)
{
	struct bh_port_info info;
	long rc = bh_port_info(name, &info);
	int desc = -1;

	if (rc != BH_OK)
		return rc;
	if (info.kind == BH_SAMPLING_PORT)
		rc = bh_sampling_port_create(name, info.max_message_size, info.direction,
					     info.refresh_ns, &desc);
	else
		rc = bh_queuing_port_create(name, info.max_message_size, info.direction,
					    info.max_messages, &desc);
	return rc >= 0 || rc == BH_NO_ACTION ? desc : rc;
}
