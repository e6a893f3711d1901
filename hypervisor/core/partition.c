/* Partition and vCPU life cycle: boot, image loading, halt, suspend, restart, vCPU services
 * (docs/architecture.md, "Life cycle").
 *
 * A core only ever releases, resets or runs its own vCPUs, and only on its way out of the
 * hypervisor. Any core changes a partition's state at once under its lock and posts requests
 * to the vCPUs' owners: VCPU_REQ_STOP releases everything a vCPU holds and halts it,
 * VCPU_REQ_RESET starts it. A restart counts its vCPUs down as their owners release them; the
 * last makes vCPU 0 VCPU_LOADING, and vCPU 0's core reloads the image in bounded steps in
 * vCPU 0's own time (its slots, priority or budget). Nobody ever waits for another core.
 * A best-effort vCPU's owner is the core that holds it; a queued one keeps its requests until
 * the core that takes it next serves them (best_effort.h). */
#include "best_effort.h"
#include "bulkhead/abi.h"
#include "console.h"
#include "guest_mem.h"
#include "hm.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "sched.h"
#include "trace.h"

struct partition partitions[BH_MAX_PARTITIONS];
unsigned partition_count;
static struct vcpu vcpu_pool[BH_MAX_VCPUS];

/* A reload step copies or clears at most this much, so a core that reloads an image in its
 * vCPU's time still meets its next event in time (the step's cost is below the slot lead). */
#define LOAD_STEP_BYTES 4096u
/* A step starts only this long before the core's next timer event. */
#define LOAD_STEP_TICKS 256u
/* The shortest slot the tool accepts holds the slot lead and a step (QEMU's 62.5 MHz counter). */
_Static_assert((uint64_t)BH_MIN_SLOT_NS * 625 / 10000 > SLOT_LEAD_MAX_TICKS + LOAD_STEP_TICKS,
	       "BH_MIN_SLOT_NS must exceed the longest slot lead and a reload step");

/* Under the partition's lock. A stop cancels a start posted before it. A pinned vCPU's core
 * serves it in the vCPU's own time or its spare time (sched_vcpu_changed); a best-effort vCPU's
 * request goes to the core that holds it, or waits in it for whichever core takes it next. */
static void post_request(struct vcpu *v, uint32_t req)
{
	if (req & VCPU_REQ_STOP)
		__atomic_fetch_and(&v->request, ~VCPU_REQ_RESET, __ATOMIC_SEQ_CST);
	__atomic_fetch_or(&v->request, req, __ATOMIC_SEQ_CST);
	sched_vcpu_changed(v);
}

static void post_boot_request(struct vcpu *v)
{
	v->request = VCPU_REQ_RESET;
	if (!vcpu_is_best_effort(v)) /* a queued one: the core that takes it serves it */
		percpu[v->core].requests = 1;
}

static void bind_vcpus(struct partition *p, unsigned *next, const struct bh_system_cfg *sys)
{
	const struct bh_partition_cfg *cfg = p->cfg;

	BH_CHECK(*next + cfg->vcpu_count <= BH_MAX_VCPUS);
	/* One per core at most, as the tool allows: per-vCPU tables (hm.c) have that many. */
	BH_CHECK(cfg->vcpu_count <= BH_MAX_CORES);
	p->vcpus = &vcpu_pool[*next];
	*next += cfg->vcpu_count;
	for (uint32_t i = 0; i < cfg->segment_count; i++) /* the tool checked it: a second line */
		BH_CHECK(cfg->segments[i].file_size <= cfg->segments[i].mem_size);
	for (unsigned j = 0; j < cfg->vcpu_count; j++) {
		struct vcpu *v = &p->vcpus[j];
		unsigned core = cfg->vcpus[j].core;
		BH_CHECK(core < sys->core_count);
		BH_CHECK(!(cfg->vcpus[j].core_mask >> sys->core_count)); /* cores that exist */
		*v = (struct vcpu){ .partition = p, .cfg = &cfg->vcpus[j], .id = j, .core = core,
				    .state = VCPU_HALTED, .entry = cfg->entry,
				    .boot_arg = cfg->boot_arg,
				    .trace_source = trace_source(core, cfg->id, j),
				    .steals = cfg->vmachine != NULL,
				    .timer_deadline = TIME_NEVER };
		if (vcpu_is_best_effort(v)) {
			be_add(v);
			p->best_effort_vcpus |= 1u << j;
		} else
			sched_add_vcpu(core, v);
	}
}

