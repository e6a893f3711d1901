/* Health monitor: every partition fault becomes a logged event and its configured action. */
#ifndef BULKHEAD_HM_H
#define BULKHEAD_HM_H

#include <stdbool.h>
#include <stdint.h>
#include "config_tables.h"

struct vcpu;

struct hm_event {
	enum bh_hm_event kind;
	uint64_t address;   /* faulting guest address, or the raised code */
	uint64_t pc;
	const char *detail; /* e.g. "write", "read", "exec", "PMCR_EL0" */
};

const char *hm_event_name(enum bh_hm_event e);
const char *hm_action_name(enum bh_hm_action a);

/* Log the event and apply the partition's action. Returns true when the vCPU goes on (action
 * ignore): the caller then skips the faulting instruction. Otherwise the vCPU has been stopped
 * or reset and stops running at its core's next exit from the hypervisor. */
bool hm_raise(struct vcpu *v, const struct hm_event *ev);

#endif
