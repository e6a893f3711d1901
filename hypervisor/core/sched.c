/* Per-core scheduling. At every event the core's policy picks the vCPU to run and the next
 * instant it must look again; the hypervisor timer is armed for the earliest of that instant,
 * the wake-up of a blocked vCPU and a BH_HC_SET_TIMER deadline. Nothing runs in between: a
 * vCPU that never yields still loses the core exactly at its slot end or budget end.
 *
 * When the policy has nothing to run, the core may run a best-effort vCPU (best_effort.h)
 * until BE_LEAD_TICKS before its own next instant; it then gives it back and waits for that
 * instant as an idle core does. */
#include "best_effort.h"
#include "bulkhead/abi.h"
#include "console.h"
#include "hm.h"
#include "lib.h"
#include "main.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "trace.h"

struct decision {
	struct vcpu *vcpu; /* NULL: idle */
	uint64_t until;    /* the policy's next event */
};

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void sched_add_vcpu(unsigned core, struct vcpu *v)
{
	struct sched_core *s = &percpu[core].sched;

	BH_CHECK(s->count < BH_MAX_VCPUS);
	unsigned i = s->count++;
	/* A fixed-priority core keeps its vCPUs highest first, alike ones in the description's
	 * order: the pick is the first that wants the core, and a look for a wake-up above a
	 * vCPU stops at it (top_waking_within). */
	for (; s->policy == BH_POLICY_FIXED_PRIORITY && i &&
	       s->vcpus[i - 1]->cfg->priority < v->cfg->priority; i--)
		s->vcpus[i] = s->vcpus[i - 1];
	s->vcpus[i] = v;
	s->slot = -1;
	sched_set_lead(core, 0);
}

void sched_set_lead(unsigned core, unsigned slots)
{
	struct sched_core *s = &percpu[core].sched;

	if (s->policy == BH_POLICY_FIXED_PRIORITY || s->policy == BH_POLICY_EDF) {
		s->lead = SLOT_LEAD_TICKS + FP_LEAD_PER_VCPU_TICKS * s->count;
		return;
	}
	unsigned vcpus = s->count > SLOT_LEAD_VCPUS ? s->count - SLOT_LEAD_VCPUS : 0;

	slots = slots > SLOT_LEAD_SLOTS ? slots - SLOT_LEAD_SLOTS : 0;
	s->lead = SLOT_LEAD_TICKS + SLOT_LEAD_PER_VCPU_TICKS * vcpus +
		  SLOT_LEAD_PER_2_SLOTS_TICKS * (slots + 1) / 2;
}

bool vcpu_runnable(const struct vcpu *v)
{
	/* A loading vCPU 0 runs the reload of its restarting partition in its own time. */
	return (v->state == VCPU_READY && v->partition->state == PARTITION_RUNNING) ||
	       v->state == VCPU_LOADING;
}

/* Whether its policy may give v the core: ready, or with a request posted (a stop or a start,
 * served in its own time when it is picked: decide). */
static bool vcpu_wants_core(const struct vcpu *v)
{
	return vcpu_runnable(v) || v->request;
}

/* A vCPU in `state` whose timers and wake-ups the core serves: not suspended, in a running
 * partition, with no stop posted. Anything else waits (a suspended one's deadlines fire once it
 * is resumed), or holds nothing (halted), so no partition's timer is ever charged to another
 * while it cannot run. A stop posted and not served yet ends what it holds: a restart may have
 * counted it at once (partition.c stop_all) and the next incarnation be running and start it
 * before its core serves the stop, which then keeps what was sent to it since the start (the
 * ended incarnation's timer interrupt, served meanwhile, reached the started vCPU's first run:
 * test_req_attack.c). */
static bool vcpu_serviced(const struct vcpu *v, uint32_t state)
{
	return (state == VCPU_READY || state == VCPU_IDLE) &&
	       v->partition->state == PARTITION_RUNNING &&
	       !(__atomic_load_n(&v->request, __ATOMIC_RELAXED) & VCPU_REQ_STOP);
}

/* Whether the core's time may be another partition's: all but a dedicated core's. A line
 * formatted in a trap on a dedicated core delays only the partition that caused it. */
bool sched_core_shared(unsigned core)
{
	return percpu[core].sched.policy != BH_POLICY_DEDICATED;
}

void sched_core_changed(unsigned core)
{
	if (core == this_cpu()->core)
		exit_work_set(EXIT_RESCHED);
	else
		arch_kick_core(core);
}

uint64_t sched_exec_ticks(const struct vcpu *v)
{
	uint64_t t = v->exec_ticks, now = arch_counter_read(), start = v->run_start;

	if (percpu[v->core].vcpu == v && now > start) /* another core's view may lag one event */
		t += now - start;
	return t;
}

/* --- Policies ------------------------------------------------------------------------- */

static struct decision pick_dedicated(struct sched_core *s)
{
	struct vcpu *v = s->count ? s->vcpus[0] : NULL;
	return (struct decision){ v && vcpu_wants_core(v) ? v : NULL, TIME_NEVER };
}

/* The core's vCPUs are highest first (sched_add_vcpu). */
static struct decision pick_fixed_priority(struct sched_core *s)
{
	for (unsigned i = 0; i < s->count; i++)
		if (vcpu_wants_core(s->vcpus[i]))
			return (struct decision){ s->vcpus[i], TIME_NEVER };
	return (struct decision){ NULL, TIME_NEVER };
}

static void notify_plan_switch(unsigned core, uint32_t plan)
{
	unsigned n;
	const struct slot_rt *slots = plan_slots(plan, core, &n);

	for (unsigned i = 0; i < n; i++)
		if (slots[i].flags & BH_SLOT_NOTIFY)
			virq_inject(slots[i].vcpu, BH_VIRQ_PLAN_SWITCH, false);
}

static void defer_trace(struct sched_core *s, uint32_t type, const struct vcpu *v, uint64_t arg)
{
	if (s->deferred_count < SCHED_DEFERRED_MAX)
		s->deferred[s->deferred_count++] = (struct deferred_trace){ type, v, arg };
}

static void flush_trace(struct sched_core *s, uint64_t time)
{
	for (unsigned i = 0; i < s->deferred_count; i++)
		trace_emit_at(s->deferred[i].type, s->deferred[i].vcpu, s->deferred[i].arg, time);
	s->deferred_count = 0;
}

/* Record slot changes in the trace and raise the slot-start interrupt where configured. */
static void enter_slot(struct percpu *c, const struct plan_position *pos, int slot,
		       const struct slot_rt *slots)
{
	struct sched_core *s = &c->sched;

	if (s->slot == slot && s->slot_plan == pos->plan && s->slot_frame == pos->frame)
		return;
	if (s->slot >= 0)
		defer_trace(s, BH_TRACE_SLOT_END, NULL, (uint64_t)s->slot | (uint64_t)s->slot_plan << 16);
	if (s->slot_plan != pos->plan) {
		defer_trace(s, BH_TRACE_PLAN_SWITCH, NULL, pos->plan);
		notify_plan_switch(c->core, pos->plan);
	}
	s->slot = slot;
	s->slot_plan = pos->plan;
	s->slot_frame = pos->frame;
	s->slot_vcpu = slot < 0 ? NULL : slots[slot].vcpu;
	if (slot < 0)
		return;
	defer_trace(s, BH_TRACE_SLOT_START, slots[slot].vcpu,
		    (uint64_t)slot | (uint64_t)pos->plan << 16);
	if (slots[slot].flags & BH_SLOT_NOTIFY)
		virq_inject(slots[slot].vcpu, BH_VIRQ_SLOT_START, false);
}

static struct decision pick_cyclic(struct percpu *c, uint64_t now)
{
	struct plan_position pos;
	unsigned n;

	plan_locate(now, &pos);
	const struct slot_rt *slots = plan_slots(pos.plan, c->core, &n);
	uint64_t offset = now - pos.frame_start;
	for (unsigned i = 0; i < n; i++) {
		if (slots[i].end <= offset)
			continue;
		if (slots[i].start > offset)
			break;
		enter_slot(c, &pos, (int)i, slots);
		struct vcpu *v = slots[i].vcpu;
		return (struct decision){ vcpu_wants_core(v) ? v : NULL,
					  min_u64(pos.frame_start + slots[i].end, pos.frame_end) };
	}
	enter_slot(c, &pos, -1, slots);
	for (unsigned i = 0; i < n; i++)
		if (slots[i].start > offset)
			return (struct decision){ NULL, min_u64(pos.frame_start + slots[i].start,
								pos.frame_end) };
	return (struct decision){ NULL, pos.frame_end };
}

/* EDF: refill budgets at each release; a late release is caught up in one step. */
static void edf_release(struct vcpu *v, uint64_t now)
{
	uint64_t period = ns_to_ticks(v->cfg->period_ns);

	if (now < v->next_release || !period) /* no period: never released (the tool forbids it) */
		return;
	uint64_t missed = (now - v->next_release) / period;
	uint64_t release = v->next_release + missed * period;
	v->budget_left = ns_to_ticks(v->cfg->budget_ns);
	v->abs_deadline = release + ns_to_ticks(v->cfg->deadline_ns);
	v->next_release = release + period;
}

static void edf_budget_exhausted(struct vcpu *v)
{
	struct hm_event ev = {
		.kind = BH_HM_BUDGET_OVERRUN, .address = v->cfg->budget_ns, .pc = v->regs.elr,
		.detail = "EDF budget used up",
	};
	trace_emit(BH_TRACE_BUDGET_EXHAUSTED, v, v->abs_deadline);
	hm_raise_in_decision(v, &ev); /* its line waits for v's own time: this is the next's */
}

