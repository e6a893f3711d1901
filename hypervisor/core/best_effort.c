/* The queue of best-effort vCPUs (best_effort.h). One FIFO for the whole system: a vCPU that a
 * core gives back joins the tail, and a core takes the first vCPU it may run that has work.
 * So a waiting vCPU is passed over only by vCPUs ahead of it, each at most once before it
 * reaches the head for the cores it may use: none waits for another indefinitely.
 *
 * A hand-back (be_put_handed_back), on the way to a real-time instant, takes no lock: it leaves
 * the vCPU in its core's slot (sched_core.be_parked), and whoever takes the lock next moves the
 * slots' vCPUs to the tail first (lock_queue), before it looks at the FIFO. So a parked vCPU is
 * in the queue for every look, as one put there at once would be. */
#include "arch.h"
#include "best_effort.h"
#include "config_tables.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "virq.h"

/* The round-robin quantum: a core running a best-effort vCPU looks for another's turn this
 * often (the M5150 paper measures 1, 5 and 10 ms quanta; 1 ms costs it 1.74 %). */
#define BE_QUANTUM_NS 1000000u

static struct {
	struct spinlock lock;
	unsigned count;
	struct vcpu *fifo[BH_MAX_VCPUS];
	uint32_t allowed;          /* cores some best-effort vCPU lists */
	volatile uint32_t asleep;  /* cores asleep with time for best-effort work (bit n: core n) */
	uint64_t quantum;
	uint32_t parked_any; /* set after a core's slot (be_parked), taken (exchanged for 0)
			      * before the slots are */
} queue;

void be_init(void)
{
	queue.count = 0;
	queue.allowed = 0;
	queue.asleep = 0;
	for (unsigned core = 0; core < BH_MAX_CORES; core++)
		percpu[core].sched.be_parked = NULL;
	queue.parked_any = 0;
	queue.quantum = ns_to_ticks(BE_QUANTUM_NS);
}

/* Under the lock: v joins the tail. */
static void append(struct vcpu *v)
{
	BH_CHECK(!v->be_queued && queue.count < BH_MAX_VCPUS);
	queue.fifo[queue.count++] = v;
	v->be_queued = true;
}

/* Hand-backs since the last holder of the lock, in core order: their vCPUs were given back
 * before this look. One load when there are none (most looks). The exchange reads the last
 * parker's mark, and so sees its slot; a mark set after it is the next look's (its slot may be
 * emptied already: a look then finds none). Only cores that may run best-effort vCPUs park. */
static void lock_queue(void)
{
	arch_spin_lock(&queue.lock);
	if (!__atomic_load_n(&queue.parked_any, __ATOMIC_SEQ_CST) ||
	    !__atomic_exchange_n(&queue.parked_any, 0u, __ATOMIC_SEQ_CST))
		return;
	for (uint32_t cores = queue.allowed; cores; cores &= cores - 1) {
		struct vcpu **slot = &percpu[__builtin_ctz(cores)].sched.be_parked;
		struct vcpu *v = __atomic_load_n(slot, __ATOMIC_ACQUIRE); /* all its state with it */
		if (v) {
			__atomic_store_n(slot, NULL, __ATOMIC_RELAXED);
			append(v);
		}
	}
}

void be_add(struct vcpu *v)
{
	BH_CHECK(queue.count < BH_MAX_VCPUS && v->cfg->core_mask);
	queue.fifo[queue.count++] = v;
	v->be_queued = true;
	queue.allowed |= v->cfg->core_mask;
}

bool be_core_allowed(unsigned core)
{
	return queue.allowed & (1u << core);
}

uint64_t be_quantum_ticks(void)
{
	return queue.quantum;
}

static bool may_run(const struct vcpu *v, unsigned core)
{
	return v->cfg->core_mask & (1u << core);
}

/* When an idle vCPU wants to run again: an interrupt pending, its virtual timer, its
 * BH_HC_SET_TIMER deadline on the wall clock (the execution clock stands still meanwhile). */
