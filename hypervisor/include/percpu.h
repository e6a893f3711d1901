/* Per-core data. The first fields are read by assembly (see arch asm_offsets.h). */
#ifndef BULKHEAD_PERCPU_H
#define BULKHEAD_PERCPU_H

#include <stdint.h>
#include "arch.h"
#include "arch/vcpu_ctx.h"
#include "config_tables.h"
#include "sched.h"
#include "trace.h"

#define PERCPU_ALIGN 0x800

/* Work to do before returning to a guest (percpu.exit_work). */
#define EXIT_RESCHED (1u << 0) /* the running vCPU may have to give way */
#define EXIT_HAND_BACK (1u << 1) /* the one change since the last decision: the timer at be_until
				  * fired in the best-effort vCPU the core holds (sched.c be_hand_back;
				  * left set while the core sleeps after it, for the next decision) */
#define EXIT_PREEMPT (1u << 2) /* the one change since the last decision: sched.woken is ready */
#define EXIT_BLOCKED (1u << 3) /* the one change since the last decision: the running vCPU blocked */
#define EXIT_FLUSH   (1u << 4) /* virtual interrupts wait for the list registers */
/* A decision is due (one immediate operand: bits 0 to 3). */
#define EXIT_DECIDE  (EXIT_RESCHED | EXIT_PREEMPT | EXIT_BLOCKED | EXIT_HAND_BACK)

struct percpu {
	struct arch_regs *regs;     /* save area of the running vCPU (or idle_regs) */
	uint64_t stack_top;
	unsigned core;
	volatile uint32_t exit_work; /* EXIT_*; only this core reads or writes it, with its
				      * interrupts masked (EL2 never unmasks them): no atomics */
	struct vcpu *vcpu;          /* the vCPU running on this core, or NULL while idle */
	struct vcpu *loaded;        /* the vCPU whose EL1 state is in the registers */
	struct trace_ring *trace;   /* this core's trace ring */
	struct arch_core arch;      /* the architecture's (arch/vcpu_ctx.h) */
	volatile uint32_t requests; /* nonzero: some vCPU of this core has a request posted */
	struct sched_core sched;
	struct arch_regs idle_regs;
} __attribute__((aligned(PERCPU_ALIGN)));

extern struct percpu percpu[BH_MAX_CORES];

static inline struct percpu *this_cpu(void) { return arch_this_cpu(); }

/* The instant by which a trap must give this core back to its scheduler: the hypervisor
 * timer's deadline (the lead before the core's next instant, a best-effort vCPU's hand-back),
 * 0 when it fired and no decision has programmed it since, TIME_NEVER when nothing is due. A
 * trap that would wait past it for a lock other cores hold gives up instead and leaves the
 * trapped instruction to run again (arch_spin_lock_before). A dedicated core gives way to
 * nobody (TIME_NEVER): its timer (a console retry) is its own vCPU's business, and a waiter
 * that gave up there would only try again and again, out of the lock's queue, while the
 * vCPUs of shared cores take their turns in it. */
static inline uint64_t core_give_way_at(void)
{
	const struct sched_core *s = &this_cpu()->sched;

	return s->policy == BH_POLICY_DEDICATED ? TIME_NEVER : s->timer_at;
}

/* The longest a trap holds a lock that trap_lock takes: a channel's 4 KiB copy to an odd
 * address (about 209 ticks), a GICD_ISPENDR write's 32 injections (254 with its trap,
 * test_gicdstorm.py). */
#define TRAP_LOCK_HOLD_TICKS 256u

/* A lock for a trap that changes nothing if it fails (the access or call is made again): in the
 * ticket queue, fairly, when the queue ends before the core's instant even if every other core
 * is in it with the longest hold; else waited for only until that instant or a pending
 * interrupt (arch_spin_lock_before, which takes it only when it is free). Given up at every
 * instant, a call would never be served while other cores keep the queue busy: each holder
 * back in it before the next lets go, the lock is never free (tests/system/
 * test_chanstarve.py). The call made again after the core's decision has the time to queue. */
static inline bool trap_lock(struct spinlock *l)
{
	if (arch_spin_trylock(l))
		return true;
	uint64_t at = core_give_way_at(), now = arch_counter_read();
	uint64_t queue = (uint64_t)bh_system_config.core_count * TRAP_LOCK_HOLD_TICKS;
	if (at > now && at - now > queue && !arch_irq_pending()) {
		arch_spin_lock(l);
		return true;
	}
	return arch_spin_lock_before(l, at);
}

/* Ask this core to do work before it returns to its guest. */
static inline void exit_work_set(uint32_t bits)
{
	this_cpu()->exit_work |= bits;
}

static inline void exit_work_clear(struct percpu *c, uint32_t bits)
{
	c->exit_work &= ~bits;
}

#endif
