/* libapex health monitoring: the error handler process, the errors it handles, and what goes
 * to Bulkhead's health monitor instead.
 *
 * A process-level error (a missed deadline, RAISE_APPLICATION_ERROR, a synchronous exception
 * in a process, a damaged stack guard, a memory violation the hypervisor propagates) is queued
 * for the error handler, which is started if it is DORMANT and runs above every process,
 * preemption lock or not; it reads the errors with GET_ERROR_STATUS and ends with STOP_SELF
 * (or by returning). An error it cannot take (no handler, raised in the handler itself or
 * outside any process, or the queue full), or of a code the description declares
 * partition-level (apex.partition_errors, ARINC 653's health-monitor tables), is
 * partition-level: it goes to Bulkhead's health monitor, whose configured action for the
 * partition decides (docs/apex.md).
 */
#include "kernel.h"

/* Bulkhead's health-monitor events as BH_HC_HM_TAKE numbers them (configuration.md). */
#define BH_EVENT_MEMORY_VIOLATION 0
#define BH_EVENT_TRAPPED_INSTRUCTION 1
#define BH_EVENT_SMC 2

struct apex_error {
	ERROR_CODE_TYPE code;
	PROCESS_ID_TYPE pid;
	unsigned long address;
	ERROR_MESSAGE_SIZE_TYPE length;
	APEX_BYTE msg[MAX_ERROR_MESSAGE_SIZE];
};

static struct apex_error errors[APEX_MAX_PENDING_ERRORS];
static unsigned err_head, err_count;
static uint8_t handler_faulted; /* its last run ended by an error of its own */

static const unsigned long hm_code[] = {
	[DEADLINE_MISSED] = APEX_HM_DEADLINE,
	[APPLICATION_ERROR] = APEX_HM_APPLICATION,
	[NUMERIC_ERROR] = APEX_HM_NUMERIC,
	[ILLEGAL_REQUEST] = APEX_HM_ILLEGAL_REQUEST,
	[STACK_OVERFLOW] = APEX_HM_STACK_OVERFLOW,
	[MEMORY_VIOLATION] = APEX_HM_MEMORY_VIOLATION,
	[HARDWARE_FAULT] = APEX_HM_HARDWARE_FAULT,
	[POWER_FAIL] = APEX_HM_HARDWARE_FAULT,
};

void apex_errors_reset(void)
{
	err_head = err_count = 0;
	handler_faulted = 0;
}

static unsigned long hm_process(const struct apex_process *p)
{
	if (p == &apex_k.handler)
		return APEX_HM_HANDLER;
	return apex_is_idle(p) ? APEX_HM_NO_PROCESS : (unsigned long)p->id;
}

/* Partition-level: Bulkhead's health monitor and its configured action (which may not let
 * this call return). */
static void to_health_monitor(ERROR_CODE_TYPE code, const struct apex_process *p)
{
	unsigned long info = hm_code[code] | hm_process(p);

	apex_k.counters.errors_to_hm++;
	if (code == DEADLINE_MISSED)
		bh_deadline_miss(info);
	else
		bh_raise_event(info);
}

/* A fresh handler context, ready at APEX_HANDLER_PRIORITY. */
static void start_handler(void)
{
	struct apex_process *h = &apex_k.handler;

	apex_stack_reset(h);
	h->block = APEX_BLOCK_NONE;
	h->wait_result = NO_ERROR;
	h->state = READY;
	apex_ready_add(h);
}

void apex_error(ERROR_CODE_TYPE code, struct apex_process *p, unsigned long address,
		const void *msg, ERROR_MESSAGE_SIZE_TYPE length)
{
	if (p == &apex_k.handler)
		handler_faulted = code != APPLICATION_ERROR;
	if (!apex_k.has_handler || p == &apex_k.handler || apex_is_idle(p) ||
	    err_count == APEX_MAX_PENDING_ERRORS || apex_config_partition_level(code)) {
		to_health_monitor(code, p);
		return;
	}
	/* RAISE_APPLICATION_ERROR's message: one the caller cannot read is its fault here, before
	 * anything is queued (not half an entry, then the fault). */
	bh_mmu_check_access(msg, (unsigned long)length, 0);
	struct apex_error *e = &errors[(err_head + err_count++) % APEX_MAX_PENDING_ERRORS];

	e->code = code;
	e->pid = p->id;
	e->address = address;
	e->length = length;
	__builtin_memcpy(e->msg, msg, (unsigned)length);
	apex_k.counters.errors_handled++;
	if (apex_k.handler.state == DORMANT)
		start_handler();
}

void apex_handler_restart_if_pending(void)
{
	if (err_count && !handler_faulted)
		start_handler();
	handler_faulted = 0;
}

/* BH_VIRQ_HM: an event the description's `propagate` action handed to this vCPU. The
 * hypervisor skipped the faulting instruction; the error is the interrupted process's. */
