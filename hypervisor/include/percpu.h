/* Per-core data. The first fields are read by assembly (see arch asm_offsets.h). */
#ifndef BULKHEAD_PERCPU_H
#define BULKHEAD_PERCPU_H

#include <stdint.h>
#include "arch.h"
#include "config_tables.h"
#include "sched.h"
#include "trace.h"

#define PERCPU_ALIGN 0x800

/* Work to do before returning to a guest (percpu.exit_work). */
#define EXIT_RESCHED (1u << 0) /* the running vCPU may have to give way */
#define EXIT_FLUSH   (1u << 1) /* virtual interrupts wait for the list registers */
#define EXIT_PREEMPT (1u << 2) /* the one change since the last decision: sched.woken is ready */
#define EXIT_BLOCKED (1u << 3) /* the one change since the last decision: the running vCPU blocked */
#define EXIT_HAND_BACK (1u << 4) /* the one change since the last decision: the timer at be_until
				  * fired in the best-effort vCPU the core holds (sched.c be_hand_back) */
/* A decision is due. */
#define EXIT_DECIDE  (EXIT_RESCHED | EXIT_PREEMPT | EXIT_BLOCKED | EXIT_HAND_BACK)

struct percpu {
	struct arch_regs *regs;     /* save area of the running vCPU (or idle_regs) */
	uint64_t stack_top;
	unsigned core;
	volatile uint32_t exit_work; /* EXIT_* */
	struct vcpu *vcpu;          /* the vCPU running on this core, or NULL while idle */
	struct vcpu *loaded;        /* the vCPU whose EL1 state is in the registers */
	struct trace_ring *trace;   /* this core's trace ring */
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
 * trapped instruction to run again (arch_spin_lock_before). */
static inline uint64_t core_give_way_at(void)
{
	return this_cpu()->sched.timer_at;
}

/* Ask this core to do work before it returns to its guest. */
static inline void exit_work_set(uint32_t bits)
{
	__atomic_fetch_or(&this_cpu()->exit_work, bits, __ATOMIC_RELAXED);
}

#endif
