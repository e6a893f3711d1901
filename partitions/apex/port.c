/* libapex sampling and queuing ports over Bulkhead's channels (docs/ports.md).
 *
 * The hypervisor's port calls never block. A process whose queuing receive finds the queue
 * empty, or whose send finds it full, waits on the port (FIFO or by priority, as created)
 * and other processes run. The hypervisor raises BH_VIRQ_PORT when the port becomes ready
 * (re-armed by every receive or send, failed ones included, so the failed call that made the
 * process wait armed it); the interrupt handler then completes the waiters' calls in their
 * order, into and from their own buffers, and makes them ready. A call never overtakes
 * processes already waiting on its port.
 *
 * The first process waiting on a queuing destination has its buffer posted with the
 * hypervisor (BH_HC_QUEUING_RECEIVE_POST): a message then goes from the sender straight into
 * it and the post's status word says so, and the interrupt handler only makes the process
 * ready, with no call. A post is withdrawn (BH_HC_QUEUING_RECEIVE_CANCEL) when its process
 * stops waiting otherwise (time-out, STOP, a waiter of higher priority ahead of it) or the
 * idle loop waits on the port instead; the cancel's answer and the status word say whether a
 * message came first, and then the receive is complete.
 */
#include "kernel.h"

enum port_kind { PORT_SAMPLING, PORT_QUEUING };

struct apex_port {
	NAME_TYPE name;
	uint8_t kind;
	uint8_t direction;
	int desc;                        /* Bulkhead descriptor */
	MESSAGE_SIZE_TYPE max_size;
	MESSAGE_RANGE_TYPE max_nb;       /* queuing */
	SYSTEM_TIME_TYPE refresh;        /* sampling */
	VALIDITY_TYPE last_validity;     /* sampling: of the last message read */
	struct apex_waitq q;             /* queuing */
	struct apex_process *posted;     /* destination: the waiter whose buffer is posted */
	volatile unsigned long long post_status; /* the post's status word (the hypervisor's) */
};

static struct apex_port ports[APEX_MAX_PORTS];
static unsigned nports;

void apex_ports_reset(void)
{
	nports = 0;
}

static struct apex_port *port_by_id(APEX_INTEGER id, enum port_kind kind)
{
	if (id < 1 || (unsigned)id > nports || ports[id - 1].kind != kind)
		return 0;
	return &ports[id - 1];
}

static int port_by_name(const char *name)
{
	for (unsigned i = 0; i < nports; i++)
		if (apex_name_eq(ports[i].name, name))
			return (int)i + 1;
	return 0;
}

/* Bulkhead names are C strings; NAME_TYPE need not be terminated. */
static void c_name(char out[MAX_NAME_LENGTH + 1], const char *name)
{
	apex_name_copy(out, name);
	out[MAX_NAME_LENGTH] = 0;
}

/* The checks both create calls share; NO_ERROR when the port may be opened. */
static RETURN_CODE_TYPE create_checks(const char *name, MESSAGE_SIZE_TYPE max_size,
				      PORT_DIRECTION_TYPE dir, APEX_INTEGER *id)
{
	int existing;

	if (nports >= apex_k.limits[APEX_LIMIT_PORTS])
		return INVALID_CONFIG;
	if ((existing = port_by_name(name)) != 0) {
		*id = existing;
		return NO_ACTION;
	}
	if (!apex_name_valid(name) || max_size <= 0 || (dir != SOURCE && dir != DESTINATION))
		return INVALID_CONFIG;
	if (apex_k.mode == NORMAL)
		return INVALID_MODE;
	return NO_ERROR;
}

static APEX_INTEGER add_port(const char *name, enum port_kind kind, PORT_DIRECTION_TYPE dir,
			     int desc, MESSAGE_SIZE_TYPE max_size)
{
	struct apex_port *p = &ports[nports++];

	*p = (struct apex_port){ 0 };
	apex_name_copy(p->name, name);
	p->kind = (uint8_t)kind;
	p->direction = (uint8_t)dir;
	p->desc = desc;
	p->max_size = max_size;
	p->last_validity = INVALID;
	apex_waitq_init(&p->q, FIFO);
	return (APEX_INTEGER)nports;
}

