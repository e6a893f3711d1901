/* libapex process services, releases and deadlines.
 *
 * A process is DORMANT until started; started during initialization it waits for NORMAL
 * (APEX_BLOCK_NORMAL); in NORMAL it is released at once, after its delay, or, periodic, at
 * the next partition period start (apex_first_release). Its deadline is its release point
 * plus its TIME_CAPACITY, watched by a timer: expiry before PERIODIC_WAIT, REPLENISH or STOP
 * is a missed deadline (apex_deadline_missed).
 */
#include "kernel.h"

/* --- Releases and deadlines ------------------------------------------------------------------ */

/* The first partition period start at or after `now` (`now` itself without a period). */
SYSTEM_TIME_TYPE apex_first_release(SYSTEM_TIME_TYPE now)
{
	SYSTEM_TIME_TYPE p = apex_k.partition_period, o = apex_k.period_origin;

	if (p == INFINITE_TIME_VALUE || now <= o)
		return p == INFINITE_TIME_VALUE ? now : o;
	return o + (now - o + p - 1) / p * p;
}

void apex_deadline_set(struct apex_process *p, SYSTEM_TIME_TYPE release)
{
	if (p->attr.TIME_CAPACITY == INFINITE_TIME_VALUE) {
		apex_timer_cancel(&p->deadline);
		p->deadline.at = INFINITE_TIME_VALUE;
	} else {
		apex_timer_arm(&p->deadline, apex_time_add(release, p->attr.TIME_CAPACITY));
	}
}

void apex_release(struct apex_process *p, SYSTEM_TIME_TYPE release)
{
	p->release = release;
	p->counters.activations++;
	apex_deadline_set(p, release);
	if (release > apex_now()) {
		p->state = WAITING;
		p->block = APEX_BLOCK_TIME;
		apex_timer_arm(&p->wake, release);
	} else {
		p->block = APEX_BLOCK_NONE;
		p->state = p->suspended ? WAITING : READY; /* suspended during initialization */
		if (!p->suspended)
			apex_ready_add(p);
	}
}

/* An activation of p completes (PERIODIC_WAIT) at `now`: its response time is counted. */
void apex_record_response(struct apex_process *p, SYSTEM_TIME_TYPE now)
{
	SYSTEM_TIME_TYPE response = now - p->release;

	p->counters.completions++;
	if (response > p->counters.worst_response)
		p->counters.worst_response = response;
}

/* Deadline timer expired (timer interrupt): a process-level error for the error handler. The
 * process goes on; its deadline is not watched again until its next release or REPLENISH. */
void apex_deadline_missed(struct apex_process *p)
{
	p->counters.deadline_misses++;
	p->counters.last_missed_deadline = p->deadline.at;
	apex_k.counters.deadline_misses++;
	apex_error(DEADLINE_MISSED, p, 0, 0, 0);
}

/* The guard below p's stack is damaged or its frame lies in it: p cannot go on. It is
 * stopped and the error goes to the error handler. */
void apex_process_fault_stack(struct apex_process *p)
{
	p->counters.stack_overflows++;
	apex_k.counters.stack_overflows++;
	apex_detach(p);
	apex_error(STACK_OVERFLOW, p, 0, 0, 0);
}

/* --- Services --------------------------------------------------------------------------------- */

static int find_by_name(const char *name)
{
	for (unsigned i = 0; i < apex_k.nprocs; i++)
		if (apex_name_eq(apex_k.procs[i].attr.NAME, name))
			return (int)i + 1;
	return 0;
}