static struct decision pick_edf(struct sched_core *s, uint64_t now)
{
	struct vcpu *best = NULL;
	uint64_t until = TIME_NEVER;

	for (unsigned i = 0; i < s->count; i++) {
		struct vcpu *v = s->vcpus[i];
		if (!v->cfg->period_ns)
			continue;
		edf_release(v, now);
		until = min_u64(until, v->next_release);
		if (vcpu_wants_core(v) && v->budget_left &&
		    (!best || v->abs_deadline < best->abs_deadline))
			best = v;
	}
	if (best)
		until = min_u64(until, now + best->budget_left);
	return (struct decision){ best, until };
}

static struct decision pick(struct percpu *c, uint64_t now)
{
	switch (c->sched.policy) {
	case BH_POLICY_CYCLIC:
		return pick_cyclic(c, now);
	case BH_POLICY_FIXED_PRIORITY:
		return pick_fixed_priority(&c->sched);
	case BH_POLICY_EDF:
		return pick_edf(&c->sched, now);
	default:
		return pick_dedicated(&c->sched);
	}
}

/* --- Time keeping ---------------------------------------------------------------------- */

/* Charge the running vCPU for the time since it was last charged. */
static inline void account_exec(struct vcpu *v, uint64_t now)
{
	v->exec_ticks += now - v->run_start;
	v->run_start = now;
}

static inline void account(struct percpu *c, uint64_t now)
{
	struct vcpu *v = c->vcpu;

	if (!v)
		return;
	account_exec(v, now);
	if (c->sched.policy != BH_POLICY_EDF)
		return;
	uint64_t used = now - v->charged_at;
	v->charged_at = now;
	if (!v->budget_left)
		return;
	v->budget_left -= min_u64(used, v->budget_left);
	if (!v->budget_left && v->state == VCPU_READY && vcpu_runnable(v))
		edf_budget_exhausted(v);
}

static uint64_t clock_now(const struct vcpu *v, uint64_t now)
{
	return v->timer_clock == BH_CLOCK_EXEC ? sched_exec_ticks(v) : now;
}

/* BH_HC_SET_TIMER deadlines; returns the next one in wall-clock ticks. */
static uint64_t service_set_timer(struct percpu *c, struct vcpu *v, uint64_t now)
{
	if (v->timer_deadline == TIME_NEVER)
		return TIME_NEVER;
	uint64_t t = clock_now(v, now);
	if (t >= v->timer_deadline) {
		virq_inject(v, BH_VIRQ_TIMER, false);
		if (v->timer_interval)
			v->timer_deadline += ((t - v->timer_deadline) / v->timer_interval + 1) *
					     v->timer_interval;
		else
			v->timer_deadline = TIME_NEVER;
	}
	if (v->timer_deadline == TIME_NEVER)
		return TIME_NEVER;
	if (v->timer_clock == BH_CLOCK_EXEC) {
		if (c->vcpu != v)
			return TIME_NEVER;
		c->sched.exec_wake = now + (v->timer_deadline - t);
		return c->sched.exec_wake;
	}
	/* A ready vCPU the core does not run: the expiry changes nothing here (the decision that
	 * switches it in serves it first), so it is no instant of the core's. Armed, a neighbour's
	 * 10 us periodic timer interrupted the victim's slot every 10 us (test_timerstorm.py). */
	if (v->state == VCPU_READY && c->vcpu != v)
		return TIME_NEVER;
	return v->timer_deadline;
}

/* Whether v's wake-ups are instants of its core now. A cyclic core runs a vCPU only in its
 * slots: the wake-up of one whose slot this is not changes nothing before the boundary, whose
 * decision serves it (a neighbour waiting for its 10 us periodic timer was woken in the
 * victim's slot, for nothing, at the first expiry in each: test_timerstorm.py). */
static bool watched(const struct sched_core *s, const struct vcpu *v)
{
	return s->policy != BH_POLICY_CYCLIC || v == s->slot_vcpu;
}

/* Whether the core's decisions may stand for a wake-up ahead (decision_time): a fixed-priority
 * core leads its vCPUs' wake-ups, an EDF core its releases and wake-ups while it has nothing of
 * its own to run (led). */
static bool leads_wake_ups(const struct sched_core *s)
{
	return s->policy == BH_POLICY_FIXED_PRIORITY || s->policy == BH_POLICY_EDF;
}

/* Every instant of the core's own that follows a hand-back comes after a lead (cyclic, fixed
 * priority, EDF: while it runs nothing of its own): sched_hand_back_and_exit. Not a dedicated
 * core's, which has no instants. One test of the policy against 0 (BH_POLICY_DEDICATED). */
static bool instants_led(const struct sched_core *s)
{
	return s->policy != BH_POLICY_DEDICATED;
}

/* Wake idle vCPUs whose interrupt came; returns the next wake-up to watch for. */
static uint64_t service_idle(struct percpu *c, struct vcpu *v, uint64_t now)
{
	if (v->state != VCPU_IDLE)
		return TIME_NEVER;
	if (virq_has_pending(v)) {
		vcpu_transition(v, VCPU_IDLE, VCPU_READY);
		return TIME_NEVER;
	}
	if (v == c->loaded) { /* its virtual timer is live: the hardware interrupt wakes it */
		uint64_t at = arch_vtimer_deadline(v);
		/* due at the instant a led decision stands for (decision_time), not yet now: its
		 * interrupt fires by the time the core enters it, after the wait */
		if (at <= now && leads_wake_ups(&c->sched) && at > arch_counter_read()) {
			vcpu_transition(v, VCPU_IDLE, VCPU_READY);
			return TIME_NEVER;
		}
		/* best-effort work must give the core back before it; one already past is due at
		 * once or will not fire (taken and not ended, or disabled): no instant ahead */
		if (v != c->sched.be && watched(&c->sched, v))
			c->sched.live_wake = at > now ? at : TIME_NEVER;
		return TIME_NEVER;
	}
	uint64_t at = arch_vtimer_deadline(v);
	if (at > now)
		return at;
	vcpu_transition(v, VCPU_IDLE, VCPU_READY); /* its timer interrupt comes when it is loaded */
	return TIME_NEVER;
}

static uint64_t service_vcpu(struct percpu *c, struct vcpu *v, uint64_t now)
{
	/* One look at its state decides whether to serve it (every full decision looks at each
	 * vCPU of the core); the serving itself changes states only by CAS. */
	uint32_t state = v->state;

	if ((v->timer_deadline == TIME_NEVER && state != VCPU_IDLE) || !vcpu_serviced(v, state))
		return TIME_NEVER; /* nothing to serve: most vCPUs, most of the time */
	uint64_t next = service_set_timer(c, v, now);
	return min_u64(next, service_idle(c, v, now));
}

/* Whether v's only instant is the execution-clock deadline of the vCPU the core runs (exec_wake):
 * the one instant no lead may take. */
static bool runs_on_exec_clock(const struct percpu *c, const struct vcpu *v)
{
	return v == c->vcpu && v->timer_clock == BH_CLOCK_EXEC;
}

/* The core's vCPUs and the best-effort vCPU it holds. */
static uint64_t service_timers(struct percpu *c, uint64_t now)
{
	struct sched_core *s = &c->sched;
	uint64_t next = TIME_NEVER, other = TIME_NEVER;

	s->live_wake = s->exec_wake = TIME_NEVER;
	for (unsigned i = 0; i < s->count; i++) {
		uint64_t at = service_vcpu(c, s->vcpus[i], now);
		if (watched(s, s->vcpus[i]))
			next = min_u64(next, at);
		if (watched(s, s->vcpus[i]) && !runs_on_exec_clock(c, s->vcpus[i]))
			other = min_u64(other, at);
	}
	if (s->be) {
		uint64_t at = service_vcpu(c, s->be, now);
		next = min_u64(next, at);
		if (!runs_on_exec_clock(c, s->be))
			other = min_u64(other, at);
	}
	s->other_wake = other;
	return next;
}

static void program_timer(struct percpu *c, uint64_t at)
{
	if (c->sched.timer_at == at)
		return;
	c->sched.timer_at = at;
	arch_timer_program(at);
}

/* Stolen time: from a switch-out that leaves prev ready to the switch-in that runs it again.
 * Guests with a virtual machine read it (SMCCC paravirtualized time); nobody else's is kept,
 * so a paravirtual partition's switches (a port hand-over) do not pay for it. */
static void account_stolen(struct vcpu *prev, struct vcpu *next, uint64_t now)
{
	if (prev && prev->steals && vcpu_runnable(prev))
		prev->ready_since = now;
	if (next && next->steals && next->ready_since) {
		__atomic_store_n(&next->stolen_ticks, next->stolen_ticks + (now - next->ready_since),
				 __ATOMIC_RELAXED);
		next->ready_since = 0;
	}
}

