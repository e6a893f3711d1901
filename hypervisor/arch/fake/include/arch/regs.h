/* Fake architecture register frame: the same shape as AArch64, for host unit tests. */
#ifndef FAKE_REGS_H
#define FAKE_REGS_H

#include <stdint.h>

struct arch_regs {
	uint64_t x[31];
	uint64_t elr;  /* guest PC to return to */
	uint64_t spsr; /* guest PSTATE to return to */
};

static inline uint64_t arch_regs_arg(const struct arch_regs *r, unsigned i) { return r->x[i]; }
static inline void arch_regs_set(struct arch_regs *r, unsigned i, uint64_t v) { r->x[i] = v; }
static inline uint64_t arch_regs_pc(const struct arch_regs *r) { return r->elr; }

#endif
