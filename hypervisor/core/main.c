/* Portable boot flow: check the configuration tables, bring up partitions, run each core. */
#include "console.h"
#include "main.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"

struct percpu percpu[BH_MAX_CORES];

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

static void log_partition(const struct partition *p)
{
	const struct bh_partition_cfg *cfg = p->cfg;

	for (unsigned j = 0; j < cfg->vcpu_count; j++)
		bh_log("partition %s (id %u%s) vcpu %u on core %u, entry 0x%lx", cfg->name, cfg->id,
		       cfg->flags & BH_PART_SYSTEM ? ", system" : "", j, p->vcpus[j].core,
		       cfg->entry);
}

const struct bh_system_cfg *bh_boot_primary(void)
{
	const struct bh_system_cfg *sys = &bh_system_config;

	check_config(sys);
	bh_log("system '%s': %u partitions on %u cores", sys->name, sys->partition_count,
	       sys->core_count);
	partition_init_all(sys);
	for (unsigned i = 0; i < partition_count; i++)
		log_partition(&partitions[i]);
	return sys;
}

void bh_enter_core(unsigned core)
{
	struct vcpu *v = partition_vcpu_for_core(core);

	if (v && v->partition->state == PARTITION_RUNNING)
		vcpu_start_here(v);
	core_idle();
}
