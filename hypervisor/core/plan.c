/* Cyclic plans in counter ticks. Positions are computed from absolute time (frame = elapsed
 * / major frame), never accumulated, so no core drifts from another or from the plan. */
#include "bulkhead/abi.h"
#include "panic.h"
#include "partition.h"
#include "plan.h"
#include "sched.h"

#define SLOT_POOL BH_MAX_SLOTS

struct plan_rt {
	uint64_t major_frame;
	const struct slot_rt *slots[BH_MAX_CORES];
	unsigned count[BH_MAX_CORES];
};

static struct slot_rt slot_pool[SLOT_POOL];
static struct plan_rt plans_rt[BH_MAX_PLANS];
static unsigned plans;

static struct {
	struct spinlock lock;
	uint32_t current, next;
	uint64_t base;          /* where frame 0 of the current plan began */
	uint64_t switch_at;     /* when `next` takes over, TIME_NEVER if no switch is pending */
	uint64_t frames_before; /* major frames completed under earlier plans */
} state;

uint64_t ns_to_ticks(uint64_t ns)
{
	uint64_t f = arch_counter_freq();
	return ns / 1000000000u * f + ns % 1000000000u * f / 1000000000u;
}

uint64_t ticks_to_ns(uint64_t ticks)
{
	uint64_t f = arch_counter_freq();
	return ticks / f * 1000000000u + ticks % f * 1000000000u / f;
}

static void resolve_core(const struct bh_plan_core_cfg *c, struct plan_rt *rt, unsigned core,
			 unsigned *used)
{
	BH_CHECK(*used + c->slot_count <= SLOT_POOL);
	rt->slots[core] = &slot_pool[*used];
	rt->count[core] = c->slot_count;
	for (unsigned i = 0; i < c->slot_count; i++) {
		const struct bh_slot_cfg *s = &c->slots[i];
		struct partition *p = partition_by_id(s->partition);
		BH_CHECK(p && s->vcpu < p->cfg->vcpu_count);
		slot_pool[*used + i] = (struct slot_rt){
			.start = ns_to_ticks(s->start_ns),
			.end = ns_to_ticks(s->start_ns + s->duration_ns),
			.vcpu = &p->vcpus[s->vcpu],
			.flags = s->flags,
		};
	}
	*used += c->slot_count;
}

void plan_init(const struct bh_system_cfg *sys, uint64_t t0)
{
	unsigned used = 0;

	BH_CHECK(sys->plan_count <= BH_MAX_PLANS);
	plans = sys->plan_count;
	for (unsigned i = 0; i < plans; i++) {
		plans_rt[i].major_frame = ns_to_ticks(sys->plans[i].major_frame_ns);
		BH_CHECK(plans_rt[i].major_frame > 0);
		for (unsigned c = 0; c < BH_MAX_CORES; c++)
			resolve_core(&sys->plans[i].cores[c], &plans_rt[i], c, &used);
	}
	for (unsigned c = 0; c < BH_MAX_CORES; c++) { /* the slots a decision may look at */
		unsigned most = 0;
		for (unsigned i = 0; i < plans; i++)
			most = plans_rt[i].count[c] > most ? plans_rt[i].count[c] : most;
		sched_set_lead(c, most);
	}
	state.current = state.next = plans ? sys->initial_plan : 0;
	state.base = t0;
	state.switch_at = TIME_NEVER;
}

unsigned plan_count(void)
{
	return plans;
}

const struct slot_rt *plan_slots(uint32_t plan, unsigned core, unsigned *count)
{
	*count = plans_rt[plan].count[core];
	return plans_rt[plan].slots[core];
}

/* Under the lock: take a due switch. */
static void commit_due_switch(uint64_t now)
{
	if (now < state.switch_at)
		return;
	state.frames_before += (state.switch_at - state.base) / plans_rt[state.current].major_frame;
	state.base = state.switch_at;
	state.current = state.next;
	state.switch_at = TIME_NEVER;
}

void plan_locate(uint64_t now, struct plan_position *pos)
{
	arch_spin_lock(&state.lock);
	commit_due_switch(now);
	uint64_t maf = plans_rt[state.current].major_frame;
	uint64_t elapsed = now > state.base ? now - state.base : 0;
	pos->plan = state.current;
	pos->frame = elapsed / maf;
	pos->frame_start = state.base + pos->frame * maf;
	pos->frame_end = pos->frame_start + maf;
	if (state.switch_at < pos->frame_end)
		pos->frame_end = state.switch_at;
	arch_spin_unlock(&state.lock);
}

int plan_request(uint32_t plan, uint32_t when, uint64_t now)
{
	if (plan >= plans || (when != BH_PLAN_AT_MAJOR_FRAME_END && when != BH_PLAN_NOW))
		return BH_INVALID_PARAM;
	arch_spin_lock(&state.lock);
	commit_due_switch(now);
	uint64_t maf = plans_rt[state.current].major_frame;
	uint64_t elapsed = now > state.base ? now - state.base : 0;
	state.next = plan;
	state.switch_at = when == BH_PLAN_NOW ? now : state.base + (elapsed / maf + 1) * maf;
	arch_spin_unlock(&state.lock);
	return BH_OK;
}

void plan_status(uint64_t now, uint32_t *current, uint32_t *next, uint64_t *frames)
{
	arch_spin_lock(&state.lock);
	commit_due_switch(now);
	uint64_t elapsed = now > state.base ? now - state.base : 0;
	*current = state.current;
	*next = state.switch_at == TIME_NEVER ? state.current : state.next;
	*frames = state.frames_before + (plans ? elapsed / plans_rt[state.current].major_frame : 0);
	arch_spin_unlock(&state.lock);
}