static RETURN_CODE_TYPE check_attributes(const PROCESS_ATTRIBUTE_TYPE *a)
{
	SYSTEM_TIME_TYPE pp = apex_k.partition_period;
	int periodic = a->PERIOD != INFINITE_TIME_VALUE;

	if (!apex_name_valid(a->NAME) || !a->ENTRY_POINT)
		return INVALID_PARAM;
	RETURN_CODE_TYPE fits = apex_stack_fits(a->STACK_SIZE);
	if (fits != NO_ERROR)
		return fits; /* INVALID_CONFIG: the pool is used up */
	if (a->BASE_PRIORITY < MIN_PRIORITY_VALUE || a->BASE_PRIORITY > MAX_PRIORITY_VALUE)
		return INVALID_PARAM;
	if (periodic && !apex_timeout_valid(a->PERIOD))
		return INVALID_PARAM;
	if (a->PERIOD == 0)
		return INVALID_PARAM;
	if (periodic && pp != INFINITE_TIME_VALUE && a->PERIOD % pp != 0)
		return INVALID_CONFIG;
	if (a->TIME_CAPACITY != INFINITE_TIME_VALUE &&
	    (a->TIME_CAPACITY <= 0 || !apex_timeout_valid(a->TIME_CAPACITY)))
		return INVALID_PARAM;
	if (periodic && (a->TIME_CAPACITY == INFINITE_TIME_VALUE || a->TIME_CAPACITY > a->PERIOD))
		return INVALID_PARAM;
	if (a->DEADLINE != SOFT && a->DEADLINE != HARD)
		return INVALID_PARAM;
	return apex_config_allows_process(a) ? NO_ERROR : INVALID_CONFIG;
}

