/* Health monitor: every partition fault becomes an event, which is
 *   - counted, per partition and per event kind (64-bit counters, never lost or reset);
 *   - recorded in a bounded log (time, partition, vCPU, event, address, action) that a system
 *     partition reads and clears (BH_HC_HM_READ); a full log overwrites its oldest entry and
 *     counts it lost;
 *   - printed, at most HM_PRINT_BURST lines per partition per HM_PRINT_WINDOW_MS; what a
 *     storm leaves unprinted is summed up in one line when the partition's next window opens;
 *     an event found inside a scheduling decision (an EDF budget used up) has its lines
 *     printed when its vCPU next has its core, in its own time;
 *   - handled by the partition's configured action.
 * So a storm costs its source a bounded path per event and at most a few console lines, and
 * nothing of it is lost: the counts and the log tell all. */
#include "console.h"
#include "format.h"
#include "guest_mem.h"
#include "hm.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "trace.h"

#define HM_LOG_SIZE 64u          /* entries; a power of two */
#define HM_PRINT_BURST 5u        /* lines per partition per window */
#define HM_PRINT_WINDOW_MS 1000u

_Static_assert(BH_HM_EVENT_COUNT <= BH_HM_EVENT_SLOTS, "bh_hm_status.counts holds every event");
_Static_assert(BH_HM_PROPAGATE == 6, "the action numbers of bulkhead/abi.h");

struct hm_partition {
	uint64_t counts[BH_HM_EVENT_COUNT]; /* atomic adds: events come from any core */
	uint64_t not_printed;               /* since boot */
	/* The print window, under hm_lock. */
	uint64_t window_start;              /* counter ticks; 0: none opened yet */
	uint32_t printed;                   /* lines in the window */
	uint32_t held[BH_HM_EVENT_COUNT];   /* events in the window not printed, per kind */
};

/* An event propagated to a vCPU and not taken yet (BH_HC_HM_TAKE), under hm_lock. */
struct hm_pending {
	bool valid;
	struct bh_hm_log_entry e;
};

static struct spinlock hm_lock; /* the log, the print windows, the pending events */
static struct hm_partition hm_parts[BH_MAX_PARTITIONS];
static struct hm_pending hm_pending[BH_MAX_PARTITIONS][BH_MAX_CORES];

/* The console lines of events raised inside a scheduling decision, held for their vCPU's own
 * time (hm_print_held), under hm_lock. */
struct hm_held_lines {
	bool event;                          /* ev, action: the event's own line */
	bool escalated;                      /* its action a propagate not handled */
	struct hm_event ev;
	enum bh_hm_action action;
	uint32_t vcpu;                       /* the vCPU the event came from */
	char detail[48];                     /* ev.detail's text: a trap's is on its stack */
	uint32_t summary[BH_HM_EVENT_COUNT]; /* unprinted events of a window that closed */
};
static struct hm_held_lines hm_held[BH_MAX_PARTITIONS][BH_MAX_CORES];
/* The lines of events whose action restarts the partition, held for its reload (vCPU 0's own
 * time, a line per look-ahead: hm_print_reload_line), under hm_lock. */
static struct hm_held_lines hm_reload_held[BH_MAX_PARTITIONS];
static struct bh_hm_log_entry hm_log[HM_LOG_SIZE];
static uint32_t log_head, log_count; /* oldest entry, entries held */
static uint64_t log_lost;            /* overwritten since the last read */

static const char *const event_names[BH_HM_EVENT_COUNT] = {
	[BH_HM_MEMORY_VIOLATION] = "memory_violation",
	[BH_HM_TRAPPED_INSTRUCTION] = "trapped_instruction",
	[BH_HM_SMC] = "smc",
	[BH_HM_PARTITION_ERROR] = "partition_error",
	[BH_HM_INTERNAL_ERROR] = "internal_error",
	[BH_HM_BUDGET_OVERRUN] = "budget_overrun",
	[BH_HM_DEADLINE_MISS] = "deadline_miss",
};