static uint64_t wake_time(const struct vcpu *v)
{
	if (virq_has_pending(v))
		return 0;
	uint64_t at = arch_vtimer_deadline(v);
	if (v->timer_clock == BH_CLOCK_HW && v->timer_deadline < at)
		at = v->timer_deadline;
	return at;
}

static bool idle_and_serviced(const struct vcpu *v)
{
	return v->state == VCPU_IDLE && v->partition->state == PARTITION_RUNNING;
}

/* A look without holding v (its holder may change it meanwhile): the core that takes it looks
 * again, and a change after this look notifies the queue again. */
static bool has_work(const struct vcpu *v, uint64_t now)
{
	return v->request || vcpu_runnable(v) || (idle_and_serviced(v) && wake_time(v) <= now);
}

/* Under the lock: kick every core asleep that may run v, so that one takes it, or they watch
 * its wake-up. Each is kicked once per sleep (its bit goes), and only while it still has room:
 * from its be_until on, it waits for an instant of its own, which no kick may delay. */
static void kick_sleepers(const struct vcpu *v, uint64_t now)
{
	uint32_t cores = __atomic_fetch_and(&queue.asleep, ~v->cfg->core_mask, __ATOMIC_SEQ_CST) &
			 v->cfg->core_mask;

	for (; cores; cores &= cores - 1) {
		unsigned core = (unsigned)__builtin_ctz(cores);
		if (now < __atomic_load_n(&percpu[core].sched.be_until, __ATOMIC_RELAXED))
			arch_kick_core(core);
	}
}

static bool worth_a_kick(const struct vcpu *v, uint64_t now)
{
	return has_work(v, now) || (idle_and_serviced(v) && wake_time(v) != TIME_NEVER);
}

static void remove_at(unsigned i)
{
	for (; i + 1 < queue.count; i++)
		queue.fifo[i] = queue.fifo[i + 1];
	queue.count--;
}

struct vcpu *be_take(unsigned core, uint64_t now)
{
	struct vcpu *taken = NULL;
	bool moved = false;

	lock_queue();
	for (unsigned i = 0; i < queue.count; i++) {
		struct vcpu *v = queue.fifo[i];
		if (may_run(v, core) && has_work(v, now)) {
			remove_at(i);
			v->be_queued = false;
			moved = v->core != core;
			v->core = core;
			taken = v;
			break;
		}
	}
	arch_spin_unlock(&queue.lock);
	if (moved) /* its forwarded interrupts fire where it runs, not on its last core */
		virq_follow(taken, core);
	return taken;
}

/* Only cores asleep are kicked: with none of v's asleep (the hand-back of a core whose vCPUs
 * may use no other), no look at v. A core marks itself asleep before it looks at the queue
 * under the lock (be_core_sleep): either this load sees its mark, or its look sees v. */
void be_put(struct vcpu *v)
{
	lock_queue();
	append(v);
	if (__atomic_load_n(&queue.asleep, __ATOMIC_SEQ_CST) & v->cfg->core_mask) {
		uint64_t now = arch_counter_read();
		if (worth_a_kick(v, now))
			kick_sleepers(v, now);
	}
	bool stopped = __atomic_load_n(&v->request, __ATOMIC_SEQ_CST) & VCPU_REQ_STOP;
	arch_spin_unlock(&queue.lock);
	/* Queued with a stop posted, it runs nothing before a taker serves it (be_adopt): a
	 * restart in progress counts it, as one queued when the stop was posted (partition.c
	 * stop_all). A restart posted while its holder gave it back found it neither queued nor
	 * held, and waited for a core with spare time to take it. After the queue's lock: the
	 * partition's is taken first elsewhere. */
	if (stopped)
		vcpu_switched_out_stopped(v);
}