/* The tool checked it, and the images are copied into these areas at every cold restart: a
 * second line of defence, once at boot, so no table can aim a load at the hypervisor. */
static void check_areas(const struct bh_partition_cfg *cfg, const struct bh_system_cfg *sys)
{
	for (uint32_t i = 0; i < cfg->area_count; i++) {
		const struct bh_area_cfg *a = &cfg->areas[i];
		BH_CHECK(a->phys + a->size > a->phys);
		BH_CHECK(a->phys >= sys->hyp_base + sys->hyp_size ||
			 a->phys + a->size <= sys->hyp_base);
		BH_CHECK((a->flags & BH_AREA_DEVICE) || (a->phys >= sys->ram_base &&
			 a->phys + a->size <= sys->ram_base + sys->ram_size));
		/* A device of the hypervisor's given away (its GIC: every core's interrupts). */
		BH_CHECK(!(a->flags & BH_AREA_DEVICE) || arch_device_assignable(a->phys, a->size));
		/* In guest address order, none overlapping: guest_mem.c searches them so. */
		BH_CHECK(a->size && a->ipa + a->size > a->ipa);
		BH_CHECK(i == 0 || a->ipa >= cfg->areas[i - 1].ipa + cfg->areas[i - 1].size);
	}
}

static void route_interrupts(const struct partition *p)
{
	for (uint32_t i = 0; i < p->cfg->irq_count; i++) {
		BH_CHECK(p->cfg->irqs[i] >= 32 && p->cfg->irqs[i] < BH_VIRQ_MAX &&
			 arch_irq_assignable(p->cfg->irqs[i]));
		virq_set_owner(p->cfg->irqs[i], &p->vcpus[0]);
		arch_irq_route(p->cfg->irqs[i], p->vcpus[0].core);
	}
}

void partition_init_all(const struct bh_system_cfg *sys)
{
	unsigned next_vcpu = 0;

	BH_CHECK(sys->partition_count <= BH_MAX_PARTITIONS && sys->core_count <= BH_MAX_CORES);
	partition_count = sys->partition_count;
	for (unsigned c = 0; c < BH_MAX_CORES; c++)
		percpu[c].sched.policy = sys->cores[c].policy;
	be_init();
	arch_stage2_init(sys);
	for (unsigned i = 0; i < partition_count; i++) {
		struct partition *p = &partitions[i];
		*p = (struct partition){ .cfg = &sys->partitions[i], .boot_kind = BH_BOOT_COLD };
		BH_CHECK(p->cfg->id == i && p->cfg->vcpu_count > 0);
		check_areas(p->cfg, sys);
		bind_vcpus(p, &next_vcpu, sys);
		arch_stage2_build(p);
		arch_partition_reset(p);
		partition_load_image(p);
		route_interrupts(p);
		p->state = PARTITION_RUNNING;
		post_boot_request(&p->vcpus[0]); /* started by its core when it comes up */
	}
	for (unsigned c = 0; c < BH_MAX_CORES; c++)
		percpu[c].sched.be_allowed = be_core_allowed(c);
}

struct partition *partition_by_id(uint64_t id)
{
	return id < partition_count ? &partitions[id] : NULL;
}

/* Copy or clear the next piece of the image, at most LOAD_STEP_BYTES; true when all is loaded. */
static bool load_step(struct partition *p)
{
	if (p->load_segment >= p->cfg->segment_count)
		return true;
	const struct bh_segment_cfg *s = &p->cfg->segments[p->load_segment];
	uint64_t off = p->load_offset, n = s->mem_size - off, pa;

	if (n > LOAD_STEP_BYTES)
		n = LOAD_STEP_BYTES;
	BH_CHECK(guest_ipa_to_phys(p, s->ipa + off, n, 0, &pa));
	uint8_t *dst = arch_phys_to_ptr(pa);
	uint64_t copy = off < s->file_size ? s->file_size - off : 0;
	if (copy > n)
		copy = n;
	memcpy(dst, s->data + off, copy);
	memset(dst + copy, 0, n - copy);
	arch_sync_loaded_image(dst, n);
	p->load_offset += n;
	if (p->load_offset == s->mem_size) {
		p->load_segment++;
		p->load_offset = 0;
	}
	return p->load_segment >= p->cfg->segment_count;
}

