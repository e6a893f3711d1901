/* Hypercall dispatch: a table of thin handlers, one per call in bulkhead/abi.h. Each handler
 * checks its arguments and returns the guest's new x0; extra results go into x1..
 * A handler never switches vCPUs itself: it changes states and leaves the switch to the exit
 * path (EXIT_RESCHED), after the guest's registers are saved whole. */
#include "bulkhead/abi.h"
#include "console.h"
#include "guest_mem.h"
#include "hm.h"
#include "hypercall.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "ports.h"
#include "sched.h"
#include "trace.h"

typedef int64_t (*hypercall_fn)(struct vcpu *v, struct arch_regs *r);

/* Shortest period of a periodic BH_HC_SET_TIMER: bounds the interrupt rate a guest can ask for. */
#define TIMER_MIN_INTERVAL_NS 10000u
#define TRACE_READ_MAX 64u
/* A read's buffer is translated whole before anything is taken: one page at most. */
_Static_assert(TRACE_READ_MAX * sizeof(struct bh_trace_event) <= 4096, "trace read within a page");
_Static_assert(BH_HM_LOG_READ_MAX * sizeof(struct bh_hm_log_entry) <= 4096, "HM read within a page");

static uint64_t arg(const struct arch_regs *r, unsigned i) { return arch_regs_arg(r, i); }
static bool is_system(const struct vcpu *v) { return v->partition->cfg->flags & BH_PART_SYSTEM; }

static int64_t hc_console_write(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arg(r, 1), len = arg(r, 2);
	char chunk[256] __attribute__((aligned(8))); /* the console searches it 8 bytes a step */

	/* Check all of it first, so a bad buffer prints nothing. */
	if (len > BH_CONSOLE_MAX_WRITE || !guest_readable(v, va, len))
		return BH_INVALID_PARAM;
	for (uint64_t done = 0; done < len;) {
		uint64_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
		if (!guest_copy_from(v, chunk, va + done, n))
			return BH_INVALID_PARAM;
		console_guest_write(v, chunk, n);
		done += n;
	}
	return (int64_t)len;
}

static int64_t hc_console_read(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arg(r, 1), max = arg(r, 2);
	char buf[CONSOLE_INPUT_MAX];

	if (max > sizeof(buf))
		max = sizeof(buf);
	/* Check first: bytes read are gone from the ring. Nothing to copy, nothing to check:
	 * max 0 answers 0 whatever the pointer, as CONSOLE_WRITE of length 0 does. */
	if (!guest_writable(v, va, max))
		return BH_INVALID_PARAM;
	unsigned n = console_read(v->partition, buf, (unsigned)max);
	if (n && !guest_copy_to(v, va, buf, n))
		return BH_INVALID_PARAM;
	return n;
}

static int64_t hc_get_ids(struct vcpu *v, struct arch_regs *r)
{
	uint64_t ids = v->trace_source; /* one load: the benchmark of a hypercall's round trip */

	arch_regs_set(r, 1, trace_source_partition(ids));
	arch_regs_set(r, 2, trace_source_vcpu(ids));
	arch_regs_set(r, 3, trace_source_core(ids)); /* a best-effort vCPU's changes as it moves */
	return BH_OK;
}

static int64_t hc_get_time(struct vcpu *v, struct arch_regs *r)
{
	switch (arg(r, 1)) {
	case BH_CLOCK_HW:
		arch_regs_set(r, 1, ticks_to_ns(arch_counter_read()));
		return BH_OK;
	case BH_CLOCK_EXEC:
		arch_regs_set(r, 1, ticks_to_ns(sched_exec_ticks(v)));
		return BH_OK;
	}
	return BH_INVALID_PARAM;
}

static int64_t hc_halt_self(struct vcpu *v, struct arch_regs *r)
{
	(void)r;
	console_guest_flush(v);
	partition_halt(v->partition);
	return BH_OK;
}

static int64_t hc_idle(struct vcpu *v, struct arch_regs *r)
{
	(void)r;
	sched_vcpu_idle(v);
	return BH_OK;
}

static int64_t hc_reset_self(struct vcpu *v, struct arch_regs *r)
{
	uint64_t mode = arg(r, 1);

	if (mode != BH_RESET_COLD && mode != BH_RESET_WARM)
		return BH_INVALID_PARAM;
	console_guest_flush(v);
	/* NO_ACTION: halted meanwhile by another core, which stops this vCPU on its way out. */
	return partition_restart(v->partition, mode == BH_RESET_COLD, BH_RESTART_SELF) ? BH_OK
										      : BH_NO_ACTION;
}

