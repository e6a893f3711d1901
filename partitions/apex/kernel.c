/* libapex scheduler: ready queues, blocking and waking, cross-core kicks, the kernel lock, the
 * kernel entry points entry.S calls, process stacks and their guards.
 *
 * Each core (vCPU) has fixed priorities MIN_PRIORITY_VALUE..MAX_PRIORITY_VALUE, one FIFO each
 * and a bitmap of the non-empty ones, so the choice costs a few instructions whatever the
 * number of processes. The running process stays at the head of its FIFO: preempted, it runs
 * again before the other processes of its priority; a process that becomes ready joins the
 * tail. The core's idle context (priority 0, in no queue) runs when none of its processes is
 * ready.
 */
#include "kernel.h"

_Static_assert(sizeof(struct apex_frame) == APEX_FRAME_SIZE, "entry.S FRAME_SIZE");
_Static_assert(__builtin_offsetof(struct apex_frame, elr) == APEX_FRAME_ELR, "entry.S FRAME_ELR");
_Static_assert(__builtin_offsetof(struct apex_frame, spsr) == APEX_FRAME_SPSR,
	       "entry.S FRAME_SPSR");
_Static_assert(__builtin_offsetof(struct apex_process, ctx) == 0, "ctx first");
_Static_assert(__builtin_offsetof(struct apex_core, kstack_top) == APEX_CORE_KSTACK_TOP,
	       "entry.S CORE_KSTACK_TOP");

/* EL1h, IRQs unmasked, debug, SError and FIQ masked: how a process starts. */
#define SPSR_PROCESS_START 0x345ul
/* Guard words: a pattern mixed with the word's address, checked at this stride from the top
 * of the guard (overflow comes from above; a large frame may skip the first words). */
#define CANARY 0x5afec0de0ddba11ull
#define GUARD_WORDS (APEX_STACK_GUARD_SIZE / 8)

struct apex_kernel apex_k;
struct apex_core apex_cores[APEX_MAX_CORES];
uint32_t apex_lock;

/* One pool for every process stack. Each stack takes, from a page boundary: two unmapped guard
 * pages, then its canary zone and itself, rounded up to whole pages. Two: a function's
 * stack-clash probes (every 4 KiB, 1 KiB above the new SP: partitions.mk) fault in the upper
 * guard page with SP at most 5 KiB below the page's top, so SP and the frame entry.S would
 * save there still lie in the guard. The limit (stack_total, at most APEX_STACK_POOL_SIZE)
 * counts the stacks and canary zones only; the pool has room for the pages besides, three at
 * most a stack. */
#define PAGE 4096u
#define GUARD_PAGES 2u
#define STACK_POOL_PAGES (APEX_STACK_POOL_SIZE / PAGE + (GUARD_PAGES + 1) * (APEX_MAX_PROCESSES + 1))
static uint64_t stack_pool[STACK_POOL_PAGES * PAGE / 8] __attribute__((aligned(PAGE)));

struct apex_frame *apex_kernel_svc(struct apex_frame *f);
struct apex_frame *apex_kernel_irq(struct apex_frame *f);
struct apex_frame *apex_kernel_stack_fault(const char *sp);
void apex_process_return(void);

struct apex_process *apex_process_by_id(PROCESS_ID_TYPE id)
{
	if (id < 1 || (unsigned)id > apex_k.nprocs)
		return 0;
	return &apex_k.procs[id - 1];
}

/* --- Ready queues ------------------------------------------------------------------------- */

#define HOT APEX_INLINE

/* In p's core's queues, whichever vCPU calls. */
HOT void ready_add(struct apex_process *p)
{
	apex_list_insert_before(p->ready_head, &p->ready_link);
	*p->ready_word |= p->ready_bit;
	p->core->ready_words |= p->ready_word_bit;
}

/* p alone in its FIFO (both neighbours the head) empties it. */
HOT void ready_remove(struct apex_process *p)
{
	int alone = p->ready_link.next == p->ready_link.prev;

	apex_list_remove(&p->ready_link);
	if (alone && !(*p->ready_word &= ~p->ready_bit))
		p->core->ready_words &= ~p->ready_word_bit;
}