void apex_hm_irq(unsigned intid)
{
	struct bh_hm_log_entry e;
	unsigned long flags;
	struct apex_process *p;
	ERROR_CODE_TYPE code;

	(void)intid;
	if (bh_hm_take(&e) != BH_OK)
		return;
	if (e.event == BH_EVENT_MEMORY_VIOLATION)
		code = MEMORY_VIOLATION;
	else if (e.event == BH_EVENT_TRAPPED_INSTRUCTION || e.event == BH_EVENT_SMC)
		code = ILLEGAL_REQUEST;
	else
		return;
	flags = apex_enter();
	p = apex_current();
	if (!apex_is_idle(p))
		apex_detach(p);
	apex_error(code, p, (unsigned long)e.pc, 0, 0);
	apex_leave(flags);
	/* Others (libapex's own partition_error and deadline_miss events, propagated back)
	 * were partition-level already. */
}

/* --- Services ------------------------------------------------------------------------------- */

void CREATE_ERROR_HANDLER(SYSTEM_ADDRESS_TYPE ENTRY_POINT, STACK_SIZE_TYPE STACK_SIZE,
			  RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	struct apex_process *h = &apex_k.handler;
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (apex_k.has_handler)
		rc = NO_ACTION;
	else if (!ENTRY_POINT)
		rc = INVALID_PARAM;
	else if ((rc = apex_stack_fits(STACK_SIZE)) != NO_ERROR)
		;
	else if (apex_k.mode == NORMAL)
		rc = INVALID_MODE;
	else {
		apex_stack_alloc(h, STACK_SIZE);
		h->attr.ENTRY_POINT = ENTRY_POINT;
		h->attr.STACK_SIZE = STACK_SIZE;
		h->attr.BASE_PRIORITY = APEX_HANDLER_PRIORITY;
		h->attr.PERIOD = INFINITE_TIME_VALUE;
		h->attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
		apex_name_copy(h->attr.NAME, "error_handler");
		h->prio = APEX_HANDLER_PRIORITY;
		apex_bind(h, &apex_cores[0]); /* errors of every core start it there */
		apex_k.has_handler = 1;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_ERROR_STATUS(ERROR_STATUS_TYPE *ERROR_STATUS, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (!apex_in_handler()) {
		rc = INVALID_CONFIG;
	} else if (!err_count) {
		rc = NO_ACTION;
	} else {
		const struct apex_error *e = &errors[err_head];

		ERROR_STATUS->ERROR_CODE = e->code;
		ERROR_STATUS->LENGTH = e->length;
		__builtin_memcpy(ERROR_STATUS->MESSAGE, e->msg, (unsigned)e->length);
		ERROR_STATUS->FAILED_PROCESS_ID = e->pid;
		ERROR_STATUS->FAILED_ADDRESS = (SYSTEM_ADDRESS_TYPE)e->address;
		err_head = (err_head + 1) % APEX_MAX_PENDING_ERRORS;
		err_count--;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void RAISE_APPLICATION_ERROR(ERROR_CODE_TYPE ERROR_CODE, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			     ERROR_MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (ERROR_CODE != APPLICATION_ERROR || LENGTH < 0 || LENGTH > MAX_ERROR_MESSAGE_SIZE) {
		rc = INVALID_PARAM;
	} else {
		/* An interrupt handler's call is the partition's, not the interrupted process's. */
		struct apex_core *c = apex_here();
		struct apex_process *p = c->in_irq ? &c->idle : c->cur;

		apex_error(APPLICATION_ERROR, p, (unsigned long)__builtin_return_address(0),
			   MESSAGE_ADDR, LENGTH);
		apex_reschedule(); /* the handler runs now, before this call returns */
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

/* The message goes to the console as one line (Bulkhead's health monitor keeps no text). */
void REPORT_APPLICATION_MESSAGE(MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
				RETURN_CODE_TYPE *RETURN_CODE)
{
	static const char prefix[] = "APEX-REPORT ";
	char line[sizeof(prefix) - 1 + MAX_ERROR_MESSAGE_SIZE + 1];
	unsigned n = sizeof(prefix) - 1;

	if (LENGTH < 0 || LENGTH > MAX_ERROR_MESSAGE_SIZE) {
		*RETURN_CODE = INVALID_PARAM;
		return;
	}
	__builtin_memcpy(line, prefix, n);
	for (MESSAGE_SIZE_TYPE i = 0; i < LENGTH; i++)
		line[n++] = MESSAGE_ADDR[i] == '\n' ? ' ' : (char)MESSAGE_ADDR[i];
	line[n++] = '\n';
	bh_console_write(line, n);
	bh_console_flush();
	apex_k.counters.reports++;
	*RETURN_CODE = NO_ERROR;
}
