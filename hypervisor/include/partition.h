/* Partitions and their vCPUs: the run-time state beside the const configuration. */
#ifndef BULKHEAD_PARTITION_H
#define BULKHEAD_PARTITION_H

#include <stdbool.h>
#include <stdint.h>
#include "arch.h"
#include "arch/vcpu_ctx.h"
#include "config_tables.h"
#include "ports.h"
#include "virq.h"

#define CONSOLE_LINE_MAX 160
#define CONSOLE_INPUT_MAX 64 /* typed bytes a paravirtual partition has not read yet */

/* The life cycle (docs/architecture.md, "Life cycle"). A partition's state changes at once, under
 * its lock, from any core; what its vCPUs hold is released by the cores that own them. */
enum partition_state {
	PARTITION_RUNNING = 0,   /* = BH_PARTITION_STATE_RUNNING */
	PARTITION_HALTED = 1,
	PARTITION_SUSPENDED = 2, /* its vCPUs keep their states, none is scheduled */
	PARTITION_RESTARTING = 3, /* vCPUs being released, then its image reloaded in vCPU 0's time;
				   * it ends suspended if stay_suspended */
};

enum vcpu_state {
	VCPU_HALTED = 0,    /* = BH_VCPU_STATE_HALTED: not started, or halted; holds nothing */
	VCPU_READY = 1,     /* runnable */
	VCPU_IDLE = 2,      /* blocked in BH_HC_IDLE (or a receive wait) until a virtual interrupt */
	VCPU_SUSPENDED = 3,
	VCPU_LOADING = 4,   /* vCPU 0 of a restarting partition: its core reloads the image */
};

/* Requests posted to the core that owns a vCPU (vcpu.request), served only on that core's way
 * out of the hypervisor, never inside a trap of the vCPU. STOP before RESET when both are set:
 * a stop clears a reset posted before it. */
#define VCPU_REQ_STOP  (1u << 0) /* release everything it holds and halt it */
#define VCPU_REQ_RESET (1u << 1) /* reset it to vcpu.entry and make it ready */
#define VCPU_REQ_SERVING (1u << 2) /* its core is serving what was posted (not a request) */
/* While it serves them, the requests it took (STOP, RESET) shifted here: until the serve ends
 * they are what the guest sees (vcpu_public_state), as they were while posted. */
#define VCPU_REQ_SERVED_SHIFT 4
#define VCPU_REQ_SERVED_MASK ((VCPU_REQ_STOP | VCPU_REQ_RESET) << VCPU_REQ_SERVED_SHIFT)

struct vcpu {
	struct arch_regs regs;        /* guest registers while in the hypervisor or switched out */
	struct arch_vcpu_ctx arch;    /* EL1 state while switched out */
	struct partition *partition;
	const struct bh_vcpu_cfg *cfg;
	unsigned id;                  /* index within the partition */
	unsigned core;                /* its core; a best-effort vCPU's holder, or last holder */
	uint64_t trace_source;        /* its events' source fields, see trace_source() */
	volatile uint32_t state;      /* enum vcpu_state */
	volatile uint32_t request;    /* VCPU_REQ_* */
	uint64_t entry;               /* where the next reset starts it */
	uint64_t boot_arg;            /* x0 at the next reset, for partitions with a vmachine */
	/* Time, in counter ticks. */
	uint64_t exec_ticks;          /* run time since its partition last started */
	uint64_t run_start;           /* when it was last switched in */
	uint64_t timer_deadline;      /* BH_HC_SET_TIMER, TIME_NEVER when disarmed */
	uint64_t timer_interval;      /* 0: one-shot */
	uint32_t timer_clock;
	/* EDF state. */
	uint64_t budget_left, abs_deadline, next_release, charged_at;
	struct virq_state virq;
	struct port_wait wait;        /* BH_HC_QUEUING_RECEIVE_WAIT */
	unsigned line_len;            /* console output not yet ending in a newline */
	char line[CONSOLE_LINE_MAX];
	bool counted;                 /* released for its partition's restart in progress (lock) */
	bool hm_held;                 /* health-monitor lines wait for its own time (hm.c) */
	bool be_queued;               /* best-effort: in the queue, no core holds it (queue lock) */
	bool steals;                  /* its guest can read its stolen time: it is kept */
	/* Stolen time (the guest reads it, arch/aarch64/vmachine.c): switched out while it could
	 * run, since ready_since (0: running, or it was not ready when it left). */
	uint64_t ready_since;
	uint64_t stolen_ticks;        /* since its last reset */
	/* Kicks (another core's interrupt to reconsider) that reached its core while it was the
	 * core's vCPU, since its last reset: what other cores' work cost it (BH_HC_VCPU_STATUS). */
	uint64_t kicks;
	uint64_t kick_deadline;       /* EDF: the deadline its last outranking change kicked for */
};

