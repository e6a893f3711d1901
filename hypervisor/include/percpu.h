/* Per-core data. The first two fields are read by assembly (see arch asm_offsets). */
#ifndef BULKHEAD_PERCPU_H
#define BULKHEAD_PERCPU_H

#include <stdint.h>
#include "arch.h"
#include "config_tables.h"

#define PERCPU_ALIGN 0x400

/* Requests another core may post (bits of percpu.request). */
#define CORE_REQ_PARK  (1u << 0) /* stop running the vCPU and idle */
#define CORE_REQ_START (1u << 1) /* reset the vCPU to its entry and run it */

struct percpu {
	struct arch_regs *regs;    /* save area of the running vCPU, or of the idle context */
	uint64_t stack_top;
	unsigned core;
	struct vcpu *vcpu;         /* the vCPU this core runs (one per core at this stage) */
	volatile uint32_t request; /* CORE_REQ_* bits, posted by other cores */
	volatile uint32_t parked;  /* 1 while the core is idle and not running its vCPU */
	struct arch_regs idle_regs;
} __attribute__((aligned(PERCPU_ALIGN)));

extern struct percpu percpu[BH_MAX_CORES];

static inline struct percpu *this_cpu(void) { return arch_this_cpu(); }

#endif