/* The current priority and where its FIFO and bitmap bits are (in its core's queues), so
 * that the ready-queue operations compute no address. */
void apex_set_priority(struct apex_process *p, PRIORITY_TYPE prio)
{
	unsigned w = (unsigned)prio / 64;

	p->prio = prio;
	p->ready_head = &p->core->ready[prio];
	p->ready_word = &p->core->ready_map[w];
	p->ready_bit = 1ull << ((unsigned)prio % 64);
	p->ready_word_bit = 1ull << w;
}

void apex_bind(struct apex_process *p, struct apex_core *c)
{
	p->core = c;
	p->wake.core = c;
	p->deadline.core = c;
	apex_set_priority(p, p->prio);
}

/* --- Cross-core wake-ups -------------------------------------------------------------------- */

/* An SGI to c's vCPU (a paravirtual partition's ICC_SGI1R_EL1 reaches its own vCPUs, which are
 * Aff0 = index): its interrupt path reschedules and reprograms its timer. A vCPU not started
 * yet needs none: it looks at both when it starts. */
void apex_kick(struct apex_core *c)
{
	if (c->online)
		__asm__ volatile("msr S3_0_C12_C11_5, %0"
				 : : "r"((unsigned long)APEX_SGI_KICK << 24 | 1ul << c->vcpu) : "memory");
}

/* p was just readied on its core: another vCPU preempts if p outranks what runs there. */
static void readied_elsewhere(struct apex_process *p)
{
	struct apex_core *c = p->core;

	if (c != apex_here() && p->prio > c->cur->prio)
		apex_kick(c);
}

void apex_ready_add(struct apex_process *p)
{
	ready_add(p);
	if (p->core->multi)
		readied_elsewhere(p);
}

/* Removing the process another vCPU runs (STOP, SUSPEND, SET_PRIORITY from here) makes that
 * vCPU choose again. */
void apex_ready_remove(struct apex_process *p)
{
	ready_remove(p);
	if (p->core->multi && p->core->cur == p && p->core != apex_here())
		apex_kick(p->core);
}

/* The lock is then held for the whole service; see kernel.h. */
void apex_enter_multi(void)
{
	apex_lock_take();
	if (apex_here()->cur->state != READY)
		apex_reschedule();
}

/* --- The kernel lock ------------------------------------------------------------------------ */

void apex_lock_take(void)
{
	uint32_t me = (uint32_t)(uintptr_t)apex_here(), seen, failed;

	__asm__ volatile("1:	ldaxr	%w0, [%2]\n"
			 "	cbnz	%w0, 2f\n"
			 "	stxr	%w1, %w3, [%2]\n"
			 "	cbnz	%w1, 1b\n"
			 "	b	3f\n"
			 "2:	wfe\n" /* the holder's release store wakes it */
			 "	b	1b\n"
			 "3:"
			 : "=&r"(seen), "=&r"(failed)
			 : "r"(&apex_lock), "r"(me)
			 : "memory");
}

/* The idle context runs on the partition's own stack (crt0's, in the bss), which has no
 * guard: it is given the first word of the vector table, code that lies below every stack
 * and never changes, so that the switch paths check every context the same way. */
extern const uint64_t apex_vectors[];

void apex_idle_guard(struct apex_process *idle)
{
	idle->stack_lo = (uint64_t *)&apex_vectors[1];
	idle->guard_top = apex_vectors[0];
}

/* Moves p, ready, behind the other ready processes of its priority (a yield, a release that
 * came already): its priority's queue stays non-empty, the bitmap as it is. */
void apex_ready_rotate(struct apex_process *p)
{
	apex_list_remove(&p->ready_link);
	apex_list_insert_before(p->ready_head, &p->ready_link);
}

/* Two count-leading-zeros: the highest non-empty word, then its highest priority. */
HOT struct apex_process *highest_ready(struct apex_core *c)
{
	if (!c->ready_words)
		return &c->idle;
	unsigned w = 63 - (unsigned)__builtin_clzll(c->ready_words);
	unsigned prio = w * 64 + 63 - (unsigned)__builtin_clzll(c->ready_map[w]);

	return apex_container_of(c->ready[prio].next, struct apex_process, ready_link);
}

