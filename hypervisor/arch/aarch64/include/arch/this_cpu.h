/* This core's per-CPU data: TPIDR_EL2 holds its address (set in start.S). */
#ifndef AARCH64_THIS_CPU_H
#define AARCH64_THIS_CPU_H

struct percpu;

static inline struct percpu *arch_this_cpu(void)
{
	struct percpu *p;

	__asm__("mrs %0, tpidr_el2" : "=r"(p));
	return p;
}

#endif
