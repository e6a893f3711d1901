/* libapex internals: the kernel's objects and the primitives the services are built from.
 *
 * Everything runs on vCPU 0. Kernel state changes only with IRQs masked (services mask them,
 * interrupt handlers run masked), so no lock is needed. A service that must give up the CPU
 * calls apex_reschedule(), which issues SVC: the exception path saves the full register frame
 * on the process's stack and resumes whichever context apex_pick() names (entry.S).
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

/* What a process blocked on a queuing port asked for: the interrupt path completes it. */
struct apex_port_request {
	MESSAGE_ADDR_TYPE buf;
	MESSAGE_SIZE_TYPE length;       /* send: the message length */
	MESSAGE_SIZE_TYPE *length_out;  /* receive: where its length goes */
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
};

/* The error handler runs above every process priority, preemption lock or not. */
#define APEX_HANDLER_PRIORITY (MAX_PRIORITY_VALUE + 1)

struct apex_kernel {
	struct apex_process procs[APEX_MAX_PROCESSES];
	unsigned nprocs;
	struct apex_process idle;        /* the initialization, then the idle loop */
	struct apex_process handler;     /* the error handler (DORMANT until an error starts it) */
	uint8_t has_handler;             /* CREATE_ERROR_HANDLER succeeded */
	struct apex_process *cur;        /* the running context */
	struct apex_link ready[APEX_HANDLER_PRIORITY + 1];
	uint64_t ready_map[(MAX_PRIORITY_VALUE + 64) / 64];
	uint64_t ready_words;            /* bit w: ready_map[w] is not 0 */
	struct apex_link timers;
	OPERATING_MODE_TYPE mode;
	START_CONDITION_TYPE start_condition;
	LOCK_LEVEL_TYPE lock_level;
	struct apex_process *lock_owner;    /* the process that locked preemption */
	uint8_t in_irq;                     /* interrupt handlers are running */
	SYSTEM_TIME_TYPE partition_period;  /* INFINITE_TIME_VALUE: none */
	SYSTEM_TIME_TYPE period_origin;
	SYSTEM_TIME_TYPE normal_since;      /* when NORMAL began */
	unsigned stack_used;
	unsigned limits[APEX_LIMIT_COUNT]; /* config.c: the declared limits, else the library's */
	struct apex_counters counters;
};

extern struct apex_kernel apex_k;

/* --- kernel.c: scheduling ------------------------------------------------------------- */
static inline struct apex_process *apex_current(void)
{
	return apex_k.cur;
}
/* The running context is a process (not the initialization or the idle loop). */
static inline int apex_in_process(void)
{
	return apex_k.cur != &apex_k.idle;
}
static inline int apex_in_handler(void)
{
	return apex_k.cur == &apex_k.handler;
}
struct apex_process *apex_process_by_id(PROCESS_ID_TYPE id);
struct apex_process *apex_pick(void);
void apex_reschedule(void);         /* switch if apex_pick() names another context */
void apex_ready_add(struct apex_process *p);   /* tail of its priority's FIFO */
void apex_ready_remove(struct apex_process *p);
void apex_ready_rotate(struct apex_process *p); /* to the tail of its priority's FIFO */
void apex_set_priority(struct apex_process *p, PRIORITY_TYPE prio);
void apex_idle_guard(struct apex_process *idle);
/* Ends the current block with `result`; the process becomes ready unless suspended. */
void apex_unblock(struct apex_process *p, RETURN_CODE_TYPE result);
/* Blocks the current process (`why`, on `q` for APEX_BLOCK_RESOURCE, until `until` unless
 * INFINITE_TIME_VALUE), gives up the CPU and returns how the block ended. */
RETURN_CODE_TYPE apex_block_current(enum apex_block why, struct apex_waitq *q,
				    SYSTEM_TIME_TYPE until);
/* A message service's wait on q (a buffer, blackboard or port) for at most time_out (not 0):
 * INVALID_MODE when the caller cannot wait, else apex_block_current's result. Whoever ends it
 * completes the request (buf, length to send, or where the received length goes). */
RETURN_CODE_TYPE apex_wait_request(struct apex_waitq *q, SYSTEM_TIME_TYPE time_out,
				   MESSAGE_ADDR_TYPE buf, MESSAGE_SIZE_TYPE length,
				   MESSAGE_SIZE_TYPE *length_out);
/* Takes p out of every queue and timer: what STOP and a fault do. */
void apex_detach(struct apex_process *p);
int apex_stack_alloc(struct apex_process *p, STACK_SIZE_TYPE size);
unsigned apex_stack_free(void);
void apex_stack_reset(struct apex_process *p);
/* Blocking services are refused while preemption is locked, outside a process, in the error
 * handler and in an interrupt handler. */
APEX_INLINE int apex_may_block(void)
{
	return apex_k.cur->may_block && apex_k.lock_level == 0 && !apex_k.in_irq;
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
void apex_timer_irq(unsigned intid);
/* now + delta, or -1 if it is not a time the kernel can wait for (negative, overflow). */
SYSTEM_TIME_TYPE apex_deadline_after(SYSTEM_TIME_TYPE now, SYSTEM_TIME_TYPE delta);
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

/* Service prologue/epilogue: IRQs masked for the whole service. */
static inline unsigned long apex_enter(void)
{
	return bh_irq_save();
}

static inline void apex_leave(unsigned long flags)
{
	bh_irq_restore(flags);
}

#endif
