/* libapex buffers and blackboards: messages between the processes of the partition, copied by
 * the kernel into storage carved at creation from one pool (APEX_MESSAGE_POOL_SIZE).
 *
 * A buffer is a FIFO of messages. Its processes wait either to receive (it is empty) or to
 * send (it is full), never both, so one queue (FIFO or by priority, as created) holds them:
 * a send to an empty buffer with receivers waiting goes straight into the first receiver's
 * buffer, and a receive from a full buffer takes the first waiting sender's message in.
 * A blackboard holds one message until it is replaced or cleared; displaying one hands it to
 * every process waiting to read.
 */
#include "kernel.h"

/* Messages are stored 8-byte aligned after an 8-byte length. */
#define SLOT_SIZE(max) ((((unsigned)(max) + 7u) & ~7u) + 8u)

static uint64_t message_pool[APEX_MESSAGE_POOL_SIZE / 8];
static unsigned message_used;

struct apex_buffer {
	NAME_TYPE name;
	MESSAGE_SIZE_TYPE max_size;
	MESSAGE_RANGE_TYPE max_nb, count, head;
	unsigned char *slots;
	struct apex_waitq q;
};

struct apex_blackboard {
	NAME_TYPE name;
	MESSAGE_SIZE_TYPE max_size, length;
	EMPTY_INDICATOR_TYPE state;
	unsigned char *msg;
	struct apex_waitq q;
};

static struct apex_buffer buffers[APEX_MAX_BUFFERS];
static unsigned nbuffers;
static struct apex_blackboard boards[APEX_MAX_BLACKBOARDS];
static unsigned nboards;

void apex_buffers_reset(void)
{
	nbuffers = nboards = 0;
	message_used = 0;
	apex_k.counters.message_pool_used = 0;
}

static unsigned char *pool_take(unsigned bytes)
{
	unsigned char *p = (unsigned char *)message_pool + message_used;

	if (bytes > apex_k.limits[APEX_LIMIT_MESSAGE_POOL] - message_used)
		return 0;
	message_used += bytes;
	apex_k.counters.message_pool_used = message_used;
	return p;
}

/* --- Buffers --------------------------------------------------------------------------------- */

static struct apex_buffer *buffer_by_id(BUFFER_ID_TYPE id)
{
	return id >= 1 && (unsigned)id <= nbuffers ? &buffers[id - 1] : 0;
}

static int buffer_by_name(const char *name)
{
	for (unsigned i = 0; i < nbuffers; i++)
		if (apex_name_eq(buffers[i].name, name))
			return (int)i + 1;
	return 0;
}

static unsigned char *slot(const struct apex_buffer *b, MESSAGE_RANGE_TYPE i)
{
	return b->slots + (unsigned)i * SLOT_SIZE(b->max_size);
}

static void put(struct apex_buffer *b, const void *msg, MESSAGE_SIZE_TYPE length)
{
	MESSAGE_RANGE_TYPE tail = (b->head + b->count) % b->max_nb;
	unsigned char *s = slot(b, tail);

	*(uint64_t *)(void *)s = (uint64_t)length;
	__builtin_memcpy(s + 8, msg, (unsigned)length);
	b->count++;
}

static MESSAGE_SIZE_TYPE take(struct apex_buffer *b, void *msg)
{
	unsigned char *s = slot(b, b->head);
	MESSAGE_SIZE_TYPE length = (MESSAGE_SIZE_TYPE) * (uint64_t *)(void *)s;

	__builtin_memcpy(msg, s + 8, (unsigned)length);
	b->head = (b->head + 1) % b->max_nb;
	b->count--;
	return length;
}

/* What CREATE_BUFFER and CREATE_BLACKBOARD share, in the order of their checks: the table,
 * the name, the parameters, the mode, then the storage from the message pool. */
static RETURN_CODE_TYPE create_checks(unsigned count, unsigned max, int existing, int params_ok,
				      unsigned bytes, unsigned char **storage, APEX_INTEGER *id)
{
	if (count >= max)
		return INVALID_CONFIG;
	if (existing) {
		*id = existing;
		return NO_ACTION;
	}
	if (!params_ok)
		return INVALID_PARAM;
	if (apex_k.mode == NORMAL)
		return INVALID_MODE;
	*storage = pool_take(bytes);
	return *storage ? NO_ERROR : INVALID_CONFIG; /* the message pool is used up */
}

static int discipline_valid(QUEUING_DISCIPLINE_TYPE d)
{
	return d == FIFO || d == PRIORITY;
}

