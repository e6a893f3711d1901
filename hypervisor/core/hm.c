/* Health monitor: log every event with partition, kind, address and the action taken, then
 * carry the action out. The table of actions is the partition's, from the description. */
#include "console.h"
#include "hm.h"
#include "partition.h"
#include "trace.h"

static const char *const event_names[BH_HM_EVENT_COUNT] = {
	[BH_HM_MEMORY_VIOLATION] = "memory_violation",
	[BH_HM_TRAPPED_INSTRUCTION] = "trapped_instruction",
	[BH_HM_SMC] = "smc",
	[BH_HM_PARTITION_ERROR] = "partition_error",
	[BH_HM_INTERNAL_ERROR] = "internal_error",
	[BH_HM_BUDGET_OVERRUN] = "budget_overrun",
	[BH_HM_DEADLINE_MISS] = "deadline_miss",
};

static const char *const action_names[] = {
	[BH_HM_IGNORE] = "ignore",
	[BH_HM_HALT_PARTITION] = "halt_partition",
	[BH_HM_COLD_RESTART] = "cold_restart",
	[BH_HM_HALT_SYSTEM] = "halt_system",
};

const char *hm_event_name(enum bh_hm_event e)
{
	return (unsigned)e < BH_HM_EVENT_COUNT ? event_names[e] : "unknown";
}

const char *hm_action_name(enum bh_hm_action a)
{
	return (unsigned)a <= BH_HM_HALT_SYSTEM ? action_names[a] : "unknown";
}

static enum bh_hm_action action_for(const struct partition *p, enum bh_hm_event e)
{
	enum bh_hm_action a = (enum bh_hm_action)p->cfg->hm_actions[e];
	return (unsigned)a <= BH_HM_HALT_SYSTEM ? a : BH_HM_HALT_PARTITION;
}

bool hm_raise(struct vcpu *v, const struct hm_event *ev)
{
	struct partition *p = v->partition;
	enum bh_hm_action a = action_for(p, ev->kind);

	p->hm_events++;
	trace_emit(BH_TRACE_HM_EVENT, v, (uint64_t)ev->kind | (uint64_t)a << 8);
	console_guest_flush(v);
	bh_log("HM: partition %s (id %u) vcpu %u: %s at 0x%lx (%s, pc 0x%lx) -> %s",
	       p->cfg->name, p->cfg->id, v->id, hm_event_name(ev->kind), ev->address,
	       ev->detail, ev->pc, hm_action_name(a));
	switch (a) {
	case BH_HM_IGNORE:
		return true;
	case BH_HM_HALT_PARTITION:
		partition_halt(p);
		break;
	case BH_HM_COLD_RESTART:
		partition_restart(p, true);
		break;
	case BH_HM_HALT_SYSTEM:
		bh_log("system halted by the health monitor");
		arch_system_off();
	}
	return false;
}