static void load_rewind(struct partition *p)
{
	p->load_segment = 0;
	p->load_offset = 0;
}

void partition_load_image(struct partition *p)
{
	load_rewind(p);
	while (!load_step(p))
		;
}

static void partition_lock(struct partition *p)
{
	arch_spin_lock(&p->lock);
}

static void partition_unlock(struct partition *p)
{
	arch_spin_unlock(&p->lock);
}

static void set_partition_state(struct partition *p, enum partition_state s)
{
	p->state = s;
	for (unsigned j = 0; j < p->cfg->vcpu_count; j++)
		sched_vcpu_changed(&p->vcpus[j]);
}

static void vcpu_stopped(struct vcpu *v);
static void count_for_restart(struct vcpu *v);

/* After a stop was posted to v: whether v did not run then, and so runs nothing more before
 * its core serves the stop. Its stop is served in its own time, which a vCPU below one that
 * never blocks, or without a slot in the current plan (or a best-effort vCPU while no core has
 * time to spare), may never get; a restart waits for that only if v runs now. A core makes a
 * pinned vCPU its running one with a store, a barrier and then a look at its requests (sched.c:
 * decide's second look, preempt), so one of the two cores sees the other's write; one that
 * runs v now counts it when it switches v out (sched.c run, vcpu_switched_out_stopped: the
 * same store, barrier and look; else a restart posted during the switch away from v waited for
 * v's own time, which a vCPU below one that never blocks never gets); a core that
 * takes a queued best-effort vCPU serves its requests before it runs it (be_adopt). What such
 * a vCPU still holds cannot reach the next incarnation (architecture.md, Life cycle). */
static bool runs_nothing_before_its_stop(const struct vcpu *v)
{
	if (vcpu_is_best_effort(v))
		return be_is_queued(v);
	return __atomic_load_n(&percpu[v->core].vcpu, __ATOMIC_SEQ_CST) != v;
}

/* Under the lock: every vCPU of p is to be released and halted by its core. */
static void stop_all(struct partition *p)
{
	bool restarting = p->state == PARTITION_RESTARTING;

	for (unsigned j = 0; j < p->cfg->vcpu_count; j++) {
		struct vcpu *v = &p->vcpus[j];
		/* Halted, nothing posted and no core serving it (its request read first: a start
		 * served meanwhile has made it ready by then): it holds nothing. */
		if (restarting && !__atomic_load_n(&v->request, __ATOMIC_SEQ_CST) &&
		    __atomic_load_n(&v->state, __ATOMIC_SEQ_CST) == VCPU_HALTED) {
			vcpu_stopped(v);
			continue;
		}
		post_request(v, VCPU_REQ_STOP);
		if (restarting && runs_nothing_before_its_stop(v))
			count_for_restart(v);
	}
}

/* Set by a stop that held a line back (partition_note_stopped_line), cleared by a look that
 * finds none waiting: one load on every idle pass while there is none. */
static volatile uint32_t stopped_lines;

void partition_note_stopped_line(void)
{
	__atomic_store_n(&stopped_lines, 1u, __ATOMIC_SEQ_CST);
}

/* What a line costs its caller (a format and a queueing, about 2200 instructions) and the rest
 * of a stop's path after it (the stops, the decision), with room to spare. */
#define LINE_ROOM_TICKS 256u

bool partition_line_has_room(unsigned lines)
{
	uint64_t at = sched_next_event();

	return at == TIME_NEVER ||
	       (at && arch_counter_read() + (lines + 1) * LINE_ROOM_TICKS < at);
}

bool partition_stopped_lines_waiting(void)
{
	return stopped_lines; /* volatile: one load, its address folded in */
}

/* What asked for a stop, as its own line before the stop's ("partition NAME: PSCI SYSTEM_OFF:
 * halting the partition"), as a trap printed it; "" for none. */
static void print_why(const struct partition *p, const char *why)
{
	bh_log("partition %s: %s", p->cfg->name, why);
}

/* The halt's lines, one a call, if they wait (its reason's first); true if one was printed. */
static bool announce_halt(struct partition *p)
{
	const char *why = __atomic_exchange_n(&p->announce_halt, NULL, __ATOMIC_SEQ_CST);

	if (why && *why) {
		print_why(p, why);
		__atomic_store_n(&p->announce_halt, "", __ATOMIC_SEQ_CST); /* the halt's next */
	} else if (why) {
		bh_log("partition %s halted", p->cfg->name);
	}
	return why != NULL;
}