/* Bulkhead's answer to an open: its descriptor, or an APEX error. Opened already (only
 * possible through libbhpart's own calls) counts as opened. */
static int opened(long rc, int desc)
{
	return rc >= 0 || (rc == BH_NO_ACTION && desc >= 0);
}

/* --- Sampling ---------------------------------------------------------------------------------- */

void CREATE_SAMPLING_PORT(const char *SAMPLING_PORT_NAME,
			  MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE, PORT_DIRECTION_TYPE PORT_DIRECTION,
			  SYSTEM_TIME_TYPE REFRESH_PERIOD, SAMPLING_PORT_ID_TYPE *SAMPLING_PORT_ID,
			  RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = create_checks(SAMPLING_PORT_NAME, MAX_MESSAGE_SIZE, PORT_DIRECTION,
					    SAMPLING_PORT_ID);

	if (rc == NO_ERROR && REFRESH_PERIOD <= 0)
		rc = INVALID_CONFIG;
	if (rc == NO_ERROR) {
		char name[MAX_NAME_LENGTH + 1];
		int desc = -1;

		c_name(name, SAMPLING_PORT_NAME);
		long r = bh_sampling_port_create(name, (unsigned)MAX_MESSAGE_SIZE,
						 (unsigned)PORT_DIRECTION,
						 (unsigned long long)REFRESH_PERIOD, &desc);
		if (opened(r, desc)) {
			APEX_INTEGER id = add_port(SAMPLING_PORT_NAME, PORT_SAMPLING,
						   PORT_DIRECTION, desc, MAX_MESSAGE_SIZE);
			ports[id - 1].refresh = REFRESH_PERIOD;
			*SAMPLING_PORT_ID = id;
		} else {
			rc = INVALID_CONFIG; /* not this partition's, or not as configured */
		}
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void WRITE_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			    MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE)
{
	struct apex_port *p = port_by_id(SAMPLING_PORT_ID, PORT_SAMPLING);

	if (!p || LENGTH <= 0)
		*RETURN_CODE = INVALID_PARAM;
	else if (LENGTH > p->max_size)
		*RETURN_CODE = INVALID_CONFIG;
	else if (p->direction != SOURCE)
		*RETURN_CODE = INVALID_MODE;
	else
		*RETURN_CODE = bh_sampling_write(p->desc, MESSAGE_ADDR, (unsigned)LENGTH) == BH_OK
				       ? NO_ERROR
				       : INVALID_PARAM;
}

void READ_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			   MESSAGE_SIZE_TYPE *LENGTH, VALIDITY_TYPE *VALIDITY,
			   RETURN_CODE_TYPE *RETURN_CODE)
{
	struct apex_port *p = port_by_id(SAMPLING_PORT_ID, PORT_SAMPLING);
	unsigned bh_flags = 0;
	long n;

	if (!p) {
		*RETURN_CODE = INVALID_PARAM;
		return;
	}
	if (p->direction != DESTINATION) {
		*RETURN_CODE = INVALID_MODE;
		return;
	}
	n = bh_sampling_read(p->desc, MESSAGE_ADDR, (unsigned)p->max_size, &bh_flags, 0);
	*LENGTH = n > 0 ? (MESSAGE_SIZE_TYPE)n : 0;
	*VALIDITY = n > 0 && (bh_flags & BH_MSG_VALID) ? VALID : INVALID;
	if (n == BH_NO_ACTION) {
		*RETURN_CODE = NO_ACTION; /* nothing written yet */
		return;
	}
	if (n < 0) {
		*RETURN_CODE = INVALID_PARAM;
		return;
	}
	p->last_validity = *VALIDITY;
	*RETURN_CODE = NO_ERROR;
}

