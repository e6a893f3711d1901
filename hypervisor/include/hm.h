/* Health monitor: every partition fault becomes a counted, logged event and its configured
 * action (docs/architecture.md, Health monitor). */
#ifndef BULKHEAD_HM_H
#define BULKHEAD_HM_H

#include <stdbool.h>
#include <stdint.h>
#include "bulkhead/abi.h"
#include "config_tables.h"

struct partition;
struct vcpu;

struct hm_event {
	enum bh_hm_event kind;
	uint64_t address;   /* faulting guest address, or the raised code */
	uint64_t pc;
	const char *detail; /* e.g. "write", "read", "exec", "PMCR_EL0" */
};

const char *hm_event_name(enum bh_hm_event e);
const char *hm_action_name(enum bh_hm_action a);

/* Count and log the event, print it (rate-limited) and apply the partition's action. Returns
 * true when the vCPU goes on (actions ignore and propagate): the caller then skips the
 * faulting instruction. Otherwise the vCPU has been stopped, suspended or reset and stops
 * running at its core's next exit from the hypervisor. */
bool hm_raise(struct vcpu *v, const struct hm_event *ev);
/* (On a shared core, a rate-limit window's summary line that would come with the event's own
 * waits for v's next turn too: one line per trap.) */
/* The same for an event found inside a scheduling decision (an EDF budget used up), whose
 * time is the next vCPU's: if v goes on, its console lines (the event's, a rate-limit window's
 * summary) wait until v has its core again (hm_print_held): formatting and queueing a line
 * costs about 2200 instructions. A partition halted meanwhile never prints them; the counts
 * and the log have the event. */
bool hm_raise_in_decision(struct vcpu *v, const struct hm_event *ev);
/* Print the lines held for v (v->hm_held), in v's own time: the scheduler calls it once it
 * has given v its core. */
void hm_print_held(struct vcpu *v);
/* An event whose action restarts p has its lines (a rate-limit window's summary, the event's)
 * held for p's reload instead (p->hm_reload_lines): the reload prints them, one line a call,
 * in vCPU 0's own time, before its first step. True if it printed one. */
bool hm_print_reload_line(struct partition *p);

/* BH_HC_HM_READ: take up to max of the log's oldest entries; *lost = entries overwritten since
 * the previous read (then reset). */
unsigned hm_log_take(struct bh_hm_log_entry *out, unsigned max, uint64_t *lost);
/* BH_HC_HM_STATUS: p's counts, and the log's state. */
void hm_status(const struct partition *p, struct bh_hm_status *st);
/* BH_HC_HM_TAKE: the event propagated to v, cleared; false if none. */
bool hm_take(struct vcpu *v, struct bh_hm_log_entry *out);
/* v is released (Life cycle): the event propagated to it, if any, goes with it. */
void hm_vcpu_release(struct vcpu *v);

#endif
