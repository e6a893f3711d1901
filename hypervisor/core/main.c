/* Portable boot flow and the work every core does before it enters a guest. */
#include "console.h"
#include "main.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "ports.h"
#include "sched.h"

struct percpu percpu[BH_MAX_CORES];

/* Cyclic cores start their first major frame together, this long after boot. */
#define EPOCH_DELAY_US 1000u

static void check_config(const struct bh_system_cfg *sys)
{
	if (sys->magic != BH_CONFIG_MAGIC)
		bh_panic("configuration tables have magic 0x%x, expected 0x%x: rebuild the image "
			 "with `bulkhead build`", sys->magic, BH_CONFIG_MAGIC);
	if (sys->version != BH_CONFIG_VERSION)
		bh_panic("configuration tables are version %u, this hypervisor reads version %u: "
			 "rebuild the image with the matching `bulkhead` tool", sys->version,
			 BH_CONFIG_VERSION);
	if (sys->core_count == 0 || sys->core_count > BH_MAX_CORES)
		bh_panic("configuration has %u cores; this build supports 1..%u", sys->core_count,
			 BH_MAX_CORES);
}

static const char *const policy_names[] = { "dedicated", "cyclic", "fixed_priority", "edf" };

static void log_partition(const struct partition *p)
{
	const struct bh_partition_cfg *cfg = p->cfg;

	for (unsigned j = 0; j < cfg->vcpu_count; j++) {
		unsigned core = p->vcpus[j].core;
		if (vcpu_is_best_effort(&p->vcpus[j])) {
			bh_log("partition %s (id %u%s) vcpu %u best-effort on cores 0x%x, entry 0x%lx",
			       cfg->name, cfg->id, cfg->flags & BH_PART_SYSTEM ? ", system" : "", j,
			       cfg->vcpus[j].core_mask, cfg->entry);
			continue;
		}
		bh_log("partition %s (id %u%s) vcpu %u on core %u (%s), entry 0x%lx", cfg->name,
		       cfg->id, cfg->flags & BH_PART_SYSTEM ? ", system" : "", j, core,
		       policy_names[percpu[core].sched.policy & 3], cfg->entry);
	}
}

const struct bh_system_cfg *bh_boot_primary(void)
{
	const struct bh_system_cfg *sys = &bh_system_config;

	check_config(sys);
	bh_log("system '%s': %u partitions on %u cores", sys->name, sys->partition_count,
	       sys->core_count);
	partition_init_all(sys);
	ports_init(sys);
	plan_init(sys, arch_counter_read() + ns_to_ticks(EPOCH_DELAY_US * 1000ull));
	for (unsigned i = 0; i < partition_count; i++)
		log_partition(&partitions[i]);
	console_init();
	arch_console_input_enable();
	return sys;
}

/* The current vCPU is vCPU 0 of a restarting partition: the core reloads its image instead of
 * entering it, step by step, until the reload is done or something else is due (its slot or
 * budget ends, an interrupt, a request); then it takes that and decides again. Unless a decision
 * or a request is due, it waits for the interrupt: virtual interrupts sent to the vCPU meanwhile
 * (EXIT_FLUSH) wait for its entry, and a core that did not wait for them spun for good. */
static void reload_in_its_time(struct percpu *c)
{
	partition_load_steps(c->vcpu);
	if (c->vcpu->state == VCPU_LOADING && !(c->exit_work & EXIT_DECIDE) && !c->requests)
		arch_wait_for_interrupt();
}

void core_exit_work(void)
{
	struct percpu *c = this_cpu();

	for (;;) {
		if (c->requests) /* mostly nothing is posted: no call */
			core_process_requests();
		uint32_t work = c->exit_work;
		if ((work & EXIT_DECIDE) || !c->vcpu)
			sched_reschedule(work);
		if (c->vcpu->state == VCPU_LOADING) { /* never entered: it has no guest yet */
			reload_in_its_time(c);
			continue;
		}
		if (c->exit_work & EXIT_FLUSH) /* set by this core only: no race with the test */
			exit_work_clear(c, EXIT_FLUSH);
		arch_vgic_flush(c->vcpu);
		if (!c->exit_work)
			break;
	}
	if (c->vcpu->wait.port) /* it comes back from a receive wait that blocked */
		ports_wait_finish(c->vcpu);
}

void bh_enter_core(unsigned core)
{
	const struct sched_core *s = &percpu[core].sched;

	/* A dedicated core's vCPU waits in hardware: its wake-up costs no exit. One without a vCPU
	 * runs only best-effort vCPUs, whose waits must leave the core to others. */
	arch_core_trap_guest_wait(s->policy != BH_POLICY_DEDICATED || !s->count);
	exit_work_set(EXIT_RESCHED);
	core_exit_work();
	arch_vcpu_resume();
}
