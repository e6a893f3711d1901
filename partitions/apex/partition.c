/* libapex partition: start-up, operating modes, status, and the idle loop.
 *
 * main is the initialization (COLD_START or WARM_START, from the hypervisor's boot kind). It
 * creates processes and resources and ends with SET_PARTITION_MODE(NORMAL), which releases
 * the processes started meanwhile and turns main's context into the idle loop: it runs when no
 * process is ready and waits in BH_HC_IDLE, so a partition with nothing to do gives its core
 * away until its next timer or port interrupt.
 */
#include "kernel.h"

extern const unsigned long long apex_vectors[];

static PARTITION_ID_TYPE partition_id;

/* --- Names ------------------------------------------------------------------------------------ */

int apex_name_eq(const char *a, const char *b)
{
	for (unsigned i = 0; i < MAX_NAME_LENGTH; i++) {
		if (a[i] != b[i])
			return 0;
		if (!a[i])
			return 1;
	}
	return 1;
}

void apex_name_copy(char *dst, const char *src)
{
	unsigned i = 0;

	for (; i < MAX_NAME_LENGTH && src[i]; i++)
		dst[i] = src[i];
	for (; i < MAX_NAME_LENGTH; i++)
		dst[i] = 0;
}

int apex_name_valid(const char *n)
{
	return n[0] != 0;
}

/* --- Start-up ------------------------------------------------------------------------------- */

/* The idle context and the error handler: in no queue, no timer armed, no deadline. */
static void init_context(struct apex_process *p)
{
	apex_list_init(&p->ready_link);
	apex_list_init(&p->wait_link);
	apex_list_init(&p->wake.link);
	apex_list_init(&p->deadline.link);
	p->deadline.at = INFINITE_TIME_VALUE;
}

void apex_init(unsigned boot_kind, unsigned restarts)
{
	(void)restarts;
	if (bh_vcpu_self() != 0) {
		bh_puts("apex: apex_init on a vCPU other than 0; halting");
		bh_halt_self();
	}
	/* A warm restart keeps memory: nothing of the previous incarnation may survive. */
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	apex_k = (struct apex_kernel){ 0 };
	for (unsigned i = 0; i <= APEX_HANDLER_PRIORITY; i++)
		apex_list_init(&apex_k.ready[i]);
	apex_list_init(&apex_k.timers);
	init_context(&apex_k.idle);
	init_context(&apex_k.handler);
	apex_k.idle.state = READY;
	apex_idle_guard(&apex_k.idle);
	apex_k.cur = &apex_k.idle;
	apex_k.mode = boot_kind == BH_BOOT_WARM_RESTART ? WARM_START : COLD_START;
	apex_k.start_condition = boot_kind == BH_BOOT_COLD ? NORMAL_START
				 : bh_restart_cause() == BH_RESTART_HM ? HM_PARTITION_RESTART
								       : PARTITION_RESTART;
	apex_k.partition_period = INFINITE_TIME_VALUE;
	apex_config_load();
	apex_sems_reset();
	apex_events_reset();
	apex_buffers_reset();
	apex_ports_reset();
	apex_errors_reset();
	partition_id = (PARTITION_ID_TYPE)bh_partition_id();

	bh_irq_set_handler(BH_VIRQ_VTIMER, apex_timer_irq);
	bh_irq_set_handler(BH_VIRQ_PORT, apex_port_irq);
	bh_irq_set_handler(BH_VIRQ_HM, apex_hm_irq);
	__asm__ volatile("msr vbar_el1, %0\n\tisb" : : "r"(apex_vectors) : "memory");
}