/* Make next (NULL: none) the running vCPU, loading it unless it is loaded already. */
static void run(struct percpu *c, struct vcpu *next, uint64_t now)
{
	struct vcpu *prev = c->vcpu;

	account_stolen(prev, next, now);
	if (next) {
		if (c->loaded != next) {
			arch_vcpu_switch(c->loaded, next);
			c->loaded = next;
		}
		next->run_start = next->charged_at = now;
		c->regs = &next->regs;
	} else {
		c->regs = &c->idle_regs;
	}
	c->vcpu = next;
	/* Before this core reads next's pending interrupts: another core's virq_inject does not
	 * kick a core whose running vCPU is not the target (virq.c notify), so one of the two must
	 * see the other's store. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* A restart that saw prev running did not count it (partition.c stop_all): once it no
	 * longer runs, with its stop posted, it is counted here (one of the two sees the other's
	 * store), or the restart waited for prev's own time, which may never come. */
	if (prev && prev != next && !vcpu_is_best_effort(prev) &&
	    (__atomic_load_n(&prev->request, __ATOMIC_RELAXED) & VCPU_REQ_STOP))
		vcpu_switched_out_stopped(prev);
}

/* run(c, NULL, now) after best-effort `out`: nothing runs, and a stop posted to `out` is the
 * queue's to count (be_put). */
HOT_INLINE void run_nothing_after(struct percpu *c, struct vcpu *out, uint64_t now)
{
	account_stolen(out, NULL, now);
	c->regs = &c->idle_regs;
	c->vcpu = NULL;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* as run's, before the core's looks that follow */
}

static void switch_to(struct percpu *c, struct vcpu *next, uint64_t now)
{
	if (next == c->vcpu)
		return;
	/* EDF: switched in, it is charged for the time it runs, so its next change may kick
	 * again (first_kick_for_deadline; the only switch in on an EDF core). */
	if (next)
		__atomic_store_n(&next->kick_deadline, TIME_NEVER, __ATOMIC_RELAXED);
	run(c, next, now);
	defer_trace(&c->sched, BH_TRACE_VCPU_SWITCH, next, 0);
}

/* The instant a decision made now stands for: a cyclic boundary, or a fixed-priority core's
 * wake-up, within the lead. */
static uint64_t decision_time(const struct sched_core *s, uint64_t now)
{
	if (now < s->boundary && now + s->lead >= s->boundary)
		return s->boundary;
	return now;
}

/* When the core's timer fires for `instant`. A fixed-priority core leads the wake-ups of its
 * vCPUs as a cyclic core leads its slot boundaries: it decides ahead (decision_time) and waits
 * for the instant, so a wake-up does not wait for a decision whose length grows with the
 * vCPUs of the core (31 waiting beside a victim made its wake-ups 480 ticks late, 76 alone:
 * test_crowd.py). Not the running vCPU's execution-clock deadline: that clock reaches it only
 * by running, so a decision ahead of it would find it not due and arm the timer for it again
 * at once. An EDF core leads its releases and wake-ups only while it runs nothing of its own
 * (edf_idle): a budget's end is not led, and a running vCPU is not charged for a lead. */
static uint64_t lead_ahead(const struct sched_core *s, uint64_t instant)
{
	if (instant == TIME_NEVER)
		return instant;
	return instant > s->lead ? instant - s->lead : 0;
}

/* The execution-clock deadline first: the wake-up after it keeps its lead (other_wake). Timed
 * by the deadline alone, a running lower vCPU that put it just before a wake-up took that
 * wake-up's lead (the decision for it started at the deadline and a second one followed,
 * its timer re-armed in the past: test_sched.c). */
static uint64_t led(const struct sched_core *s, uint64_t instant)
{
	if (!leads_wake_ups(s))
		return instant;
	if (instant != TIME_NEVER && instant == s->exec_wake)
		return min_u64(instant, lead_ahead(s, min_u64(s->other_wake, s->live_wake)));
	return lead_ahead(s, instant);
}

/* The fixed-priority wake-up the core's timer leads (see led): the next of its vCPUs' timers
 * and the live virtual timer of its loaded idle vCPU, but the running vCPU's execution-clock
 * deadline, or none. */
static uint64_t fp_boundary(const struct sched_core *s, uint64_t wake)
{
	uint64_t at = min_u64(wake, s->live_wake);

	return at == s->exec_wake ? min_u64(s->other_wake, s->live_wake) : at;
}

/* A fixed-priority core's timer leads the live virtual timer of its loaded idle vCPU too: the
 * decision it brings must see that vCPU due before it picks (the pass over the timers), or a
 * lower vCPU with a request is picked first and served in the lead (7 stops posted before a
 * victim's wake-up made it 940 ticks late: req_fp.yaml). */
static bool led_live_due(const struct sched_core *s, uint64_t at)
{
	return leads_wake_ups(s) && at >= s->live_wake;
}

/* Wait, with the decision made, until the instant it stands for; returns the time reached. The
 * instant is a deadline for the emulator too (arch_turn_deadline): a cyclic slot start has no
 * timer of its own there (a fixed-priority wake-up has its vCPU's virtual timer), and other
 * cores' turns ran past it under -icount (tests/system/test_lockwait.py, lockwait_cyc.yaml). */
static uint64_t wait_until(uint64_t at)
{
	uint64_t t = arch_counter_read();

	if (t < at)
		arch_turn_deadline(at);
	while (t < at) /* at most the core's lead */
		t = arch_counter_read();
	return t;
}

/* An EDF core whose decision d picks none of its vCPUs (idle, or a best-effort vCPU runs): its
 * next release and wake-up are led, as a fixed-priority core's wake-ups are (a best-effort
 * vCPU's hand-back then sleeps as on those cores: sched_hand_back_and_exit). */
static bool edf_idle(const struct sched_core *s, struct decision d)
{
	return s->policy == BH_POLICY_EDF && !d.vcpu;
}

static uint64_t timer_for(const struct sched_core *s, struct decision d, uint64_t wake)
{
	uint64_t policy_at = d.until;

	if (s->policy == BH_POLICY_CYCLIC || edf_idle(s, d))
		policy_at = lead_ahead(s, policy_at);
	if (s->policy == BH_POLICY_EDF && d.vcpu) /* a vCPU runs: nothing led */
		return min_u64(policy_at, wake);
	if (leads_wake_ups(s)) /* the loaded idle vCPU's timer is led too */
		wake = min_u64(wake, s->live_wake);
	return min_u64(policy_at, led(s, wake));
}

/* The instant the core's timer leads (decision_time): a cyclic core's slot boundary, a
 * fixed-priority core's next wake-up, an idle EDF core's next release or wake-up. */
static uint64_t led_instant(const struct sched_core *s, struct decision d, uint64_t wake)
{
	if (s->policy == BH_POLICY_CYCLIC)
		return d.until;
	if (s->policy == BH_POLICY_FIXED_PRIORITY)
		return fp_boundary(s, wake);
	if (edf_idle(s, d))
		return min_u64(d.until, fp_boundary(s, wake));
	return TIME_NEVER;
}

/* Fixed priority, when the only change since the last decision is that s->woken became ready:
 * it preempts the running vCPU if it outranks it (which outranked every other ready one).
 * Nothing else the full decision computes changes: the vCPU switched out is ready, not waiting
 * for a timer, and the one switched in was waiting, so the next wake-up can only come later
 * (the core's timer then fires early and finds nothing due), unless the execution clock of
 * the vCPU switched in starts a deadline. The running vCPU's own state needs no look: if
 * another core has suspended it meanwhile, the full decision would pick s->woken all the same
 * (it outranks every vCPU the last decision saw ready), and its timers only fire later. A
 * stop or reset of it is a request, which takes the full decision. Inline: on the way out of
 * a hand-over to a waiting receiver. Returns false to take the full decision. */
HOT_INLINE bool preempt(struct percpu *c)
{
	struct sched_core *s = &c->sched;
	struct vcpu *w = s->woken, *cur = c->vcpu;

	exit_work_clear(c, EXIT_PREEMPT);
	if (s->policy != BH_POLICY_FIXED_PRIORITY || c->requests || !cur || cur == s->be ||
	    !vcpu_runnable(w) || w->cfg->priority <= cur->cfg->priority ||
	    (w->timer_clock == BH_CLOCK_EXEC && w->timer_deadline != TIME_NEVER))
		return false;
	uint64_t now = arch_counter_read();
	if (now >= led(s, s->next_wake))
		return false;
	account(c, now);
	run(c, w, now);
	/* A stop posted meanwhile by a core that saw w switched out: a restart may have counted it
	 * (partition.c stop_all), so it must not run before the stop is served (decide). */
	if (__atomic_load_n(&w->request, __ATOMIC_RELAXED))
		return false;
	/* Nothing deferred (no decision is open): the event goes straight in. */
	trace_record(c->trace, w->trace_source | BH_TRACE_VCPU_SWITCH, 0, now);
	return true;
}

void sched_vcpu_woken(struct vcpu *v)
{
	struct percpu *c = this_cpu();

	if (vcpu_is_best_effort(v)) {
		be_notify(v);
	} else if (v->core != c->core) {
		arch_kick_core(v->core);
	} else if (!(c->exit_work & EXIT_DECIDE)) {
		c->sched.woken = v;
		exit_work_set(EXIT_PREEMPT);
	} else {
		exit_work_set(EXIT_RESCHED); /* more than one change: decide in full */
	}
}

/* --- Best-effort vCPUs ------------------------------------------------------------------ */

/* The core's own next instant, its policy having nothing to run now (d): its timer's event (a
 * slot's lead, a release, a wake-up) or the virtual timer of its loaded idle vCPU. */
static uint64_t own_instant(const struct sched_core *s, struct decision d, uint64_t wake)
{
	return min_u64(timer_for(s, d, wake), s->live_wake);
}

