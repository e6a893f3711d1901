/* Virtual interrupts: a pending set per vCPU, filled from any core, drained into the GIC list
 * registers by the vCPU's own core before it enters the guest. */
#include "lib.h"
#include "partition.h"
#include "percpu.h"
#include "sched.h"
#include "trace.h"
#include "virq.h"

static uint32_t bit(unsigned intid) { return 1u << (intid % 32); }

/* Owner of each forwarded physical interrupt (SPIs from the description). */
static struct vcpu *owners[BH_VIRQ_MAX];

void virq_set_owner(unsigned intid, struct vcpu *v)
{
	if (intid < BH_VIRQ_MAX)
		owners[intid] = v;
}

bool virq_owned_by(unsigned intid, const struct vcpu *v)
{
	return intid < BH_VIRQ_MAX && owners[intid] == v;
}

bool virq_forward_physical(unsigned intid)
{
	struct vcpu *v = intid < BH_VIRQ_MAX ? owners[intid] : NULL;

	if (!v)
		return false;
	virq_inject(v, intid, true);
	/* Taken away from its vCPU's core (a guest moved its route: vgic_dist.c set_route moves
	 * the physical route of an inactive one only here): routed there now, while active. */
	if (v->core != this_cpu()->core)
		arch_irq_move(intid, v->core);
	return true;
}

void virq_follow(struct vcpu *v, unsigned core)
{
	const struct bh_partition_cfg *cfg = v->partition->cfg;

	for (uint32_t i = 0; i < cfg->irq_count; i++)
		if (owners[cfg->irqs[i]] == v)
			arch_irq_move(cfg->irqs[i], core);
}

/* intid became deliverable in v: make sure v sees it. Inline: it is on the timer interrupt's
 * path to the guest. A pinned vCPU of this core that is neither running nor woken here (ready
 * but preempted, suspended, halted) needs nothing: its state, and so the core's choice, is
 * unchanged, and the interrupt reaches its list registers when it is next switched in. A
 * scheduling pass would only decide the same (a port message to a lower-priority partition
 * of the sender's core paid one: about 250 instructions). */