bool partition_print_stopped_line(void)
{
	if (!__atomic_exchange_n(&stopped_lines, 0u, __ATOMIC_SEQ_CST))
		return false;
	for (unsigned i = 0; i < partition_count; i++) {
		struct partition *p = &partitions[i];
		/* The event's line first, then the halt's, as a trap printed them. */
		if (hm_print_reload_line(p) || announce_halt(p)) {
			partition_note_stopped_line(); /* there may be more: the next look finds them */
			return true;
		}
	}
	return false;
}

bool partition_halt_because(struct partition *p, const char *why)
{
	partition_lock(p);
	bool was_halted = p->state == PARTITION_HALTED;
	if (!was_halted) {
		p->state = PARTITION_HALTED;
		stop_all(p); /* which tells each vCPU's core */
	}
	partition_unlock(p);
	if (was_halted)
		return false;
	/* After the event's line if that waits (hm.c), or a restart's never printed. */
	bool behind = __atomic_load_n(&p->hm_reload_lines, __ATOMIC_RELAXED);
	if (sched_core_shared(this_cpu()->core) && (behind || !partition_line_has_room(*why ? 2 : 1))) {
		__atomic_store_n(&p->announce_halt, why, __ATOMIC_SEQ_CST);
		partition_note_stopped_line();
		return true;
	}
	if (*why)
		print_why(p, why);
	bh_log("partition %s halted", p->cfg->name);
	return true;
}

bool partition_halt(struct partition *p)
{
	return partition_halt_because(p, "");
}

/* p from `from` to `to`, under its lock; false if it was in another state. */
static bool change_state(struct partition *p, enum partition_state from, enum partition_state to)
{
	partition_lock(p);
	bool changed = p->state == from;
	if (changed)
		set_partition_state(p, to);
	partition_unlock(p);
	return changed;
}

/* The incarnation a vCPU of p acts for (its restart count), or false while p restarts: a vCPU
 * still in the hypervisor then belongs to the incarnation that ended, and nothing it does may
 * reach the next one (a port it opened would be open there). Under the lock, so the count and
 * the state are of one instant. */
bool partition_incarnation(struct partition *p, uint32_t *restarts)
{
	partition_lock(p);
	bool live = p->state != PARTITION_RESTARTING;
	*restarts = p->restarts;
	partition_unlock(p);
	return live;
}

/* What a status call says of p's state: a restart that will end suspended reads as suspended.
 * Under the lock: the restart's end sets the state and clears stay_suspended one after the
 * other, and a look between the two read a suspended partition as running (test_lifeatk.py:
 * one of 300 suspends "undone by the suspended incarnation", in one run of many). */
uint32_t partition_public_state(struct partition *p)
{
	partition_lock(p);
	uint32_t state = p->state;
	if (state == PARTITION_RESTARTING)
		state = p->stay_suspended ? PARTITION_SUSPENDED : PARTITION_RUNNING;
	partition_unlock(p);
	return state;
}

bool partition_suspend(struct partition *p)
{
	return change_state(p, PARTITION_RUNNING, PARTITION_SUSPENDED);
}

/* A restart that will end suspended (stay_suspended) is suspended for its system partition: a
 * resume lets it end running. */
bool partition_resume(struct partition *p)
{
	partition_lock(p);
	bool resumed = p->state == PARTITION_SUSPENDED ||
		       (p->state == PARTITION_RESTARTING && p->stay_suspended);
	if (p->state == PARTITION_SUSPENDED)
		set_partition_state(p, PARTITION_RUNNING);
	p->stay_suspended = false;
	partition_unlock(p);
	return resumed;
}

/* A halt ends an incarnation for good; only a system partition restarts a halted partition. A
 * restart the partition asked for itself (BH_HC_RESET_SELF, PSCI SYSTEM_RESET, an event whose
 * action restarts it) may reach the hypervisor after the halt, from a vCPU still in a trap on
 * another core: it comes from the incarnation that ended and must not bring it back. */
static bool halted_for_good(const struct partition *p, uint32_t cause)
{
	return p->state == PARTITION_HALTED && cause != BH_RESTART_SYSTEM_PARTITION;
}

/* A suspend holds until the system partition resumes: a restart the partition asked for itself
 * while suspended (a vCPU still in its trap on another core, as above) ends suspended, not
 * running. A system partition's restart runs it. */