static const char *const action_names[BH_HM_ACTION_COUNT] = {
	[BH_HM_IGNORE] = "ignore",
	[BH_HM_HALT_PARTITION] = "halt_partition",
	[BH_HM_COLD_RESTART] = "cold_restart",
	[BH_HM_HALT_SYSTEM] = "halt_system",
	[BH_HM_SUSPEND] = "suspend",
	[BH_HM_WARM_RESTART] = "warm_restart",
	[BH_HM_PROPAGATE] = "propagate",
};

const char *hm_event_name(enum bh_hm_event e)
{
	return (unsigned)e < BH_HM_EVENT_COUNT ? event_names[e] : "unknown";
}

const char *hm_action_name(enum bh_hm_action a)
{
	return (unsigned)a < BH_HM_ACTION_COUNT ? action_names[a] : "unknown";
}

/* Fail closed: an action the hypervisor does not know halts the partition. */
static enum bh_hm_action action_for(const struct partition *p, enum bh_hm_event e)
{
	enum bh_hm_action a = (enum bh_hm_action)p->cfg->hm_actions[e];
	return (unsigned)a < BH_HM_ACTION_COUNT ? a : BH_HM_HALT_PARTITION;
}

/* --- The log ----------------------------------------------------------------------------- */

static void log_append(const struct bh_hm_log_entry *e)
{
	if (log_count == HM_LOG_SIZE) { /* keep the newest: drop the oldest, count it */
		log_head = (log_head + 1) % HM_LOG_SIZE;
		log_count--;
		log_lost++;
	}
	hm_log[(log_head + log_count++) % HM_LOG_SIZE] = *e;
}

/* Take up to max of the oldest entries; *lost = entries overwritten since the last read. */
unsigned hm_log_take(struct bh_hm_log_entry *out, unsigned max, uint64_t *lost)
{
	unsigned n = 0;

	arch_spin_lock(&hm_lock);
	for (; n < max && log_count; n++, log_count--) {
		out[n] = hm_log[log_head];
		log_head = (log_head + 1) % HM_LOG_SIZE;
	}
	*lost = log_lost;
	log_lost = 0;
	arch_spin_unlock(&hm_lock);
	return n;
}

void hm_status(const struct partition *p, struct bh_hm_status *st)
{
	const struct hm_partition *h = &hm_parts[p->cfg->id];

	st->events = __atomic_load_n(&p->hm_events, __ATOMIC_RELAXED);
	for (unsigned k = 0; k < BH_HM_EVENT_COUNT; k++)
		st->counts[k] = __atomic_load_n(&h->counts[k], __ATOMIC_RELAXED);
	st->not_printed = __atomic_load_n(&h->not_printed, __ATOMIC_RELAXED);
	st->console_lost = console_lost(p->cfg->id);
	arch_spin_lock(&hm_lock);
	st->log_lost = log_lost;
	st->log_pending = log_count;
	arch_spin_unlock(&hm_lock);
}

/* --- Rate-limited printing ----------------------------------------------------------------- */

/* Under hm_lock: may this event be printed? Opens a new window when the last one is over, and
 * then returns in held_out how many of each kind went unprinted in it. */
static bool print_allowed(struct hm_partition *h, enum bh_hm_event kind, uint64_t now,
			  uint32_t *held_out)
{
	uint64_t window = ns_to_ticks((uint64_t)HM_PRINT_WINDOW_MS * 1000000u);

	if (!h->window_start || now - h->window_start >= window) {
		for (unsigned k = 0; k < BH_HM_EVENT_COUNT; k++) {
			held_out[k] = h->held[k];
			h->held[k] = 0;
		}
		h->window_start = now;
		h->printed = 0;
	}
	if (kind == BH_HM_INTERNAL_ERROR || h->printed < HM_PRINT_BURST) {
		h->printed++;
		return true;
	}
	h->held[kind]++;
	__atomic_fetch_add(&h->not_printed, 1u, __ATOMIC_RELAXED);
	return false;
}