/* v, just taken from the queue: this core now serves what waited for it (posted requests, due
 * timers). True if it can run. */
static bool be_adopt(struct percpu *c, struct vcpu *v, uint64_t now)
{
	v->trace_source = trace_source(c->core, v->partition->cfg->id, v->id);
	vcpu_serve_requests(v);
	service_vcpu(c, v, now);
	return vcpu_runnable(v);
}

/* The best-effort vCPU this core runs next: the one it holds until its quantum ends, then the
 * first with work in the queue (round robin), else the one it holds again. A taken vCPU that
 * has nothing to run after all goes back to the tail; each is looked at once at most. Serving
 * one (a stop releases all it holds, its console line included) costs the core's best-effort
 * time, so another is taken only while the core still has room (BE_MIN_RUN_TICKS before
 * be_until, as set_spare_time asks): many queued with requests (14 stops cost about 610 ticks)
 * would otherwise run the decision past be_until and the lead into the core's own instant.
 * Those left are served in the core's next room; a core with none asleep there does not
 * sleep on them (be_core_sleep looks), it decides again and finds no room. */
static struct vcpu *be_next(struct percpu *c, uint64_t now)
{
	struct sched_core *s = &c->sched;
	struct vcpu *cur = s->be && vcpu_runnable(s->be) ? s->be : NULL;

	if (cur && now < s->be_quantum_end)
		return cur;
	s->be_quantum_end = now + be_quantum_ticks();
	for (unsigned n = 0; n < BH_MAX_VCPUS; n++) {
		if (n && arch_counter_read() + BE_MIN_RUN_TICKS > s->be_until)
			break;
		struct vcpu *v = be_take(c->core, now);
		if (!v)
			break;
		if (be_adopt(c, v, now))
			return v;
		be_put(v);
	}
	return cur;
}

/* The core's policy has nothing to run: its spare time, for best-effort vCPUs and the requests
 * of its vCPUs that do not run, lasts until BE_LEAD_TICKS before its own next instant, if that
 * leaves BE_MIN_RUN_TICKS (be_until; 0: none). Published before the core looks for requests
 * (serve_in_spare_time): a core posting one either sees the spare time and kicks it, or its
 * request is seen (sched_vcpu_changed). */
static void set_spare_time(struct sched_core *s, uint64_t instant, uint64_t at)
{
	uint64_t until = instant > BE_LEAD_TICKS ? instant - BE_LEAD_TICKS : 0;

	__atomic_store_n(&s->be_until, until >= at + BE_MIN_RUN_TICKS ? until : 0, __ATOMIC_SEQ_CST);
}

/* Requests posted to this core's vCPUs that do not run (a stop, a start, from another core or
 * one of its own vCPUs) are work for their partition: served in the vCPU's own time (decide
 * serves them when its policy picks it: a vCPU with a request counts as ready) or here, in the
 * core's spare time, one vCPU after another while it lasts (each fits the lead after it, as a
 * best-effort vCPU's hypervisor path does); never in another vCPU's time. Served in whatever
 * time the core was in, a partition's halt of its 7 vCPUs below a fixed-priority victim, aimed
 * at the victim's wake-ups, made them 460 ticks late (req_fp.yaml). True if it served any. */
static bool serve_in_spare_time(struct percpu *c)
{
	struct sched_core *s = &c->sched;
	bool served = false, left = false;

	/* A request posted since this pass's core_process_requests is seen here (after be_until
	 * is published), or its poster saw the spare time and kicked. */
	if (!s->requests_waiting && !__atomic_load_n(&c->requests, __ATOMIC_SEQ_CST))
		return false;
	for (unsigned i = 0; i < s->count; i++) {
		struct vcpu *v = s->vcpus[i];
		if (!__atomic_load_n(&v->request, __ATOMIC_SEQ_CST))
			continue;
		if (arch_counter_read() >= s->be_until) {
			left = true;
		} else {
			vcpu_serve_requests(v);
			served = true;
		}
	}
	s->requests_waiting = left;
	return served;
}

/* After the switch: another core changed one of this core's vCPUs during the decision and did
 * not kick (it saw the vCPU switched out, or no spare time yet). Decide again only if that
 * changes the pick, so that no stream of changes (a suspend and resume in a loop) keeps the
 * core deciding. */
static bool changed_meanwhile(struct percpu *c, struct decision d, uint64_t at)
{
	if (!__atomic_exchange_n(&c->requests, 0u, __ATOMIC_SEQ_CST))
		return false;
	c->sched.requests_waiting = c->sched.changes_taken = true;
	struct decision again = pick(c, at);
	return again.vcpu != d.vcpu || (again.vcpu && again.vcpu->request);
}

/* Whether v's policy gives it the core before cur, which runs there (a cyclic core's slot
 * boundary decides; a dedicated core has only cur). */
static bool outranks(const struct sched_core *s, const struct vcpu *v, const struct vcpu *cur)
{
	if (s->policy == BH_POLICY_FIXED_PRIORITY)
		return v->cfg->priority > cur->cfg->priority;
	if (s->policy == BH_POLICY_EDF)
		return v->budget_left && v->abs_deadline < cur->abs_deadline;
	return false;
}

/* EDF: changes to v preempt the running vCPU at most once per deadline of v and switch-in of v.
 * A resume and a suspend in a loop from another core would otherwise kick it again and again at
 * no cost to v's budget (1000 pairs, 999 kicks). A later one, before v ran, waits for the core's
 * next decision (the running vCPU's budget, a release or a wake-up it has armed its timer for).
 * Once v has run (switch_to) it is charged for each kick's switch, so its next change kicks
 * again: a resume after v ran and was suspended, within one deadline, waited for the running
 * vCPU's budget or a release and missed that deadline (reqatk_an_edf_resume_after_the_vcpu_ran_
 * kicks_again). A benign race: two posters at once may both kick. */
static bool first_kick_for_deadline(const struct sched_core *s, struct vcpu *v)
{
	if (s->policy != BH_POLICY_EDF)
		return true;
	uint64_t deadline = __atomic_load_n(&v->abs_deadline, __ATOMIC_RELAXED);
	if (__atomic_load_n(&v->kick_deadline, __ATOMIC_RELAXED) == deadline)
		return false;
	__atomic_store_n(&v->kick_deadline, deadline, __ATOMIC_RELAXED);
	return true;
}

/* The core's timer fires within one lead from now. A kick handled then (a decision, about as
 * long as the lead) runs into the timer's own decision, which is the core's next instant's:
 * a running vCPU's port interrupts, raised by receives on other cores, kicked a victim's core
 * just before its lead and made it 383 ticks late (tests/system/test_chanwait.py). That
 * decision flushes the vCPU's interrupts as a kick's would (core_exit_work): they wait a lead
 * at most. Not a timer that has fired (at or before now, 0): its decision may be over. */
static bool timer_within_lead(const struct sched_core *s)
{
	uint64_t at = __atomic_load_n(&s->timer_at, __ATOMIC_RELAXED), now = arch_counter_read();

	return now < at && at - now <= s->lead;
}

/* Another core changed v (a request, a suspend or resume, its partition's state): v's core looks
 * again at its next decision (its requests flag; one that has just switched vCPUs looks again
 * at once, decide), and is kicked for it only if this is v's time there (v runs, or outranks
 * the vCPU that does) or the core has time to spare. Else the change waits for that decision:
 * its slot, a preemption, its spare time, or the core's own instant, whose lead no kick may
 * take (a halt of 7 lower vCPUs aimed at a fixed-priority victim's wake-up, served there, made
 * it 460 ticks late; vCPU controls from another partition's slot interrupted it); nor may the
 * running v's own kick take it (timer_within_lead). */
void sched_vcpu_changed(struct vcpu *v)
{
	if (vcpu_is_best_effort(v)) {
		be_notify(v); /* its holder, or a core that may take it */
		return;
	}
	struct percpu *k = &percpu[v->core];
	__atomic_store_n(&k->requests, 1u, __ATOMIC_SEQ_CST);
	if (k == this_cpu()) {
		exit_work_set(EXIT_RESCHED); /* in the time of the vCPU that made the change */
		return;
	}
	const struct vcpu *cur = __atomic_load_n(&k->vcpu, __ATOMIC_SEQ_CST);
	if ((cur == v && !timer_within_lead(&k->sched)) ||
	    (cur && cur != k->sched.be && vcpu_wants_core(v) && outranks(&k->sched, v, cur) &&
	     first_kick_for_deadline(&k->sched, v)) ||
	    arch_counter_read() < __atomic_load_n(&k->sched.be_until, __ATOMIC_SEQ_CST))
		arch_kick_core(v->core);
}

/* Best-effort `out`, loaded, leaves the core idle: the core's own vCPU that was loaded when it
 * came, if any, is loaded back. */
HOT_INLINE void give_back(struct percpu *c, struct vcpu *out)
{
	arch_vcpu_give_back(out, c->sched.be_home);
	c->loaded = c->sched.be_home;
}

/* The best-effort vCPU `out` leaves this core for `next` (NULL: nothing to run): first its
 * FP/SIMD registers (the core's own vCPU gets its own back), then its EL1 state by the switch
 * to `next`; with nothing to run, the core loads what was loaded before `out` came, so its own
 * next instant finds it as if it had idled all along. */
static void be_leave(struct percpu *c, struct vcpu *out, struct vcpu *next)
{
	if (c->loaded != out)
		return; /* taken, never run */
	if (next)
		arch_vcpu_detach(out);
	else
		give_back(c, out);
}

