#include "arch/fake.h"
#include "fixture.h"
#include "partition.h"
#include "stage2.h"
#include "plan.h"
#include "percpu.h"

static const uint8_t seg_data[] = SEG_TEXT;

static const struct bh_area_cfg alpha_areas[] = {
	{ .phys = ALPHA_RAM_PHYS, .ipa = ALPHA_RAM_IPA, .size = ALPHA_RAM_SIZE,
	  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_EXEC },
	{ .phys = 0x0a000000, .ipa = ALPHA_DEV_IPA, .size = 0x1000,
	  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_DEVICE },
};
static const struct bh_area_cfg beta_areas[] = {
	{ .phys = BETA_RAM_PHYS, .ipa = ALPHA_RAM_IPA, .size = 0x200000,
	  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_EXEC },
};
static const struct bh_segment_cfg segments[] = {
	{ .ipa = ALPHA_RAM_IPA, .data = seg_data, .file_size = sizeof(seg_data), .mem_size = 64 },
};
static const struct bh_vcpu_cfg alpha_vcpus[] = { { .core = 0 } };
static const struct bh_vcpu_cfg beta_vcpus[] = { { .core = 1 }, { .core = 2 } };

struct bh_partition_cfg fixture_partitions[2] = {
	{ .name = "alpha", .id = 0, .entry = ALPHA_RAM_IPA, .area_count = 2, .segment_count = 1,
	  .vcpu_count = 1, .areas = alpha_areas, .segments = segments, .vcpus = alpha_vcpus,
	  .hm_actions = { BH_HM_HALT_PARTITION, BH_HM_HALT_PARTITION, BH_HM_HALT_PARTITION,
			  BH_HM_IGNORE, BH_HM_HALT_SYSTEM } },
	{ .name = "beta", .id = 1, .flags = BH_PART_SYSTEM, .entry = ALPHA_RAM_IPA,
	  .area_count = 1, .segment_count = 1, .vcpu_count = 2, .areas = beta_areas,
	  .segments = segments, .vcpus = beta_vcpus,
	  .hm_actions = { BH_HM_COLD_RESTART, BH_HM_HALT_PARTITION, BH_HM_IGNORE, BH_HM_IGNORE,
			  BH_HM_HALT_SYSTEM } },
};

const struct bh_system_cfg bh_system_config = {
	.magic = BH_CONFIG_MAGIC, .version = BH_CONFIG_VERSION, .name = "unit",
	.hyp_base = 0x40000000, .hyp_size = 0x2000000, .ram_base = 0x40000000,
	.ram_size = 0x40000000, .core_count = 4, .partition_count = 2,
	.partitions = fixture_partitions,
};

void fixture_boot(void)
{
	stage2_pool_reset();
	partition_init_all(&bh_system_config);
	plan_init(&bh_system_config, 0);
}

void fixture_run(unsigned core, struct vcpu *v)
{
	fake.core = core;
	percpu[core].vcpu = percpu[core].loaded = v;
	percpu[core].regs = &v->regs;
	v->state = VCPU_READY;
	v->request = 0;
	percpu[core].requests = 0;
}