void GET_SAMPLING_PORT_ID(const char *SAMPLING_PORT_NAME,
			  SAMPLING_PORT_ID_TYPE *SAMPLING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = port_by_name(SAMPLING_PORT_NAME);

	if (!id || ports[id - 1].kind != PORT_SAMPLING) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*SAMPLING_PORT_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_SAMPLING_PORT_STATUS(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID,
			      SAMPLING_PORT_STATUS_TYPE *SAMPLING_PORT_STATUS,
			      RETURN_CODE_TYPE *RETURN_CODE)
{
	struct apex_port *p = port_by_id(SAMPLING_PORT_ID, PORT_SAMPLING);

	if (!p) {
		*RETURN_CODE = INVALID_PARAM;
		return;
	}
	SAMPLING_PORT_STATUS->REFRESH_PERIOD = p->refresh;
	SAMPLING_PORT_STATUS->MAX_MESSAGE_SIZE = p->max_size;
	SAMPLING_PORT_STATUS->PORT_DIRECTION = (PORT_DIRECTION_TYPE)p->direction;
	SAMPLING_PORT_STATUS->LAST_MSG_VALIDITY = p->last_validity;
	*RETURN_CODE = NO_ERROR;
}

/* --- Queuing ----------------------------------------------------------------------------------- */

void CREATE_QUEUING_PORT(const char *QUEUING_PORT_NAME,
			 MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE, MESSAGE_RANGE_TYPE MAX_NB_MESSAGE,
			 PORT_DIRECTION_TYPE PORT_DIRECTION,
			 QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE,
			 QUEUING_PORT_ID_TYPE *QUEUING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = create_checks(QUEUING_PORT_NAME, MAX_MESSAGE_SIZE, PORT_DIRECTION,
					    QUEUING_PORT_ID);

	if (rc == NO_ERROR && (MAX_NB_MESSAGE <= 0 ||
			       (QUEUING_DISCIPLINE != FIFO && QUEUING_DISCIPLINE != PRIORITY)))
		rc = INVALID_CONFIG;
	if (rc == NO_ERROR) {
		char name[MAX_NAME_LENGTH + 1];
		int desc = -1;

		c_name(name, QUEUING_PORT_NAME);
		long r = bh_queuing_port_create(name, (unsigned)MAX_MESSAGE_SIZE,
						(unsigned)PORT_DIRECTION, (unsigned)MAX_NB_MESSAGE,
						&desc);
		if (opened(r, desc)) {
			APEX_INTEGER id = add_port(QUEUING_PORT_NAME, PORT_QUEUING, PORT_DIRECTION,
						   desc, MAX_MESSAGE_SIZE);
			ports[id - 1].max_nb = MAX_NB_MESSAGE;
			ports[id - 1].q.discipline = (uint8_t)QUEUING_DISCIPLINE;
			*QUEUING_PORT_ID = id;
		} else {
			rc = INVALID_CONFIG;
		}
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

/* The message a post received: the bytes copied, or -1 while it is still posted. */
static long post_result(const struct apex_port *p)
{
	unsigned long long s = __atomic_load_n(&p->post_status, __ATOMIC_ACQUIRE);

	return s & BH_POST_DONE ? (long)BH_POST_BYTES(s) : -1;
}

/* A receive into buf from destination p; with `post`, an empty queue posts buf instead. */
static long port_receive(struct apex_port *p, MESSAGE_ADDR_TYPE buf, int post)
{
	return bh_hypercall(post ? BH_HC_QUEUING_RECEIVE_POST : BH_HC_QUEUING_RECEIVE,
			    (unsigned long)p->desc, (unsigned long)buf, (unsigned long)p->max_size,
			    (unsigned long)&p->post_status, 0);
}

/* Receives for w, the first waiter of destination p, or posts its buffer: a message queued
 * already comes back at once (>= 0, or an error), else BH_NOT_AVAILABLE with w's buffer
 * posted (p->posted). */
static long receive_or_post(struct apex_port *p, struct apex_process *w)
{
	long r = port_receive(p, w->req.buf, 1);

	if (r == BH_NOT_AVAILABLE) {
		p->posted = w;
		w->req.posted_on = p;
	}
	return r;
}

int apex_port_withdraw(struct apex_process *w)
{
	struct apex_port *p = w->req.posted_on;
	long r;

	w->req.posted_on = 0;
	p->posted = 0;
	if (bh_queuing_receive_cancel(p->desc) == BH_OK || (r = post_result(p)) < 0)
		return 0;
	*w->req.length_out = (MESSAGE_SIZE_TYPE)r;
	return 1;
}

/* Completes the calls of the processes waiting on p, first waiter first, while the channel
 * lets them: a destination's waiters take the queued messages (the first one's posted buffer
 * may hold its message already), a source's send theirs. The first destination waiter left
 * has its buffer posted. */
static void port_serve(struct apex_port *p)
{
	struct apex_process *w;

	while ((w = apex_waitq_first(&p->q)) != 0) {
		long r;

		if (p->direction == SOURCE) {
			r = bh_queuing_send(p->desc, w->req.buf, (unsigned)w->req.length);
		} else if (p->posted == w) {
			if ((r = post_result(p)) < 0)
				break; /* still posted: nothing came */
			p->posted = 0;
			w->req.posted_on = 0;
		} else {
			r = receive_or_post(p, w);
		}
		if (r == BH_NOT_AVAILABLE)
			break;
		if (p->direction == DESTINATION)
			*w->req.length_out = r > 0 ? (MESSAGE_SIZE_TYPE)r : 0;
		apex_unblock(w, r >= 0 ? NO_ERROR : INVALID_PARAM);
	}
}

/* BH_VIRQ_PORT (IRQs masked, kernel stack): some port became ready; serve those with waiters. */
void apex_port_irq(unsigned intid)
{
	unsigned long multi = apex_multi();

	(void)intid;
	if (multi)
		apex_lock_take();
	for (unsigned i = 0; i < nports; i++)
		if (ports[i].kind == PORT_QUEUING && ports[i].q.count)
			port_serve(&ports[i]);
	if (multi)
		apex_lock_give();
}

/* The idle loop's wait (IRQs masked, no process ready). With a process waiting on a queuing
 * destination port, the vCPU waits in BH_HC_QUEUING_RECEIVE_WAIT with that process's buffer:
 * a message then goes from the sender straight into it, with no BH_VIRQ_PORT and no second
 * call. Any interrupt (a timer, another port) ends the wait, and one already pending makes it
 * return at once, so nothing is lost. Returns 0 when no process waits on such a port (the
 * idle loop then waits in BH_HC_IDLE). */
int apex_port_idle_wait(void)
{
	for (unsigned i = 0; i < nports; i++) {
		struct apex_port *p = &ports[i];
		struct apex_process *w = apex_waitq_first(&p->q);
		long r;

		if (!w || p->kind != PORT_QUEUING || p->direction != DESTINATION)
			continue;
		if (p->posted == w && apex_port_withdraw(w)) {
			apex_unblock(w, NO_ERROR); /* its message came before the withdrawal */
			return 1;
		}
		r = bh_queuing_receive_wait(p->desc, w->req.buf, (unsigned)p->max_size, 0);
		if (r == BH_NOT_AVAILABLE)
			r = receive_or_post(p, w); /* something else woke the partition */
		if (r != BH_NOT_AVAILABLE) {
			*w->req.length_out = r > 0 ? (MESSAGE_SIZE_TYPE)r : 0;
			apex_unblock(w, r >= 0 ? NO_ERROR : INVALID_PARAM);
		}
		return 1;
	}
	return 0;
}

void SEND_QUEUING_MESSAGE(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			  MESSAGE_SIZE_TYPE LENGTH, SYSTEM_TIME_TYPE TIME_OUT,
			  RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_port *p = port_by_id(QUEUING_PORT_ID, PORT_QUEUING);
	RETURN_CODE_TYPE rc = NOT_AVAILABLE;

	if (!p || LENGTH <= 0 || !apex_timeout_valid(TIME_OUT)) {
		rc = INVALID_PARAM;
	} else if (LENGTH > p->max_size) {
		rc = INVALID_CONFIG;
	} else if (p->direction != SOURCE) {
		rc = INVALID_MODE;
	} else {
		port_serve(p);
		if (!p->q.count) {
			long r = bh_queuing_send(p->desc, MESSAGE_ADDR, (unsigned)LENGTH);

			rc = r == BH_OK ? NO_ERROR : r == BH_NOT_AVAILABLE ? NOT_AVAILABLE
									  : INVALID_PARAM;
		}
		if (rc == NOT_AVAILABLE && TIME_OUT != 0)
			rc = apex_wait_request(&p->q, TIME_OUT, MESSAGE_ADDR, LENGTH, 0, 0);
		else
			apex_reschedule(); /* port_serve may have readied a waiter */
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void RECEIVE_QUEUING_MESSAGE(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, SYSTEM_TIME_TYPE TIME_OUT,
			     MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
			     RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_port *p = port_by_id(QUEUING_PORT_ID, PORT_QUEUING);
	RETURN_CODE_TYPE rc = NOT_AVAILABLE;

	*LENGTH = 0;
	if (!p || !apex_timeout_valid(TIME_OUT)) {
		rc = INVALID_PARAM;
	} else if (p->direction != DESTINATION) {
		rc = INVALID_MODE;
	} else {
		struct apex_port *posted = 0;

		port_serve(p);
		/* Ahead of the posted waiter by priority: the post is withdrawn (its process may
		 * have its message by then), and the port's interrupt serves the new first. */
		if (p->posted && p->q.discipline == PRIORITY && TIME_OUT != 0 &&
		    apex_current()->prio > p->posted->prio) {
			struct apex_process *w = p->posted;

			if (apex_port_withdraw(w))
				apex_unblock(w, NO_ERROR);
		}
		if (!p->q.count) {
			/* The first waiter, if it waits: the buffer is posted when the queue is empty. */
			int waits = TIME_OUT != 0 && apex_may_block();
			long r = port_receive(p, MESSAGE_ADDR, waits);

			if (r >= 0) {
				*LENGTH = (MESSAGE_SIZE_TYPE)r;
				rc = NO_ERROR;
			} else if (r != BH_NOT_AVAILABLE) {
				rc = INVALID_PARAM;
			} else if (waits) {
				posted = p;
				p->posted = apex_current();
			}
		}
		if (rc == NOT_AVAILABLE && TIME_OUT != 0)
			rc = apex_wait_request(&p->q, TIME_OUT, MESSAGE_ADDR, 0, LENGTH, posted);
		else
			apex_reschedule();
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_QUEUING_PORT_ID(const char *QUEUING_PORT_NAME,
			 QUEUING_PORT_ID_TYPE *QUEUING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE)
{
	int id = port_by_name(QUEUING_PORT_NAME);

	if (!id || ports[id - 1].kind != PORT_QUEUING) {
		*RETURN_CODE = INVALID_CONFIG;
		return;
	}
	*QUEUING_PORT_ID = id;
	*RETURN_CODE = NO_ERROR;
}

void GET_QUEUING_PORT_STATUS(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID,
			     QUEUING_PORT_STATUS_TYPE *QUEUING_PORT_STATUS,
			     RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_port *p = port_by_id(QUEUING_PORT_ID, PORT_QUEUING);
	struct bh_port_status st = { 0 };

	if (p) {
		bh_port_status(p->desc, &st);
		QUEUING_PORT_STATUS->NB_MESSAGE = (MESSAGE_RANGE_TYPE)st.messages;
		QUEUING_PORT_STATUS->MAX_NB_MESSAGE = p->max_nb;
		QUEUING_PORT_STATUS->MAX_MESSAGE_SIZE = p->max_size;
		QUEUING_PORT_STATUS->PORT_DIRECTION = (PORT_DIRECTION_TYPE)p->direction;
		QUEUING_PORT_STATUS->WAITING_PROCESSES = p->q.count;
	}
	apex_leave(flags);
	*RETURN_CODE = p ? NO_ERROR : INVALID_PARAM;
}
