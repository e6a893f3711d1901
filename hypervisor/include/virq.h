/* Virtual interrupts of a vCPU: pending and enabled sets, independent of the GIC model. */
#ifndef BULKHEAD_VIRQ_H
#define BULKHEAD_VIRQ_H

#include <stdbool.h>
#include <stdint.h>
#include "bulkhead/abi.h"

#define VIRQ_WORDS ((BH_VIRQ_MAX + 31) / 32)

struct vcpu;

struct virq_state {
	volatile uint32_t pending[VIRQ_WORDS]; /* waiting for a list register */
	uint32_t disabled[VIRQ_WORDS];         /* BH_HC_IRQ_CTL: not delivered while set */
	uint32_t forwarded[VIRQ_WORDS];        /* physical interrupts to unmask at guest EOI */
	volatile uint32_t count;               /* bits set in pending */
	/* Held physical interrupts (active at the GIC) another core dropped for it: given back
	 * to the GIC by its own core (virq_give_back), so that one still asserted fires again
	 * there, in its time, not in whoever's time its core runs when the other core drops it. */
	uint32_t give_back[VIRQ_WORDS];
	uint32_t give_back_any; /* set after a bit above: one load when there is none */
};

/* Make intid pending in v (any core). forwarded: a physical interrupt masked until the guest
 * ends it. Wakes v if it idles. */
void virq_inject(struct vcpu *v, unsigned intid, bool forwarded);
/* Its two halves, for a caller that changes many interrupts at once and tells each vCPU once:
 * intid made pending (false: no such interrupt), and v told (woken, kicked, its core or its
 * best-effort holder asked to look) as for intid. */
bool virq_make_pending(struct vcpu *v, unsigned intid, bool forwarded);
void virq_notify(struct vcpu *v, unsigned intid);
/* Take the next deliverable pending interrupt, or -1. */
int virq_take(struct vcpu *v, bool *forwarded);
/* Put back an interrupt that found no free list register. */
void virq_put_back(struct vcpu *v, unsigned intid, bool forwarded);
bool virq_has_pending(const struct vcpu *v);
int virq_set_enabled(struct vcpu *v, unsigned intid, bool enabled);
/* v stops or restarts: nothing is pending or disabled any more, and the forwarded physical
 * interrupts it had not taken yet are ended so their devices can raise them again (its core). */
void virq_release(struct vcpu *v);
/* Its two halves. Nothing pending (from any core: a start drops what a halted vCPU was sent
 * before it, when it is posted), and nothing disabled (its core). */
void virq_drop_pending(struct vcpu *v);
void virq_enable_all(struct vcpu *v);
/* virq_drop_pending from another core (a start posted): what it holds of the GIC is not given
 * back here but marked for v's own core, as virq_give_back_later marks intid. */
void virq_drop_pending_elsewhere(struct vcpu *v);
void virq_give_back_later(struct vcpu *v, unsigned intid);
/* v's core, serving its requests: the physical interrupts marked for it go back to the GIC. */
void virq_give_back(struct vcpu *v);
/* Take back forwarded intid not yet delivered (its core, at a switch); true if it was there. */
bool virq_withdraw(struct vcpu *v, unsigned intid);
/* The same from any core (an emulated distributor's ICPENDR, a route moved): true only if intid
 * was pending as the forwarded physical one, taken back here before the vCPU's core put it in a
 * list register; the caller then owns the physical interrupt's active state. */
bool virq_withdraw_held(struct vcpu *v, unsigned intid);
/* The same from any core, for an emulated interrupt controller: enabling an interrupt that is
 * already pending wakes v like an injection. */
void virq_enable(struct vcpu *v, unsigned intid, bool enabled);
/* virq_enable without the telling: true if v is to be told (virq_notify) of intid. */
bool virq_set_enabled_quietly(struct vcpu *v, unsigned intid, bool enabled);
/* The same for INTIDs 32 * word .. 32 * word + 31, bit n of enabled for each. */
void virq_enable_word(struct vcpu *v, unsigned word, uint32_t enabled);
bool virq_is_pending(const struct vcpu *v, unsigned intid);
void virq_clear_pending(struct vcpu *v, unsigned intid);
/* Boot: physical interrupt intid belongs to v. */
void virq_set_owner(unsigned intid, struct vcpu *v);
/* Whether v is the vCPU forwarded physical interrupt intid goes to (its route). */
bool virq_owned_by(unsigned intid, const struct vcpu *v);
/* A forwarded physical interrupt fired (and is masked): make it pending in its owner.
 * Returns false if nobody owns it. */
bool virq_forward_physical(unsigned intid);
/* A best-effort vCPU now held by `core`: the physical interrupts forwarded to it fire there. */
void virq_follow(struct vcpu *v, unsigned core);

#endif