/* A vCPU with no core of its own (best_effort.h); `core` is the core that holds it, or last did. */
static inline bool vcpu_is_best_effort(const struct vcpu *v)
{
	return v->cfg->flags & BH_VCPU_BEST_EFFORT;
}

struct partition {
	const struct bh_partition_cfg *cfg;
	volatile uint32_t state;     /* enum partition_state */
	uint32_t restarts;           /* requested so far: a restart closes its ports at once */
	uint32_t boot_kind;          /* BH_BOOT_* given to vCPU 0 at its next start */
	uint32_t restart_cause;      /* BH_RESTART_* given to vCPU 0 with it */
	/* A restart in progress (under the lock): vCPUs not released yet, then the reload. */
	uint32_t stopping;
	bool reload;                 /* cold: the image is copied again */
	bool stay_suspended;         /* asked for by itself while suspended: it ends suspended */
	/* Lines the reload prints first, in vCPU 0's time: a health event's (hm.c) and the
	 * restart's own (announce: its number, 0 none; announce_cold: cold or warm; announce_why:
	 * what asked for it, or ""). A stop on a shared core has no later time of its own: its
	 * lines (the event's, the halt's: announce_halt, its reason or NULL) wait for spare time
	 * (partition_print_stopped_line), or the reload if one comes first. */
	volatile bool hm_reload_lines;
	bool announce_cold;
	uint32_t announce;
	const char *announce_why;
	const char *volatile announce_halt;
	uint32_t load_segment;       /* the reload's position: segment, then byte in it */
	uint64_t load_offset;
	uint64_t hm_events;
	uint64_t stage2_root;        /* arch: physical address of the stage-2 root table */
	struct vcpu *vcpus;          /* cfg->vcpu_count entries */
	uint32_t best_effort_vcpus;  /* bit n: vCPU n is a best-effort one */
	struct spinlock lock;        /* serializes state changes of this partition */
	unsigned uart_line_len;      /* emulated UART output not yet ending in a newline */
	char uart_line[CONSOLE_LINE_MAX];
	/* Console input of a paravirtual partition (BH_HC_CONSOLE_READ), under the console's
	 * input lock; takes_input is set by its first read and never cleared. */
	volatile uint32_t takes_input;
	unsigned input_head, input_count;
	char input[CONSOLE_INPUT_MAX];
};

extern struct partition partitions[BH_MAX_PARTITIONS];
extern unsigned partition_count;

/* Boot: bind configuration to run-time state, build stage-2 tables, load images. */
void partition_init_all(const struct bh_system_cfg *sys);
struct partition *partition_by_id(uint64_t id);

/* Copy the partition's whole image into its memory (boot). */
void partition_load_image(struct partition *p);
/* vCPU 0 of a restarting partition is current on this core: reload its image in bounded steps
 * while the core has nothing else due; the last step starts vCPU 0. */
void partition_load_steps(struct vcpu *v0);

/* Partition actions, from any core. They take effect at once for the scheduler; each affected
 * vCPU is released by its own core at that core's next exit from the hypervisor (the caller's
 * own vCPU too, after its trap), and nobody waits for anybody. Halt, suspend and resume return
 * false when the partition's state left nothing to do (halted already; a suspend of one not
 * running, restarting included; a resume of one not suspended, where a restart the partition
 * asked for while suspended, which ends suspended, counts as suspended). */