/* The error handler is ready on this core when its priority's FIFO is not empty. */
#define HANDLER_WORD (APEX_HANDLER_PRIORITY / 64)
#define HANDLER_BIT (1ull << (APEX_HANDLER_PRIORITY % 64))

/* The context that should run now on core c. Before NORMAL only the initialization runs; a
 * process that locked preemption keeps its core until it unlocks (it cannot block meanwhile),
 * unless the error handler is ready there. */
/* Before NORMAL no process is in a ready queue (those started wait for NORMAL), so the
 * initialization, the idle context, is the choice then too. */
HOT struct apex_process *pick(struct apex_core *c)
{
	if (c->lock_level > 0 && c->lock_owner->state == READY &&
	    !(c->ready_map[HANDLER_WORD] & HANDLER_BIT))
		return c->lock_owner;
	return highest_ready(c);
}

struct apex_process *apex_pick(void)
{
	return pick(apex_here());
}

/* The guard word next to the stack: an overflow from above damages it first (unless a frame
 * larger than the guard skips it, docs/apex.md). */
HOT int stack_intact(const struct apex_process *p)
{
	return p->stack_lo[-1] == p->guard_top;
}

/* The outgoing context cannot go on: its stack overflowed into its guard. The top guard word
 * (the first an overflow writes) is checked at every switch, and the saved frame must lie
 * above the guard. */
HOT int stack_broken(const struct apex_process *p, const void *frame)
{
	return (const uint64_t *)frame < p->stack_lo || !stack_intact(p);
}

HOT int stack_damaged(const struct apex_process *p, const void *frame)
{
	return p->state != DORMANT && stack_broken(p, frame);
}

/* Names the context to run after `cur`, which stopped (STOP_SELF, a fault) or whose stack is
 * damaged: a stopped error handler with errors still queued starts again. */
static struct apex_process *next_after_stopped(struct apex_process *cur)
{
	if (cur->state != DORMANT)
		apex_process_fault_stack(cur); /* the only reason a live context comes here */
	if (cur == &apex_k.handler)
		apex_handler_restart_if_pending();
	return apex_pick();
}

void apex_switch_to(struct apex_frame **save, struct apex_frame *next); /* entry.S */

/* Where a context that is never resumed (stopped, or its stack damaged) is saved: static, so
 * that apex_reschedule's call of apex_switch_to can be its last (a tail call: the resumed
 * context returns straight into the service). */
static struct apex_frame *discarded;

/* The voluntary switch of a service (IRQs masked): the caller's callee-saved registers go on
 * its stack as a light frame (entry.S), the next context resumes, and this returns when the
 * caller is resumed. In an interrupt handler (a service an application's handler called) the
 * switch waits for the end of the interrupt path, which always looks. */
void apex_reschedule(void)
{
	struct apex_core *c = apex_here();
	struct apex_process *cur = c->cur, *next;
	struct apex_frame **save = &cur->ctx;

	if (c->in_irq)
		return;
	if (cur->state == DORMANT || stack_damaged(cur, __builtin_frame_address(0))) {
		/* The error handler stopped: it may start again at once, with a fresh first frame
		 * at the top of the stack this code runs on. An SVC moves to the kernel stack
		 * first, and does not come back here (switch_from). */
		if (cur == &apex_k.handler && cur->state == DORMANT)
			__asm__ volatile("svc #0" : : : "memory");
		next = next_after_stopped(cur);
		save = &discarded; /* never resumed; the handler's fresh context stays */
	} else if ((next = pick(c)) == cur) {
		return;
	}
	c->context_switches++;
	c->cur = next;
	apex_switch_to(save, next->ctx);
}

/* apex_reschedule for a process that just left the ready queues to wait (never in an
 * interrupt handler, never with preemption locked): another context runs. */