static int64_t raise_hm_event(struct vcpu *v, struct arch_regs *r, enum bh_hm_event kind,
			      const char *detail)
{
	struct hm_event ev = { .kind = kind, .address = arg(r, 1), .pc = arch_regs_pc(r),
			       .detail = detail };
	hm_raise(v, &ev);
	return BH_OK;
}

static int64_t hc_raise_event(struct vcpu *v, struct arch_regs *r)
{
	return raise_hm_event(v, r, BH_HM_PARTITION_ERROR, "raised by the partition");
}

static int64_t hc_deadline_miss(struct vcpu *v, struct arch_regs *r)
{
	return raise_hm_event(v, r, BH_HM_DEADLINE_MISS, "reported by the partition");
}

static int64_t hc_halt_system(struct vcpu *v, struct arch_regs *r)
{
	(void)r;
	if (!is_system(v))
		return BH_PERM_ERROR;
	console_guest_flush(v);
	bh_log("system halted by partition %s", v->partition->cfg->name);
	console_flush_before_off();
	arch_system_off();
}

static int64_t hc_set_timer(struct vcpu *v, struct arch_regs *r)
{
	uint64_t clock = arg(r, 1), at = arg(r, 2), interval = arg(r, 3);

	if ((clock != BH_CLOCK_HW && clock != BH_CLOCK_EXEC) ||
	    (interval && interval < TIMER_MIN_INTERVAL_NS))
		return BH_INVALID_PARAM;
	v->timer_clock = (uint32_t)clock;
	v->timer_interval = ns_to_ticks(interval);
	v->timer_deadline = at ? ns_to_ticks(at) : TIME_NEVER;
	exit_work_set(EXIT_RESCHED); /* the core's timer may have to fire sooner */
	return BH_OK;
}

static int64_t hc_irq_ctl(struct vcpu *v, struct arch_regs *r)
{
	uint64_t op = arg(r, 1), virq = arg(r, 2);

	if ((op != BH_IRQ_ENABLE && op != BH_IRQ_DISABLE) || virq >= BH_VIRQ_MAX)
		return BH_INVALID_PARAM;
	return virq_set_enabled(v, (unsigned)virq, op == BH_IRQ_ENABLE);
}

static int64_t hc_vcpu_ctl(struct vcpu *v, struct arch_regs *r)
{
	return vcpu_control(v, arg(r, 1), arg(r, 2), arg(r, 3)); /* op whole: 2^48 is no START */
}

static int64_t hc_vcpu_status(struct vcpu *v, struct arch_regs *r)
{
	uint64_t index = arg(r, 1);

	if (index >= v->partition->cfg->vcpu_count)
		return BH_INVALID_PARAM;
	struct vcpu *t = &v->partition->vcpus[index];
	arch_regs_set(r, 1, vcpu_public_state(t));
	arch_regs_set(r, 2, ticks_to_ns(sched_exec_ticks(t)));
	arch_regs_set(r, 3, t->kicks);
	return BH_OK;
}

static int64_t hc_partition_ctl(struct vcpu *v, struct arch_regs *r)
{
	uint64_t op = arg(r, 1), mode = arg(r, 3);
	struct partition *t = partition_by_id(arg(r, 2));

	if (!is_system(v))
		return BH_PERM_ERROR;
	if (!t || (op == BH_PARTITION_RESTART && mode != BH_RESET_COLD && mode != BH_RESET_WARM))
		return BH_INVALID_PARAM;
	switch (op) {
	case BH_PARTITION_SUSPEND:
		return partition_suspend(t) ? BH_OK : BH_NO_ACTION;
	case BH_PARTITION_RESUME:
		return partition_resume(t) ? BH_OK : BH_NO_ACTION;
	case BH_PARTITION_HALT:
		return partition_halt(t) ? BH_OK : BH_NO_ACTION;
	case BH_PARTITION_RESTART:
		partition_restart(t, mode == BH_RESET_COLD, BH_RESTART_SYSTEM_PARTITION);
		return BH_OK;
	}
	return BH_INVALID_PARAM;
}

static int64_t hc_partition_status(struct vcpu *v, struct arch_regs *r)
{
	struct partition *t = partition_by_id(arg(r, 1));
	struct bh_partition_status st = { 0 };

	/* A normal partition sees only itself; it cannot even probe which ids exist. */
	if (arg(r, 1) != v->partition->cfg->id && !is_system(v))
		return BH_PERM_ERROR;
	if (!t)
		return BH_INVALID_PARAM;
	st.state = partition_public_state(t);
	st.restarts = t->restarts;
	st.vcpu_count = t->cfg->vcpu_count;
	st.current_slot = sched_current_slot_of(t->cfg->id);
	st.hm_events = t->hm_events;
	for (unsigned j = 0; j < t->cfg->vcpu_count; j++)
		st.exec_ns += ticks_to_ns(sched_exec_ticks(&t->vcpus[j]));
	return guest_copy_to(v, arg(r, 2), &st, sizeof(st)) ? BH_OK : BH_INVALID_PARAM;
}