static uint64_t held_total(const uint32_t *held)
{
	uint64_t total = 0;

	for (unsigned k = 0; k < BH_HM_EVENT_COUNT; k++)
		total += held[k];
	return total;
}

/* One short line (per kind: BH_HC_HM_STATUS), as cheap to format as an event's. */
static void print_summary(const struct partition *p, const uint32_t *held)
{
	uint64_t total = held_total(held);

	if (total)
		bh_log("HM: partition %s (id %u): %lu more events not printed (all are counted and "
		       "logged)", p->cfg->name, p->cfg->id, (unsigned long)total);
}

/* --- Actions ------------------------------------------------------------------------------- */

/* Hand the event to the vCPU's own handler (BH_VIRQ_HM). A vCPU still holding an earlier
 * one has not handled it: returns false and the event halts the partition instead. */
static bool propagate(struct vcpu *v, const struct bh_hm_log_entry *e)
{
	struct hm_pending *slot = &hm_pending[v->partition->cfg->id][v->id];
	bool taken;

	arch_spin_lock(&hm_lock);
	taken = !slot->valid;
	if (taken) {
		slot->valid = true;
		slot->e = *e;
	}
	arch_spin_unlock(&hm_lock);
	if (taken)
		virq_inject(v, BH_VIRQ_HM, false);
	return taken;
}

bool hm_take(struct vcpu *v, struct bh_hm_log_entry *out)
{
	struct hm_pending *slot = &hm_pending[v->partition->cfg->id][v->id];
	bool had;

	arch_spin_lock(&hm_lock);
	had = slot->valid;
	if (had)
		*out = slot->e;
	slot->valid = false;
	arch_spin_unlock(&hm_lock);
	return had;
}

void hm_vcpu_release(struct vcpu *v)
{
	arch_spin_lock(&hm_lock);
	hm_pending[v->partition->cfg->id][v->id].valid = false;
	arch_spin_unlock(&hm_lock);
}

/* A restarted partition starts with nothing propagated. */
static void forget_pending(const struct partition *p)
{
	arch_spin_lock(&hm_lock);
	for (unsigned j = 0; j < p->cfg->vcpu_count && j < BH_MAX_CORES; j++)
		hm_pending[p->cfg->id][j].valid = false;
	arch_spin_unlock(&hm_lock);
}

/* Carry the action out; true when the vCPU goes on past the faulting instruction. */
static bool apply(struct partition *p, enum bh_hm_action a)
{
	switch (a) {
	case BH_HM_IGNORE:
	case BH_HM_PROPAGATE:
		return true;
	case BH_HM_HALT_PARTITION:
		partition_halt(p);
		break;
	case BH_HM_COLD_RESTART:
	case BH_HM_WARM_RESTART:
		forget_pending(p);
		partition_restart(p, a == BH_HM_COLD_RESTART, BH_RESTART_HM);
		break;
	case BH_HM_SUSPEND:
		partition_suspend(p);
		break;
	case BH_HM_HALT_SYSTEM:
	case BH_HM_ACTION_COUNT:
		console_emergency("[bulkhead] system halted by the health monitor\n");
		arch_system_off();
	}
	return false;
}

static void print_line(const struct partition *p, uint32_t vcpu, const struct hm_event *ev,
		       enum bh_hm_action a, bool escalated)
{
	bh_log("HM: partition %s (id %u) vcpu %u: %s at 0x%lx (%s, pc 0x%lx) -> %s%s",
	       p->cfg->name, p->cfg->id, vcpu, hm_event_name(ev->kind), ev->address, ev->detail,
	       ev->pc, escalated ? "propagate not handled: " : "", hm_action_name(a));
}

static void print_event(struct vcpu *v, uint32_t vcpu, const struct hm_event *ev,
			enum bh_hm_action a, bool escalated)
{
	/* What a vCPU that stops wrote before the fault comes first. One that goes on ends its
	 * line itself, after this one: flushing it too (a copy of up to 160 bytes, a loss note)
	 * made this the longest path of a neighbour (a trap, its line and the flush: about 5800
	 * instructions; docs/performance.md). */
	if ((a != BH_HM_IGNORE && a != BH_HM_PROPAGATE) || escalated)
		console_guest_flush(v);
	print_line(v->partition, vcpu, ev, a, escalated);
}

