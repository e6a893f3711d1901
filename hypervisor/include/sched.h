/* Per-core scheduling: each physical core follows one policy from the description.
 *
 * The scheduler runs only at events: the core's hypervisor timer (slot boundary, budget end,
 * a blocked vCPU's wake-up time), a vCPU blocking in BH_HC_IDLE, or a kick from another core
 * after it changed the state of one of this core's vCPUs. */
#ifndef BULKHEAD_SCHED_H
#define BULKHEAD_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include "config_tables.h"

#define TIME_NEVER UINT64_MAX

/* Cyclic cores: the hypervisor timer fires this long before each slot boundary; the core
 * decides, switches, then waits for the boundary itself, so the next vCPU starts on the
 * boundary whatever the decision cost. The outgoing vCPU gives up this much of its slot, so
 * it is kept just above the longest decision measured (about 700 instructions, 44 ticks of
 * QEMU's 62.5 MHz counter; docs/performance.md): 50 ticks = 800 ns. */
#define SLOT_LEAD_TICKS 50u
/* Every decision looks at each vCPU of the core (its timers, once or twice: about 90
 * instructions an idle vCPU) and a cyclic one at the slots of its plan before the current one
 * (about 5 each): SLOT_LEAD_TICKS covers SLOT_LEAD_VCPUS and SLOT_LEAD_SLOTS, and a core with
 * more has a longer lead (sched_core.lead, set at boot by sched_set_lead). With 31 waiting
 * vCPUs beside the victim the decision took about 2300 instructions, and every slot start of
 * a quiet core was 97 to 107 ticks late (tests/system/test_crowd.py). */
#define SLOT_LEAD_VCPUS 2u
#define SLOT_LEAD_SLOTS 16u
#define SLOT_LEAD_PER_VCPU_TICKS 6u
#define SLOT_LEAD_PER_2_SLOTS_TICKS 1u
/* A fixed-priority core leads its vCPUs' wake-ups too (sched.c led): SLOT_LEAD_TICKS and this
 * much for each of its vCPUs, as its decision for a wake-up passes over their timers before and
 * after the switch and picks among them. Without the lead, each of 31 waiting vCPUs beside a
 * victim made its wake-ups 13.5 ticks later (480 late, 76 alone: tests/system/test_crowd.py). */
#define FP_LEAD_PER_VCPU_TICKS 15u
#define SLOT_LEAD_MAX_TICKS (SLOT_LEAD_TICKS + \
			     SLOT_LEAD_PER_VCPU_TICKS * (BH_MAX_VCPUS - SLOT_LEAD_VCPUS) + \
			     SLOT_LEAD_PER_2_SLOTS_TICKS * (BH_MAX_SLOTS - SLOT_LEAD_SLOTS + 1) / 2)

/* A core that runs a best-effort vCPU hands it back this long before the core's own next
 * instant (a slot start's lead, a release, a wake-up), then waits for that instant exactly as
 * an idle core does, so its own vCPUs keep their timing to the tick. It covers the hand-back
 * (the exit from the guest, the decision, the switch back to the core's own vCPU with its
 * FP/SIMD registers, the queue) and the longest hypervisor path the best-effort vCPU can be
 * in when it is due, a 256-byte console write (docs/performance.md, "Best-effort vCPUs"). */
#define BE_LEAD_TICKS 400u
/* A best-effort vCPU is taken only for at least this long: shorter, the switches would cost
 * more than it gets. */
#define BE_MIN_RUN_TICKS 128u

struct vcpu;

/* A trace event held back until the instant it describes (after the lead spin). */
struct deferred_trace {
	uint32_t type;
	const struct vcpu *vcpu;
	uint64_t arg;
};

#define SCHED_DEFERRED_MAX 4

