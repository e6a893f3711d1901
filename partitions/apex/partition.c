/* libapex partition: start-up, operating modes, status, and the idle loops.
 *
 * main is the initialization (COLD_START or WARM_START, from the hypervisor's boot kind), on
 * vCPU 0. It creates processes and resources and ends with SET_PARTITION_MODE(NORMAL), which
 * releases the processes started meanwhile, starts the partition's other vCPUs and turns
 * main's context into vCPU 0's idle loop. Each vCPU's idle loop runs when none of its
 * processes is ready and waits in BH_HC_IDLE, so a vCPU with nothing to do gives its core away
 * until its next timer, port interrupt or kick.
 */
#include "kernel.h"

extern const unsigned long long apex_vectors[];
extern char apex_kstack[];

/* Kernel stack size per vCPU: entry.S's KSTACK_SIZE. */
#define KSTACK_SIZE 8192
#define KSTACK_GUARD 8192 /* entry.S: two pages below each kernel stack */

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

/* The partition's vCPUs, up to APEX_MAX_CORES: those BH_HC_VCPU_STATUS knows. */
static unsigned count_vcpus(void)
{
	unsigned n = 1;

	while (n < APEX_MAX_CORES && bh_vcpu_status(n, 0, 0) >= 0)
		n++;
	return n;
}

/* A vCPU's scheduler, empty, its idle context running. */
static void init_core(unsigned vcpu, unsigned ncores)
{
	struct apex_core *c = &apex_cores[vcpu];

	*c = (struct apex_core){ 0 };
	c->kstack_top = apex_kstack + (vcpu + 1) * (KSTACK_GUARD + KSTACK_SIZE);
	if (apex_k.mmu)
		bh_mmu_unmap_pages(c->kstack_top - KSTACK_SIZE - KSTACK_GUARD, KSTACK_GUARD);
	c->multi = ncores > 1;
	c->vcpu = (uint8_t)vcpu;
	c->online = vcpu == 0; /* the others when they start (secondary_main) */
	for (unsigned i = 0; i <= APEX_HANDLER_PRIORITY; i++)
		apex_list_init(&c->ready[i]);
	apex_list_init(&c->timers);
	init_context(&c->idle);
	c->idle.state = READY;
	c->idle.core = c;
	apex_idle_guard(&c->idle);
	c->cur = &c->idle;
}

/* The physical core the calling vCPU is served on: its core, for a pinned vCPU. */
static unsigned long physical_core(void)
{
	return bh_hvc(BH_HC_GET_IDS, 0, 0, 0, 0, 0).x3;
}

/* Two vCPUs of the partition on one physical core could deadlock: one that waits for the
 * kernel lock spins (it cannot tell the hypervisor) while the holder, switched out in the
 * middle of a service, waits for the core. Fail closed: the partition halts, saying why. */
static void check_own_core(struct apex_core *c)
{
	for (unsigned i = 0; i < apex_k.ncores; i++) {
		if (&apex_cores[i] == c || !apex_cores[i].online ||
		    apex_cores[i].phys_core != c->phys_core)
			continue;
		bh_printf("apex: vCPUs %u and %u share core %lu; give each its own core\n", i,
			  c->vcpu, c->phys_core);
		bh_halt_self();
	}
}