static bool keeps_suspension(const struct partition *p, uint32_t cause)
{
	return p->state == PARTITION_SUSPENDED && cause != BH_RESTART_SYSTEM_PARTITION;
}

/* A restart requested while one is in progress joins it: a reload already under way starts
 * over (a cold one if either asked for it), the count of vCPUs to release goes on, and it is
 * the same restart: the count the partition is told (x2 at its entry) counts incarnations.
 * Its cause (x3) is the health monitor's if the monitor took part, else the first request's:
 * an error is what the partition most needs to know of. */
bool partition_restart(struct partition *p, bool cold, uint32_t cause)
{
	return partition_restart_because(p, cold, cause, "");
}

bool partition_restart_because(struct partition *p, bool cold, uint32_t cause, const char *why)
{
	partition_lock(p);
	if (halted_for_good(p, cause)) {
		partition_unlock(p);
		return false;
	}
	load_rewind(p);
	if (p->state == PARTITION_RESTARTING) {
		p->reload |= cold;
		if (cause == BH_RESTART_HM)
			p->restart_cause = cause;
		if (cause == BH_RESTART_SYSTEM_PARTITION)
			p->stay_suspended = false; /* as when it restarts one it suspended */
	} else {
		p->stay_suspended = keeps_suspension(p, cause);
		p->restart_cause = cause;
		p->restarts++; /* closes its ports now: nothing goes to the old incarnation */
		p->reload = cold;
		p->stopping = p->cfg->vcpu_count;
		for (unsigned j = 0; j < p->cfg->vcpu_count; j++)
			p->vcpus[j].counted = false;
		p->state = PARTITION_RESTARTING;
		stop_all(p);
	}
	/* What vCPU 0 is told is what happens: cold if any joined request reloads the image. */
	p->boot_kind = p->reload ? BH_BOOT_COLD_RESTART : BH_BOOT_WARM_RESTART;
	/* Its line is printed by the reload, in vCPU 0's time: formatted here, in the trap of a
	 * partition restarting itself, it was part of a path the partition can repeat at will,
	 * aimed at a neighbour's instant (tests/system/test_stopline.py). */
	p->announce = p->restarts;
	p->announce_cold = cold;
	p->announce_why = why;
	partition_unlock(p);
	return true;
}

/* Under the lock: v counts for p's restart in progress, once. The last one hands the reload to
 * vCPU 0's core. */
static void count_for_restart(struct vcpu *v)
{
	struct partition *p = v->partition;

	if (p->state != PARTITION_RESTARTING || !p->stopping || v->counted)
		return;
	v->counted = true;
	if (--p->stopping)
		return;
	__atomic_store_n(&p->vcpus[0].state, VCPU_LOADING, __ATOMIC_SEQ_CST);
	sched_vcpu_changed(&p->vcpus[0]);
}

void vcpu_switched_out_stopped(struct vcpu *v)
{
	partition_lock(v->partition);
	if (v->request & VCPU_REQ_STOP)
		count_for_restart(v);
	partition_unlock(v->partition);
}

/* Under the lock: v has been released. A stop served after the restart counted it (posted
 * before, for a halt, or counted while v did not run: stop_all) halts it all the same, unless
 * it is vCPU 0 loading the next incarnation already. */
static void vcpu_stopped(struct vcpu *v)
{
	if (v->partition->state != PARTITION_RESTARTING || v->state != VCPU_LOADING)
		__atomic_store_n(&v->state, VCPU_HALTED, __ATOMIC_SEQ_CST);
	count_for_restart(v);
}

/* Everything v holds goes, on its own core: console line, port wait, timers, virtual and
 * forwarded interrupts, list registers, FP registers. With a start posted after the stop
 * (started), what was sent to it since that post stays pending: the started vCPU's. */
static void vcpu_release(struct vcpu *v, bool started)
{
	virq_give_back(v); /* a start's, which this stop cancels */
	console_guest_flush(v);
	ports_vcpu_reset(v);
	hm_vcpu_release(v); /* after its last trap: nothing propagated outlives it */
	v->timer_deadline = TIME_NEVER;
	arch_vcpu_release(v);
	if (!started)
		virq_release(v);
	partition_lock(v->partition);
	vcpu_stopped(v);
	partition_unlock(v->partition);
}