void CREATE_PROCESS(PROCESS_ATTRIBUTE_TYPE *ATTRIBUTES, PROCESS_ID_TYPE *PROCESS_ID,
		    RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;
	int existing;

	if (apex_k.nprocs >= apex_k.limits[APEX_LIMIT_PROCESSES]) {
		rc = INVALID_CONFIG;
	} else if (!ATTRIBUTES) {
		rc = INVALID_PARAM;
	} else if ((existing = find_by_name(ATTRIBUTES->NAME)) != 0) {
		rc = NO_ACTION;
		*PROCESS_ID = existing;
	} else if ((rc = check_attributes(ATTRIBUTES)) != NO_ERROR) {
		/* rc says why */
	} else if (apex_k.mode == NORMAL) {
		rc = INVALID_MODE;
	} else {
		struct apex_process *p = &apex_k.procs[apex_k.nprocs];

		*p = (struct apex_process){ 0 };
		p->attr = *ATTRIBUTES;
		apex_name_copy(p->attr.NAME, ATTRIBUTES->NAME);
		p->id = (PROCESS_ID_TYPE)++apex_k.nprocs;
		p->prio = p->attr.BASE_PRIORITY;
		/* The description's affinity, else the initialization's core. */
		int core = apex_config_core(p->attr.NAME);
		apex_bind(p, &apex_cores[(unsigned)core < apex_k.ncores ? core : 0]);
		p->state = DORMANT;
		p->may_block = 1;
		apex_list_init(&p->ready_link);
		apex_list_init(&p->wait_link);
		apex_list_init(&p->wake.link);
		apex_list_init(&p->deadline.link);
		p->wake.kind = APEX_TIMER_WAKE;
		p->deadline.kind = APEX_TIMER_DEADLINE;
		p->deadline.at = INFINITE_TIME_VALUE;
		apex_stack_alloc(p, p->attr.STACK_SIZE);
		*PROCESS_ID = p->id;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

/* START and DELAYED_START: a fresh context; released now or when NORMAL begins. */
static void start_process(struct apex_process *p, SYSTEM_TIME_TYPE delay)
{
	apex_stack_reset(p);
	apex_set_priority(p, p->attr.BASE_PRIORITY);
	p->suspended = 0;
	p->wait_result = NO_ERROR;
	if (apex_k.mode != NORMAL) {
		p->state = WAITING;
		p->block = APEX_BLOCK_NORMAL;
		p->start_delay = delay;
		return;
	}
	SYSTEM_TIME_TYPE now = apex_now();

	if (p->attr.PERIOD == INFINITE_TIME_VALUE)
		apex_release(p, now + delay);
	else
		apex_release(p, apex_time_add(apex_first_release(now), delay));
	apex_reschedule();
}

/* DORMANT, and not still running: a process another vCPU stopped while it ran there is left
 * at that vCPU's next interrupt (the kick), and only then may its stack start afresh. */
static int startable(const struct apex_process *p)
{
	return p->state == DORMANT && p->core->cur != p;
}

void START(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!p)
		rc = INVALID_PARAM;
	else if (!startable(p))
		rc = NO_ACTION;
	else
		start_process(p, 0);
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void DELAYED_START(PROCESS_ID_TYPE PROCESS_ID, SYSTEM_TIME_TYPE DELAY_TIME,
		   RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!p)
		rc = INVALID_PARAM;
	else if (DELAY_TIME == INFINITE_TIME_VALUE || !apex_timeout_valid(DELAY_TIME))
		rc = INVALID_PARAM;
	else if (p->attr.PERIOD != INFINITE_TIME_VALUE && DELAY_TIME >= p->attr.PERIOD)
		rc = INVALID_PARAM;
	else if (!startable(p))
		rc = NO_ACTION;
	else
		start_process(p, DELAY_TIME);
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void STOP_SELF(void)
{
	unsigned long flags = apex_enter();

	if (apex_in_process()) {
		apex_detach(apex_current());
		apex_reschedule(); /* does not come back */
	}
	apex_leave(flags);
}

void STOP(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!p || p == apex_current())
		rc = INVALID_PARAM;
	else if (p->state == DORMANT)
		rc = NO_ACTION;
	else
		apex_detach(p);
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void SUSPEND_SELF(SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_current();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_may_block())
		rc = INVALID_MODE;
	else if (!apex_timeout_valid(TIME_OUT))
		rc = INVALID_PARAM;
	else if (p->attr.PERIOD != INFINITE_TIME_VALUE)
		rc = INVALID_MODE;
	else if (TIME_OUT != 0)
		rc = apex_block_current(APEX_BLOCK_SUSPEND_SELF, 0,
					TIME_OUT == INFINITE_TIME_VALUE ? INFINITE_TIME_VALUE
									: apex_now() + TIME_OUT);
	apex_leave(flags);
	*RETURN_CODE = rc;
}

static int is_suspended(const struct apex_process *p)
{
	return p->suspended || p->block == APEX_BLOCK_SUSPEND_SELF;
}

void SUSPEND(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!p || p == apex_current())
		rc = INVALID_PARAM;
	else if (p->state == DORMANT || p->attr.PERIOD != INFINITE_TIME_VALUE ||
		 (p->core->lock_level > 0 && p->core->lock_owner == p))
		rc = INVALID_MODE; /* the holder of its core's preemption lock keeps the core */
	else if (is_suspended(p))
		rc = NO_ACTION;
	else {
		/* It keeps waiting for whatever it waited for; it is not ready until resumed. */
		p->suspended = 1;
		if (p->state == READY) {
			apex_ready_remove(p);
			p->state = WAITING;
		}
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void RESUME(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!p || p == apex_current()) {
		rc = INVALID_PARAM;
	} else if (p->state == DORMANT) {
		rc = INVALID_MODE;
	} else if (!is_suspended(p)) {
		rc = NO_ACTION;
	} else if (p->block == APEX_BLOCK_SUSPEND_SELF) {
		apex_unblock(p, NO_ERROR); /* its SUSPEND_SELF returns NO_ERROR */
		apex_reschedule();
	} else {
		p->suspended = 0;
		if (p->block == APEX_BLOCK_NONE) {
			p->state = READY;
			apex_ready_add(p);
			apex_reschedule();
		}
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void SET_PRIORITY(PROCESS_ID_TYPE PROCESS_ID, PRIORITY_TYPE PRIORITY,
		  RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!p || PRIORITY < MIN_PRIORITY_VALUE || PRIORITY > MAX_PRIORITY_VALUE) {
		rc = INVALID_PARAM;
	} else if (p->state == DORMANT) {
		rc = INVALID_MODE;
	} else {
		/* The newest of its new priority, running or not. */
		if (p->state == READY)
			apex_ready_remove(p);
		apex_set_priority(p, PRIORITY);
		if (p->state == READY)
			apex_ready_add(p);
		apex_waitq_reposition(p);
		apex_reschedule();
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

/* The lock level is the calling vCPU's: preemption is locked on its core only, and the
 * processes of other cores go on (ARINC 653 multicore). */
void LOCK_PREEMPTION(LOCK_LEVEL_TYPE *LOCK_LEVEL, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_core *c = apex_here();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_in_process() || apex_in_handler())
		rc = NO_ACTION;
	else if (c->lock_level >= MAX_LOCK_LEVEL)
		rc = INVALID_CONFIG;
	else if (c->lock_level++ == 0)
		c->lock_owner = c->cur;
	*LOCK_LEVEL = c->lock_level;
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void UNLOCK_PREEMPTION(LOCK_LEVEL_TYPE *LOCK_LEVEL, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_core *c = apex_here();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_in_process() || apex_in_handler() || c->lock_level == 0) {
		rc = NO_ACTION;
	} else if (--c->lock_level == 0) {
		apex_reschedule(); /* what became ready meanwhile runs now */
	}
	*LOCK_LEVEL = c->lock_level;
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_MY_ID(PROCESS_ID_TYPE *PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	if (!apex_in_process() || apex_in_handler()) {
		*RETURN_CODE = INVALID_MODE;
		return;
	}
	*PROCESS_ID = apex_current()->id;
	*RETURN_CODE = NO_ERROR;
}

void GET_PROCESS_ID(const char *PROCESS_NAME, PROCESS_ID_TYPE *PROCESS_ID,
		    RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = find_by_name(PROCESS_NAME);

	if (!id) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*PROCESS_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_PROCESS_STATUS(PROCESS_ID_TYPE PROCESS_ID, PROCESS_STATUS_TYPE *PROCESS_STATUS,
			RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);

	if (!p) {
		apex_leave(flags);
		*RETURN_CODE = INVALID_PARAM;
		return;
	}
	PROCESS_STATUS->ATTRIBUTES = p->attr;
	PROCESS_STATUS->CURRENT_PRIORITY = p->prio;
	PROCESS_STATUS->DEADLINE_TIME = p->state == DORMANT ? INFINITE_TIME_VALUE : p->deadline.at;
	PROCESS_STATUS->PROCESS_STATE =
		p == p->core->cur && p->state == READY ? RUNNING : (PROCESS_STATE_TYPE)p->state;
	PROCESS_STATUS->PROCESSOR_CORE_ID = p->core->vcpu;
	apex_leave(flags);
	*RETURN_CODE = NO_ERROR;
}

void apex_get_process_counters(PROCESS_ID_TYPE PROCESS_ID, struct apex_process_counters *c,
			       RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);

	if (p)
		*c = p->counters;
	apex_leave(flags);
	*RETURN_CODE = p ? NO_ERROR : INVALID_PARAM;
}

/* --- Multicore (ARINC 653 Part 1 Supplement 4) -------------------------------------------------- */

void INITIALIZE_PROCESS_CORE_AFFINITY(PROCESS_ID_TYPE PROCESS_ID,
				      PROCESSOR_CORE_ID_TYPE PROCESSOR_CORE_ID,
				      RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *p = apex_process_by_id(PROCESS_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;
	int declared = p ? apex_config_core(p->attr.NAME) : -1;

	if (!p)
		rc = INVALID_PARAM;
	else if (PROCESSOR_CORE_ID < 0 || (unsigned)PROCESSOR_CORE_ID >= apex_k.ncores ||
		 (declared >= 0 && declared != PROCESSOR_CORE_ID))
		rc = INVALID_CONFIG; /* not a core of this partition, or not the description's */
	else if (apex_k.mode == NORMAL)
		rc = INVALID_MODE;
	else
		apex_bind(p, &apex_cores[PROCESSOR_CORE_ID]); /* in no queue, no timer yet */
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_MY_PROCESSOR_CORE_ID(PROCESSOR_CORE_ID_TYPE *PROCESSOR_CORE_ID,
			      RETURN_CODE_TYPE *RETURN_CODE)
{
	*PROCESSOR_CORE_ID = apex_here()->vcpu;
	*RETURN_CODE = NO_ERROR;
}
