/* Partition and vCPU life cycle: boot, image loading, halt, suspend, restart, vCPU services.
 *
 * A core only ever resets or runs its own vCPUs. Another core changes a vCPU's state and kicks
 * the owner, which reschedules; to reset a vCPU it posts VCPU_REQ_RESET. A cold restart first
 * stops every vCPU of the partition (each owner acknowledges), then reloads the image. */
#include "bulkhead/abi.h"
#include "console.h"
#include "guest_mem.h"
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

/* How long a core waits for others to stop a partition's vCPUs before an internal error. */
#define STOP_TIMEOUT_MS 1000u

static void post_request(struct vcpu *v, uint32_t req)
{
	__atomic_fetch_or(&v->request, req, __ATOMIC_SEQ_CST);
	__atomic_store_n(&percpu[v->core].requests, 1u, __ATOMIC_SEQ_CST);
	sched_vcpu_changed(v);
}

static void post_boot_request(struct vcpu *v)
{
	v->request = VCPU_REQ_RESET;
	percpu[v->core].requests = 1;
}

static void bind_vcpus(struct partition *p, unsigned *next, const struct bh_system_cfg *sys)
{
	const struct bh_partition_cfg *cfg = p->cfg;

	BH_CHECK(*next + cfg->vcpu_count <= BH_MAX_VCPUS);
	p->vcpus = &vcpu_pool[*next];
	*next += cfg->vcpu_count;
	for (unsigned j = 0; j < cfg->vcpu_count; j++) {
		struct vcpu *v = &p->vcpus[j];
		unsigned core = cfg->vcpus[j].core;
		BH_CHECK(core < sys->core_count);
		*v = (struct vcpu){ .partition = p, .cfg = &cfg->vcpus[j], .id = j, .core = core,
				    .state = VCPU_HALTED, .entry = cfg->entry,
				    .boot_arg = cfg->boot_arg,
				    .trace_source = trace_source(core, cfg->id, j),
				    .timer_deadline = TIME_NEVER };
		sched_add_vcpu(core, v);
	}
}