static void vcpu_reset_here(struct vcpu *v, bool started);

/* Under the lock, on vCPU 0's core: the reload is complete. */
static void restart_done(struct partition *p)
{
	arch_stage2_flush(p); /* nothing of the old incarnation stays in the TLBs */
	for (unsigned j = 0; j < p->cfg->vcpu_count; j++) {
		virq_give_back(&p->vcpus[j]); /* starts of the ended incarnation (released below) */
		p->vcpus[j].entry = p->cfg->entry;
		p->vcpus[j].boot_arg = p->cfg->boot_arg;
		p->vcpus[j].stolen_ticks = 0; /* a new guest: its stolen time starts again */
	}
	p->state = p->stay_suspended ? PARTITION_SUSPENDED : PARTITION_RUNNING;
	p->stay_suspended = false;
	vcpu_reset_here(&p->vcpus[0], false);
	ports_partition_restarted(p); /* after the reset dropped vCPU 0's pending interrupts */
}

static bool core_busy(struct percpu *c)
{
	return (c->exit_work & EXIT_DECIDE) || c->requests ||
	       arch_irq_pending() || arch_counter_read() + LOAD_STEP_TICKS >= c->sched.timer_at;
}

/* One step under the lock; false when vCPU 0 stops loading (done, or halted meanwhile). */
static bool load_one_step(struct partition *p, struct vcpu *v0)
{
	bool more = false;

	partition_lock(p);
	/* A stop posted since core_busy() looked (a halt and a new restart) comes first. */
	if (v0->state == VCPU_LOADING && p->state == PARTITION_RESTARTING && !v0->request) {
		if (!p->load_segment && !p->load_offset) {
			arch_partition_reset(p); /* its emulated machine too, once per reload */
			ports_partition_reloading(p);
		}
		if (!p->reload || load_step(p))
			restart_done(p);
		else
			more = true;
	}
	partition_unlock(p);
	return more;
}

/* The restart's line, once, in vCPU 0's time (partition_restart); false if none is due. */
static bool announce(struct partition *p)
{
	partition_lock(p);
	uint32_t n = p->announce;
	bool cold = p->announce_cold;
	const char *why = p->announce_why;
	p->announce_why = "";
	if (!why || !*why)
		p->announce = 0;
	partition_unlock(p);
	if (n && why && *why) /* what asked for it first, as its own line: the next look, the restart's */
		print_why(p, why);
	else if (n)
		bh_log("partition %s %s restart #%u", p->cfg->name, cold ? "cold" : "warm", n);
	return n != 0;
}

/* The lines of the restart (the health event that caused it, a halt's still waiting for spare
 * time, then its own) come first, one per look ahead: each costs about as much as a load step. */
void partition_load_steps(struct vcpu *v0)
{
	struct percpu *c = this_cpu();
	struct partition *p = v0->partition;

	while (!core_busy(c) && (hm_print_reload_line(p) || announce_halt(p) ||
				 (p->announce && announce(p)) || load_one_step(p, v0)))
		;
}

enum vcpu_state vcpu_public_state(const struct vcpu *v)
{
	uint32_t req = __atomic_load_n(&v->request, __ATOMIC_SEQ_CST);

	if (!(req & (VCPU_REQ_STOP | VCPU_REQ_RESET))) /* none posted since: those being served */
		req >>= VCPU_REQ_SERVED_SHIFT;
	if (req & VCPU_REQ_RESET)
		return VCPU_READY; /* a start posted to its core cannot fail */
	if (req & VCPU_REQ_STOP)
		return VCPU_HALTED;
	return v->state == VCPU_LOADING ? VCPU_READY : (enum vcpu_state)v->state;
}

