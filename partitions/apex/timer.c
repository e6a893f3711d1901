/* libapex time: one sorted list of one-shot timers per vCPU on its EL1 virtual timer (CNTV),
 * which is always armed for the earliest of them and disabled when there is none, so no
 * interrupt comes that has nothing to do (a tick-less kernel). A process's timers are in its
 * core's list; another vCPU that makes one the earliest there kicks that core, whose interrupt
 * path reprograms its timer (a cancel needs no kick: an early interrupt finds nothing due).
 * Times are ns of the system counter (CNTVOFF_EL2 = 0: the counter since power-on, the same
 * clock in every partition).
 */
#include "kernel.h"

#define CNTV_CTL_ENABLE 1ul

SYSTEM_TIME_TYPE apex_now(void)
{
	return (SYSTEM_TIME_TYPE)bh_now_ns();
}

SYSTEM_TIME_TYPE apex_deadline_after(SYSTEM_TIME_TYPE now, SYSTEM_TIME_TYPE delta)
{
	if (delta < 0 || delta > APEX_MAX_DELAY)
		return -1;
	return now + delta;
}

/* The compare value rounds up, so the interrupt never comes before the earliest expiry. */
void apex_timer_program(struct apex_core *c)
{
	if (apex_list_empty(&c->timers)) {
		__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
		return;
	}
	struct apex_timer *t = apex_container_of(c->timers.next, struct apex_timer, link);
	unsigned long long cval = bh_ns_to_ticks((unsigned long long)t->at);

	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(cval), "r"(CNTV_CTL_ENABLE) : "memory");
}

static int armed(const struct apex_timer *t)
{
	return t->link.next != &t->link;
}

/* Behind every timer of the same expiry: equal times expire in the order they were armed. */
void apex_timer_arm(struct apex_timer *t, SYSTEM_TIME_TYPE at)
{
	struct apex_core *c = t->core;
	struct apex_link *pos;

	if (armed(t))
		apex_list_remove(&t->link);
	t->at = at;
	for (pos = c->timers.next; pos != &c->timers; pos = pos->next)
		if (apex_container_of(pos, struct apex_timer, link)->at > at)
			break;
	apex_list_insert_before(pos, &t->link);
	if (c->timers.next != &t->link)
		return;
	if (c == apex_here())
		apex_timer_program(c);
	else
		apex_kick(c);
}

void apex_timer_cancel(struct apex_timer *t)
{
	if (!armed(t))
		return;
	int was_first = t->core->timers.next == &t->link;

	apex_list_remove(&t->link);
	if (was_first && t->core == apex_here())
		apex_timer_program(t->core);
}

/* A wake timer ends what its process waits for: a delay or release on time, a suspension or a
 * wait on a resource by its time-out. */
static void wake_expired(struct apex_process *p)
{
	apex_unblock(p, p->block == APEX_BLOCK_TIME ? NO_ERROR : TIMED_OUT);
}

/* BH_VIRQ_VTIMER handler (IRQs masked, kernel stack), and the kick's: this vCPU's timers.
 * Reprogramming the compare value into the future, or disabling the timer, drops the
 * interrupt's level before its EOI. */
void apex_timer_irq(unsigned intid)
{
	struct apex_core *c = apex_here();
	SYSTEM_TIME_TYPE now = apex_now();

	(void)intid;
	if (apex_multi())
		apex_lock_take();
	while (!apex_list_empty(&c->timers)) {
		struct apex_timer *t = apex_container_of(c->timers.next, struct apex_timer, link);

		if (t->at > now)
			break;
		apex_list_remove(&t->link);
		if (t->kind == APEX_TIMER_WAKE)
			wake_expired(apex_container_of(t, struct apex_process, wake));
		else
			apex_deadline_missed(apex_container_of(t, struct apex_process, deadline));
	}
	apex_timer_program(c);
	if (apex_multi())
		apex_lock_give();
}

/* --- Time services -------------------------------------------------------------------------- */

void GET_TIME(SYSTEM_TIME_TYPE *SYSTEM_TIME, RETURN_CODE_TYPE *RETURN_CODE)
{
	*SYSTEM_TIME = apex_now();
	*RETURN_CODE = NO_ERROR;
}

void TIMED_WAIT(SYSTEM_TIME_TYPE DELAY_TIME, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_may_block()) {
		rc = INVALID_MODE;
	} else if (DELAY_TIME < 0 || DELAY_TIME > APEX_MAX_DELAY) {
		rc = INVALID_PARAM; /* INFINITE_TIME_VALUE included */
	} else if (DELAY_TIME == 0) {
		/* A yield: behind the other ready processes of the same priority. */
		apex_ready_rotate(apex_current());
		apex_reschedule();
	} else {
		rc = apex_block_current(APEX_BLOCK_TIME, 0, apex_now() + DELAY_TIME);
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void PERIODIC_WAIT(RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_current();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_may_block() || p->attr.PERIOD == INFINITE_TIME_VALUE) {
		rc = INVALID_MODE;
	} else {
		/* Release points come from the plan, never from when the process woke. */
		SYSTEM_TIME_TYPE next = apex_time_add(p->release, p->attr.PERIOD), now = apex_now();

		apex_record_response(p, now);
		p->release = next;
		p->counters.activations++;
		apex_deadline_set(p, next);
		if (next > now) {
			rc = apex_block_current(APEX_BLOCK_TIME, 0, next);
		} else {
			apex_ready_rotate(p); /* released already: a new activation, at the tail */
			apex_reschedule();
		}
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void REPLENISH(SYSTEM_TIME_TYPE BUDGET_TIME, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_current();
	SYSTEM_TIME_TYPE now = apex_now();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_in_process() || apex_in_handler() || apex_k.mode != NORMAL) {
		rc = NO_ACTION;
	} else if (BUDGET_TIME != INFINITE_TIME_VALUE &&
		   apex_deadline_after(now, BUDGET_TIME) < 0) {
		rc = INVALID_PARAM;
	} else if (p->attr.PERIOD != INFINITE_TIME_VALUE &&
		   (BUDGET_TIME == INFINITE_TIME_VALUE ||
		    now + BUDGET_TIME > apex_time_add(p->release, p->attr.PERIOD))) {
		rc = INVALID_MODE; /* beyond the next release point */
	} else if (BUDGET_TIME == INFINITE_TIME_VALUE ||
		   p->attr.TIME_CAPACITY == INFINITE_TIME_VALUE) {
		p->deadline.at = INFINITE_TIME_VALUE;
		apex_timer_cancel(&p->deadline);
	} else {
		apex_timer_arm(&p->deadline, now + BUDGET_TIME);
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}