/* Under hm_lock: keep the lines an event would print for v's own time. A second event line
 * before v ran again is summed up instead, like one over the rate limit. */
static bool keep_lines(struct hm_held_lines *l, struct hm_partition *h, const struct vcpu *v,
		       const struct hm_event *ev, enum bh_hm_action a, bool print,
		       const uint32_t *summary, bool escalated)
{
	bool any = false;

	for (unsigned k = 0; k < BH_HM_EVENT_COUNT; k++) {
		l->summary[k] += summary[k];
		any = any || l->summary[k];
	}
	if (print && l->event) {
		h->held[ev->kind]++;
		__atomic_fetch_add(&h->not_printed, 1u, __ATOMIC_RELAXED);
	} else if (print) {
		l->event = true;
		l->ev = *ev;
		l->action = a;
		l->escalated = escalated;
		l->vcpu = v->id;
		unsigned n = 0;
		for (; ev->detail && ev->detail[n] && n + 1 < sizeof(l->detail); n++)
			l->detail[n] = ev->detail[n];
		l->detail[n] = '\0';
	}
	return any || l->event;
}

static void hold_lines(struct vcpu *v, const struct hm_event *ev, enum bh_hm_action a,
		       bool print, const uint32_t *summary)
{
	unsigned id = v->partition->cfg->id;

	/* mostly nothing: a storm's events are only counted */
	v->hm_held = keep_lines(&hm_held[id][v->id], &hm_parts[id], v, ev, a, print, summary, false);
}

/* An event that restarts the partition: no vCPU of it goes on to print its lines, and printed
 * in the trap (or in the scheduling decision that found an EDF overrun) they made that path
 * the longest a neighbour could be in, over and over (tests/system/test_stopline.py). They
 * wait for the reload, which runs in vCPU 0's own time and looks ahead before each step. */
static void hold_for_reload(struct partition *p, const struct vcpu *v, const struct hm_event *ev,
			    enum bh_hm_action a, bool print, const uint32_t *summary, bool escalated)
{
	unsigned id = p->cfg->id;
	bool held = keep_lines(&hm_reload_held[id], &hm_parts[id], v, ev, a, print, summary,
			       escalated);

	__atomic_store_n(&p->hm_reload_lines, held, __ATOMIC_RELAXED);
}

bool hm_print_reload_line(struct partition *p)
{
	struct hm_held_lines *l = &hm_reload_held[p->cfg->id];
	uint32_t summary[BH_HM_EVENT_COUNT] = { 0 };
	struct hm_held_lines one = { 0 };
	bool summed = false;

	if (!__atomic_load_n(&p->hm_reload_lines, __ATOMIC_RELAXED))
		return false;
	arch_spin_lock(&hm_lock);
	if (held_total(l->summary)) { /* the summary first: it is of earlier events */
		for (unsigned k = 0; k < BH_HM_EVENT_COUNT; k++) {
			summary[k] = l->summary[k];
			l->summary[k] = 0;
		}
		summed = true;
	} else if (l->event) {
		one = *l;
		l->event = false;
	}
	__atomic_store_n(&p->hm_reload_lines, l->event, __ATOMIC_RELAXED);
	arch_spin_unlock(&hm_lock);
	/* No flush of a vCPU's line: this may be another core's spare time (a stopped partition's
	 * lines, partition_print_stopped_line), and every stopped vCPU's release flushed its own. */
	if (summed)
		print_summary(p, summary);
	else if (one.event) {
		one.ev.detail = one.detail;
		print_line(p, one.vcpu, &one.ev, one.action, one.escalated);
	}
	return summed || one.event;
}

/* One line a turn, the summary first (it is of earlier events): both at one switch-in were
 * about 4400 instructions of lines, more than the longest path a neighbour may be in. */
