/* The system description as the hypervisor sees it: const tables generated offline by
 * `bulkhead build` from the YAML description. The target never parses configuration; it only
 * checks the magic and version below and trusts the rest, which the tool validated. */
#ifndef BULKHEAD_CONFIG_TABLES_H
#define BULKHEAD_CONFIG_TABLES_H

#include <stdint.h>

#define BH_CONFIG_MAGIC   0x44484b42u /* "BKHD" little-endian */
#define BH_CONFIG_VERSION 7u

#define BH_MAX_PARTITIONS 16u
#define BH_MAX_CORES      8u
#define BH_MAX_VCPUS      32u  /* in the whole system */
#define BH_MAX_PLANS      8u
#define BH_MAX_SLOTS      256u /* slots of all plans and cores together */
/* The shortest cyclic slot: longer than the slot lead and one reload step of a restarting
 * partition together (sched.h SLOT_LEAD_TICKS, partition.c LOAD_STEP_TICKS), so every slot
 * runs its vCPU and a reload progresses in any of them. The tool reads this line. */
#define BH_MIN_SLOT_NS    10000u
/* The guest (intermediate physical) address width stage 2 maps: every area ends below
 * 2^BH_IPA_BITS (VTCR_EL2.T0SZ = 64 - BH_IPA_BITS). The tool reads this line. */
#define BH_IPA_BITS       32u

/* Inter-partition communication (docs/ports.md). The tool (tools/src/bulkhead/abi.py) reads every
 * limit here from this file and checks descriptions against it. */
#define BH_MAX_CHANNELS       64u  /* sampling and queuing channels of the system */
#define BH_MAX_PORTS          64u  /* of one partition: the readiness bitmap is one register */
#define BH_MAX_SYSTEM_PORTS   256u /* of all partitions together */
#define BH_MAX_SHM_REGIONS    64u  /* the pending-doorbell bitmap is one register */
#define BH_MAX_MESSAGE_SIZE   4096u /* bounds the copy one port call makes */
#define BH_MAX_CHANNEL_MEMORY 0x100000u /* message buffers of all channels together */

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
	BH_HM_SUSPEND = 4,        /* the partition is suspended until a system partition resumes it */
	BH_HM_WARM_RESTART = 5,   /* every vCPU reset, memory kept */
	BH_HM_PROPAGATE = 6,      /* delivered to the vCPU as BH_VIRQ_HM; the instruction is skipped */
	BH_HM_ACTION_COUNT = 7,
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

/* vCPU flags. */
#define BH_VCPU_BEST_EFFORT (1u << 0) /* no core of its own: runs in the idle time of core_mask */