HOT void switch_away(struct apex_core *c, struct apex_process *cur)
{
	struct apex_process *next;
	struct apex_frame **save = &cur->ctx;

	if (stack_broken(cur, __builtin_frame_address(0))) {
		next = next_after_stopped(cur);
		save = &discarded;
	} else {
		next = highest_ready(c);
	}
	c->context_switches++;
	c->cur = next;
	apex_switch_to(save, next->ctx);
}

/* --- Kernel entry (entry.S), IRQs masked, on the kernel stack ----------------------------- */

/* Saves the outgoing context's frame and names the next (apex_pick()'s choice, or another
 * when the outgoing process's stack turns out damaged). With several vCPUs the lock is held:
 * entry.S releases it when it resumes a full frame, the service a light frame returns into
 * otherwise. */
static struct apex_frame *switch_from(struct apex_core *c, struct apex_frame *f)
{
	struct apex_process *cur = c->cur, *next;

	cur->ctx = apex_full_frame(f);
	if (cur->state == DORMANT || stack_damaged(cur, f))
		next = next_after_stopped(cur);
	else
		next = pick(c);
	if (next != cur) {
		c->context_switches++;
		c->cur = next;
	}
	return next->ctx;
}

/* An SVC #0: a reschedule point (apex_reschedule's, inside a service that holds the lock). */
struct apex_frame *apex_kernel_svc(struct apex_frame *f)
{
	struct apex_core *c = apex_here();

	apex_lock_ensure(c);
	return switch_from(c, f);
}

/* The handlers take the lock themselves (they call services); the switch after them takes it
 * here. */
struct apex_frame *apex_kernel_irq(struct apex_frame *f)
{
	struct apex_core *c = apex_here();

	c->cur->ctx = apex_full_frame(f);
	c->in_irq = 1;
	bh_irq_dispatch();
	c->in_irq = 0;
	if (apex_multi())
		apex_lock_take();
	return switch_from(c, f);
}

/* ESR_EL1 exception classes a process can cause (Arm ARM D17.2.37). */
#define EC_UNKNOWN 0x00
#define EC_FP_TRAPPED 0x2c
#define EC_INSTR_ABORT 0x21
#define EC_PC_ALIGN 0x22
#define EC_DATA_ABORT 0x25
#define EC_SP_ALIGN 0x26
#define EC_BRK 0x3c

static ERROR_CODE_TYPE error_of_exception(uint64_t esr)
{
	switch ((esr >> 26) & 0x3f) {
	case EC_INSTR_ABORT:
	case EC_PC_ALIGN:
	case EC_DATA_ABORT:
	case EC_SP_ALIGN:
		return MEMORY_VIOLATION;
	case EC_FP_TRAPPED:
		return NUMERIC_ERROR;
	case EC_BRK:
		return (esr & 0xffff) == APEX_BRK_NUMERIC ? NUMERIC_ERROR : ILLEGAL_REQUEST;
	default:
		return ILLEGAL_REQUEST; /* undefined instruction, SVC #n, FP/SIMD access, ... */
	}
}

extern char apex_kstack[], apex_kstack_top[];

/* A synchronous exception other than SVC #0 (entry.S). In a process (or the error handler),
 * on its own stack, it is that process's error: the process is stopped and the error goes
 * to the error handler (apex_error). Anywhere else (the initialization, the idle loop, the
 * kernel's own stack) returns 0: entry.S hands the exception to libbhpart, which reports it
 * and stops the partition. */
struct apex_frame *apex_kernel_fault(struct apex_frame *f)
{
	struct apex_core *c = apex_here();
	struct apex_process *cur = c->cur;
	uint64_t esr;

	if (cur == &c->idle || ((char *)f >= apex_kstack && (char *)f < apex_kstack_top))
		return 0;
	__asm__ volatile("mrs %0, esr_el1" : "=r"(esr));
	apex_lock_ensure(c); /* a fault inside a service holds it already */
	cur->ctx = apex_full_frame(f);
	apex_detach(cur);
	apex_error(error_of_exception(esr), cur, f->elr, 0, 0);
	return switch_from(c, f);
}