HOT_INLINE void notify(struct vcpu *v, unsigned intid)
{
	if (v == this_cpu()->vcpu)
		exit_work_set(EXIT_FLUSH); /* running here, or idling in place: it sees it */
	else if (!(v->virq.disabled[intid / 32] & bit(intid)) &&
		 __atomic_compare_exchange_n(&v->state, &(uint32_t){ VCPU_IDLE }, VCPU_READY, false,
					     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		sched_vcpu_woken(v); /* on its own core, a priority comparison may do */
	} else if (vcpu_is_best_effort(v)) {
		sched_vcpu_changed(v); /* a best-effort vCPU's holder or taker */
	} else if (v->core != this_cpu()->core &&
		   __atomic_load_n(&percpu[v->core].vcpu, __ATOMIC_SEQ_CST) == v) {
		sched_vcpu_changed(v); /* running on its core: into its list registers now */
	}
	/* A pinned vCPU another core does not run (halted, or ready outside its slot or under a
	 * higher priority) needs nothing either, as on this core: its core's choice is unchanged,
	 * and it finds the interrupt when it is switched in. Kicking that core for it let a guest
	 * interrupt another partition's slot there once per trapped SGI or ISPENDR write. The
	 * pending bit above is stored before the load of the core's running vCPU (sequentially
	 * consistent), and the core stores its running vCPU before it reads pending bits
	 * (sched.c run()): either the load sees the vCPU running, or its switch-in sees the bit. */
}

void virq_notify(struct vcpu *v, unsigned intid)
{
	notify(v, intid);
}

/* Inline into both callers: virq_inject, the path of every injection, stays one function. */
HOT_INLINE bool mark_pending(struct vcpu *v, unsigned intid, bool forwarded)
{
	struct virq_state *q = &v->virq;
	unsigned w = intid / 32;

	if (intid >= BH_VIRQ_MAX)
		return false;
	if (forwarded)
		__atomic_fetch_or(&q->forwarded[w], bit(intid), __ATOMIC_RELAXED);
	uint32_t old = __atomic_fetch_or(&q->pending[w], bit(intid), __ATOMIC_SEQ_CST);
	if (!(old & bit(intid)))
		__atomic_fetch_add(&q->count, 1u, __ATOMIC_SEQ_CST);
	trace_emit(BH_TRACE_VIRQ, v, intid);
	return true;
}

bool virq_make_pending(struct vcpu *v, unsigned intid, bool forwarded)
{
	return mark_pending(v, intid, forwarded);
}

void virq_inject(struct vcpu *v, unsigned intid, bool forwarded)
{
	if (mark_pending(v, intid, forwarded))
		notify(v, intid);
}

int virq_take(struct vcpu *v, bool *forwarded)
{
	struct virq_state *q = &v->virq;

	if (!q->count)
		return -1;
	for (unsigned w = 0; w < VIRQ_WORDS; w++) {
		uint32_t ready = q->pending[w] & ~q->disabled[w];
		if (!ready)
			continue;
		unsigned intid = w * 32 + (unsigned)__builtin_ctz(ready);
		/* Only the clear that finds the bit takes it: a start posted on another core drops
		 * pending interrupts meanwhile (virq_drop_pending, while the vCPU still runs with
		 * its stop posted), and one taken by both was counted down twice and a forwarded
		 * one both delivered and ended (unit test test_virq_race.c). Look again then. */
		if (!(__atomic_fetch_and(&q->pending[w], ~bit(intid), __ATOMIC_SEQ_CST) & bit(intid))) {
			w--;
			continue;
		}
		__atomic_fetch_sub(&q->count, 1u, __ATOMIC_SEQ_CST);
		/* Mostly not (only physical interrupts are forwarded): then nothing to clear. */
		*forwarded = q->forwarded[w] & bit(intid);
		if (*forwarded)
			__atomic_fetch_and(&q->forwarded[w], ~bit(intid), __ATOMIC_RELAXED);
		return (int)intid;
	}
	return -1;
}

void virq_put_back(struct vcpu *v, unsigned intid, bool forwarded)
{
	struct virq_state *q = &v->virq;
	unsigned w = intid / 32;

	if (forwarded)
		__atomic_fetch_or(&q->forwarded[w], bit(intid), __ATOMIC_RELAXED);
	if (!(__atomic_fetch_or(&q->pending[w], bit(intid), __ATOMIC_SEQ_CST) & bit(intid)))
		__atomic_fetch_add(&q->count, 1u, __ATOMIC_SEQ_CST);
}

bool virq_has_pending(const struct vcpu *v)
{
	const struct virq_state *q = &v->virq;

	if (!q->count)
		return false;
	for (unsigned w = 0; w < VIRQ_WORDS; w++)
		if (q->pending[w] & ~q->disabled[w])
			return true;
	return false;
}

int virq_set_enabled(struct vcpu *v, unsigned intid, bool enabled)
{
	if (intid >= BH_VIRQ_MAX)
		return BH_INVALID_PARAM;
	if (enabled)
		v->virq.disabled[intid / 32] &= ~bit(intid);
	else
		v->virq.disabled[intid / 32] |= bit(intid);
	if (enabled && (v->virq.pending[intid / 32] & bit(intid)))
		exit_work_set(EXIT_FLUSH);
	return BH_OK;
}

HOT_INLINE bool set_enabled_quietly(struct vcpu *v, unsigned intid, bool enabled)
{
	if (intid >= BH_VIRQ_MAX)
		return false;
	uint32_t *word = &v->virq.disabled[intid / 32];
	if (!enabled) {
		__atomic_fetch_or(word, bit(intid), __ATOMIC_SEQ_CST);
		return false;
	}
	uint32_t old = __atomic_fetch_and(word, ~bit(intid), __ATOMIC_SEQ_CST);
	return (old & bit(intid)) && virq_is_pending(v, intid);
}

bool virq_set_enabled_quietly(struct vcpu *v, unsigned intid, bool enabled)
{
	return set_enabled_quietly(v, intid, enabled);
}

void virq_enable(struct vcpu *v, unsigned intid, bool enabled)
{
	if (set_enabled_quietly(v, intid, enabled))
		notify(v, intid);
}

/* virq_enable for the 32 INTIDs of word w at once: bit n of `enabled` for INTID 32 * w + n. One
 * exchange, and a look only at those it enables: a vCPU's reset sets all 288 (vgic_reset_redist)
 * in the decision of the core that takes it, where one at a time cost about 8000 instructions. */
void virq_enable_word(struct vcpu *v, unsigned w, uint32_t enabled)
{
	if (w >= VIRQ_WORDS)
		return;
	uint32_t was_disabled = __atomic_exchange_n(&v->virq.disabled[w], ~enabled, __ATOMIC_SEQ_CST);
	for (uint32_t now_on = was_disabled & enabled; now_on; now_on &= now_on - 1) {
		unsigned intid = 32 * w + (unsigned)__builtin_ctz(now_on);
		if (intid < BH_VIRQ_MAX && virq_is_pending(v, intid))
			notify(v, intid);
	}
}

bool virq_is_pending(const struct vcpu *v, unsigned intid)
{
	return intid < BH_VIRQ_MAX && (v->virq.pending[intid / 32] & bit(intid));
}

void virq_clear_pending(struct vcpu *v, unsigned intid)
{
	struct virq_state *q = &v->virq;

	if (intid >= BH_VIRQ_MAX)
		return;
	if (__atomic_fetch_and(&q->pending[intid / 32], ~bit(intid), __ATOMIC_SEQ_CST) & bit(intid))
		__atomic_fetch_sub(&q->count, 1u, __ATOMIC_SEQ_CST);
}

bool virq_withdraw(struct vcpu *v, unsigned intid)
{
	struct virq_state *q = &v->virq;
	unsigned w = intid / 32;

	if (intid >= BH_VIRQ_MAX || !(q->forwarded[w] & bit(intid)))
		return false;
	__atomic_fetch_and(&q->forwarded[w], ~bit(intid), __ATOMIC_RELAXED);
	virq_clear_pending(v, intid);
	return true;
}

/* The pending bit decides, atomically: virq_take, on the vCPU's core, clears it before it reads
 * the forwarded bit, so exactly one of the two takes a held physical interrupt (the list register
 * or the caller). While it is held the physical interrupt is active at the GIC and cannot be
 * injected again, so the forwarded bit cannot be set anew in between. */
bool virq_withdraw_held(struct vcpu *v, unsigned intid)
{
	struct virq_state *q = &v->virq;
	unsigned w = intid / 32;

	if (intid >= BH_VIRQ_MAX || !(__atomic_load_n(&q->forwarded[w], __ATOMIC_RELAXED) & bit(intid)))
		return false;
	if (!(__atomic_fetch_and(&q->pending[w], ~bit(intid), __ATOMIC_SEQ_CST) & bit(intid)))
		return false; /* taken meanwhile: its list register ends it */
	__atomic_fetch_sub(&q->count, 1u, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&q->forwarded[w], ~bit(intid), __ATOMIC_RELAXED);
	return true;
}

/* Other cores may inject meanwhile (a doorbell, a port): only what is taken here is counted
 * down, so an interrupt injected during the drop stays pending and counted. A forwarded SPI
 * taken here is ended here (from any core: the distributor's). A forwarded PPI (the virtual
 * timer's) is active at the vCPU's own core, which alone can end it: it keeps its forwarded
 * mark, and that core ends it when it switches the vCPU out or releases it (virq_withdraw).
 * Dropped with its mark by a start posted on another core, it stayed active there for good,
 * and no vCPU that core ran next got its timer interrupt (unit
 * reqatk_a_start_from_another_core_leaves_a_taken_vtimer_ppi_to_its_core). */
/* Word w of q's pending interrupts dropped and counted off; returns the forwarded SPIs among
 * them (word 0 holds SGIs and PPIs), their forwarded marks cleared. */
static inline uint32_t drop_pending_word(struct virq_state *q, unsigned w)
{
	uint32_t was = __atomic_exchange_n(&q->pending[w], 0u, __ATOMIC_SEQ_CST);
	uint32_t spis = w ? was : 0u;
	uint32_t held = __atomic_fetch_and(&q->forwarded[w], ~spis, __ATOMIC_RELAXED) & spis;
	uint32_t n = 0;

	for (uint32_t b = was; b; b &= b - 1) /* no libgcc: no __builtin_popcount */
		n++;
	if (n)
		__atomic_fetch_sub(&q->count, n, __ATOMIC_SEQ_CST);
	return held;
}

void virq_drop_pending(struct vcpu *v)
{
	struct virq_state *q = &v->virq;

	for (unsigned w = 0; w < VIRQ_WORDS; w++) {
		uint32_t held = drop_pending_word(q, w);
		while (held) { /* taken from the device, never given to the guest: end them */
			arch_irq_release(w * 32 + (unsigned)__builtin_ctz(held));
			held &= held - 1;
		}
	}
}

/* virq_drop_pending from another core (a start posted there): the same, but what v holds of
 * the GIC is left for v's own core (virq_give_back). A separate loop: virq_drop_pending is on
 * every release's path, and a flag through it cost a best-effort core's stop serves their
 * budget (tests/system/test_best_effort.py, be_stop: slot starts about 100 ticks late). */
void virq_drop_pending_elsewhere(struct vcpu *v)
{
	struct virq_state *q = &v->virq;

	for (unsigned w = 0; w < VIRQ_WORDS; w++) {
		uint32_t held = drop_pending_word(q, w);
		if (held) {
			__atomic_fetch_or(&q->give_back[w], held, __ATOMIC_SEQ_CST);
			__atomic_store_n(&q->give_back_any, 1u, __ATOMIC_SEQ_CST);
		}
	}
}

void virq_give_back_later(struct vcpu *v, unsigned intid)
{
	if (intid < 32 || intid >= BH_VIRQ_MAX)
		return;
	__atomic_fetch_or(&v->virq.give_back[intid / 32], bit(intid), __ATOMIC_SEQ_CST);
	__atomic_store_n(&v->virq.give_back_any, 1u, __ATOMIC_SEQ_CST);
}

/* Mostly nothing is marked: one load then. */
void virq_give_back(struct vcpu *v)
{
	if (!__atomic_load_n(&v->virq.give_back_any, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&v->virq.give_back_any, 0u, __ATOMIC_SEQ_CST);
	for (unsigned w = 1; w < VIRQ_WORDS; w++)
		for (uint32_t b = __atomic_exchange_n(&v->virq.give_back[w], 0u, __ATOMIC_SEQ_CST); b;
		     b &= b - 1)
			arch_irq_release(w * 32 + (unsigned)__builtin_ctz(b));
}

void virq_enable_all(struct vcpu *v)
{
	for (unsigned w = 0; w < VIRQ_WORDS; w++)
		v->virq.disabled[w] = 0;
}

void virq_release(struct vcpu *v)
{
	virq_drop_pending(v);
	virq_enable_all(v);
}