struct bh_vcpu_cfg {
	uint32_t core;        /* physical core (index into the platform's cores); best-effort:
			       * the first of core_mask */
	uint32_t priority;    /* fixed_priority cores: 0..255, higher runs first */
	uint64_t period_ns;   /* edf cores: release period */
	uint64_t budget_ns;   /* edf cores: execution budget per period */
	uint64_t deadline_ns; /* edf cores: relative deadline, budget <= deadline <= period */
	uint32_t flags;       /* BH_VCPU_* */
	uint32_t core_mask;   /* best-effort: the cores whose idle time it may use (bit n: core n),
			       * each cyclic, fixed_priority, edf, or dedicated without a vCPU */
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

/* The machine an unmodified guest (Linux) sees, emulated by the hypervisor: accesses to these
 * guest addresses are not mapped at stage 2 and trap. The partition's device tree, generated by the
 * tool, describes the same addresses. Present for Linux partitions and those with a board
 * (`board: qemu-virt`, an ELF at its link addresses); x0 = boot_arg at entry for both. */
/* A CFI flash bank of a board (arch/aarch64/vflash.c): size bytes at guest ipa, of which the first
 * backed bytes live in RAM at phys (an area of the partition, mapped read-only at stage 2 while
 * the bank is in read-array mode); the rest reads as erased. The RAM is never reloaded by the
 * hypervisor, so what the guest programs survives a partition restart. */
#define BH_FLASH_BANKS 2u
struct bh_flash_cfg {
	uint64_t ipa;
	uint64_t size;
	uint64_t phys;
	uint64_t backed; /* 0 .. size, a multiple of the erase block */
};

struct bh_vmachine_cfg {
	uint64_t gicd_ipa;   /* GICv3 distributor, 64 KiB */
	uint64_t gicr_ipa;   /* GICv3 redistributors, 128 KiB per vCPU in vCPU index order */
	uint64_t uart_ipa;   /* PL011, 4 KiB */
	uint32_t uart_intid; /* the PL011's virtual SPI */
	uint32_t gpio_intid; /* the event GPIO's virtual SPI */
	uint64_t gpio_ipa;   /* PL061 whose input lines are hypervisor events, 4 KiB */
	uint64_t call_ipa;   /* hypercalls from user space (arch/aarch64/vcall.c), 4 KiB */
	uint64_t steal_ipa;  /* stolen-time records, BH_PV_TIME_RECORD bytes per vCPU, 4 KiB */
	/* Board devices (`board: qemu-virt`); 0 / flash_count 0 for Linux partitions. */
	uint64_t rtc_ipa;       /* emulated PL031, 4 KiB; 0: none */
	uint64_t rtc_host_pa;   /* the platform's real PL031, read once for the time of day */
	uint32_t rtc_intid;     /* the PL031's virtual SPI */
	uint32_t flash_count;   /* 0, or BH_FLASH_BANKS for a firmware partition */
	struct bh_flash_cfg flash[BH_FLASH_BANKS];
};

/* Channels: the hypervisor copies messages between ports through a buffer in its own memory,
 * emitted by the tool (one per channel, never mapped into a guest). A queuing channel's buffer
 * holds max_messages slots of BH_MSG_SLOT_SIZE(max_message_size) bytes: the message's length
 * (uint32_t), padding, then the message. A sampling channel's holds BH_SAMPLING_COPIES copies of
 * the message, each BH_SAMPLING_SLOT_SIZE(max_message_size) bytes: its length (uint32_t), the
 * write's number (uint32_t), when it was written (uint64_t, counter ticks), then the message.
 * The copies are the last message and one that a read or write in progress may hold on each core
 * the vCPUs of its source and destination partitions may run on (core/ports.c). */
enum bh_channel_kind {
	BH_CHANNEL_SAMPLING = 0, /* one source, 1+ destinations, the last message, overwritten */
	BH_CHANNEL_QUEUING = 1,  /* one source, one destination, FIFO of max_messages */
};

#define BH_MSG_SLOT_SIZE(max) (8u + (((max) + 7u) & ~7u))
#define BH_SAMPLING_SLOT_SIZE(max) (16u + (((max) + 7u) & ~7u))
/* port_cores: the cores its source's and destinations' partitions' vCPUs may run on */
#define BH_SAMPLING_COPIES(port_cores) ((port_cores) + 1u)

/* Port `port` (the index in bh_partition_cfg.ports) of partition `partition`. */
struct bh_port_ref {
	uint16_t partition;
	uint16_t port;
};

struct bh_channel_cfg {
	const char *name;
	uint32_t kind;              /* enum bh_channel_kind */
	uint32_t max_message_size;  /* bytes, 1..BH_MAX_MESSAGE_SIZE */
	uint32_t max_messages;      /* queuing: the queue depth; sampling: 1 */
	uint32_t destination_count; /* queuing: 1 */
	uint64_t refresh_ns;        /* sampling: a message older than this is not valid; queuing: 0 */
	struct bh_port_ref source;
	const struct bh_port_ref *destinations;
	uint8_t *buffer;            /* hypervisor memory, 8-byte aligned, buffer_size bytes */
	uint64_t buffer_size;       /* queuing: max_messages * BH_MSG_SLOT_SIZE(max_message_size);
				     * sampling: BH_SAMPLING_COPIES * BH_SAMPLING_SLOT_SIZE */
};

/* A port of a partition; a partition's port descriptor is its index in bh_partition_cfg.ports. */
struct bh_port_cfg {
	const char *name;   /* unique within the partition, at most BH_PORT_NAME_MAX characters */
	uint32_t channel;   /* index into bh_system_cfg.channels */
	uint32_t direction; /* BH_SOURCE_PORT (0) or BH_DESTINATION_PORT (1) of bulkhead/abi.h */
};

/* A shared-memory region: RAM outside every partition, mapped into each partition listed. The
 * tool also emits every mapping as a normal area of its partition (bh_partition_cfg.areas), so
 * stage 2 and the guest-buffer checks treat it like the partition's own memory. */
#define BH_SHM_DOORBELL (1u << 0) /* members may ring the others (BH_HC_SHM_DOORBELL) */

struct bh_shm_map_cfg {
	uint32_t partition; /* partition id */
	uint32_t flags;     /* BH_AREA_READ/WRITE/EXEC: this partition's rights */
	uint64_t ipa;       /* where this partition sees the region */
};

struct bh_shm_cfg {
	const char *name;
	uint64_t phys;
	uint64_t size;
	uint32_t flags; /* BH_SHM_* */
	uint32_t mapping_count;
	const struct bh_shm_map_cfg *mappings;
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
	const uint32_t *irqs; /* physical SPIs (INTID >= 32) forwarded to this partition */
	/* x0 of vCPU 0 at every (re)start when vmachine is set (the device tree's guest address, as
	 * the arm64 Linux boot protocol wants; x1..x3 are zero). Paravirtual partitions get their
	 * vCPU index, boot kind and restart count in x0..x2 instead. */
	uint64_t boot_arg;
	const struct bh_vmachine_cfg *vmachine; /* 0 for paravirtual partitions */
	uint32_t port_count;
	uint32_t reserved2;
	const struct bh_port_cfg *ports; /* descriptor = index */
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
	uint32_t channel_count;
	uint32_t shm_count;
	const struct bh_channel_cfg *channels;
	const struct bh_shm_cfg *shm_regions; /* region id = index */
	/* Stage 2 (arch/aarch64/stage2.c): the largest block it may map, the platform's choice
	 * (4 KiB, 2 MiB or 1 GiB), and the table pages, counted by the tool for exactly these areas
	 * and this limit. The pool is zeroed data in the generated tables, 4 KiB aligned. */
	uint64_t stage2_block_max;
	uint32_t stage2_pool_pages;
	uint32_t reserved;
	uint64_t (*stage2_pool)[512];
};

extern const struct bh_system_cfg bh_system_config;

#endif
