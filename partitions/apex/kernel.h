/* libapex internals: the kernel's objects and the primitives the services are built from.
 *
 * Each of the partition's vCPUs (a "core", ARINC 653 multicore) schedules the processes bound
 * to it: its own current process, ready queues, timers and idle context (struct apex_core,
 * reached through TPIDR_EL0). Objects are shared by all. Kernel state changes only with IRQs
 * masked (services mask them, interrupt handlers run masked) and, when the partition has
 * several vCPUs (`multi`), under one partition-wide spinlock; a single-vCPU partition takes
 * no lock. The lock is held across a context switch and released by whoever resumes: the
 * service a light frame returns into, or entry.S before the exception return of a full frame.
 */
#ifndef APEX_KERNEL_H
#define APEX_KERNEL_H

#include "apex/apex.h"

#include <stdint.h>

/* The register frame every context switch saves and restores: what the exception entry stores
 * on the interrupted context's own stack. SP is implicit: the frame's address + its size.
 * entry.S uses the offsets; kernel.c checks them with _Static_assert. */
struct apex_frame {
	uint64_t x[31];  /* x0..x30 */
	uint64_t elr;
	uint64_t spsr;
	uint64_t pad;    /* keeps SP 16-byte aligned */
};
#define APEX_FRAME_SIZE 272
#define APEX_FRAME_ELR  248
#define APEX_FRAME_SPSR 256

/* A context's saved state (apex_process.ctx) is a full frame, tagged with bit 0 (an exception
 * saved it: resumed by exception return), or an untagged light frame (a service's switch:
 * x19..x30, resumed by returning from apex_switch_to). */
static inline struct apex_frame *apex_full_frame(struct apex_frame *f)
{
	return (struct apex_frame *)(void *)((uintptr_t)f | 1);
}

/* Inlined whatever the optimisation level: the short helpers of the switch paths. */
#define APEX_INLINE static inline __attribute__((always_inline))

/* Intrusive doubly linked list: a circular list with a sentinel head. */
struct apex_link {
	struct apex_link *next, *prev;
};

APEX_INLINE void apex_list_init(struct apex_link *h)
{
	h->next = h->prev = h;
}

APEX_INLINE int apex_list_empty(const struct apex_link *h)
{
	return h->next == h;
}

APEX_INLINE void apex_list_insert_before(struct apex_link *pos, struct apex_link *n)
{
	n->next = pos;
	n->prev = pos->prev;
	pos->prev->next = n;
	pos->prev = n;
}