/* When to look again for best-effort work: the held vCPU's hand-back or quantum end; on a core
 * about to sleep with room, the earliest wake-up of a queued vCPU it may run, and be_until at
 * the latest: there its room ends, and it wakes to take its asleep mark down and sleeps on to
 * its own instant unmarked, so that the instant's path is the same as without best-effort
 * vCPUs (be_core_awake is not on it). */
static uint64_t be_timer(struct percpu *c, struct vcpu *next)
{
	struct sched_core *s = &c->sched;

	if (next && next == s->be)
		return min_u64(s->be_until, s->be_quantum_end);
	if (next || !s->be_allowed || !s->be_until)
		return TIME_NEVER;
	return min_u64(be_next_wake(c->core), s->be_until);
}

/* --- Console output in idle time ------------------------------------------------------- */

/* Output must never wait for a writer that has gone quiet. A core with an instant of its own (a
 * slot, a release, a wake-up) drains at its idle passes in its own time, so what its vCPUs left
 * goes out by the next one; but a vCPU alone on a dedicated core waits in hardware, unseen, and
 * a core with nothing to run sleeps until an interrupt. What those leave is drained by a console
 * helper if there is one: a core idle with nothing loaded and no instant of its own (its timer
 * off), whose spare time delays nobody. A helper looks every CONSOLE_RETRY_NS while anything is
 * queued and drains what nobody else moved meanwhile (console_drain_stale: while its writers
 * write, they drain it in their own time, and under -icount a helper's work would be everyone's
 * time); with nothing queued it sleeps, and a drain on a dedicated core that leaves output
 * wakes it (sched_console_left). With no helper, such a core comes back for it by its own
 * timer: its own vCPU is the only one its drains can delay. */

/* Arm the core's timer for the console's next drain (TIME_NEVER: none), unless the core's own
 * next instant comes first or less than CONSOLE_RETRY_NS after it: then the core decides at that
 * instant anyway, and the console's wake-up must not make that decision late. */
static void arm_console_retry(struct percpu *c, uint64_t again)
{
	if (again != TIME_NEVER && again + ns_to_ticks(CONSOLE_RETRY_NS) < c->sched.timer_at)
		program_timer(c, again);
}

/* True if some core other than self is a console helper; one asleep is woken (the first found:
 * one is enough). A helper marks itself asleep before its last look at the console, so either
 * that look finds the output left here or this finds it asleep. */
static bool wake_console_helper(const struct percpu *self)
{
	for (unsigned core = 0; core < BH_MAX_CORES; core++) {
		struct sched_core *s = &percpu[core].sched;
		if (core == self->core || !__atomic_load_n(&s->console_helper, __ATOMIC_SEQ_CST))
			continue;
		if (__atomic_exchange_n(&s->console_asleep, false, __ATOMIC_SEQ_CST))
			arch_kick_core(core);
		return true;
	}
	return false;
}

/* A core with no instant of its own that leaves output: a helper's, or with none its own timer
 * brings it back for it (on a dedicated core, in its vCPU's time: decide). */
static void leave_console_output(struct percpu *c, uint64_t again)
{
	if (again == TIME_NEVER || wake_console_helper(c))
		return;
	c->sched.console_retry = c->sched.policy == BH_POLICY_DEDICATED && c->vcpu;
	arm_console_retry(c, again);
}

uint64_t sched_next_event(void)
{
	const struct percpu *c = this_cpu();
	uint64_t at = c->sched.timer_at;

	return at && !c->vcpu && c->loaded ? min_u64(at, c->sched.live_wake) : at;
}

/* A writer's drain left output. On a dedicated core the writer may wait in hardware next,
 * unseen. On another core with no instant ahead (a fixed-priority core running its one ready
 * vCPU) a writer that computes on without writing or idling never lets its core pass an idle
 * pass: a helper takes the output. A core with an instant ahead decides again then, and passes
 * an idle pass once its vCPUs wait; a helper woken meanwhile would only look while they write
 * (and, under -icount, take its share of everyone's time). */
void sched_console_left(void)
{
	struct percpu *c = this_cpu();

	if (c->sched.policy == BH_POLICY_DEDICATED && c->vcpu)
		leave_console_output(c, console_retry_at());
	else if (c->sched.timer_at == TIME_NEVER)
		wake_console_helper(c);
}

/* What a stopped partition's lines cost each (a format and a queueing, about 2200 instructions),
 * with room to spare: one starts only this long before the core's next instant. */
#define STOPPED_LINE_TICKS 256u

/* The lines of partitions stopped from a shared core (partition.h), in spare time: each only if
 * it ends before the core's next instant, so that nobody's instant waits for them. */
static void print_stopped_lines(const struct sched_core *s)
{
	while (partition_stopped_lines_waiting() &&
	       (s->timer_at == TIME_NEVER || arch_counter_read() + STOPPED_LINE_TICKS < s->timer_at) &&
	       partition_print_stopped_line())
		;
}

/* After the instant a core enters its vCPU at, the time its entry takes (the rest of its decision,
 * the exit's work, the guest's first instructions), with room to spare. */
#define ENTRY_TICKS 64u

/* A console helper's drain keeps off the led instants of other cores (cyclic, fixed priority, EDF):
 * a drain of a whole chunk (up to about 2 300 instructions of formatting and UART writes) beside
 * a core's lead is load on the machine's shared bus and UART at the worst time, and under the
 * emulator's round robin it is a turn that the core waits out (a slot start 71 ticks late in
 * test_best_effort.py's be_stop, where the helper drained the stopped vCPUs' lines). 0 if no such
 * core is at one now, or leads one within a chunk's wire time; else when to look again. A core
 * whose timer fired and is not programmed again is deciding, for an instant perhaps. */
static uint64_t led_instants_near(const struct percpu *self, uint64_t now)
{
	uint64_t span = ns_to_ticks(CONSOLE_DRAIN_CHUNK * CONSOLE_BYTE_NS), until = 0;

	for (unsigned core = 0; core < bh_system_config.core_count; core++) {
		const struct sched_core *o = &percpu[core].sched;
		if (core == self->core || !instants_led(o))
			continue;
		uint64_t lead_at = __atomic_load_n(&o->timer_at, __ATOMIC_RELAXED);
		uint64_t entering = o->entering_at;
		if (lead_at == 0)
			until = max_u64(until, now + span);
		if (now < entering + ENTRY_TICKS)
			until = max_u64(until, entering + ENTRY_TICKS);
		if (lead_at != TIME_NEVER && lead_at <= now + span)
			until = max_u64(until, lead_at + o->lead + ENTRY_TICKS);
	}
	return until;
}

/* A helper's look near another core's led instant waits until just after it (its timer armed
 * then; true), unless its looks have waited so for CONSOLE_RETRY_NS already: instants that come
 * closer together than a lead, a chunk and an entry (about 20 us) would hold the output for
 * ever. */
static bool helper_keeps_off(struct percpu *c, uint64_t now)
{
	struct sched_core *s = &c->sched;
	uint64_t near = led_instants_near(c, now);

	if (!near || (s->helper_kept_off_since &&
		      now - s->helper_kept_off_since >= ns_to_ticks(CONSOLE_RETRY_NS))) {
		s->helper_kept_off_since = 0;
		return false;
	}
	if (!s->helper_kept_off_since)
		s->helper_kept_off_since = now;
	arm_console_retry(c, near);
	return true;
}

/* After a hand-back, before the core sleeps: of an idle pass's work (idle_drain), the lines of
 * stopped partitions (mostly none: one load, no call). */
HOT_INLINE void hand_back_stopped_lines(const struct sched_core *s)
{
	if (partition_stopped_lines_waiting())
		print_stopped_lines(s);
}

/* A core going idle (its timer programmed for its own next instant) drains in its spare time,
 * within its drain budget, as it always did; a helper drains what nobody else moves, arms its
 * timer to look again while anything is queued, and else sleeps marked asleep. A core is a
 * helper from this pass until it has a vCPU to run. */
static void idle_drain(struct percpu *c)
{
	struct sched_core *s = &c->sched;
	bool helper = s->timer_at == TIME_NEVER && !c->loaded;

	print_stopped_lines(s);
	__atomic_store_n(&s->console_helper, helper, __ATOMIC_SEQ_CST);
	if (!helper) {
		s->helper_kept_off_since = 0;
		if (s->timer_at != TIME_NEVER)
			console_drain(); /* it comes back at its own instant */
		else
			leave_console_output(c, console_drain_idle());
		return;
	}
	if (helper_keeps_off(c, arch_counter_read()))
		return;
	uint64_t again = console_drain_stale();
	if (again == TIME_NEVER) {
		__atomic_store_n(&s->console_asleep, true, __ATOMIC_SEQ_CST);
		if (!console_pending())
			return;
		/* Output came meanwhile, its writer may not have seen the mark: look again soon. */
		__atomic_store_n(&s->console_asleep, false, __ATOMIC_SEQ_CST);
		again = console_retry_at();
	}
	arm_console_retry(c, again);
}

/* A dedicated core whose vCPU waits in place (BH_HC_IDLE) drains nobody's output while there is
 * a helper: a drain delays its own vCPU's wake-up. With none, it does as an idle core does (the
 * timer it arms brings its vCPU out of its wait once, as a spurious wake-up). */