static int64_t hc_plan_switch(struct vcpu *v, struct arch_regs *r)
{
	uint64_t plan = arg(r, 1), when = arg(r, 2);

	if (!is_system(v))
		return BH_PERM_ERROR;
	if (plan > UINT32_MAX || when > UINT32_MAX)
		return BH_INVALID_PARAM;
	int ret = plan_request((uint32_t)plan, (uint32_t)when, arch_counter_read());
	if (ret != BH_OK)
		return ret;
	/* A switch at the frame end needs nothing: no cyclic core sleeps past a frame end. */
	if (when == BH_PLAN_NOW)
		for (unsigned c = 0; c < BH_MAX_CORES; c++)
			if (percpu[c].sched.policy == BH_POLICY_CYCLIC)
				sched_core_changed(c);
	return BH_OK;
}

static int64_t hc_plan_status(struct vcpu *v, struct arch_regs *r)
{
	uint64_t now = arch_counter_read(), frames;
	struct plan_position pos;
	uint32_t current, next;

	(void)v;
	if (!plan_count())
		return BH_NOT_AVAILABLE;
	plan_status(now, &current, &next, &frames);
	plan_locate(now, &pos);
	arch_regs_set(r, 1, current);
	arch_regs_set(r, 2, next);
	arch_regs_set(r, 3, frames);
	arch_regs_set(r, 4, ticks_to_ns(pos.frame_start));
	return BH_OK;
}

static int64_t hc_trace_read(struct vcpu *v, struct arch_regs *r)
{
	uint64_t core = arg(r, 1), va = arg(r, 2), max = arg(r, 3);
	struct bh_trace_event events[TRACE_READ_MAX];

	if (!is_system(v))
		return BH_PERM_ERROR;
	if (core >= BH_MAX_CORES)
		return BH_INVALID_PARAM;
	if (max > TRACE_READ_MAX)
		max = TRACE_READ_MAX;
	if (!max)
		return 0; /* nothing to copy, nothing to check, whatever the pointer */
	/* The buffer translated first: events read are gone from the ring, and the copy into it
	 * cannot fail after (not even if another vCPU changes the page tables meanwhile). */
	struct guest_pieces buf;
	if (!guest_translate_writable(v, va, max * sizeof(events[0]), &buf))
		return BH_INVALID_PARAM;
	unsigned n = trace_read((unsigned)core, events, (unsigned)max);
	guest_pieces_write(&buf, events, n * (uint32_t)sizeof(events[0]));
	return n;
}

static int64_t hc_console_flush(struct vcpu *v, struct arch_regs *r)
{
	(void)r;
	return console_flush(v->partition);
}

static int64_t hc_hm_read(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arg(r, 1), max = arg(r, 2), lost;
	struct bh_hm_log_entry entries[BH_HM_LOG_READ_MAX];

	if (!is_system(v))
		return BH_PERM_ERROR;
	if (max > BH_HM_LOG_READ_MAX)
		max = BH_HM_LOG_READ_MAX;
	/* The buffer translated first, as for the trace: entries taken are gone from the log. */
	struct guest_pieces buf;
	if (max && !guest_translate_writable(v, va, max * sizeof(entries[0]), &buf))
		return BH_INVALID_PARAM;
	unsigned n = hm_log_take(entries, (unsigned)max, &lost);
	if (n)
		guest_pieces_write(&buf, entries, n * (uint32_t)sizeof(entries[0]));
	arch_regs_set(r, 1, lost);
	return n;
}

static int64_t hc_hm_status(struct vcpu *v, struct arch_regs *r)
{
	struct partition *t = partition_by_id(arg(r, 1));
	struct bh_hm_status st = { 0 };

	/* As BH_HC_PARTITION_STATUS: a normal partition sees only itself. */
	if (arg(r, 1) != v->partition->cfg->id && !is_system(v))
		return BH_PERM_ERROR;
	if (!t)
		return BH_INVALID_PARAM;
	hm_status(t, &st);
	return guest_copy_to(v, arg(r, 2), &st, sizeof(st)) ? BH_OK : BH_INVALID_PARAM;
}