void CREATE_BUFFER(const char *BUFFER_NAME, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
		   MESSAGE_RANGE_TYPE MAX_NB_MESSAGE, QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE,
		   BUFFER_ID_TYPE *BUFFER_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	unsigned char *slots = 0;
	int params_ok = apex_name_valid(BUFFER_NAME) && MAX_MESSAGE_SIZE > 0 &&
			MAX_MESSAGE_SIZE <= APEX_MESSAGE_POOL_SIZE && MAX_NB_MESSAGE > 0 &&
			MAX_NB_MESSAGE <= MAX_NUMBER_OF_MESSAGES &&
			discipline_valid(QUEUING_DISCIPLINE);
	RETURN_CODE_TYPE rc = create_checks(
		nbuffers, apex_k.limits[APEX_LIMIT_BUFFERS], buffer_by_name(BUFFER_NAME), params_ok,
		SLOT_SIZE(MAX_MESSAGE_SIZE) * (unsigned)MAX_NB_MESSAGE, &slots, BUFFER_ID);

	if (rc == NO_ERROR) {
		struct apex_buffer *b = &buffers[nbuffers++];

		*b = (struct apex_buffer){ 0 };
		apex_name_copy(b->name, BUFFER_NAME);
		b->max_size = MAX_MESSAGE_SIZE;
		b->max_nb = MAX_NB_MESSAGE;
		b->slots = slots;
		apex_waitq_init(&b->q, QUEUING_DISCIPLINE);
		*BUFFER_ID = (BUFFER_ID_TYPE)nbuffers;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void SEND_BUFFER(BUFFER_ID_TYPE BUFFER_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
		 SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_buffer *b = buffer_by_id(BUFFER_ID);
	struct apex_process *w;
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!b || LENGTH <= 0 || LENGTH > b->max_size || !apex_timeout_valid(TIME_OUT)) {
		rc = INVALID_PARAM;
	} else if (b->count == 0 && (w = apex_waitq_first(&b->q)) != 0) {
		/* Empty with receivers waiting: straight to the first. */
		__builtin_memcpy(w->req.buf, MESSAGE_ADDR, (unsigned)LENGTH);
		*w->req.length_out = LENGTH;
		apex_unblock(w, NO_ERROR);
		apex_reschedule();
	} else if (b->count < b->max_nb) {
		put(b, MESSAGE_ADDR, LENGTH);
	} else if (TIME_OUT == 0) {
		rc = NOT_AVAILABLE;
	} else {
		bh_mmu_check_access(MESSAGE_ADDR, (unsigned long)LENGTH, 0); /* a receiver reads it */
		rc = apex_wait_request(&b->q, TIME_OUT, MESSAGE_ADDR, LENGTH, 0, 0);
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void RECEIVE_BUFFER(BUFFER_ID_TYPE BUFFER_ID, SYSTEM_TIME_TYPE TIME_OUT,
		    MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
		    RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_buffer *b = buffer_by_id(BUFFER_ID);
	struct apex_process *w;
	RETURN_CODE_TYPE rc = NO_ERROR;

	*LENGTH = 0;
	if (!b || !apex_timeout_valid(TIME_OUT)) {
		rc = INVALID_PARAM;
	} else if (b->count > 0) {
		*LENGTH = take(b, MESSAGE_ADDR);
		/* It was full: the first waiting sender's message takes the free slot. */
		if ((w = apex_waitq_first(&b->q)) != 0) {
			put(b, w->req.buf, w->req.length);
			apex_unblock(w, NO_ERROR);
			apex_reschedule();
		}
	} else if (TIME_OUT == 0) {
		rc = NOT_AVAILABLE;
	} else {
		bh_mmu_check_access(MESSAGE_ADDR, (unsigned long)b->max_size, 1); /* a sender fills it */
		rc = apex_wait_request(&b->q, TIME_OUT, MESSAGE_ADDR, 0, LENGTH, 0);
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_BUFFER_ID(const char *BUFFER_NAME, BUFFER_ID_TYPE *BUFFER_ID,
		   RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = buffer_by_name(BUFFER_NAME);

	if (!id) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*BUFFER_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_BUFFER_STATUS(BUFFER_ID_TYPE BUFFER_ID, BUFFER_STATUS_TYPE *BUFFER_STATUS,
		       RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_buffer *b = buffer_by_id(BUFFER_ID);

	if (b) {
		BUFFER_STATUS->NB_MESSAGE = b->count;
		BUFFER_STATUS->MAX_NB_MESSAGE = b->max_nb;
		BUFFER_STATUS->MAX_MESSAGE_SIZE = b->max_size;
		BUFFER_STATUS->WAITING_PROCESSES = b->q.count;
	}
	apex_leave(flags);
	*RETURN_CODE = b ? NO_ERROR : INVALID_PARAM;
}

/* --- Blackboards ------------------------------------------------------------------------------- */

static struct apex_blackboard *board_by_id(BLACKBOARD_ID_TYPE id)
{
	return id >= 1 && (unsigned)id <= nboards ? &boards[id - 1] : 0;
}

static int board_by_name(const char *name)
{
	for (unsigned i = 0; i < nboards; i++)
		if (apex_name_eq(boards[i].name, name))
			return (int)i + 1;
	return 0;
}

void CREATE_BLACKBOARD(const char *BLACKBOARD_NAME, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
		       BLACKBOARD_ID_TYPE *BLACKBOARD_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	unsigned char *msg = 0;
	int params_ok = apex_name_valid(BLACKBOARD_NAME) && MAX_MESSAGE_SIZE > 0 &&
			MAX_MESSAGE_SIZE <= APEX_MESSAGE_POOL_SIZE;
	RETURN_CODE_TYPE rc = create_checks(nboards, apex_k.limits[APEX_LIMIT_BLACKBOARDS],
					    board_by_name(BLACKBOARD_NAME), params_ok,
					    SLOT_SIZE(MAX_MESSAGE_SIZE), &msg, BLACKBOARD_ID);

	if (rc == NO_ERROR) {
		struct apex_blackboard *bb = &boards[nboards++];

		*bb = (struct apex_blackboard){ 0 };
		apex_name_copy(bb->name, BLACKBOARD_NAME);
		bb->max_size = MAX_MESSAGE_SIZE;
		bb->state = EMPTY;
		bb->msg = msg;
		apex_waitq_init(&bb->q, FIFO);
		*BLACKBOARD_ID = (BLACKBOARD_ID_TYPE)nboards;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void DISPLAY_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_blackboard *bb = board_by_id(BLACKBOARD_ID);
	struct apex_process *w;
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!bb || LENGTH <= 0 || LENGTH > bb->max_size) {
		rc = INVALID_PARAM;
	} else {
		/* A message that runs into a page the caller cannot read is its fault here, before
		 * the board holds half of it. */
		bh_mmu_check_access(MESSAGE_ADDR, (unsigned long)LENGTH, 0);
		__builtin_memcpy(bb->msg, MESSAGE_ADDR, (unsigned)LENGTH);
		bb->length = LENGTH;
		bb->state = OCCUPIED;
		while ((w = apex_waitq_first(&bb->q)) != 0) {
			__builtin_memcpy(w->req.buf, bb->msg, (unsigned)LENGTH);
			*w->req.length_out = LENGTH;
			apex_unblock(w, NO_ERROR);
		}
		apex_reschedule();
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void READ_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, SYSTEM_TIME_TYPE TIME_OUT,
		     MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
		     RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_blackboard *bb = board_by_id(BLACKBOARD_ID);
	RETURN_CODE_TYPE rc = NO_ERROR;

	*LENGTH = 0;
	if (!bb || !apex_timeout_valid(TIME_OUT)) {
		rc = INVALID_PARAM;
	} else if (bb->state == OCCUPIED) {
		__builtin_memcpy(MESSAGE_ADDR, bb->msg, (unsigned)bb->length);
		*LENGTH = bb->length;
	} else if (TIME_OUT == 0) {
		rc = NOT_AVAILABLE;
	} else {
		bh_mmu_check_access(MESSAGE_ADDR, (unsigned long)bb->max_size, 1); /* DISPLAY fills it */
		rc = apex_wait_request(&bb->q, TIME_OUT, MESSAGE_ADDR, 0, LENGTH, 0);
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void CLEAR_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_blackboard *bb = board_by_id(BLACKBOARD_ID);

	if (bb)
		bb->state = EMPTY;
	apex_leave(flags);
	*RETURN_CODE = bb ? NO_ERROR : INVALID_PARAM;
}

void GET_BLACKBOARD_ID(const char *BLACKBOARD_NAME, BLACKBOARD_ID_TYPE *BLACKBOARD_ID,
		       RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = board_by_name(BLACKBOARD_NAME);

	if (!id) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*BLACKBOARD_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_BLACKBOARD_STATUS(BLACKBOARD_ID_TYPE BLACKBOARD_ID,
			   BLACKBOARD_STATUS_TYPE *BLACKBOARD_STATUS,
			   RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_blackboard *bb = board_by_id(BLACKBOARD_ID);

	if (bb) {
		BLACKBOARD_STATUS->EMPTY_INDICATOR = bb->state;
		BLACKBOARD_STATUS->MAX_MESSAGE_SIZE = bb->max_size;
		BLACKBOARD_STATUS->WAITING_PROCESSES = bb->q.count;
	}
	apex_leave(flags);
	*RETURN_CODE = bb ? NO_ERROR : INVALID_PARAM;
}