struct sched_core {
	uint32_t policy;                   /* enum bh_policy */
	unsigned count;                    /* vCPUs assigned to this core */
	struct vcpu *vcpus[BH_MAX_VCPUS];
	int slot;                          /* cyclic: slot running now, or -1 */
	const struct vcpu *slot_vcpu;      /* cyclic: that slot's vCPU (NULL: none), whose wake-ups
					    * alone are the core's instants in it */
	uint32_t slot_plan;                /* cyclic: the plan `slot` belongs to */
	uint64_t slot_frame;               /* cyclic: the major frame `slot` belongs to */
	uint64_t timer_at;                 /* deadline programmed in the hypervisor timer */
	uint64_t boundary;                 /* the instant the timer leads (a cyclic slot boundary,
					    * a fixed-priority wake-up), or NEVER */
	struct vcpu *woken;                /* with EXIT_PREEMPT: the vCPU made ready */
	/* next_wake, live_wake, exec_wake and other_wake: together, the hand-back writes them as
	 * two pairs (sched.c hand_back_count). */
	uint64_t next_wake;                /* earliest vCPU timer or wake-up on this core */
	uint64_t live_wake;                /* the virtual timer of the loaded idle vCPU, which wakes
					    * it in hardware (on a fixed-priority core the core's
					    * timer leads it) */
	uint64_t exec_wake;                /* the running vCPU's execution-clock deadline, which no
					    * lead may take (its clock reaches it only by running) */
	uint64_t other_wake;               /* next_wake but exec_wake: the wake-up a fixed-priority
					    * core still leads when exec_wake comes first */
	bool requests_waiting;             /* requests posted to vCPUs that do not run wait for
					    * their own time or the core's spare time */
	bool changes_taken;                /* the core took its requests flag down (a vCPU's state
					    * or its partition's may have changed: a resume, a
					    * start) since the last full decision's pass over its
					    * timers: next_wake may miss a deadline (sched.c
					    * block_switch) */
	/* Best-effort vCPUs (best_effort.h). */
	bool be_allowed;                   /* some best-effort vCPU may run on this core */
	struct vcpu *be;                   /* the one this core holds (runs), or NULL */
	struct vcpu *be_home;              /* the vCPU loaded when it came: loaded again when it goes */
	/* A vCPU this core's hand-back gave back, not in the queue's FIFO yet: set by this core
	 * only, and only while empty (it gives back what it took from the FIFO, and takes under the
	 * queue's lock, which empties every slot first); emptied under that lock (best_effort.c). */
	struct vcpu *be_parked;
	/* Idle (its policy has nothing to run), the core has spare time until its own next instant
	 * - BE_LEAD_TICKS, if that leaves BE_MIN_RUN_TICKS (0: none): for best-effort vCPUs and for
	 * the requests of its vCPUs that do not run (sched.c serve_in_spare_time). */
	uint64_t be_until;
	uint64_t be_quantum_end;           /* another best-effort vCPU's turn, if one waits */
	uint64_t be_policy_at;             /* the policy's timer event when be_until was set */
	uint64_t be_policy_instant;        /* and the policy's instant (d.until) it leads */
	uint64_t be_home_wake, be_home_live; /* next_wake and live_wake with be_home loaded, for
					    * the hand-back at be_until */
	bool be_home_counted;              /* the last decision counted them for the hand-back
					    * (sched.c be_count_home) */
	uint64_t be_back_timer;            /* counted so, the timer the hand-back arms */
	uint64_t be_back_boundary;         /* and the instant that timer leads */
	uint32_t be_home_state;            /* be_home's state when be_home_live was counted */
	unsigned deferred_count;
	struct deferred_trace deferred[SCHED_DEFERRED_MAX];
	/* Idle with nothing loaded and no instant of its own: it drains console output others left
	 * (sched.c idle_drain); asleep with nothing of the console's to come back for, it is woken
	 * by the next drain that leaves some. */
	volatile bool console_helper, console_asleep;
	/* The instant the core's last full decision stood for, which it enters its vCPU at (sched.c
	 * settle): read by a console helper on another core, which keeps its drains off it. */
	volatile uint64_t entering_at;
	uint64_t helper_kept_off_since;    /* a helper's looks waited for such instants from then
					    * (0: its last look did not) */
	bool console_retry;                /* dedicated, no helper: its timer is armed to drain */
	uint32_t lead;                     /* cyclic: SLOT_LEAD_TICKS, more with many vCPUs or slots */
};

/* Boot: bind vCPUs to their cores' schedulers (before any core runs). */
void sched_add_vcpu(unsigned core, struct vcpu *v);
/* Boot, once the vCPUs are bound: the core's slot lead for its vCPUs and `slots`, the most
 * slots it has in any plan. */
void sched_set_lead(unsigned core, unsigned slots);

/* Choose what this core runs now and switch to it; idles the core if nothing is ready.
 * Returns only when a vCPU is loaded and about to be entered. change: the core's exit work
 * (EXIT_DECIDE's bits) as its caller read it. */
void sched_reschedule(uint32_t change);
/* A writer's drain left console output queued: on a dedicated core (whose vCPU may wait in
 * hardware next, unseen) wake a console helper, or with none arm the core's timer to drain it. */
void sched_console_left(void);
/* This core's next scheduling event, which work it does in spare time (a console drain) must
 * end before: its timer, or sooner the virtual timer of the vCPU it idles with loaded (that
 * wakes the vCPU in hardware; the core's timer does not watch it). 0 when the timer fired and
 * is not programmed again yet, TIME_NEVER if nothing is ahead. */
uint64_t sched_next_event(void);
/* The running vCPU waits for a virtual interrupt (BH_HC_IDLE, WFI): its core goes to others. */
void sched_vcpu_idle(struct vcpu *v);
/* The same for a vCPU its caller has marked VCPU_IDLE already (and may have been woken since,
 * by another core): on a dedicated core it waits in place, else its core goes to others. */
void sched_vcpu_block(struct vcpu *v);
/* v was just made ready by its caller (a message handed to it, an interrupt for it): on v's
 * core, a fixed-priority decision that only has to compare it with the running vCPU;
 * elsewhere, a kick. */
void sched_vcpu_woken(struct vcpu *v);
/* This core's hypervisor timer fired (its trace event recorded): the full decision. */
void sched_timer_event(void);
/* This core's hypervisor timer fired in its best-effort vCPU at be_until, with nothing else since
 * the core's last decision, taken from that guest: true, and marked for the hand-back alone
 * (sched.c be_hand_back), which records the timer's trace event with its switch; false, nothing
 * done (then the timer's event and sched_timer_event). */
bool sched_timer_hands_back(void);
/* Then, with the interrupt ended, the exit's work (core_exit_work): on a core whose instants are
 * led, the hand-back itself and the sleep until the core's instant first; elsewhere the decision
 * hands back (EXIT_HAND_BACK). */
void sched_hand_back_and_exit(void);

/* State changes of a vCPU (a posted request, a suspend or resume, its partition's state), from
 * any core: the vCPU's core reconsiders at its next decision, at once only if this is the vCPU's
 * time there (it runs, or outranks the running vCPU) or the core has time to spare. Its posted
 * requests are served in its own time (its policy picks it: a vCPU with a request counts as
 * ready) or in the core's spare time, never in another vCPU's. */
void sched_vcpu_changed(struct vcpu *v);
void sched_core_changed(unsigned core);
/* Whether the core's time may be another partition's (every policy but dedicated). */
bool sched_core_shared(unsigned core);

/* Execution time of v in counter ticks, including its current run. */
uint64_t sched_exec_ticks(const struct vcpu *v);

/* The cyclic slot index of core `core` that runs one of partition `pid`'s vCPUs, or -1. */
int sched_current_slot_of(unsigned pid);

#endif