void hm_print_held(struct vcpu *v)
{
	struct hm_held_lines *held = &hm_held[v->partition->cfg->id][v->id];
	uint32_t summary[BH_HM_EVENT_COUNT] = { 0 };
	struct hm_held_lines one = { 0 };
	bool summed = false;

	arch_spin_lock(&hm_lock);
	if (held_total(held->summary)) {
		for (unsigned k = 0; k < BH_HM_EVENT_COUNT; k++) {
			summary[k] = held->summary[k];
			held->summary[k] = 0;
		}
		summed = true;
	} else if (held->event) {
		one = *held;
		held->event = false;
	}
	v->hm_held = held->event;
	arch_spin_unlock(&hm_lock);
	if (summed)
		print_summary(v->partition, summary);
	else if (one.event) {
		one.ev.detail = one.detail;
		print_event(v, one.vcpu, &one.ev, one.action, false);
	}
}

/* in_decision: the caller is a scheduling decision, whose time is the next vCPU's. */
static bool raise(struct vcpu *v, const struct hm_event *ev, bool in_decision)
{
	struct partition *p = v->partition;
	struct hm_partition *h = &hm_parts[p->cfg->id];
	enum bh_hm_action a = action_for(p, ev->kind);
	uint64_t now = arch_counter_read();
	uint32_t held[BH_HM_EVENT_COUNT] = { 0 };
	bool escalated = false;

	__atomic_fetch_add(&p->hm_events, 1u, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->counts[ev->kind], 1u, __ATOMIC_RELAXED);
	trace_emit(BH_TRACE_HM_EVENT, v, (uint64_t)ev->kind | (uint64_t)a << 8);
	struct bh_hm_log_entry e = {
		.time_ns = ticks_to_ns(now), .address = ev->address, .pc = ev->pc,
		.partition = p->cfg->id, .vcpu = v->id, .event = ev->kind, .action = a,
	};
	if (a == BH_HM_PROPAGATE && !propagate(v, &e)) {
		a = BH_HM_HALT_PARTITION;
		e.action = a;
		escalated = true;
	}
	arch_spin_lock(&hm_lock);
	log_append(&e);
	bool print = print_allowed(h, ev->kind, now, held) || a == BH_HM_HALT_SYSTEM || escalated;
	/* Only a vCPU that goes on runs again to print; any other action is printed now. */
	bool goes_on = (a == BH_HM_IGNORE || a == BH_HM_PROPAGATE) && !escalated;
	bool hold = in_decision && goes_on;
	bool restarts = a == BH_HM_COLD_RESTART || a == BH_HM_WARM_RESTART;
	/* A halt or a suspend on a shared core: no later time of the partition's either, and the
	 * trap's (or the decision's) end may be a neighbour's due instant: its lines wait for spare
	 * time (partition_print_stopped_line; the reload, if one comes first). */
	bool stops = !goes_on && !restarts && a != BH_HM_HALT_SYSTEM && sched_core_shared(v->core) &&
		     (in_decision || !partition_line_has_room(2));
	/* One line per trap: on a shared core a window's summary waits for the vCPU's next turn,
	 * so a trap with its line stays the longest path a neighbour can be in. */
	bool hold_summary = !hold && print && goes_on && sched_core_shared(v->core) && held_total(held);
	if (restarts || stops)
		hold_for_reload(p, v, ev, a, print, held, escalated);
	else if (hold || hold_summary)
		hold_lines(v, ev, a, print && hold, held);
	arch_spin_unlock(&hm_lock);
	if (stops && __atomic_load_n(&p->hm_reload_lines, __ATOMIC_RELAXED))
		partition_note_stopped_line();
	if (!hold && !restarts && !stops) {
		if (!hold_summary)
			print_summary(p, held);
		if (print)
			print_event(v, v->id, ev, a, escalated);
	}
	return apply(p, a);
}

bool hm_raise(struct vcpu *v, const struct hm_event *ev)
{
	return raise(v, ev, false);
}

bool hm_raise_in_decision(struct vcpu *v, const struct hm_event *ev)
{
	return raise(v, ev, true);
}
