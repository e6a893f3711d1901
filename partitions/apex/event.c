/* libapex events: SET_EVENT makes every waiter ready (in the order they came), and the event
 * stays UP until RESET_EVENT. */
#include "kernel.h"

struct apex_event {
	NAME_TYPE name;
	EVENT_STATE_TYPE state;
	struct apex_waitq q;
};

static struct apex_event events[APEX_MAX_EVENTS];
static unsigned nevents;

void apex_events_reset(void)
{
	nevents = 0;
}

static struct apex_event *event_by_id(EVENT_ID_TYPE id)
{
	return id >= 1 && (unsigned)id <= nevents ? &events[id - 1] : 0;
}

static int event_by_name(const char *name)
{
	for (unsigned i = 0; i < nevents; i++)
		if (apex_name_eq(events[i].name, name))
			return (int)i + 1;
	return 0;
}

void CREATE_EVENT(const char *EVENT_NAME, EVENT_ID_TYPE *EVENT_ID,
		  RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;
	int existing;

	if (nevents >= apex_k.limits[APEX_LIMIT_EVENTS]) {
		rc = INVALID_CONFIG;
	} else if ((existing = event_by_name(EVENT_NAME)) != 0) {
		rc = NO_ACTION;
		*EVENT_ID = existing;
	} else if (!apex_name_valid(EVENT_NAME)) {
		rc = INVALID_PARAM;
	} else if (apex_k.mode == NORMAL) {
		rc = INVALID_MODE;
	} else {
		struct apex_event *e = &events[nevents++];

		apex_name_copy(e->name, EVENT_NAME);
		e->state = DOWN;
		apex_waitq_init(&e->q, FIFO);
		*EVENT_ID = (EVENT_ID_TYPE)nevents;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void SET_EVENT(EVENT_ID_TYPE EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_event *e = event_by_id(EVENT_ID);
	struct apex_process *w;

	if (e) {
		e->state = UP;
		while ((w = apex_waitq_first(&e->q)) != 0)
			apex_unblock(w, NO_ERROR);
		apex_reschedule();
	}
	apex_leave(flags);
	*RETURN_CODE = e ? NO_ERROR : INVALID_PARAM;
}

void RESET_EVENT(EVENT_ID_TYPE EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_event *e = event_by_id(EVENT_ID);

	if (e)
		e->state = DOWN;
	apex_leave(flags);
	*RETURN_CODE = e ? NO_ERROR : INVALID_PARAM;
}

void WAIT_EVENT(EVENT_ID_TYPE EVENT_ID, SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_event *e = event_by_id(EVENT_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!e || !apex_timeout_valid(TIME_OUT))
		rc = INVALID_PARAM;
	else if (e->state == UP)
		rc = NO_ERROR;
	else if (TIME_OUT == 0)
		rc = NOT_AVAILABLE;
	else if (!apex_may_block())
		rc = INVALID_MODE;
	else
		rc = apex_block_current(APEX_BLOCK_RESOURCE, &e->q,
					TIME_OUT == INFINITE_TIME_VALUE ? INFINITE_TIME_VALUE
									: apex_now() + TIME_OUT);
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_EVENT_ID(const char *EVENT_NAME, EVENT_ID_TYPE *EVENT_ID,
		  RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = event_by_name(EVENT_NAME);

	if (!id) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*EVENT_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_EVENT_STATUS(EVENT_ID_TYPE EVENT_ID, EVENT_STATUS_TYPE *EVENT_STATUS,
		      RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_event *e = event_by_id(EVENT_ID);

	if (e) {
		EVENT_STATUS->EVENT_STATE = e->state;
		EVENT_STATUS->WAITING_PROCESSES = e->q.count;
	}
	apex_leave(flags);
	*RETURN_CODE = e ? NO_ERROR : INVALID_PARAM;
}
