/* Best-effort vCPUs (the M5150 paper's BE-VCPUs): vCPUs with no core of their own, which run
 * on any core of their set whenever that core's own policy has nothing to run
 * (docs/architecture.md, "Best-effort vCPUs").
 *
 * Every best-effort vCPU is either held by one core (which runs it, or has just taken it to
 * serve it) or in one global FIFO, the queue, with all of its state in memory. Only the holder
 * touches a held vCPU's registers, timers and requests; a queued vCPU is served by whichever
 * core takes it next. The queue's lock is held for one pass over at most BH_MAX_VCPUS entries
 * and nothing else is taken under it. */
#ifndef BULKHEAD_BEST_EFFORT_H
#define BULKHEAD_BEST_EFFORT_H

#include <stdbool.h>
#include <stdint.h>

struct sched_core;

struct vcpu;

/* Boot: an empty queue, before the vCPUs are added. */
void be_init(void);
/* Boot: v (best-effort, halted) joins the queue. */
void be_add(struct vcpu *v);
/* Whether core may run best-effort vCPUs at all (some vCPU lists it). */
bool be_core_allowed(unsigned core);

/* Take the first queued vCPU (FIFO order) that `core` may run and that has work: a request to
 * serve, guest code to run, or a wake-up due at `now`. It leaves the queue and `core` holds it
 * (v->core). NULL if there is none. */
struct vcpu *be_take(unsigned core, uint64_t now);
/* The holder gives v back, with all of its state in memory: it joins the queue at the tail,
 * and the cores asleep that may run it are kicked if it has work or a wake-up to watch. */
void be_put(struct vcpu *v);
/* be_put for the hand-back of the core whose scheduler is s (sched.c be_hand_back), on the way
 * to the core's own instant: without the queue's lock, unless a core asleep may run v. */
void be_put_handed_back(struct sched_core *s, struct vcpu *v);
/* v's state changed, a request was posted to it, or it was woken (any core): its holder is
 * told, or, if it is queued, the cores asleep that may run it. */
void be_notify(struct vcpu *v);

/* Whether v is in the queue now: a core that takes it later serves what was posted to it
 * before it runs it (sched.c be_adopt). */
bool be_is_queued(const struct vcpu *v);

/* `core` goes to sleep with time for best-effort work before its own next instant: it is kicked
 * when a vCPU it may run gets work. False (and not marked) if such work is queued already. */
bool be_core_sleep(unsigned core, uint64_t now);
/* `core` woke up: no longer kicked for best-effort work. */
void be_core_awake(unsigned core);
/* The earliest wake-up (virtual timer, BH_HC_SET_TIMER on the wall clock) of the idle queued
 * vCPUs that `core` may run, or TIME_NEVER. */
uint64_t be_next_wake(unsigned core);
/* Whether a queued vCPU that `core` may run has work: another's turn at a quantum's end. */
bool be_waiting(unsigned core, uint64_t now);

/* Ticks of the round-robin quantum among best-effort vCPUs. */
uint64_t be_quantum_ticks(void);

#endif