static void idle_in_place_drain(struct percpu *c)
{
	if (console_pending() && !wake_console_helper(c))
		leave_console_output(c, console_drain_idle());
}

/* Whether the core sleeps with room for best-effort work: it is kicked when some gets queued
 * for it, and if some came meanwhile, it decides again instead of sleeping (false). */
HOT_INLINE bool may_sleep(struct percpu *c, bool room)
{
	return !room || be_core_sleep(c->core, arch_counter_read());
}

/* Sleep until an interrupt (may_sleep said so). */
HOT_INLINE void idle_sleep(struct percpu *c, bool room)
{
	arch_wait_for_interrupt();
	if (room)
		be_core_awake(c->core);
}

/* What the pass over the core's timers after a hand-back (be_hand_back) would find, be_home
 * loaded again and nothing running, looked at without serving anything: false if that pass
 * would serve or change something (a timer or wake-up due by the hand-back, an interrupt
 * pending in an idle vCPU), or if be_home is no longer in the state its live timer was counted
 * in (be_count_home). Every vCPU but be_home is counted as the pass counts it, from memory;
 * be_home's virtual timer cannot change while it is not loaded (it does not run). */
static bool be_peek_home(struct percpu *c)
{
	struct sched_core *s = &c->sched;
	const struct vcpu *home = s->be_home;
	uint64_t next = TIME_NEVER, soon = s->be_until + BE_LEAD_TICKS;

	if (home && home->state != s->be_home_state)
		return false;
	for (unsigned i = 0; i < s->count; i++) {
		struct vcpu *v = s->vcpus[i];
		uint32_t state = v->state;
		if ((v->timer_deadline == TIME_NEVER && state != VCPU_IDLE) || !vcpu_serviced(v, state) ||
		    !watched(s, v))
			continue;
		if (v->timer_deadline != TIME_NEVER) {
			if (v->timer_clock == BH_CLOCK_EXEC) { /* it does not run: no wake-up */
				if (sched_exec_ticks(v) >= v->timer_deadline)
					return false;
			} else if (v->timer_deadline < soon) {
				return false;
			} else {
				next = min_u64(next, v->timer_deadline);
			}
		}
		if (state != VCPU_IDLE)
			continue;
		if (virq_has_pending(v))
			return false;
		if (v == home)
			continue; /* its live timer: be_home_live */
		uint64_t at = arch_vtimer_deadline(v);
		if (at < soon)
			return false;
		next = min_u64(next, at);
	}
	s->be_home_wake = next;
	return true;
}

/* The timer the hand-back arms, the core's own vCPUs' next wake-up being `wake` and the live
 * virtual timer of the vCPU loaded back `live`: what the full decision after the switch arms
 * (settle), nothing running (no execution clock: a fixed-priority wake-up is led in full). */
static uint64_t hand_back_timer(const struct sched_core *s, uint64_t wake, uint64_t live)
{
	if (leads_wake_ups(s))
		wake = lead_ahead(s, min_u64(wake, live));
	return min_u64(s->be_policy_at, wake);
}

/* The instant the timer the hand-back arms leads (led_instant, nothing running): the policy's (a
 * slot boundary, an EDF release) or, on a core that leads wake-ups, its vCPUs' next wake-up. */
static uint64_t hand_back_boundary(const struct sched_core *s, uint64_t wake, uint64_t live)
{
	uint64_t at = s->be_policy_instant;

	return leads_wake_ups(s) ? min_u64(at, min_u64(wake, live)) : at;
}

/* A decision that leaves best-effort work on the core counts, for the hand-back at be_until,
 * the core's timers as they will be with be_home loaded again (be_home_counted), and the timer
 * the hand-back arms from them (be_back_timer). The one that
 * takes the first best-effort vCPU has just counted them with be_home loaded
 * (decide, before the switch): those counts, unless the vCPU switched out counted a deadline
 * of its execution clock, which goes with it; then, and at every later decision that keeps
 * best-effort work (another vCPU's turn, its idling), a look (be_peek_home). A hand-back after
 * a look that found something to serve makes the pass itself (a decision that leaves no
 * best-effort work on the core is followed by no hand-back: the next take counts again). */
static void be_count_home(struct percpu *c)
{
	struct sched_core *s = &c->sched;
	const struct vcpu *v = c->vcpu;

	if (!s->be) { /* the first: be_home loaded, decide counted with it */
		s->be_home_state = s->be_home ? s->be_home->state : 0;
		s->be_home_counted = !v || v->timer_clock != BH_CLOCK_EXEC ||
				     v->timer_deadline == TIME_NEVER;
	} else {
		s->be_home_counted = false;
	}
	if (!s->be_home_counted)
		s->be_home_counted = be_peek_home(c);
	if (s->be_home_counted) {
		s->be_back_timer = hand_back_timer(s, s->be_home_wake, s->be_home_live);
		s->be_back_boundary = hand_back_boundary(s, s->be_home_wake, s->be_home_live);
	}
}

/* The trace events of the timer that fired in `out` and of the switch from it to nothing, as the
 * full decision records them: one record (TRACE_HAND_BACK; its core is this one, set as it was
 * taken). */
static void trace_hand_back(struct percpu *c, const struct vcpu *out, uint64_t at)
{
	trace_record_words(c->trace, out->trace_source | TRACE_HAND_BACK, 0, at, false);
}

/* The core's timers after the hand-back, as the full decision's pass after its switch leaves
 * them, and the timer it arms. */
HOT_INLINE uint64_t hand_back_count(struct percpu *c, uint64_t at)
{
	struct sched_core *s = &c->sched;
	uint64_t wake, live, timer, boundary;

	if (s->be_home_counted) {
		wake = s->be_home_wake;
		live = s->be_home_live;
		timer = s->be_back_timer;
		boundary = s->be_back_boundary;
	} else {
		wake = service_timers(c, at);
		live = s->live_wake;
		timer = hand_back_timer(s, wake, live);
		boundary = hand_back_boundary(s, wake, live);
	}
	s->be_home_counted = false;
	s->next_wake = wake; /* in the fields' order: two pairs */
	s->live_wake = live;
	s->exec_wake = TIME_NEVER; /* nothing runs: no execution clock counts */
	s->other_wake = wake;
	s->boundary = boundary;
	return timer;
}

/* The timer at be_until, and nothing else since the last decision (sched_timer_hands_back): give
 * the best-effort vCPU back and sleep until the core's own instant, without a decision. The last
 * decision found nothing of the core's own to run and computed its own next instant, be_until +
 * BE_LEAD_TICKS; nothing of the core's changes before that instant but by an event, and every
 * event (a kick, a wake-up, a request) either came before (then this is not the one change, and
 * the full decision runs) or comes after: it is pending when the core sleeps, and the full
 * decision that follows the wake-up sees it, as if it had come just after the hand-back. What
 * the full decision would do here is done the same way (the core is left in the same state,
 * its timer programmed the same: the instant's path does not change), less its picking and its
 * passes over the core's timers. Its policy's part of the timer (a slot's lead, a release)
 * is the one the decision computed. Its timers' part is the count the last decision made for it
 * (be_count_home: the same vCPUs, the same one loaded, none of them due before the instant,
 * and no event since); when that found something the pass would serve, a pass after the
 * switch, as the full decision's. Of an idle pass's work (idle_drain) it leaves the console's
 * output to the core's next take of a best-effort vCPU, which drains it (before_running), and
 * prints the lines of stopped partitions, which only idle passes print (each only if it ends
 * before the core's instant). False, with the timer's trace event recorded, if the full
 * decision must run instead. */
HOT_INLINE bool be_hand_back(struct percpu *c)
{
	struct sched_core *s = &c->sched;
	struct vcpu *out = s->be;

	/* EXIT_HAND_BACK stays set: the decision's loop takes EXIT_DECIDE down when it runs next,
	 * after the wake-up or at once (false). */
	uint64_t at = arch_counter_read();
	bool armed_for_now = at - s->be_until < BE_LEAD_TICKS; /* be_until <= at, by less */
	if (c->requests || !armed_for_now) { /* out runs: sched_timer_hands_back */
		s->timer_at = 0; /* it fired and is off: the full decision programs it */
		trace_emit_at(BH_TRACE_HYP_TIMER, c->vcpu, 0, at);
		return false; /* not the hand-back it was armed for: the full decision */
	}
	account_exec(out, at); /* no EDF budget: a best-effort vCPU has none */
	if (out->timer_deadline != TIME_NEVER || out->state != VCPU_READY)
		service_vcpu(c, out, at); /* its own due timers, as the full decision serves them */
	s->be_until = 0;
	s->be = NULL;
	give_back(c, out);
	run_nothing_after(c, out, at);
	trace_hand_back(c, out, at);
	be_put_handed_back(s, out);
	uint64_t timer = hand_back_count(c, at);
	if (c->exit_work & EXIT_RESCHED) {
		s->timer_at = 0;
		return false; /* something came meanwhile */
	}
	s->timer_at = timer; /* off since it fired (sched_timer_hands_back): program it */
	arch_timer_program(timer);
	return true;
}

/* The core's policy has nothing to run (d): the room best-effort vCPUs get, its spare time.
 * Serves the requests waiting for it first (true: decide again, one it started may run now),
 * else sets *be to the best-effort vCPU to run, if any. */