static void route_interrupts(const struct partition *p)
{
	for (uint32_t i = 0; i < p->cfg->irq_count; i++) {
		BH_CHECK(p->cfg->irqs[i] >= 32 && p->cfg->irqs[i] < BH_VIRQ_MAX);
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
	arch_stage2_init(sys);
	for (unsigned i = 0; i < partition_count; i++) {
		struct partition *p = &partitions[i];
		*p = (struct partition){ .cfg = &sys->partitions[i], .boot_kind = BH_BOOT_COLD };
		BH_CHECK(p->cfg->id == i && p->cfg->vcpu_count > 0);
		bind_vcpus(p, &next_vcpu, sys);
		arch_stage2_build(p);
		arch_partition_reset(p);
		partition_load_image(p);
		route_interrupts(p);
		p->state = PARTITION_RUNNING;
		post_boot_request(&p->vcpus[0]); /* started by its core when it comes up */
	}
}

struct partition *partition_by_id(uint64_t id)
{
	return id < partition_count ? &partitions[id] : NULL;
}

void partition_load_image(struct partition *p)
{
	for (uint32_t i = 0; i < p->cfg->segment_count; i++) {
		const struct bh_segment_cfg *s = &p->cfg->segments[i];
		uint64_t pa;
		BH_CHECK(guest_ipa_to_phys(p, s->ipa, s->mem_size, 0, &pa));
		uint8_t *dst = arch_phys_to_ptr(pa);
		memcpy(dst, s->data, s->file_size);
		memset(dst + s->file_size, 0, s->mem_size - s->file_size);
		arch_sync_loaded_image(dst, s->mem_size);
	}
}

/* Take p's lock; while waiting, serve this core's requests so that a core stopping p's vCPUs
 * never waits for us while we wait for it. */
static void partition_lock(struct partition *p)
{
	while (!arch_spin_trylock(&p->lock)) {
		core_process_requests();
		arch_cpu_relax();
	}
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

void partition_halt(struct partition *p)
{
	partition_lock(p);
	for (unsigned j = 0; j < p->cfg->vcpu_count; j++)
		p->vcpus[j].state = VCPU_HALTED;
	set_partition_state(p, PARTITION_HALTED);
	partition_unlock(p);
	bh_log("partition %s halted", p->cfg->name);
}

void partition_suspend(struct partition *p)
{
	partition_lock(p);
	if (p->state == PARTITION_RUNNING)
		set_partition_state(p, PARTITION_SUSPENDED);
	partition_unlock(p);
}

void partition_resume(struct partition *p)
{
	partition_lock(p);
	if (p->state == PARTITION_SUSPENDED)
		set_partition_state(p, PARTITION_RUNNING);
	partition_unlock(p);
}

/* Ask every core running one of p's vCPUs to stop it, and wait until all have. */
static void stop_all_vcpus(struct partition *p)
{
	unsigned self = this_cpu()->core;
	uint64_t deadline = arch_counter_read() + arch_counter_freq() / 1000 * STOP_TIMEOUT_MS;

	for (unsigned j = 0; j < p->cfg->vcpu_count; j++) {
		struct vcpu *v = &p->vcpus[j];
		v->stop_ack = v->core == self; /* this core is in the hypervisor: not running it */
		if (!v->stop_ack)
			post_request(v, VCPU_REQ_STOP);
	}
	for (unsigned j = 0; j < p->cfg->vcpu_count; j++) {
		while (!p->vcpus[j].stop_ack) {
			if (arch_counter_read() > deadline)
				bh_panic("core %u did not stop partition %s", p->vcpus[j].core,
					 p->cfg->name);
			core_process_requests();
			arch_cpu_relax();
		}
	}
}

void partition_restart(struct partition *p, bool cold)
{
	uint32_t seen = p->restarts;

	partition_lock(p);
	if (p->restarts != seen) { /* another core restarted it while we waited */
		partition_unlock(p);
		return;
	}
	set_partition_state(p, PARTITION_RESTARTING);
	stop_all_vcpus(p);
	arch_partition_reset(p);
	if (cold)
		partition_load_image(p);
	p->restarts++;
	p->boot_kind = cold ? BH_BOOT_COLD_RESTART : BH_BOOT_WARM_RESTART;
	for (unsigned j = 0; j < p->cfg->vcpu_count; j++) {
		p->vcpus[j].state = VCPU_HALTED;
		p->vcpus[j].entry = p->cfg->entry;
		p->vcpus[j].boot_arg = p->cfg->boot_arg;
	}
	p->state = PARTITION_RUNNING;
	post_request(&p->vcpus[0], VCPU_REQ_RESET);
	partition_unlock(p);
	bh_log("partition %s %s restart #%u", p->cfg->name, cold ? "cold" : "warm", p->restarts);
}

enum vcpu_state vcpu_public_state(const struct vcpu *v)
{
	/* A start posted to another core counts as done: it cannot fail. */
	return v->request & VCPU_REQ_RESET ? VCPU_READY : (enum vcpu_state)v->state;
}

void vcpu_set_state(struct vcpu *v, enum vcpu_state s)
{
	v->state = s;
	sched_vcpu_changed(v);
}

void vcpu_start(struct vcpu *v, uint64_t entry, uint64_t boot_arg)
{
	v->entry = entry ? entry : v->partition->cfg->entry;
	v->boot_arg = boot_arg;
	post_request(v, VCPU_REQ_RESET);
}

int vcpu_power_on(struct vcpu *t, uint64_t entry, uint64_t arg)
{
	struct partition *p = t->partition;
	uint64_t pa;
	int ret = BH_NO_ACTION;

	if (!guest_ipa_to_phys(p, entry, 4, BH_AREA_EXEC, &pa))
		return BH_INVALID_PARAM;
	partition_lock(p);
	if (vcpu_public_state(t) == VCPU_HALTED && p->state == PARTITION_RUNNING) {
		vcpu_start(t, entry, arg);
		ret = BH_OK;
	}
	partition_unlock(p);
	return ret;
}

void vcpu_reset_here(struct vcpu *v)
{
	struct partition *p = v->partition;
	uint64_t now = arch_counter_read();

	v->line_len = 0;
	ports_vcpu_reset(v);
	virq_reset(v);
	v->timer_deadline = TIME_NEVER;
	v->exec_ticks = 0;
	v->next_release = now;
	v->budget_left = 0;
	if (p->cfg->vmachine)
		arch_vcpu_reset(v, v->entry, v->boot_arg, 0, 0); /* the arm64 Linux boot protocol */
	else
		arch_vcpu_reset(v, v->entry, v->id, p->boot_kind, p->restarts);
	if (this_cpu()->loaded == v)
		arch_vcpu_load(v);
	if (v->id == 0)
		for (uint32_t i = 0; i < p->cfg->irq_count; i++)
			arch_irq_release(p->cfg->irqs[i]);
	v->state = VCPU_READY;
	exit_work_set(EXIT_RESCHED);
}

void core_process_requests(void)
{
	struct percpu *c = this_cpu();
	struct sched_core *s = &c->sched;

	/* A plain look first: the exchange is the expensive part, and mostly nothing is posted. */
	if (!c->requests || !__atomic_exchange_n(&c->requests, 0u, __ATOMIC_SEQ_CST))
		return;
	for (unsigned i = 0; i < s->count; i++) {
		struct vcpu *v = s->vcpus[i];
		uint32_t req = __atomic_exchange_n(&v->request, 0u, __ATOMIC_SEQ_CST);
		if (req & VCPU_REQ_STOP) {
			console_guest_flush(v);
			__atomic_store_n(&v->stop_ack, 1u, __ATOMIC_SEQ_CST);
		}
		if (req & VCPU_REQ_RESET)
			vcpu_reset_here(v);
		if (req)
			exit_work_set(EXIT_RESCHED);
	}
}

static int vcpu_op(struct vcpu *t, unsigned op, uint64_t entry)
{
	switch (op) {
	case BH_VCPU_START:
		if (vcpu_public_state(t) != VCPU_HALTED)
			return BH_NO_ACTION;
		vcpu_start(t, entry, 0);
		return BH_OK;
	case BH_VCPU_SUSPEND:
		if (t->state != VCPU_READY && t->state != VCPU_IDLE)
			return BH_NO_ACTION;
		vcpu_set_state(t, VCPU_SUSPENDED);
		return BH_OK;
	case BH_VCPU_RESUME:
		if (t->state != VCPU_SUSPENDED)
			return BH_NO_ACTION;
		vcpu_set_state(t, VCPU_READY);
		return BH_OK;
	case BH_VCPU_HALT:
		if (t->state == VCPU_HALTED)
			return BH_NO_ACTION;
		vcpu_set_state(t, VCPU_HALTED);
		return BH_OK;
	}
	return BH_INVALID_PARAM;
}

int vcpu_control(struct vcpu *caller, unsigned op, uint64_t index, uint64_t entry)
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
