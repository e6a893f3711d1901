/* Partitions and their vCPUs: the run-time state beside the const configuration. */
#ifndef BULKHEAD_PARTITION_H
#define BULKHEAD_PARTITION_H

#include <stdint.h>
#include "arch.h"
#include "config_tables.h"


#define CONSOLE_LINE_MAX 160

enum partition_state {
	PARTITION_RUNNING = 0,
	PARTITION_HALTED,
	PARTITION_RESTARTING, /* vCPUs are being parked; memory is being reloaded */
};

struct vcpu {
	struct arch_regs regs;       /* saved guest registers while in the hypervisor */
	struct partition *partition;
	unsigned id;                 /* index within the partition */
	unsigned core;
	unsigned line_len;           /* console output not yet ending in a newline */
	char line[CONSOLE_LINE_MAX];
};

struct partition {
	const struct bh_partition_cfg *cfg;
	volatile enum partition_state state;
	uint32_t restarts;
	uint32_t boot_kind;          /* BH_BOOT_* given to the vCPUs at their next start */
	uint64_t stage2_root;        /* arch: physical address of the stage-2 root table */
	struct vcpu *vcpus;          /* cfg->vcpu_count entries */
	struct spinlock lock;        /* serializes halt/restart of this partition */
};

extern struct partition partitions[BH_MAX_PARTITIONS];
extern unsigned partition_count;

/* Boot: bind configuration to run-time state, build stage-2 tables, load images. */
void partition_init_all(const struct bh_system_cfg *sys);
/* The vCPU a core runs, or NULL. */
struct vcpu *partition_vcpu_for_core(unsigned core);

/* Copy the partition's image segments into its memory (cold start and cold restart). */
void partition_load_image(struct partition *p);

/* Actions, callable from any core. They do not return when they stop the calling vCPU. */
void partition_halt(struct partition *p);
void partition_restart(struct partition *p, bool cold);

/* Start the calling core's vCPU from its partition's entry. */
_Noreturn void vcpu_start_here(struct vcpu *v);
/* This core has nothing to run: idle until another core posts a request. */
_Noreturn void core_idle(void);
/* Handle requests posted to this core; may not return (park or start). */
void core_handle_requests(void);

#endif