void apex_set_partition_period(SYSTEM_TIME_TYPE PERIOD, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long long frame_start;

	if (apex_k.mode == NORMAL) {
		*RETURN_CODE = INVALID_MODE;
		return;
	}
	if (PERIOD <= 0 || !apex_timeout_valid(PERIOD)) {
		*RETURN_CODE = INVALID_PARAM;
		return;
	}
	apex_k.partition_period = PERIOD;
	/* With a cyclic plan, partition periods start in step with its major frames. */
	apex_k.period_origin = 0;
	if (bh_plan_frame_start(&frame_start) >= 0)
		apex_k.period_origin = (SYSTEM_TIME_TYPE)(frame_start % (unsigned long long)PERIOD);
	*RETURN_CODE = NO_ERROR;
}

/* --- Modes ------------------------------------------------------------------------------------ */

/* Never returns: with IRQs unmasked, every interrupt may hand the CPU to a process; with none
 * ready the vCPU waits, IRQs masked over the check so that no wake-up is lost (both waits
 * return at once when an interrupt is pending): in BH_HC_QUEUING_RECEIVE_WAIT for a process
 * waiting on a queuing port, whose message may then make it ready, else in BH_HC_IDLE. */
_Noreturn static void idle_loop(void)
{
	for (;;) {
		bh_irq_disable();
		if (apex_pick() == &apex_k.idle) {
			apex_k.counters.idle_waits++;
			if (!apex_port_idle_wait())
				bh_idle();
			apex_reschedule(); /* the process a message made ready */
		}
		bh_irq_enable();
		__asm__ volatile("isb" : : : "memory");
	}
}

_Noreturn static void enter_normal(void)
{
	SYSTEM_TIME_TYPE now = apex_now();

	apex_k.normal_since = now;
	apex_k.mode = NORMAL;
	for (unsigned i = 0; i < apex_k.nprocs; i++) {
		struct apex_process *p = &apex_k.procs[i];

		if (p->block != APEX_BLOCK_NORMAL)
			continue;
		if (p->attr.PERIOD == INFINITE_TIME_VALUE)
			apex_release(p, now + p->start_delay);
		else
			apex_release(p, apex_first_release(now) + p->start_delay);
	}
	apex_reschedule();
	idle_loop();
}

void SET_PARTITION_MODE(OPERATING_MODE_TYPE OPERATING_MODE, RETURN_CODE_TYPE *RETURN_CODE)
{
	unsigned long flags = apex_enter();
	RETURN_CODE_TYPE rc = NO_ERROR;

	switch (OPERATING_MODE) {
	case IDLE:
		bh_halt_self();
	case COLD_START:
		rc = bh_reset_self(BH_RESET_COLD) == BH_OK ? NO_ERROR : INVALID_MODE;
		break;
	case WARM_START:
		if (apex_k.mode == COLD_START)
			rc = INVALID_MODE;
		else
			rc = bh_reset_self(BH_RESET_WARM) == BH_OK ? NO_ERROR : INVALID_MODE;
		break;
	case NORMAL:
		if (apex_k.mode == NORMAL)
			rc = NO_ACTION;
		else
			enter_normal();
		break;
	default:
		rc = INVALID_PARAM;
		break;
	}
	apex_leave(flags);
	*RETURN_CODE = rc;
}

void GET_PARTITION_STATUS(PARTITION_STATUS_TYPE *PARTITION_STATUS, RETURN_CODE_TYPE *RETURN_CODE)
{
	PARTITION_STATUS->PERIOD = apex_k.partition_period;
	PARTITION_STATUS->DURATION = INFINITE_TIME_VALUE;
	PARTITION_STATUS->IDENTIFIER = partition_id;
	PARTITION_STATUS->LOCK_LEVEL = apex_k.lock_level;
	PARTITION_STATUS->OPERATING_MODE = apex_k.mode;
	PARTITION_STATUS->START_CONDITION = apex_k.start_condition;
	PARTITION_STATUS->NUM_ASSIGNED_CORES = 1;
	*RETURN_CODE = NO_ERROR;
}

void apex_get_counters(struct apex_counters *c)
{
	unsigned long flags = apex_enter();

	*c = apex_k.counters;
	apex_leave(flags);
}
