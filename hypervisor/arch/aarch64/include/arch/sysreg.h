/* Typed accessors for the system registers the hypervisor touches. */
#ifndef AARCH64_SYSREG_H
#define AARCH64_SYSREG_H

#include <stdint.h>

#define SYSREG(name)                                                              \
	static inline uint64_t read_##name(void)                                  \
	{                                                                         \
		uint64_t v;                                                       \
		__asm__ volatile("mrs %0, " #name : "=r"(v));                     \
		return v;                                                         \
	}                                                                         \
	static inline void write_##name(uint64_t v)                               \
	{                                                                         \
		__asm__ volatile("msr " #name ", %x0" : : "rZ"(v));              \
	}

SYSREG(currentel) SYSREG(mpidr_el1) SYSREG(midr_el1) SYSREG(tpidr_el2)
SYSREG(esr_el2) SYSREG(far_el2) SYSREG(hpfar_el2) SYSREG(elr_el2) SYSREG(spsr_el2)
SYSREG(hcr_el2) SYSREG(mdcr_el2) SYSREG(cptr_el2) SYSREG(cnthctl_el2) SYSREG(cntvoff_el2)
SYSREG(vtcr_el2) SYSREG(vttbr_el2) SYSREG(vmpidr_el2) SYSREG(vpidr_el2)
/* The rest of a vCPU's EL1 state moves in el1_ctx.S. */
SYSREG(sctlr_el1) SYSREG(par_el1)
SYSREG(cntv_ctl_el0) SYSREG(cntv_cval_el0) SYSREG(cntpct_el0) SYSREG(cntfrq_el0)
SYSREG(pmcr_el0) SYSREG(ctr_el0)
SYSREG(icc_sre_el2) SYSREG(icc_pmr_el1) SYSREG(icc_bpr1_el1) SYSREG(icc_ctlr_el1)
SYSREG(icc_igrpen1_el1) SYSREG(icc_iar1_el1) SYSREG(icc_eoir1_el1) SYSREG(icc_sgi1r_el1)
SYSREG(icc_hppir1_el1) SYSREG(icc_dir_el1)
SYSREG(ich_hcr_el2) SYSREG(ich_vmcr_el2) SYSREG(ich_ap1r0_el2) SYSREG(ich_ap1r1_el2) SYSREG(ich_ap1r2_el2)
SYSREG(ich_ap1r3_el2) SYSREG(ich_vtr_el2)
SYSREG(ich_elrsr_el2) SYSREG(ich_eisr_el2)
SYSREG(ich_lr0_el2) SYSREG(ich_lr1_el2) SYSREG(ich_lr2_el2) SYSREG(ich_lr3_el2)
SYSREG(ich_lr4_el2) SYSREG(ich_lr5_el2) SYSREG(ich_lr6_el2) SYSREG(ich_lr7_el2)
SYSREG(ich_lr8_el2) SYSREG(ich_lr9_el2) SYSREG(ich_lr10_el2) SYSREG(ich_lr11_el2)
SYSREG(ich_lr12_el2) SYSREG(ich_lr13_el2) SYSREG(ich_lr14_el2) SYSREG(ich_lr15_el2)
SYSREG(cnthp_ctl_el2) SYSREG(cnthp_cval_el2) SYSREG(mdscr_el1)
SYSREG(sctlr_el2) SYSREG(ttbr0_el2)

static inline void isb(void) { __asm__ volatile("isb" ::: "memory"); }
static inline void dsb_ish(void) { __asm__ volatile("dsb ish" ::: "memory"); }

#endif