HOT_INLINE bool be_room(struct percpu *c, struct decision d, uint64_t at, struct vcpu **be)
{
	struct sched_core *s = &c->sched;
	uint64_t home_wake = service_timers(c, at);

	s->be_policy_at = timer_for(s, d, TIME_NEVER);
	s->be_policy_instant = d.until; /* a slot boundary, an EDF release (hand_back_boundary) */
	if (!s->be) { /* the vCPU loaded now is loaded back at the hand-back (be_count_home) */
		s->be_home_wake = home_wake;
		s->be_home_live = s->live_wake;
	}
	set_spare_time(s, own_instant(s, d, home_wake), at);
	if (serve_in_spare_time(c))
		return true;
	if (s->be_until)
		*be = be_next(c, at);
	return false;
}

/* Switch to next (NULL: idle), be being the best-effort vCPU the core holds from now on (next,
 * or NULL): the one it held goes back to the queue once its state is all in memory. */
HOT_INLINE void switch_holding(struct percpu *c, struct vcpu *next, struct vcpu *be, uint64_t at)
{
	struct sched_core *s = &c->sched;
	struct vcpu *out = s->be != next ? s->be : NULL;

	if (out)
		be_leave(c, out, next);
	if (be) {
		if (!s->be)
			s->be_home = c->loaded; /* a vCPU of the core's own, or none */
		be_count_home(c);
	}
	s->be = be;
	switch_to(c, next, at);
	if (out)
		be_put(out); /* any core may take it now */
}

/* The decision runs next: what waited for its vCPU's time, or for time the core has spare. */
HOT_INLINE void before_running(struct percpu *c, struct vcpu *next)
{
	struct sched_core *s = &c->sched;

	s->console_helper = s->console_asleep = false; /* it has a vCPU to run */
	if (next->hm_held) /* its time now: it is charged from run_start */
		hm_print_held(next);
	if (next == s->be) /* the core's spare time, as an idle core's: output moves */
		console_drain();
	else if (s->console_retry) { /* dedicated, with no helper: its vCPU's time */
		s->console_retry = false;
		leave_console_output(c, console_drain_idle());
	}
}

/* Fixed priority, when the only change since the last decision is that the running vCPU cur
 * blocked (sched_vcpu_block), the pick (next) made on the same states as the full decision's,
 * with no timer or wake-up due and no request posted since the last full pass over the core's
 * timers (decide looked): a switch to next with only what the block changes, instead of the
 * rest of the full decision. That rest is needed when next is NULL (spare time, best-effort
 * room), when the core holds a best-effort vCPU (it goes back to the queue), when next is cur
 * again (woken meanwhile by another core), and when next has a deadline of its execution clock,
 * which starts with the switch, or one of the wall clock already due: false then, nothing
 * done. One of the wall clock ahead, which the last pass left out while next was ready and
 * did not run, is counted with the rest. Otherwise the core's next wake-up is
 * the last full pass's next_wake, which every change since has only made early (a wake-up, a
 * suspend, a preemption that unloaded a vCPU: the timer then fires early and finds nothing
 * due), and what the switch adds: cur now waits unloaded, so its virtual timer and its own
 * deadlines count as the full pass counts them (service_vcpu, which also wakes it if its
 * interrupt came meanwhile). next is loaded, so no loaded vCPU waits with a live timer
 * (live_wake). Its requests flag and a wake-up raised meanwhile (by the pass, by another core)
 * are looked at after the switch's barrier, as the full decision looks: true with *again set
 * for the full decision then. */
HOT_INLINE bool block_switch(struct percpu *c, struct vcpu *cur, struct vcpu *next, uint64_t at,
			     bool *again)
{
	struct sched_core *s = &c->sched;

	/* A deadline of next's: not counted while next was ready and not running
	 * (service_set_timer), an instant of the core's once it runs. One of the wall clock still
	 * ahead is counted below, as the full pass after the switch counts it; one due, or of
	 * the execution clock, takes the full decision (a ready pick's wall-clock timer left out
	 * waited for the core's next event, which a blocked vCPU waiting for ever never brings:
	 * test_sched.c). */
	uint64_t next_own = next ? next->timer_deadline : TIME_NEVER;
	if (!next || next == cur || s->policy != BH_POLICY_FIXED_PRIORITY || s->be ||
	    (next_own != TIME_NEVER && (next->timer_clock == BH_CLOCK_EXEC || next_own <= at)))
		return false;
	run(c, next, at);
	/* Nothing deferred (no slot, no switch_to): the event goes straight in. */
	trace_record(c->trace, next->trace_source | BH_TRACE_VCPU_SWITCH, 0, at);
	s->live_wake = TIME_NEVER;
	/* cur's part of the pass, service_vcpu's: mostly idle with no deadline of its own and
	 * nothing pending, its virtual timer alone, not due yet; else the pass's own code. */
	uint64_t own;
	if (cur->timer_deadline != TIME_NEVER || cur->state != VCPU_IDLE || cur->virq.count ||
	    cur->partition->state != PARTITION_RUNNING || (own = arch_vtimer_deadline(cur)) <= at)
		own = service_vcpu(c, cur, at);
	uint64_t wake = s->next_wake = min_u64(min_u64(s->next_wake, own), next_own);
	s->other_wake = min_u64(min_u64(s->other_wake, own), next_own); /* neither is exec_wake */
	*again = (c->exit_work & EXIT_RESCHED) || c->requests;
	if (!*again) {
		s->boundary = fp_boundary(s, wake); /* a vCPU runs: no live wake-up */
		program_timer(c, led(s, wake));
		before_running(c, next);
	}
	return true;
}

/* The waiting vCPU of the core that wakes within (from, to) and outranks `pick` (NULL: anyone)
 * and every other such vCPU (of two alike, the earlier); *when, its wake-up: its virtual timer
 * or its BH_HC_SET_TIMER deadline of the wall clock. NULL if none. The vCPUs are highest first:
 * the look ends at the first that outranks neither. */
static struct vcpu *top_waking_within(const struct sched_core *s, const struct vcpu *pick,
				      uint64_t from, uint64_t to, uint64_t *when)
{
	struct vcpu *top = NULL;

	for (unsigned i = 0; i < s->count; i++) {
		struct vcpu *v = s->vcpus[i];
		if ((pick && v->cfg->priority <= pick->cfg->priority) ||
		    (top && v->cfg->priority < top->cfg->priority))
			break;
		if (v->state != VCPU_IDLE || !vcpu_serviced(v, VCPU_IDLE))
			continue;
		uint64_t t = arch_vtimer_deadline(v);
		if (v->timer_clock == BH_CLOCK_HW)
			t = min_u64(t, v->timer_deadline);
		if (t > from && t < to && (!top || t < *when)) {
			top = v;
			*when = t;
		}
	}
	return top;
}

/* Fixed priority: the decision standing for *at, its timers served (the next wake-up after it
 * in other_wake and live_wake), picked d. A wake-up within the lead after *at of a vCPU that
 * outranks the pick could have its own decision start only after the pick is entered at *at,
 * past its lead: a lower vCPU that aimed its virtual timer just before a victim's wake-ups made
 * them 525 ticks late beside a crowd (test_crowd.py). The decision stands for the wake-up of
 * the highest such vCPU instead (a chain of ever higher ones, or a lower one between, ends at
 * it: test_sched.c): it is woken and the pick made again then; those woken before it run after
 * it, as they would have once preempted. True if it did. */
static bool stand_for_next(struct percpu *c, struct decision *d, uint64_t *at)
{
	struct sched_core *s = &c->sched;
	uint64_t next = min_u64(s->other_wake, s->live_wake), when = TIME_NEVER;

	if (s->policy != BH_POLICY_FIXED_PRIORITY || next <= *at || next - *at >= s->lead)
		return false; /* mostly: no wake-up within the lead */
	struct vcpu *w = top_waking_within(s, d->vcpu, *at, *at + s->lead, &when);
	if (!w)
		return false;
	*at = when;
	account(c, when);
	service_vcpu(c, w, when);
	*d = pick(c, when);
	return true;
}

/* The front of a pass: the instant it stands for (*at), the timers served if one is due then
 * (a led live wake-up too), the policy's pick, and a higher wake-up just after it stood for
 * instead (stand_for_next, kept in *stands_for for the passes after). A pass over the timers
 * ends what block_switch may do for *blocked. */
static struct decision pick_at(struct percpu *c, uint64_t *at, uint64_t *stands_for,
			       struct vcpu **blocked)
{
	struct sched_core *s = &c->sched;
	bool served = false;

	*at = decision_time(s, arch_counter_read());
	*at = *at < *stands_for ? *stands_for : *at;
	account(c, *at);
	if (*at >= s->next_wake || led_live_due(s, *at)) {
		service_timers(c, *at);
		*blocked = NULL;
		served = true;
	}
	struct decision d = pick(c, *at);
	if (served && stand_for_next(c, &d, at))
		*stands_for = *at;
	return d;
}

/* After the switch to next: the core's wake-ups counted with it loaded, an idle core's spare
 * time for requests, and a last look for changes made meanwhile. True if the pass must begin
 * again; else the timer is armed and the core has waited for the instant d stands for. */