/* The calling vCPU's vectors, scheduler, multi flag and (disabled) virtual timer. */
static void enter_vcpu(struct apex_core *c)
{
	__asm__ volatile("msr tpidr_el0, %0\n\tmsr tpidrro_el0, %1\n\tmsr cntv_ctl_el0, xzr\n\t"
			 "msr vbar_el1, %2\n\tisb"
			 : : "r"(c), "r"((unsigned long)c->multi), "r"(apex_vectors) : "memory");
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
	apex_lock = 0;
	/* Stack guard pages need the MMU; an image it cannot map (bh_mmu_build says so) keeps the
	 * canaries alone. */
	apex_k.mmu = bh_mmu_build() == 0;
	if (apex_k.mmu) {
		bh_mmu_on();
		bh_mmu_guard_vcpu_stacks(APEX_MAX_CORES); /* the initialization's, the idle loops' */
	}
	apex_k.ncores = count_vcpus();
	for (unsigned i = 0; i < APEX_MAX_CORES; i++)
		init_core(i, apex_k.ncores);
	init_context(&apex_k.handler);
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
	bh_irq_set_handler(APEX_SGI_KICK, apex_timer_irq);
	apex_cores[0].phys_core = physical_core();
	enter_vcpu(&apex_cores[0]);
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
	/* With a cyclic plan, partition periods start in step with its major frames, at the
	 * partition's first window (ARINC 653's partition period start; from the description). */
	apex_k.period_origin = 0;
	if (bh_plan_frame_start(&frame_start) >= 0)
		apex_k.period_origin = (SYSTEM_TIME_TYPE)((frame_start + apex_k.period_start) %
							  (unsigned long long)PERIOD);
	*RETURN_CODE = NO_ERROR;
}

/* --- Modes ------------------------------------------------------------------------------------ */

/* Never returns: with IRQs unmasked, every interrupt may hand the CPU to a process; with none
 * of its processes ready the vCPU waits, IRQs masked over the check so that no wake-up is lost
 * (both waits return at once when an interrupt is pending): in BH_HC_QUEUING_RECEIVE_WAIT for
 * a process waiting on a queuing port, whose message may then make it ready, else in
 * BH_HC_IDLE. With several vCPUs the lock is released over the wait (the others go on; a kick
 * meanwhile stays pending and ends it), and the port wait, which leaves a waiter's request to
 * the hypervisor, is not used: another vCPU could end that waiter's wait meanwhile. */
_Noreturn static void idle_loop(struct apex_core *c)
{
	for (;;) {
		unsigned long flags = apex_enter();

		if (apex_pick() == &c->idle) {
			apex_k.counters.idle_waits++;
			if (c->multi) {
				apex_lock_give();
				bh_idle();
				apex_lock_take();
			} else if (!apex_port_idle_wait()) {
				bh_idle();
			}
		}
		apex_reschedule(); /* the process a message made ready */
		apex_leave(flags);
		bh_irq_enable();
		__asm__ volatile("isb" : : : "memory");
	}
}

/* Entry of vCPUs 1.. (crt0), started by enter_normal: their processes are released already. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	struct apex_core *c;

	(void)boot_kind;
	(void)restarts;
	if (vcpu >= apex_k.ncores) { /* beyond APEX_MAX_CORES: enter_normal starts none */
		bh_vcpu_halt(vcpu);
		for (;;)
			__asm__ volatile("wfi");
	}
	c = &apex_cores[vcpu];
	if (apex_k.mmu)
		bh_mmu_on();
	enter_vcpu(c);
	c->phys_core = physical_core();
	apex_lock_take();
	check_own_core(c);
	c->online = 1;
	apex_timer_program(c); /* its processes' releases and deadlines */
	apex_lock_give();
	idle_loop(c);
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
			apex_release(p, apex_time_add(apex_first_release(now), p->start_delay));
	}
	for (unsigned v = 1; v < apex_k.ncores; v++)
		bh_vcpu_start(v);
	apex_reschedule();
	if (apex_k.ncores > 1)
		apex_lock_give(); /* main's context is vCPU 0's idle loop from here */
	idle_loop(&apex_cores[0]);
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
	PARTITION_STATUS->DURATION = apex_k.duration;
	PARTITION_STATUS->IDENTIFIER = partition_id;
	PARTITION_STATUS->LOCK_LEVEL = apex_here()->lock_level;
	PARTITION_STATUS->OPERATING_MODE = apex_k.mode;
	PARTITION_STATUS->START_CONDITION = apex_k.start_condition;
	PARTITION_STATUS->NUM_ASSIGNED_CORES = apex_k.ncores;
	*RETURN_CODE = NO_ERROR;
}

void apex_get_counters(struct apex_counters *c)
{
	unsigned long flags = apex_enter();

	*c = apex_k.counters;
	for (unsigned i = 0; i < apex_k.ncores; i++)
		c->context_switches += apex_cores[i].context_switches;
	apex_leave(flags);
}