/* The running context's stack has no room for a frame: entry.S found a page of the frame
 * unmapped (a guard page) before writing it. A process (or the error handler) is stopped with
 * STACK_OVERFLOW for the error handler; its registers are lost, they had nowhere to go.
 * Returns the context to resume, or 0 (the initialization's or an idle loop's stack, or a
 * kernel stack) for libbhpart to report the fault and stop the partition. */
struct apex_frame *apex_kernel_stack_fault(const char *sp)
{
	struct apex_core *c = apex_here();
	struct apex_process *next;

	if (c->cur == &c->idle || (sp >= apex_kstack && sp < apex_kstack_top))
		return 0; /* a kernel stack (an interrupt handler's overflow) is no process's */
	apex_lock_ensure(c);
	next = next_after_stopped(c->cur);
	c->context_switches++;
	c->cur = next;
	return next->ctx;
}

/* --- Blocking and waking -------------------------------------------------------------------- */

void apex_waitq_init(struct apex_waitq *q, QUEUING_DISCIPLINE_TYPE discipline)
{
	apex_list_init(&q->waiters);
	q->discipline = (uint8_t)discipline;
	q->count = 0;
}

struct apex_process *apex_waitq_first(const struct apex_waitq *q)
{
	if (apex_list_empty(&q->waiters))
		return 0;
	return apex_container_of(q->waiters.next, struct apex_process, wait_link);
}

/* FIFO: at the tail. PRIORITY: behind every waiter of the same or a higher priority. */
static void waitq_insert(struct apex_waitq *q, struct apex_process *p)
{
	struct apex_link *pos = &q->waiters;

	if (q->discipline == PRIORITY) {
		for (pos = q->waiters.next; pos != &q->waiters; pos = pos->next) {
			struct apex_process *w =
				apex_container_of(pos, struct apex_process, wait_link);
			if (w->prio < p->prio)
				break;
		}
	}
	apex_list_insert_before(pos, &p->wait_link);
}

void apex_waitq_reposition(struct apex_process *p)
{
	if (p->waitq && p->waitq->discipline == PRIORITY) {
		struct apex_process *first = apex_waitq_first(p->waitq);

		apex_list_remove(&p->wait_link);
		waitq_insert(p->waitq, p);
		/* A posted buffer is the first waiter's: one that is first no more withdraws it
		 * (and, if its message came already, completes). The port's interrupt serves the
		 * new first waiter. */
		if (first->req.posted_on && apex_waitq_first(p->waitq) != first &&
		    apex_port_withdraw(first))
			apex_unblock(first, NO_ERROR);
	}
}

RETURN_CODE_TYPE apex_block_current(enum apex_block why, struct apex_waitq *q,
				    SYSTEM_TIME_TYPE until)
{
	struct apex_core *c = apex_here();
	struct apex_process *p = c->cur;

	ready_remove(p);
	p->state = WAITING;
	p->block = (uint8_t)why;
	p->wait_result = NO_ERROR;
	if (q) {
		if (q->discipline == FIFO)
			apex_list_insert_before(&q->waiters, &p->wait_link);
		else
			waitq_insert(q, p);
		q->count++;
		p->waitq = q;
	}
	if (until != INFINITE_TIME_VALUE)
		apex_timer_arm(&p->wake, until);
	switch_away(c, p);
	return p->wait_result;
}

RETURN_CODE_TYPE apex_wait_request(struct apex_waitq *q, SYSTEM_TIME_TYPE time_out,
				   MESSAGE_ADDR_TYPE buf, MESSAGE_SIZE_TYPE length,
				   MESSAGE_SIZE_TYPE *length_out, struct apex_port *posted_on)
{
	if (!apex_may_block())
		return INVALID_MODE;
	apex_current()->req = (struct apex_port_request){ buf, length, length_out, posted_on };
	return apex_block_current(APEX_BLOCK_RESOURCE, q,
				  time_out == INFINITE_TIME_VALUE ? INFINITE_TIME_VALUE
								  : apex_now() + time_out);
}