bool partition_halt(struct partition *p);
/* The same, with what asked for it, a line of its own before "partition NAME halted"
 * ("PSCI SYSTEM_OFF: halting the partition" prints "partition NAME: PSCI SYSTEM_OFF: ..."). */
bool partition_halt_because(struct partition *p, const char *why);
/* False (nothing done) for a restart the partition asked for itself once it is halted: only a
 * system partition's (BH_RESTART_SYSTEM_PARTITION) restarts a halted partition. */
bool partition_restart(struct partition *p, bool cold, uint32_t cause);
/* The same, with what asked for it, a line of its own before "partition NAME cold restart #N". */
bool partition_restart_because(struct partition *p, bool cold, uint32_t cause, const char *why);

/* The lines of a partition stopped from a shared core (a halt's, a health event's that halted or
 * suspended it) are not printed in the trap or the decision that stopped it when its end may be
 * a neighbour's due instant: formatted there, one aimed halt put about 400 ticks in front of the
 * neighbour (tests/system/test_haltline.py). They wait for spare time: any core's idle pass with
 * room before its next instant prints them (sched.c idle_drain), one line a call. No console
 * helper is woken for them: under -icount its work is every core's time, and woken at the stop,
 * beside the instant it was aimed at, it made a cyclic victim 1476 ticks late. True if a line
 * waits; partition_print_stopped_line prints one and says whether it did. */
bool partition_stopped_lines_waiting(void);
bool partition_print_stopped_line(void);
/* Called by a stop on a shared core that held a line back for spare time. */
void partition_note_stopped_line(void);
/* Whether a stop's line, formatted now, still ends well before this core's next instant (then
 * it is printed at once, as before: a stop far from any instant delays nobody). */
bool partition_line_has_room(unsigned lines);
bool partition_suspend(struct partition *p);
bool partition_resume(struct partition *p);

/* The restart count of the incarnation p's vCPUs act for, read with its state under p's lock;
 * false while p restarts (a caller is a vCPU of the incarnation that ended). */
bool partition_incarnation(struct partition *p, uint32_t *restarts);
uint32_t partition_public_state(struct partition *p); /* BH_PARTITION_STATE_* */

/* BH_HC_VCPU_CTL on vCPU `index` of the caller's partition; returns a BH_* code. */
int vcpu_control(struct vcpu *caller, uint64_t op, uint64_t index, uint64_t entry);
/* PSCI CPU_ON: start halted vCPU t at entry with x0 = arg. BH_NO_ACTION if it is not halted,
 * BH_INVALID_PARAM if entry is not executable memory of its partition. */
int vcpu_power_on(struct vcpu *t, uint64_t entry, uint64_t arg);
/* Atomic state change from `from` to `to`; false (nothing changed) if v is not in `from`. */
bool vcpu_transition(struct vcpu *v, enum vcpu_state from, enum vcpu_state to);
/* The state a guest sees (BH_VCPU_STATE_*): posted requests count as done. */
enum vcpu_state vcpu_public_state(const struct vcpu *v);
bool vcpu_runnable(const struct vcpu *v);

/* Serve v's posted requests (stop, then start) on this core, which owns or holds it. */
void vcpu_serve_requests(struct vcpu *v);
/* Its core has just switched pinned v out with a stop posted (read after the switch's store and
 * barrier), or best-effort v was given back to the queue with one: v runs nothing more before
 * its stop is served, so a restart in progress counts it now, as one that did not run when the
 * stop was posted (partition.c stop_all). */
void vcpu_switched_out_stopped(struct vcpu *v);
/* Serve the requests other cores (or this one) posted for the vCPU running on this core (and the
 * best-effort vCPU it holds); the others' wait for their own time or the core's spare time
 * (sched.h, sched_vcpu_changed). Only on the way out of the hypervisor: never while a trap of
 * one of them is in progress. */
void core_process_requests(void);

#endif
