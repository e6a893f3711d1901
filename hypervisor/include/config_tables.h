/* The system description as the hypervisor sees it: const tables generated offline by
 * `bulkhead build` from the YAML description. The target never parses configuration; it only
 * checks the magic and version below and trusts the rest, which the tool validated. */
#ifndef BULKHEAD_CONFIG_TABLES_H
#define BULKHEAD_CONFIG_TABLES_H

#include <stdint.h>

#define BH_CONFIG_MAGIC   0x44484b42u /* "BKHD" little-endian */
#define BH_CONFIG_VERSION 2u

#define BH_MAX_PARTITIONS 16u
#define BH_MAX_CORES      8u
#define BH_MAX_VCPUS      32u  /* in the whole system */
#define BH_MAX_PLANS      8u

/* Memory area flags. */
#define BH_AREA_READ   (1u << 0)
#define BH_AREA_WRITE  (1u << 1)
#define BH_AREA_EXEC   (1u << 2)
#define BH_AREA_DEVICE (1u << 3) /* device memory (nGnRE), not cacheable */

/* Partition flags. */
#define BH_PART_SYSTEM (1u << 0) /* may call system-partition services */

/* Health-monitor events: the index into bh_partition_cfg.hm_actions. */
enum bh_hm_event {
	BH_HM_MEMORY_VIOLATION = 0,   /* stage-2 abort: access outside the partition's areas */
	BH_HM_TRAPPED_INSTRUCTION = 1, /* trapped instruction or system register */
	BH_HM_SMC = 2,                /* SMC to firmware */
	BH_HM_PARTITION_ERROR = 3,    /* raised by the partition itself (BH_HC_RAISE_EVENT) */
	BH_HM_INTERNAL_ERROR = 4,     /* hypervisor internal error while serving the partition */
	BH_HM_BUDGET_OVERRUN = 5,     /* an EDF vCPU used up its budget before it idled */
	BH_HM_DEADLINE_MISS = 6,      /* reported by the partition (BH_HC_DEADLINE_MISS) */
	BH_HM_EVENT_COUNT = 7,
};

enum bh_hm_action {
	BH_HM_IGNORE = 0,         /* log only; a faulting instruction is skipped */
	BH_HM_HALT_PARTITION = 1,
	BH_HM_COLD_RESTART = 2,   /* reload the image, reset every vCPU */
	BH_HM_HALT_SYSTEM = 3,
};

struct bh_area_cfg {
	uint64_t phys;  /* physical base, page aligned */
	uint64_t ipa;   /* guest (intermediate physical) base, page aligned */
	uint64_t size;  /* bytes, multiple of the page size */
	uint32_t flags; /* BH_AREA_* */
	uint32_t reserved;
};

/* One loadable segment of a partition image, copied into partition memory at boot and at every
 * cold restart. data points into the packed image (hypervisor memory, never mapped to a guest). */
struct bh_segment_cfg {
	uint64_t ipa;
	const uint8_t *data;
	uint64_t file_size;
	uint64_t mem_size; /* >= file_size; the rest is zeroed */
};

/* Scheduling policy of a physical core. */
enum bh_policy {
	BH_POLICY_DEDICATED = 0,      /* one vCPU owns the core; no hypervisor tick */
	BH_POLICY_CYCLIC = 1,         /* slots of the current plan's major frame */
	BH_POLICY_FIXED_PRIORITY = 2, /* highest priority ready vCPU runs, preemptive */
	BH_POLICY_EDF = 3,            /* earliest deadline first with budgets */
};

struct bh_vcpu_cfg {
	uint32_t core;        /* physical core (index into the platform's cores) */
	uint32_t priority;    /* fixed_priority cores: 0..255, higher runs first */
	uint64_t period_ns;   /* edf cores: release period */
	uint64_t budget_ns;   /* edf cores: execution budget per period */
	uint64_t deadline_ns; /* edf cores: relative deadline, budget <= deadline <= period */
};

#define BH_SLOT_NOTIFY (1u << 0) /* inject BH_VIRQ_SLOT_START into the vCPU at the slot start */

struct bh_slot_cfg {
	uint64_t start_ns;    /* offset from the start of the major frame */
	uint64_t duration_ns;
	uint32_t partition;   /* partition id */
	uint32_t vcpu;        /* vCPU index within the partition */
	uint32_t flags;       /* BH_SLOT_* */
	uint32_t reserved;
};

/* The slots one plan gives one cyclic core, sorted by start, never overlapping. */
struct bh_plan_core_cfg {
	uint32_t slot_count;
	uint32_t reserved;
	const struct bh_slot_cfg *slots;
};

struct bh_plan_cfg {
	const char *name;
	uint64_t major_frame_ns;
	struct bh_plan_core_cfg cores[BH_MAX_CORES]; /* empty for cores that are not cyclic */
};

struct bh_core_cfg {
	uint32_t policy; /* enum bh_policy */
	uint32_t reserved;
};

struct bh_partition_cfg {
	const char *name;
	uint32_t id;    /* equals the index in bh_system_cfg.partitions */
	uint32_t flags; /* BH_PART_* */
	uint64_t entry; /* guest address of the first instruction */
	uint32_t area_count;
	uint32_t segment_count;
	uint32_t vcpu_count;
	uint32_t irq_count;
	uint8_t hm_actions[BH_HM_EVENT_COUNT]; /* enum bh_hm_action per enum bh_hm_event */
	const struct bh_area_cfg *areas;
	const struct bh_segment_cfg *segments;
	const struct bh_vcpu_cfg *vcpus;
	const uint32_t *irqs; /* physical SPIs (INTID >= 32) forwarded to this partition's vCPU 0 */
};

struct bh_system_cfg {
	uint32_t magic;   /* BH_CONFIG_MAGIC */
	uint32_t version; /* BH_CONFIG_VERSION */
	const char *name;
	uint64_t hyp_base; /* hypervisor memory: never mapped into a guest */
	uint64_t hyp_size;
	uint64_t ram_base;
	uint64_t ram_size;
	uint32_t core_count;
	uint32_t partition_count;
	const struct bh_partition_cfg *partitions;
	struct bh_core_cfg cores[BH_MAX_CORES];
	uint32_t plan_count;   /* 0 when no core is cyclic */
	uint32_t initial_plan; /* index into plans */
	const struct bh_plan_cfg *plans;
};

extern const struct bh_system_cfg bh_system_config;

#endif