void apex_unblock(struct apex_process *p, RETURN_CODE_TYPE result)
{
	if (p->block == APEX_BLOCK_NONE)
		return;
	if (p->req.posted_on && apex_port_withdraw(p))
		result = NO_ERROR; /* its message came before the time-out */
	if (p->waitq) {
		apex_list_remove(&p->wait_link);
		p->waitq->count--;
		p->waitq = 0;
	}
	apex_timer_cancel(&p->wake);
	p->block = APEX_BLOCK_NONE;
	p->wait_result = result;
	if (!p->suspended) {
		p->state = READY;
		ready_add(p);
		if (p->core->multi)
			readied_elsewhere(p);
	}
}

void apex_detach(struct apex_process *p)
{
	if (p->state == READY)
		apex_ready_remove(p);
	if (p->req.posted_on)
		apex_port_withdraw(p); /* a message that came first was its receive's, now ended */
	if (p->waitq) {
		apex_list_remove(&p->wait_link);
		p->waitq->count--;
		p->waitq = 0;
	}
	apex_timer_cancel(&p->wake);
	apex_timer_cancel(&p->deadline);
	p->block = APEX_BLOCK_NONE;
	p->suspended = 0;
	p->state = DORMANT;
	if (p == p->core->lock_owner) {
		p->core->lock_level = 0;
		p->core->lock_owner = 0;
	}
}

/* --- Stacks ------------------------------------------------------------------------------- */

static unsigned stack_need(STACK_SIZE_TYPE size)
{
	return ((size + 15u) & ~15u) + APEX_STACK_GUARD_SIZE;
}

RETURN_CODE_TYPE apex_stack_fits(STACK_SIZE_TYPE size)
{
	if (size < APEX_MIN_STACK_SIZE || size > APEX_STACK_POOL_SIZE - APEX_STACK_GUARD_SIZE)
		return INVALID_PARAM;
	return stack_need(size) > apex_k.limits[APEX_LIMIT_STACK_TOTAL] - apex_k.stack_used
		       ? INVALID_CONFIG : NO_ERROR;
}

/* Carves a stack that apex_stack_fits accepted: its guard pages, taken out of the map when the
 * MMU is on, then the stack at the top of its pages, its canary zone just below it. */
void apex_stack_alloc(struct apex_process *p, STACK_SIZE_TYPE size)
{
	unsigned need = stack_need(size), pages = (need + PAGE - 1) & ~(PAGE - 1);
	char *guard = (char *)stack_pool + apex_k.stack_carved;

	if (apex_k.mmu)
		bh_mmu_unmap_pages(guard, GUARD_PAGES * PAGE);
	apex_k.stack_carved += GUARD_PAGES * PAGE + pages;
	apex_k.stack_used += need;
	p->stack_hi = (uint64_t *)(void *)(guard + GUARD_PAGES * PAGE + pages);
	p->stack_lo = p->stack_hi - (need - APEX_STACK_GUARD_SIZE) / 8;
	apex_k.counters.stack_pool_used = apex_k.stack_used;
}

/* A fresh guard and a first frame that enters the process at its entry point with IRQs
 * unmasked and returns into STOP_SELF. */
void apex_stack_reset(struct apex_process *p)
{
	uint64_t *guard = p->stack_lo - GUARD_WORDS;

	for (unsigned i = 0; i < GUARD_WORDS; i++)
		guard[i] = CANARY ^ (uint64_t)(uintptr_t)&guard[i];
	p->guard_top = guard[GUARD_WORDS - 1];

	struct apex_frame *f = (struct apex_frame *)(void *)((char *)p->stack_hi - APEX_FRAME_SIZE);
	for (unsigned i = 0; i < 31; i++)
		f->x[i] = 0;
	f->x[30] = (uint64_t)(uintptr_t)apex_process_return;
	f->elr = (uint64_t)(uintptr_t)p->attr.ENTRY_POINT;
	f->spsr = SPSR_PROCESS_START;
	f->pad = 0;
	p->ctx = apex_full_frame(f);
}

/* A process's entry function returned: that ends it as STOP_SELF does. */
void apex_process_return(void)
{
	STOP_SELF();
}