bool vcpu_transition(struct vcpu *v, enum vcpu_state from, enum vcpu_state to)
{
	uint32_t expected = from;

	if (!__atomic_compare_exchange_n(&v->state, &expected, (uint32_t)to, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return false;
	sched_vcpu_changed(v);
	return true;
}

/* The partition's forwarded interrupts made inactive once more, as a device may have fired while
 * its vCPU 0 was halted. */
static void release_device_interrupts(const struct partition *p)
{
	for (uint32_t i = 0; i < p->cfg->irq_count; i++)
		arch_irq_release(p->cfg->irqs[i]);
}

/* Under the lock. What the halted vCPU was sent goes now, when the start is posted, not when its
 * core serves it: an interrupt sent after the start returned is the started vCPU's (a port
 * message, an SGI), and waits for its first run. The device interrupts it holds at the GIC go
 * back to the GIC only when its own core serves the start (virq_give_back): given back by the
 * posting core, one still asserted fired again at once on v's core, in whoever's time that
 * core ran, and a partition halting and starting its vCPU 0 from another core did that at will
 * (unit a_start_gives_held_device_interrupts_back_on_the_started_vcpus_core). */
static void vcpu_start(struct vcpu *v, uint64_t entry, uint64_t boot_arg)
{
	const struct bh_partition_cfg *cfg = v->partition->cfg;

	v->entry = entry ? entry : cfg->entry;
	v->boot_arg = boot_arg;
	virq_drop_pending_elsewhere(v);
	/* Only those routed to v: one a board guest routed to another vCPU (GICD_IROUTER) is that
	 * vCPU's, maybe held for it on its core; given back by v's core, it fired again there at
	 * once, in whoever's time (unit a_start_of_vcpu_0_leaves_a_device_interrupt_held_for_another_vcpu). */
	for (uint32_t i = 0; i < cfg->irq_count; i++)
		if (virq_owned_by(cfg->irqs[i], v))
			virq_give_back_later(v, cfg->irqs[i]);
	post_request(v, VCPU_REQ_RESET);
}

static bool startable(const struct vcpu *t)
{
	return vcpu_public_state(t) == VCPU_HALTED && t->partition->state == PARTITION_RUNNING;
}

int vcpu_power_on(struct vcpu *t, uint64_t entry, uint64_t arg)
{
	struct partition *p = t->partition;
	uint64_t pa;
	int ret = BH_NO_ACTION;

	if (!guest_ipa_to_phys(p, entry, 4, BH_AREA_EXEC, &pa))
		return BH_INVALID_PARAM;
	partition_lock(p);
	if (startable(t)) {
		vcpu_start(t, entry, arg);
		ret = BH_OK;
	}
	partition_unlock(p);
	return ret;
}

/* Reset v to v->entry on its own core: fresh registers and EL1 state, ready to run. It holds
 * nothing any more (released when it stopped, or never started). Served for a start (started),
 * what was sent to it since the start was posted stays pending (vcpu_start dropped the rest);
 * at the end of a reload nothing does. */
static void vcpu_reset_here(struct vcpu *v, bool started)
{
	struct partition *p = v->partition;

	v->line_len = 0;
	ports_vcpu_reset(v);
	virq_give_back(v); /* what the start left for this core */
	if (started) {
		virq_enable_all(v);
	} else {
		virq_release(v);
		if (v->id == 0)
			release_device_interrupts(p);
	}
	v->timer_deadline = TIME_NEVER;
	/* Its execution clock starts again: also for a vCPU served while it runs on this core,
	 * whose run was counted from before the start (edfreset's reads summed to 79 % of the
	 * wall time on a 50 % budget: test_req_attack.c). */
	v->exec_ticks = 0;
	v->run_start = arch_counter_read();
	v->kicks = 0;
	v->ready_since = 0; /* stolen time counts from its first run */
	/* An EDF server keeps its periods, and what is left of its budget, across resets: a start
	 * that released it at once with a full budget and a deadline a period away let a partition
	 * halting and starting its own vCPU keep it on the core at will, 81% of the time on a
	 * budget of 50% (tests/system/test_edfreset.py). Its first start begins its periods. */
	if (!v->next_release) {
		v->next_release = arch_counter_read();
		v->budget_left = 0;
	}
	if (p->cfg->vmachine)
		arch_vcpu_reset(v, v->entry, v->boot_arg, 0, 0, 0); /* x0 = device tree: Linux, board */
	else
		arch_vcpu_reset(v, v->entry, v->id, p->boot_kind, p->restarts, p->restart_cause);
	if (this_cpu()->loaded == v)
		arch_vcpu_load(v);
	if (started) {
		/* A restart posted during the serve counts v at once (it does not run: stop_all)
		 * and, v being vCPU 0 and the last, makes it loading: the start belonged to the
		 * ended incarnation, and the stop the restart posted is served next, which keeps
		 * it loading. Made ready here, that stop halted it, and nobody reloaded the
		 * partition (unit reqatk_a_restart_during_the_serve_of_vcpu_0s_start_reloads_it).
		 * Under the lock, as the count. */
		partition_lock(p);
		if (v->state != VCPU_LOADING)
			__atomic_store_n(&v->state, VCPU_READY, __ATOMIC_SEQ_CST);
		partition_unlock(p);
	} else { /* the reload's end, under the lock already */
		__atomic_store_n(&v->state, VCPU_READY, __ATOMIC_SEQ_CST);
	}
	exit_work_set(EXIT_RESCHED);
}

void vcpu_serve_requests(struct vcpu *v)
{
	/* Marked as being served until done: a restart does not count it as halted meanwhile, and
	 * the guest sees what is being served (a stop: halted), not the state it ends. A restart
	 * may count a vCPU before its core serves its stop (stop_all), so the next incarnation may
	 * start it during the serve. Under the lock, as every post: taken whole. */
	if (!__atomic_load_n(&v->request, __ATOMIC_SEQ_CST))
		return;
	partition_lock(v->partition);
	uint32_t req = v->request & (VCPU_REQ_STOP | VCPU_REQ_RESET);
	__atomic_store_n(&v->request, VCPU_REQ_SERVING | req << VCPU_REQ_SERVED_SHIFT, __ATOMIC_SEQ_CST);
	partition_unlock(v->partition);

	if (req & VCPU_REQ_STOP)
		vcpu_release(v, req & VCPU_REQ_RESET);
	if (req & VCPU_REQ_RESET)
		vcpu_reset_here(v, true);
	__atomic_fetch_and(&v->request, ~(VCPU_REQ_SERVING | VCPU_REQ_SERVED_MASK), __ATOMIC_SEQ_CST);
	if (req)
		exit_work_set(EXIT_RESCHED);
}

void core_process_requests(void)
{
	struct percpu *c = this_cpu();

	/* A plain look first: mostly nothing is posted. The running vCPU's requests are served in
	 * its time, and those of the best-effort vCPU the core holds; the others wait for their
	 * own time or the core's spare time (sched.c), marked so the core's flag can go down. */
	if (!c->requests)
		return;
	__atomic_store_n(&c->requests, 0u, __ATOMIC_SEQ_CST);
	c->sched.requests_waiting = c->sched.changes_taken = true;
	if (c->vcpu && c->vcpu->request)
		vcpu_serve_requests(c->vcpu);
	if (c->sched.be && c->sched.be->request)
		vcpu_serve_requests(c->sched.be);
}

/* Under the lock. Suspend and resume are state flags (the scheduler skips a suspended vCPU,
 * which keeps what it holds); a halt is a release by the vCPU's core. */
static int vcpu_op(struct vcpu *t, uint64_t op, uint64_t entry)
{
	enum vcpu_state now = vcpu_public_state(t);

	switch (op) {
	case BH_VCPU_START:
		if (!startable(t))
			return BH_NO_ACTION;
		vcpu_start(t, entry, 0);
		return BH_OK;
	case BH_VCPU_SUSPEND:
		if (now != VCPU_READY && now != VCPU_IDLE)
			return BH_NO_ACTION;
		/* Only its waking (idle to ready) can race with us: one retry covers it. */
		return vcpu_transition(t, VCPU_IDLE, VCPU_SUSPENDED) ||
		       vcpu_transition(t, VCPU_READY, VCPU_SUSPENDED) ? BH_OK : BH_NO_ACTION;
	case BH_VCPU_RESUME:
		return vcpu_transition(t, VCPU_SUSPENDED, VCPU_READY) ? BH_OK : BH_NO_ACTION;
	case BH_VCPU_HALT:
		if (now == VCPU_HALTED)
			return BH_NO_ACTION;
		post_request(t, VCPU_REQ_STOP);
		return BH_OK;
	}
	return BH_INVALID_PARAM;
}

int vcpu_control(struct vcpu *caller, uint64_t op, uint64_t index, uint64_t entry)
{
	struct partition *p = caller->partition;
	uint64_t pa;

	if (index >= p->cfg->vcpu_count || op > BH_VCPU_HALT)
		return BH_INVALID_PARAM;
	if (op == BH_VCPU_START && entry && !guest_ipa_to_phys(p, entry, 4, BH_AREA_EXEC, &pa))
		return BH_INVALID_PARAM;
	partition_lock(p);
	int ret = vcpu_op(&p->vcpus[index], op, entry);
	partition_unlock(p);
	return ret;
}
