/* libapex counting semaphores. A SIGNAL with waiters hands the unit straight to the first
 * waiter (FIFO or by priority, as created), so the value stays 0 and no later WAIT can take
 * it first. */
#include "kernel.h"

struct apex_sem {
	NAME_TYPE name;
	SEMAPHORE_VALUE_TYPE value, max;
	struct apex_waitq q;
};

static struct apex_sem sems[APEX_MAX_SEMAPHORES];
static unsigned nsems;

void apex_sems_reset(void)
{
	nsems = 0;
}

static struct apex_sem *sem_by_id(SEMAPHORE_ID_TYPE id)
{
	return id >= 1 && (unsigned)id <= nsems ? &sems[id - 1] : 0;
}

static int sem_by_name(const char *name)
{
	for (unsigned i = 0; i < nsems; i++)
		if (apex_name_eq(sems[i].name, name))
			return (int)i + 1;
	return 0;
}

void CREATE_SEMAPHORE(const char *SEMAPHORE_NAME, SEMAPHORE_VALUE_TYPE CURRENT_VALUE,
		      SEMAPHORE_VALUE_TYPE MAXIMUM_VALUE,
		      QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE, SEMAPHORE_ID_TYPE *SEMAPHORE_ID,
		      RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;
	int existing;

	if (nsems >= apex_k.limits[APEX_LIMIT_SEMAPHORES]) {
		rc = INVALID_CONFIG;
	} else if ((existing = sem_by_name(SEMAPHORE_NAME)) != 0) {
		rc = NO_ACTION;
		*SEMAPHORE_ID = existing;
	} else if (!apex_name_valid(SEMAPHORE_NAME) || MAXIMUM_VALUE < 1 ||
		   MAXIMUM_VALUE > MAX_SEMAPHORE_VALUE || CURRENT_VALUE < 0 ||
		   CURRENT_VALUE > MAXIMUM_VALUE ||
		   (QUEUING_DISCIPLINE != FIFO && QUEUING_DISCIPLINE != PRIORITY)) {
		rc = INVALID_PARAM;
	} else if (apex_k.mode == NORMAL) {
		rc = INVALID_MODE;
	} else {
		struct apex_sem *s = &sems[nsems++];

		apex_name_copy(s->name, SEMAPHORE_NAME);
		s->value = CURRENT_VALUE;
		s->max = MAXIMUM_VALUE;
		apex_waitq_init(&s->q, QUEUING_DISCIPLINE);
		*SEMAPHORE_ID = (SEMAPHORE_ID_TYPE)nsems;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void WAIT_SEMAPHORE(SEMAPHORE_ID_TYPE SEMAPHORE_ID, SYSTEM_TIME_TYPE TIME_OUT,
		    RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_sem *s = sem_by_id(SEMAPHORE_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!s || !apex_timeout_valid(TIME_OUT))
		rc = INVALID_PARAM;
	else if (s->value > 0)
		s->value--;
	else if (TIME_OUT == 0)
		rc = NOT_AVAILABLE;
	else if (!apex_may_block())
		rc = INVALID_MODE;
	else
		rc = apex_block_current(APEX_BLOCK_RESOURCE, &s->q,
					TIME_OUT == INFINITE_TIME_VALUE ? INFINITE_TIME_VALUE
									: apex_now() + TIME_OUT);
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void SIGNAL_SEMAPHORE(SEMAPHORE_ID_TYPE SEMAPHORE_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_sem *s = sem_by_id(SEMAPHORE_ID);
	struct apex_process *w;
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!s) {
		rc = INVALID_PARAM;
	} else if ((w = apex_waitq_first(&s->q)) != 0) {
		apex_unblock(w, NO_ERROR);
		apex_reschedule();
	} else if (s->value == s->max) {
		rc = NO_ACTION;
	} else {
		s->value++;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_SEMAPHORE_ID(const char *SEMAPHORE_NAME, SEMAPHORE_ID_TYPE *SEMAPHORE_ID,
		      RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = sem_by_name(SEMAPHORE_NAME);

	if (!id) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*SEMAPHORE_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_SEMAPHORE_STATUS(SEMAPHORE_ID_TYPE SEMAPHORE_ID, SEMAPHORE_STATUS_TYPE *SEMAPHORE_STATUS,
			  RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_sem *s = sem_by_id(SEMAPHORE_ID);

	if (s) {
		SEMAPHORE_STATUS->CURRENT_VALUE = s->value;
		SEMAPHORE_STATUS->MAXIMUM_VALUE = s->max;
		SEMAPHORE_STATUS->WAITING_PROCESSES = s->q.count;
	}
	apex_leave(flags);
	*RETURN_CODE = s ? NO_ERROR : INVALID_PARAM;
}
