/* EL1 state of a switched-out vCPU on AArch64. */
#ifndef AARCH64_VCPU_CTX_H
#define AARCH64_VCPU_CTX_H

#include <stdint.h>

#define VGIC_MAX_LRS 16
#define VGIC_MAX_APRS 4 /* ICH_AP1R0..3_EL2, for 7 priority bits */

struct arch_vcpu_ctx {
	uint64_t sctlr, ttbr0, ttbr1, tcr, mair, amair, vbar, cpacr, contextidr;
	uint64_t esr, far, par, afsr0, afsr1, tpidr_el1, tpidr_el0, tpidrro, sp_el0, sp_el1;
	uint64_t elr_el1, spsr_el1, cntkctl, csselr, mdscr;
	uint64_t cntv_ctl, cntv_cval;
	uint64_t vmpidr, vttbr;
	uint64_t lr[VGIC_MAX_LRS];  /* GICv3 list registers, if lrs_live */
	uint64_t vmcr, ich_hcr;
	uint64_t ap1r[VGIC_MAX_APRS]; /* group 1 active priorities: the implemented ones */
	uint32_t vtimer_active;     /* switched out with its timer interrupt in flight: the
				     * physical PPI is made active again when it is loaded */
	uint32_t lrs_live;          /* some list register was occupied when it was switched out:
				     * lr[] holds them (else they were all empty, lr[] is stale) */
	const uint8_t *vtimer_priority; /* the guest's priority for its timer interrupt */
	__uint128_t fp[32];
	uint64_t fpcr, fpsr;
} __attribute__((aligned(16)));

struct vcpu;

/* A core's own architectural state (struct percpu.arch). */
struct arch_core {
	struct vcpu *fp_owner; /* whose FP/SIMD state is in the core's registers */
	/* The core's own vCPU whose FP/SIMD state was in the registers when a best-effort
	 * vCPU's first FP instruction took them: it gets them back when the best-effort vCPU
	 * leaves the core. */
	struct vcpu *fp_home;
};

#endif