static int64_t hc_hm_take(struct vcpu *v, struct arch_regs *r)
{
	struct bh_hm_log_entry e;

	/* Check first: the event is gone once taken. */
	if (!guest_writable(v, arg(r, 1), sizeof(e)))
		return BH_INVALID_PARAM;
	if (!hm_take(v, &e))
		return BH_NOT_AVAILABLE;
	return guest_copy_to(v, arg(r, 1), &e, sizeof(e)) ? BH_OK : BH_INVALID_PARAM;
}

/* Every entry is set: a call number below BH_HC_COUNT always has a handler. */
static const hypercall_fn hypercalls[BH_HC_COUNT] = {
	[BH_HC_CONSOLE_WRITE & 0xffff] = hc_console_write,
	[BH_HC_GET_IDS & 0xffff] = hc_get_ids,
	[BH_HC_GET_TIME & 0xffff] = hc_get_time,
	[BH_HC_HALT_SELF & 0xffff] = hc_halt_self,
	[BH_HC_IDLE & 0xffff] = hc_idle,
	[BH_HC_RESET_SELF & 0xffff] = hc_reset_self,
	[BH_HC_RAISE_EVENT & 0xffff] = hc_raise_event,
	[BH_HC_HALT_SYSTEM & 0xffff] = hc_halt_system,
	[BH_HC_SET_TIMER & 0xffff] = hc_set_timer,
	[BH_HC_IRQ_CTL & 0xffff] = hc_irq_ctl,
	[BH_HC_VCPU_CTL & 0xffff] = hc_vcpu_ctl,
	[BH_HC_VCPU_STATUS & 0xffff] = hc_vcpu_status,
	[BH_HC_DEADLINE_MISS & 0xffff] = hc_deadline_miss,
	[BH_HC_PARTITION_CTL & 0xffff] = hc_partition_ctl,
	[BH_HC_PARTITION_STATUS & 0xffff] = hc_partition_status,
	[BH_HC_PLAN_SWITCH & 0xffff] = hc_plan_switch,
	[BH_HC_PLAN_STATUS & 0xffff] = hc_plan_status,
	[BH_HC_TRACE_READ & 0xffff] = hc_trace_read,
	[BH_HC_SAMPLING_PORT_CREATE & 0xffff] = ports_hc_sampling_create,
	[BH_HC_SAMPLING_WRITE & 0xffff] = ports_hc_sampling_write,
	[BH_HC_SAMPLING_READ & 0xffff] = ports_hc_sampling_read,
	[BH_HC_QUEUING_PORT_CREATE & 0xffff] = ports_hc_queuing_create,
	[BH_HC_QUEUING_SEND & 0xffff] = ports_hc_queuing_send,
	[BH_HC_QUEUING_RECEIVE & 0xffff] = ports_hc_queuing_receive,
	[BH_HC_PORT_STATUS & 0xffff] = ports_hc_status,
	[BH_HC_PORT_INFO & 0xffff] = ports_hc_info,
	[BH_HC_PORT_READY & 0xffff] = ports_hc_ready,
	[BH_HC_SHM_INFO & 0xffff] = ports_hc_shm_info,
	[BH_HC_SHM_DOORBELL & 0xffff] = ports_hc_shm_doorbell,
	[BH_HC_CONSOLE_READ & 0xffff] = hc_console_read,
	[BH_HC_QUEUING_RECEIVE_WAIT & 0xffff] = ports_hc_queuing_receive_wait,
	[BH_HC_CONSOLE_FLUSH & 0xffff] = hc_console_flush,
	[BH_HC_HM_READ & 0xffff] = hc_hm_read,
	[BH_HC_HM_STATUS & 0xffff] = hc_hm_status,
	[BH_HC_HM_TAKE & 0xffff] = hc_hm_take,
	[BH_HC_QUEUING_RECEIVE_POST & 0xffff] = ports_hc_queuing_receive_post,
	[BH_HC_QUEUING_RECEIVE_CANCEL & 0xffff] = ports_hc_queuing_receive_cancel,
};

/* Not the dispatcher's own test of each result: only the calls that can give up pay for it. */
int64_t hypercall_again(struct arch_regs *r)
{
	if (r != this_cpu()->regs)
		return HYPERCALL_AGAIN;
	arch_hypercall_again(r);
	return (int64_t)arch_regs_arg(r, 0);
}

int64_t hypercall_dispatch(struct vcpu *v, struct arch_regs *r)
{
	/* SMCCC: the function ID is W0; unsigned wrap-around sends IDs below the base away. */
	uint32_t index = (uint32_t)arch_regs_arg(r, 0) - BH_HC_BASE;

	if (index >= BH_HC_COUNT)
		return BH_UNKNOWN_HYPERCALL;
	return hypercalls[index](v, r);
}