/* The rest of a hand-back's put, when a core asleep may run v or a stop is posted to it: the
 * sleepers kicked at once, as be_put kicks them (either the put's load saw the sleeper's mark,
 * or the sleeper's look after its mark takes the lock and finds v), and, after that, the
 * queue's count of the stop, as be_put's (partition.c stop_all counts v if its look at the
 * queue finds it parked; else this load sees the stop). */
static __attribute__((noinline)) void handed_back_slowly(struct vcpu *v)
{
	if (__atomic_load_n(&queue.asleep, __ATOMIC_SEQ_CST) & v->cfg->core_mask) {
		lock_queue();
		uint64_t now = arch_counter_read();
		if (v->be_queued && worth_a_kick(v, now)) /* not taken meanwhile */
			kick_sleepers(v, now);
		arch_spin_unlock(&queue.lock);
	}
	if (__atomic_load_n(&v->request, __ATOMIC_SEQ_CST) & VCPU_REQ_STOP)
		vcpu_switched_out_stopped(v);
}

/* A hand-back's put, on the way to its core's own instant: the vCPU parked, and the lock taken
 * only in the rare cases handed_back_slowly serves. Inline in the hand-back, its one caller:
 * mostly two stores and two loads. */
HOT_INLINE_GLOBAL void be_put_handed_back(struct sched_core *s, struct vcpu *v)
{
	if (__atomic_load_n(&s->be_parked, __ATOMIC_RELAXED)) { /* never (be_parked): not lost */
		be_put(v);
		return;
	}
	__atomic_store_n(&s->be_parked, v, __ATOMIC_RELEASE); /* after all of v's state */
	__atomic_store_n(&queue.parked_any, 1u, __ATOMIC_SEQ_CST);
	/* Both looked at, one branch: mostly neither. */
	if ((__atomic_load_n(&queue.asleep, __ATOMIC_SEQ_CST) & v->cfg->core_mask) |
	    (__atomic_load_n(&v->request, __ATOMIC_SEQ_CST) & VCPU_REQ_STOP))
		handed_back_slowly(v);
}

void be_notify(struct vcpu *v)
{
	lock_queue();
	if (!v->be_queued) {
		unsigned holder = v->core;
		if (v->request)
			__atomic_store_n(&percpu[holder].requests, 1u, __ATOMIC_SEQ_CST);
		arch_spin_unlock(&queue.lock);
		sched_core_changed(holder); /* it may have given v back meanwhile: a spare look */
		return;
	}
	uint64_t now = arch_counter_read();
	if (worth_a_kick(v, now))
		kick_sleepers(v, now);
	arch_spin_unlock(&queue.lock);
}

bool be_is_queued(const struct vcpu *v)
{
	lock_queue();
	bool queued = v->be_queued;
	arch_spin_unlock(&queue.lock);
	return queued;
}

bool be_waiting(unsigned core, uint64_t now)
{
	bool found = false;

	lock_queue();
	for (unsigned i = 0; i < queue.count && !found; i++)
		found = may_run(queue.fifo[i], core) && has_work(queue.fifo[i], now);
	arch_spin_unlock(&queue.lock);
	return found;
}

/* Marked first, then the look: a vCPU given back after the look finds the mark and kicks. */
bool be_core_sleep(unsigned core, uint64_t now)
{
	__atomic_fetch_or(&queue.asleep, 1u << core, __ATOMIC_SEQ_CST);
	if (!be_waiting(core, now))
		return true;
	be_core_awake(core);
	return false;
}

void be_core_awake(unsigned core)
{
	__atomic_fetch_and(&queue.asleep, ~(1u << core), __ATOMIC_SEQ_CST);
}

uint64_t be_next_wake(unsigned core)
{
	uint64_t next = TIME_NEVER;

	lock_queue();
	for (unsigned i = 0; i < queue.count; i++) {
		const struct vcpu *v = queue.fifo[i];
		if (may_run(v, core) && idle_and_serviced(v)) {
			uint64_t at = wake_time(v);
			next = at < next ? at : next;
		}
	}
	arch_spin_unlock(&queue.lock);
	return next;
}