APEX_INLINE void apex_list_remove(struct apex_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define apex_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* One-shot timer on the system clock (ns), kept in one list sorted by expiry. */
enum apex_timer_kind { APEX_TIMER_WAKE, APEX_TIMER_DEADLINE };
struct apex_timer {
	struct apex_link link;  /* self-linked while not armed */
	SYSTEM_TIME_TYPE at;
	uint8_t kind;
	struct apex_core *core; /* whose list and virtual timer: its process's core */
};

/* Why a process is not ready (at most one at a time); SUSPEND by another process is the
 * separate `suspended` flag, which may come on top of any of them. */
enum apex_block {
	APEX_BLOCK_NONE,
	APEX_BLOCK_NORMAL,        /* started during initialization: released when NORMAL begins */
	APEX_BLOCK_TIME,          /* TIMED_WAIT, PERIODIC_WAIT, a delayed start or release */
	APEX_BLOCK_SUSPEND_SELF,  /* SUSPEND_SELF: until RESUME or its time-out */
	APEX_BLOCK_RESOURCE,      /* on a wait queue: semaphore, event, port */
};

struct apex_waitq {
	struct apex_link waiters; /* processes, by their wait_link */
	uint8_t discipline;       /* FIFO or PRIORITY */
	uint16_t count;
};

struct apex_port;

/* What a process blocked on a queuing port asked for: the interrupt path completes it. */
struct apex_port_request {
	MESSAGE_ADDR_TYPE buf;
	MESSAGE_SIZE_TYPE length;       /* send: the message length */
	MESSAGE_SIZE_TYPE *length_out;  /* receive: where its length goes */
	struct apex_port *posted_on;    /* receive: the port its buffer is posted on (port.c) */
};

struct apex_process {
	struct apex_frame *ctx;   /* saved frame while not running (entry.S: offset 0) */
	PROCESS_ATTRIBUTE_TYPE attr;
	PROCESS_ID_TYPE id;       /* 1-based; 0 for the idle context */
	uint8_t state;            /* DORMANT, READY (RUNNING when current), WAITING */
	uint8_t block;            /* enum apex_block */
	uint8_t suspended;        /* SUSPEND by another process */
	uint8_t may_block;        /* a process (not the idle context, not the error handler) */
	PRIORITY_TYPE prio;       /* current priority (apex_set_priority) */
	struct apex_link *ready_head;    /* its priority's FIFO */
	uint64_t *ready_word;            /* the ready_map word of its priority */
	uint64_t ready_bit, ready_word_bit; /* its bit there, that word's in ready_words */
	struct apex_link ready_link;
	struct apex_link wait_link;
	struct apex_waitq *waitq; /* the queue it waits on (APEX_BLOCK_RESOURCE) */
	struct apex_timer wake;   /* time-outs, delays, releases */
	struct apex_timer deadline;
	SYSTEM_TIME_TYPE release;      /* the current activation's release point */
	SYSTEM_TIME_TYPE start_delay;  /* DELAYED_START given during initialization */
	RETURN_CODE_TYPE wait_result;  /* how the last block ended */
	struct apex_port_request req;
	uint64_t *stack_lo;        /* lowest usable byte; the guard lies below it */
	uint64_t *stack_hi;        /* one past the highest */
	uint64_t guard_top;        /* what stack_lo[-1], the guard's top word, must hold */
	struct apex_process_counters counters;
	struct apex_core *core;    /* the vCPU it runs on (INITIALIZE_PROCESS_CORE_AFFINITY) */
};

/* The error handler runs above every process priority, preemption lock or not. */
#define APEX_HANDLER_PRIORITY (MAX_PRIORITY_VALUE + 1)

/* The SGI one vCPU sends another of its partition (ICC_SGI1R_EL1) to make it reschedule or
 * reprogram its virtual timer: a cross-core wake-up. */
#define APEX_SGI_KICK 0
/* struct apex_core offsets entry.S uses (kernel.c checks them). */
#define APEX_CORE_KSTACK_TOP 0

/* One vCPU's scheduler. Touched by other vCPUs only under the lock (they ready its processes
 * and arm its timers, then kick it); cur, in_irq and the lock level only by itself. */
struct apex_core {
	char *kstack_top;                /* its kernel stack (entry.S: offset 0) */
	uint8_t multi;                   /* several vCPUs: lock, kicks (also in TPIDRRO_EL0) */
	uint8_t online;                  /* started: it can be kicked */
	uint8_t vcpu;                    /* its index, the ARINC core id */
	uint8_t in_irq;                  /* interrupt handlers are running */
	LOCK_LEVEL_TYPE lock_level;      /* next to in_irq: apex_may_block tests both at once */
	struct apex_process *lock_owner; /* the process that locked preemption */
	struct apex_process *cur;        /* the running context */
	uint64_t ready_words;            /* bit w: ready_map[w] is not 0 */
	uint64_t ready_map[(MAX_PRIORITY_VALUE + 64) / 64];
	struct apex_link ready[APEX_HANDLER_PRIORITY + 1];
	struct apex_link timers;
	unsigned long context_switches;
	unsigned long phys_core;         /* the physical core it runs on (BH_HC_GET_IDS) */
	struct apex_process idle;        /* vCPU 0: the initialization, then its idle loop */
};

extern struct apex_core apex_cores[APEX_MAX_CORES];

/* This vCPU's scheduler (TPIDR_EL0, set once per vCPU): not volatile, so the compiler reads it
 * once per function. A context never changes vCPU. */
APEX_INLINE struct apex_core *apex_here(void)
{
	struct apex_core *c;

	__asm__("mrs %0, tpidr_el0" : "=r"(c));
	return c;
}

/* The partition runs APEX on several vCPUs: TPIDRRO_EL0 is 1 in each of them then (0 else),
 * a copy of apex_core.multi that a service's entry tests in two instructions. */
APEX_INLINE unsigned long apex_multi(void)
{
	unsigned long m;

	__asm__("mrs %0, tpidrro_el0" : "=r"(m));
	return m;
}

struct apex_kernel {
	struct apex_process procs[APEX_MAX_PROCESSES];
	unsigned nprocs;
	unsigned ncores;                 /* the partition's vCPUs (NUM_ASSIGNED_CORES) */
	struct apex_process handler;     /* the error handler (DORMANT until an error starts it) */
	uint8_t has_handler;             /* CREATE_ERROR_HANDLER succeeded */
	uint8_t mmu;                     /* the MMU is on: every stack has a guard page */
	OPERATING_MODE_TYPE mode;
	START_CONDITION_TYPE start_condition;
	SYSTEM_TIME_TYPE partition_period;  /* INFINITE_TIME_VALUE: none */
	SYSTEM_TIME_TYPE period_origin;
	SYSTEM_TIME_TYPE period_start;      /* the description's first window in the major frame */
	SYSTEM_TIME_TYPE duration;          /* GET_PARTITION_STATUS.DURATION */
	SYSTEM_TIME_TYPE normal_since;      /* when NORMAL began */
	unsigned stack_used;             /* of the limit: stacks and canary zones (stack_total) */
	unsigned stack_carved;           /* of the pool: with guard pages and page rounding */
	unsigned limits[APEX_LIMIT_COUNT]; /* config.c: the declared limits, else the library's */
	struct apex_counters counters;
};

extern struct apex_kernel apex_k;

/* --- kernel.c: scheduling ------------------------------------------------------------- */
static inline struct apex_process *apex_current(void)
{
	return apex_here()->cur;
}
/* The caller is a process (not the initialization or an idle loop). An application's
 * interrupt handler is none either: it runs on the kernel stack in whatever context it
 * interrupted, and a service it calls must not act for that (stop it, lock for it, ...). */
static inline int apex_in_process(void)
{
	struct apex_core *c = apex_here();

	return c->cur != &c->idle && !c->in_irq;
}
static inline int apex_in_handler(void)
{
	struct apex_core *c = apex_here();

	return c->cur == &apex_k.handler && !c->in_irq;
}
/* An idle context (or the initialization): not a process, not the error handler. */
static inline int apex_is_idle(const struct apex_process *p)
{
	return p->id == 0 && p != &apex_k.handler;
}
struct apex_process *apex_process_by_id(PROCESS_ID_TYPE id);
struct apex_process *apex_pick(void);
void apex_reschedule(void);         /* switch if apex_pick() names another context */
void apex_ready_add(struct apex_process *p);   /* tail of its priority's FIFO */
void apex_ready_remove(struct apex_process *p);
void apex_ready_rotate(struct apex_process *p); /* to the tail of its priority's FIFO */
void apex_set_priority(struct apex_process *p, PRIORITY_TYPE prio);
/* Binds p to core c (its ready queues and timers), at its current priority. */
void apex_bind(struct apex_process *p, struct apex_core *c);
/* Another vCPU's scheduling may have changed: make it reschedule (and reprogram its timer). */
void apex_kick(struct apex_core *c);
/* A service's lock with several vCPUs. The current process may have been stopped or
 * suspended by another vCPU meanwhile (its kick not taken yet, IRQs being masked): it gives
 * up the CPU first (a stopped one never comes back), so no service acts for it. */
void apex_enter_multi(void);
void apex_idle_guard(struct apex_process *idle);
/* Ends the current block with `result`; the process becomes ready unless suspended. */
void apex_unblock(struct apex_process *p, RETURN_CODE_TYPE result);
/* Blocks the current process (`why`, on `q` for APEX_BLOCK_RESOURCE, until `until` unless
 * INFINITE_TIME_VALUE), gives up the CPU and returns how the block ended. */
RETURN_CODE_TYPE apex_block_current(enum apex_block why, struct apex_waitq *q,
				    SYSTEM_TIME_TYPE until);
/* A message service's wait on q (a buffer, blackboard or port) for at most time_out (not 0):
 * INVALID_MODE when the caller cannot wait, else apex_block_current's result. Whoever ends it
 * completes the request (buf, length to send, or where the received length goes; posted_on:
 * the port buf is posted on, else 0). */
RETURN_CODE_TYPE apex_wait_request(struct apex_waitq *q, SYSTEM_TIME_TYPE time_out,
				   MESSAGE_ADDR_TYPE buf, MESSAGE_SIZE_TYPE length,
				   MESSAGE_SIZE_TYPE *length_out, struct apex_port *posted_on);
/* p's buffer is posted on a port (req.posted_on): withdraws the post. Returns 1 if a message
 * reached the buffer first (*req.length_out set: the receive is complete), else 0. */
int apex_port_withdraw(struct apex_process *p);
/* Takes p out of every queue and timer: what STOP and a fault do. */
void apex_detach(struct apex_process *p);
/* NO_ERROR if a stack of size fits what is left of the pool; INVALID_PARAM for a size no pool
 * can hold, INVALID_CONFIG when the pool is used up. */
RETURN_CODE_TYPE apex_stack_fits(STACK_SIZE_TYPE size);
void apex_stack_alloc(struct apex_process *p, STACK_SIZE_TYPE size);
void apex_stack_reset(struct apex_process *p);
/* Blocking services are refused while preemption is locked, outside a process, in the error
 * handler and in an interrupt handler. */
APEX_INLINE int apex_may_block(void)
{
	struct apex_core *c = apex_here();

	return c->cur->may_block && c->lock_level == 0 && !c->in_irq;
}

/* --- waitq ------------------------------------------------------------------------------ */
void apex_waitq_init(struct apex_waitq *q, QUEUING_DISCIPLINE_TYPE discipline);
struct apex_process *apex_waitq_first(const struct apex_waitq *q);
void apex_waitq_reposition(struct apex_process *p);

/* --- timer.c ---------------------------------------------------------------------------- */
/* Longest delay a service accepts: beyond it (about 146 years) now + delay could overflow. */
#define APEX_MAX_DELAY (1ll << 62)
SYSTEM_TIME_TYPE apex_now(void);
void apex_timer_arm(struct apex_timer *t, SYSTEM_TIME_TYPE at);
void apex_timer_cancel(struct apex_timer *t);
void apex_timer_irq(unsigned intid);   /* also the kick's handler (APEX_SGI_KICK) */
void apex_timer_program(struct apex_core *c); /* c is this vCPU */
/* now + delta, or -1 if it is not a time the kernel can wait for (negative, overflow). */
SYSTEM_TIME_TYPE apex_deadline_after(SYSTEM_TIME_TYPE now, SYSTEM_TIME_TYPE delta);
/* a + b, two times the services accepted (a point in time, a delay or capacity up to
 * APEX_MAX_DELAY): a release point plus a capacity, or plus a period, can pass what
 * SYSTEM_TIME_TYPE holds. The sum saturates to the largest time, which never comes; wrapped,
 * it would be in the past, at the head of the timer list with a compare value the counter
 * never reaches, and no timer of the core would fire again. */
APEX_INLINE SYSTEM_TIME_TYPE apex_time_add(SYSTEM_TIME_TYPE a, SYSTEM_TIME_TYPE b)
{
	SYSTEM_TIME_TYPE s;

	return __builtin_add_overflow(a, b, &s) ? (SYSTEM_TIME_TYPE)(~0ull >> 1) : s;
}
/* A time-out: INFINITE_TIME_VALUE, 0 or a positive delay the clock can reach. */
APEX_INLINE int apex_timeout_valid(SYSTEM_TIME_TYPE t)
{
	return t == INFINITE_TIME_VALUE || (unsigned long long)t <= (unsigned long long)APEX_MAX_DELAY;
}

/* --- process.c ---------------------------------------------------------------------------- */
/* Releases p for an activation at `release` (ready now, or at that time). */
void apex_release(struct apex_process *p, SYSTEM_TIME_TYPE release);
void apex_deadline_set(struct apex_process *p, SYSTEM_TIME_TYPE release);
void apex_deadline_missed(struct apex_process *p);
SYSTEM_TIME_TYPE apex_first_release(SYSTEM_TIME_TYPE now);
void apex_process_fault_stack(struct apex_process *p);

/* --- config.c: the description's apex key ------------------------------------------------ */
/* Sets apex_k.limits (and the partition period, when declared) from apex_config. */
void apex_config_load(void);
/* The process list allows a with these attributes (always, when no list is declared). */
int apex_config_allows_process(const PROCESS_ATTRIBUTE_TYPE *a);
/* The core the description binds the process called name to, or -1 if it does not list it. */
int apex_config_core(const char *name);
/* The description declares errors of this code partition-level (apex.partition_errors): they go
 * to Bulkhead's health monitor, never to the error handler. */
int apex_config_partition_level(ERROR_CODE_TYPE code);
void apex_record_response(struct apex_process *p, SYSTEM_TIME_TYPE now);

/* --- hm.c: errors ------------------------------------------------------------------------ */
/* A process-level error of p (the running context for faults): queued for the error handler,
 * which is started if DORMANT, or raised to Bulkhead's health monitor when the handler cannot
 * take it. The caller reschedules. */
void apex_error(ERROR_CODE_TYPE code, struct apex_process *p, unsigned long address,
		const void *msg, ERROR_MESSAGE_SIZE_TYPE length);
void apex_errors_reset(void);
/* The handler stopped with errors still queued: it starts again (switch_from calls it). */
void apex_handler_restart_if_pending(void);
void apex_hm_irq(unsigned intid);

/* --- port.c ------------------------------------------------------------------------------- */
void apex_port_irq(unsigned intid);
int apex_port_idle_wait(void);
void apex_ports_reset(void);

/* --- sem.c / event.c / buffer.c --------------------------------------------------------- */
void apex_sems_reset(void);
void apex_events_reset(void);
void apex_buffers_reset(void);   /* buffers and blackboards, and their message pool */

/* --- names --------------------------------------------------------------------------------- */
int apex_name_eq(const char *a, const char *b);  /* NAME_TYPE compare (30 chars or NUL) */
void apex_name_copy(char *dst, const char *src);
int apex_name_valid(const char *n);              /* not empty */

/* The partition-wide kernel lock: 0 free, else the low 32 bits of its holder's apex_core. */
extern uint32_t apex_lock;
void apex_lock_take(void);   /* spins with WFE (QEMU -icount needs it in every spin loop) */

APEX_INLINE void apex_lock_give(void)
{
	__atomic_store_n(&apex_lock, 0, __ATOMIC_RELEASE);
}

/* The lock, unless this vCPU holds it already (a fault inside a service, an SVC). */
APEX_INLINE void apex_lock_ensure(struct apex_core *c)
{
	if (apex_multi() && apex_lock != (uint32_t)(uintptr_t)c)
		apex_lock_take();
}

/* Service prologue/epilogue: IRQs masked for the whole service, and the lock held when the
 * partition has several vCPUs (one byte test otherwise). The flags' bit 0 (DAIF's bits are
 * 9:6) says the lock was taken, so that apex_leave tests one bit: the single-vCPU paths stay
 * as short as they were. */
#define APEX_FLAGS_LOCKED 1ul

APEX_INLINE unsigned long apex_enter(void)
{
	unsigned long flags = bh_irq_save();

	if (apex_multi()) {
		apex_enter_multi();
		flags |= APEX_FLAGS_LOCKED;
	}
	return flags;
}

APEX_INLINE void apex_leave(unsigned long flags)
{
	if (flags & APEX_FLAGS_LOCKED) {
		apex_lock_give();
		flags &= ~APEX_FLAGS_LOCKED;
	}
	bh_irq_restore(flags);
}

#endif
