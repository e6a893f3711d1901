#include "console.h"
#include <string.h>
#include "arch/fake.h"
#include "fixture.h"
#include "partition.h"
#include "plan.h"
#include "percpu.h"

static const uint8_t seg_data[] = SEG_TEXT;

static const struct bh_area_cfg alpha_areas[] = { /* in guest address order, as the tool emits */
	{ .phys = 0x0a000000, .ipa = ALPHA_DEV_IPA, .size = 0x1000,
	  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_DEVICE },
	{ .phys = ALPHA_RAM_PHYS, .ipa = ALPHA_RAM_IPA, .size = ALPHA_RAM_SIZE,
	  .flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_EXEC },
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

/* What `bulkhead build` would emit with qemu-virt's 4 KiB limit: alpha a root, a level-2 and a
 * level-3 table for its RAM and another level-2 and level-3 table for its device page (5), beta
 * a root, a level-2 and a level-3 table (3). */
static uint64_t stage2_pool[FIXTURE_STAGE2_PAGES][512] __attribute__((aligned(4096)));

const struct bh_system_cfg bh_system_config = {
	.magic = BH_CONFIG_MAGIC, .version = BH_CONFIG_VERSION, .name = "unit",
	.hyp_base = 0x40000000, .hyp_size = 0x2000000, .ram_base = 0x40000000,
	.ram_size = 0x40000000, .core_count = 4, .partition_count = 2,
	.partitions = fixture_partitions,
	.stage2_block_max = 0x1000, .stage2_pool_pages = FIXTURE_STAGE2_PAGES,
	.stage2_pool = stage2_pool,
};

void fixture_boot(void)
{
	console_reset();
	partition_init_all(&bh_system_config);
	plan_init(&bh_system_config, 0);
	/* The tests read what partitions and the hypervisor print after boot. */
	memset(fake.uart, 0, sizeof(fake.uart));
	fake.uart_len = 0;
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

void fixture_serve(unsigned core)
{
	struct sched_core *s = &percpu[core].sched;
	unsigned self = fake.core;

	fake.core = core;
	percpu[core].requests = 0;
	for (unsigned i = 0; i < s->count; i++)
		vcpu_serve_requests(s->vcpus[i]);
	fake.core = self;
}

const char *fixture_console(void)
{
	console_flush_all();
	fake.uart[fake.uart_len] = 0;
	return fake.uart;
}