static bool settle(struct percpu *c, struct decision d, struct vcpu *next, uint64_t at)
{
	struct sched_core *s = &c->sched;
	uint64_t wake = s->next_wake = service_timers(c, at);
	uint64_t policy_at = timer_for(s, d, wake);

	/* On an EDF core a look again (below) stands for this pass's instant at most: the instant
	 * an idle core led before this switch is no longer the core's, and a vCPU switched in here
	 * was charged up to it (decision_time) by a look made in its lead: a lead of budget it never
	 * ran, and a false overrun (test_sched.c
	 * an_edf_vcpu_switched_in_just_before_a_led_release_is_charged_only_its_own_time). */
	if (s->policy == BH_POLICY_EDF)
		s->boundary = at;
	if (!next && !s->be_allowed) { /* idle, with its vCPUs' wake-ups known now */
		set_spare_time(s, min_u64(policy_at, s->live_wake), at);
		if (serve_in_spare_time(c))
			return true;
	}
	/* A vCPU woke meanwhile, or a change came whose poster saw the vCPU switched out and did
	 * not kick (sched_vcpu_changed): after the switch's store, look again. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if ((c->exit_work & EXIT_RESCHED) || (c->requests && changed_meanwhile(c, d, at)))
		return true;
	s->boundary = led_instant(s, d, wake);
	program_timer(c, min_u64(policy_at, be_timer(c, next)));
	s->entering_at = at;
	flush_trace(s, wait_until(at));
	return false;
}

/* The full decision. Out of line, so the one-comparison way, inline on the way out of the
 * hypervisor, saves only the registers it uses itself. change: what made it due (EXIT_DECIDE's
 * bits): EXIT_HAND_BACK alone, the timer at be_until alone; EXIT_BLOCKED alone, the running
 * vCPU blocked. */
static __attribute__((noinline)) void decide(struct percpu *c, uint32_t change)
{
	struct sched_core *s = &c->sched;
	/* The running vCPU, if it blocked and nothing else came: block_switch may do. */
	struct vcpu *blocked = change == EXIT_BLOCKED ? c->vcpu : NULL;
	uint64_t stands_for = 0; /* a later wake-up this decision stands for (stand_for_next) */

	/* A core with no led instants (dedicated, no vCPU of its own) hands back here and sleeps
	 * where an idle core sleeps (the others hand back in sched_hand_back_and_exit). */
	bool room = false; /* the hand-back left none: be_until is 0 */
	if (change == EXIT_HAND_BACK && be_hand_back(c)) {
		hand_back_stopped_lines(s);
		goto sleep;
	}
	for (;;) {
		core_process_requests();
		exit_work_clear(c, EXIT_DECIDE);
		uint64_t at;
		struct decision d = pick_at(c, &at, &stands_for, &blocked);
		if (d.vcpu && d.vcpu->request) { /* its own time begins: its stop or start first */
			vcpu_serve_requests(d.vcpu);
			blocked = NULL;
			continue;
		}
		/* Not with a request taken since the last full pass over the timers (a resume or a
		 * start may bring deadlines it did not count). */
		bool again;
		if (blocked && !s->changes_taken && block_switch(c, blocked, d.vcpu, at, &again)) {
			if (!again)
				return;
			blocked = NULL;
			continue;
		}
		blocked = NULL;
		s->changes_taken = false; /* those taken so far: the pass after the switch sees them */
		struct vcpu *be = NULL;
		__atomic_store_n(&s->be_until, 0, __ATOMIC_RELAXED);
		if (!d.vcpu && s->be_allowed && be_room(c, d, at, &be))
			continue; /* it served requests: one it started may run now */
		struct vcpu *next = d.vcpu ? d.vcpu : be;
		switch_holding(c, next, be, at);
		if (settle(c, d, next, at))
			continue;
		if (next) {
			before_running(c, next);
			return;
		}
		idle_drain(c); /* an idle core moves queued console output, in time it has spare */
		room = s->be_allowed && s->be_until;
		if (may_sleep(c, room)) {
sleep:
			idle_sleep(c, room);
		} /* else best-effort work came meanwhile */
		s->console_asleep = false;
	}
}

/* Inline into core_exit_work, its one caller: a hand-over to a waiting receiver takes it. */
HOT_INLINE_GLOBAL void sched_reschedule(uint32_t change)
{
	struct percpu *c = this_cpu();

	change &= EXIT_DECIDE; /* one change alone: EXIT_PREEMPT, EXIT_BLOCKED */
	if (change == EXIT_PREEMPT && c->sched.woken && preempt(c))
		return;
	decide(c, change);
}

static bool vcpu_has_work(const struct vcpu *v)
{
	return virq_has_pending(v) || arch_vgic_pending() || arch_vtimer_due();
}

/* A dedicated core has nothing else to run: the vCPU waits in place, still loaded and
 * current, and goes on as soon as an interrupt is pending for it. Anything else (a request,
 * a state change by another core, a timer of the scheduler's) leaves through the scheduler. */
static void idle_in_place(struct percpu *c, struct vcpu *v)
{
	while (v->state == VCPU_IDLE && !vcpu_has_work(v) && !(c->exit_work & EXIT_RESCHED) &&
	       !c->requests) {
		idle_in_place_drain(c);
		arch_wait_for_interrupt();
	}
	__atomic_compare_exchange_n(&v->state, &(uint32_t){ VCPU_IDLE }, VCPU_READY, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	/* Deliver what woke it here, so the return to the guest can take the fast path. */
	if (c->exit_work == EXIT_FLUSH) {
		c->exit_work = 0;
		arch_vgic_flush(v);
	}
}

void sched_vcpu_block(struct vcpu *v)
{
	struct percpu *c = this_cpu();

	if (vcpu_has_work(v))
		__atomic_compare_exchange_n(&v->state, &(uint32_t){ VCPU_IDLE }, VCPU_READY, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	else if (c->sched.policy == BH_POLICY_DEDICATED && v != c->sched.be)
		idle_in_place(c, v);
	else /* the one change since the last decision, if nothing else came: it blocked */
		exit_work_set(c->exit_work & EXIT_DECIDE ? EXIT_RESCHED : EXIT_BLOCKED);
}

void sched_vcpu_idle(struct vcpu *v)
{
	/* Mark it idle before looking for work, so an interrupt another core injects now
	 * either is seen here or finds the vCPU idle and wakes it. Only a ready vCPU idles: one
	 * another core has just suspended stays so, and leaves through the scheduler. */
	if (__atomic_compare_exchange_n(&v->state, &(uint32_t){ VCPU_READY }, VCPU_IDLE, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		sched_vcpu_block(v);
	else
		exit_work_set(EXIT_RESCHED);
}

void sched_timer_event(void)
{
	struct percpu *c = this_cpu();

	c->sched.timer_at = 0; /* it fired and is off: program it again */
	exit_work_set(EXIT_RESCHED);
}

/* The one test of the hand-back's way (be_hand_back), on the interrupt taken from the guest:
 * every other hypervisor timer event takes the full decision (sched_timer_event). */
HOT_INLINE_GLOBAL bool sched_timer_hands_back(void)
{
	struct percpu *c = this_cpu();
	struct sched_core *s = &c->sched;

	/* c->vcpu, the guest the interrupt came from, is never NULL. A be_until of 0 (no
	 * best-effort vCPU) with the timer off is not the hand-back either: be_hand_back finds it
	 * not armed for now and the full decision runs. */
	uint32_t work = c->exit_work;
	if (c->vcpu != s->be || s->timer_at != s->be_until || (work & EXIT_DECIDE))
		return false;
	/* timer_at is left as it was (it fired and is off: be_hand_back programs it, or sets 0 for
	 * the full decision to program); it reads as past meanwhile, as 0 would (core_give_way_at). */
	c->exit_work = work | EXIT_HAND_BACK;
	return true;
}

/* After sched_timer_hands_back, the interrupt ended: on a core whose instants are led (cyclic,
 * fixed priority, EDF: an EDF core with nothing of its own to run leads its next release or
 * wake-up), the hand-back sleeps here, not in the decision's loop. Its instant's decision
 * comes at the lead, whose room takes the way into the decision afresh after the wake-up
 * (core_exit_work's tests, decide's frame: about 25 instructions), and from the lead on the
 * instant's path is the one every decision takes (decide, from core_exit_work): so the hand-back
 * does without that way. A core with no instants of its own (dedicated, no vCPU) sleeps in the
 * decision's loop (decide, EXIT_HAND_BACK). An event of the core's own after the hand-back (an
 * interrupt, a message: not led) finds the core here and pays that way in its latency, as it
 * pays the hand-back when it comes before. Then the exit's work, as after any interrupt: the
 * full decision, after the wake-up or at once when be_hand_back refused. */
static __attribute__((noinline)) void hand_back_asleep_then_exit(struct percpu *c)
{
	if (be_hand_back(c)) {
		hand_back_stopped_lines(&c->sched);
		arch_wait_for_interrupt(); /* no room: be_until is 0 */
		c->sched.console_asleep = false;
	}
	c->exit_work = (c->exit_work & ~EXIT_HAND_BACK) | EXIT_RESCHED;
	core_exit_work();
}

/* Inline into aarch64_guest_irq: both ways are its tail calls. */
HOT_INLINE_GLOBAL void sched_hand_back_and_exit(void)
{
	struct percpu *c = this_cpu();

	if (instants_led(&c->sched))
		hand_back_asleep_then_exit(c);
	else
		core_exit_work();
}

int sched_current_slot_of(unsigned pid)
{
	for (unsigned core = 0; core < BH_MAX_CORES; core++) {
		const struct sched_core *s = &percpu[core].sched;
		const struct vcpu *v = percpu[core].vcpu;
		if (s->policy == BH_POLICY_CYCLIC && s->slot >= 0 && v &&
		    v->partition->cfg->id == pid)
			return s->slot;
	}
	return -1;
}
