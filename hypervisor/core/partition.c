/* Partition life cycle: boot, image loading, halt and restart across cores.
 *
 * A core only ever resets or runs its own vCPU. To stop a partition whose vCPUs sit on other
 * cores, the acting core posts CORE_REQ_PARK to those cores and kicks them; to restart it, it
 * waits until they are parked, reloads the image, and posts CORE_REQ_START. */
#include "bulkhead/abi.h"
#include "console.h"
#include "guest_mem.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"

struct partition partitions[BH_MAX_PARTITIONS];
unsigned partition_count;
static struct vcpu vcpu_pool[BH_MAX_CORES]; /* at most one vCPU per core at this stage */

/* How long a core waits for another to park before declaring an internal error. */
#define PARK_TIMEOUT_MS 1000u

static void bind_vcpus(struct partition *p, unsigned *next, unsigned cores)
{
	const struct bh_partition_cfg *cfg = p->cfg;

	BH_CHECK(*next + cfg->vcpu_count <= BH_MAX_CORES);
	p->vcpus = &vcpu_pool[*next];
	*next += cfg->vcpu_count;
	for (unsigned j = 0; j < cfg->vcpu_count; j++) {
		struct vcpu *v = &p->vcpus[j];
		unsigned core = cfg->vcpus[j].core;
		BH_CHECK(core < cores && percpu[core].vcpu == NULL);
		*v = (struct vcpu){ .partition = p, .id = j, .core = core };
		percpu[core].vcpu = v;
	}
}

void partition_init_all(const struct bh_system_cfg *sys)
{
	unsigned next_vcpu = 0;

	BH_CHECK(sys->partition_count <= BH_MAX_PARTITIONS && sys->core_count <= BH_MAX_CORES);
	partition_count = sys->partition_count;
	for (unsigned i = 0; i < partition_count; i++) {
		struct partition *p = &partitions[i];
		p->cfg = &sys->partitions[i];
		BH_CHECK(p->cfg->id == i);
		bind_vcpus(p, &next_vcpu, sys->core_count);
		arch_stage2_build(p);
		partition_load_image(p);
		p->boot_kind = BH_BOOT_COLD;
		p->state = PARTITION_RUNNING;
	}
}

struct vcpu *partition_vcpu_for_core(unsigned core)
{
	return core < BH_MAX_CORES ? percpu[core].vcpu : NULL;
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

static void post_request(unsigned core, uint32_t req)
{
	__atomic_fetch_or(&percpu[core].request, req, __ATOMIC_SEQ_CST);
	arch_kick_core(core);
}

/* Post req to every core that runs one of p's vCPUs, except the calling core. */
static void post_to_other_vcpus(struct partition *p, uint32_t req)
{
	unsigned self = this_cpu()->core;

	for (unsigned j = 0; j < p->cfg->vcpu_count; j++)
		if (p->vcpus[j].core != self)
			post_request(p->vcpus[j].core, req);
}

static void wait_until_parked(struct partition *p)
{
	unsigned self = this_cpu()->core;
	uint64_t deadline = arch_counter_read() + arch_counter_freq() / 1000 * PARK_TIMEOUT_MS;

	for (unsigned j = 0; j < p->cfg->vcpu_count; j++) {
		unsigned core = p->vcpus[j].core;
		while (core != self && !percpu[core].parked) {
			if (arch_counter_read() > deadline)
				bh_panic("core %u did not park partition %s", core, p->cfg->name);
			arch_cpu_relax();
		}
	}
}

/* Take p's lock; while waiting, obey a park request so two cores acting on the same partition
 * cannot wait for each other. */
static void partition_lock(struct partition *p)
{
	while (__atomic_exchange_n(&p->lock.locked, 1u, __ATOMIC_ACQUIRE)) {
		struct vcpu *mine = this_cpu()->vcpu;
		if (mine && mine->partition == p && (this_cpu()->request & CORE_REQ_PARK))
			core_idle();
		arch_cpu_relax();
	}
}

static void partition_unlock(struct partition *p)
{
	arch_spin_unlock(&p->lock);
}

void partition_halt(struct partition *p)
{
	partition_lock(p);
	p->state = PARTITION_HALTED;
	post_to_other_vcpus(p, CORE_REQ_PARK);
	partition_unlock(p);
	bh_log("partition %s halted", p->cfg->name);
}

static struct vcpu *own_vcpu_in(struct partition *p)
{
	struct vcpu *mine = this_cpu()->vcpu;
	return mine && mine->partition == p ? mine : NULL;
}

void partition_restart(struct partition *p, bool cold)
{
	partition_lock(p);
	p->state = PARTITION_RESTARTING;
	post_to_other_vcpus(p, CORE_REQ_PARK);
	wait_until_parked(p);
	if (cold)
		partition_load_image(p);
	p->restarts++;
	p->boot_kind = cold ? BH_BOOT_COLD_RESTART : BH_BOOT_WARM_RESTART;
	p->state = PARTITION_RUNNING;
	bh_log("partition %s %s restart #%u", p->cfg->name, cold ? "cold" : "warm", p->restarts);
	post_to_other_vcpus(p, CORE_REQ_START);
	partition_unlock(p);
	struct vcpu *mine = own_vcpu_in(p);
	if (mine)
		vcpu_start_here(mine);
}

void vcpu_start_here(struct vcpu *v)
{
	struct partition *p = v->partition;

	v->line_len = 0;
	arch_vcpu_reset(v, p->cfg->entry, v->id, p->boot_kind, p->restarts);
	this_cpu()->parked = 0;
	arch_vcpu_resume(v);
}

void core_handle_requests(void)
{
	struct percpu *c = this_cpu();
	uint32_t req = __atomic_exchange_n(&c->request, 0u, __ATOMIC_SEQ_CST);

	if ((req & CORE_REQ_START) && c->vcpu && c->vcpu->partition->state == PARTITION_RUNNING)
		vcpu_start_here(c->vcpu);
	if ((req & CORE_REQ_PARK) && !c->parked) {
		if (c->vcpu)
			console_guest_flush(c->vcpu);
		core_idle();
	}
}

void core_idle(void)
{
	struct percpu *c = this_cpu();

	c->parked = 1;
	for (;;) {
		core_handle_requests();
		arch_wait_for_interrupt();
	}
}
