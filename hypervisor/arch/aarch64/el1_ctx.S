/* The EL1 system registers of a vCPU (struct arch_vcpu_ctx, fields sctlr to mdscr, in that
 * order: cpu.c checks the offsets), saved and loaded in pairs: every partition switch moves
 * all of them, so each instruction here is paid at every switch. */
#include "arch/asm_offsets.h"

	.text

/* The registers, two by two, with the offset of the first of each pair. */
.macro el1_registers op
	\op sctlr_el1, ttbr0_el1, 0
	\op ttbr1_el1, tcr_el1, 16
	\op mair_el1, amair_el1, 32
	\op vbar_el1, cpacr_el1, 48
	\op contextidr_el1, esr_el1, 64
	\op far_el1, par_el1, 80
	\op afsr0_el1, afsr1_el1, 96
	\op tpidr_el1, tpidr_el0, 112
	\op tpidrro_el0, sp_el0, 128
	\op sp_el1, elr_el1, 144
	\op spsr_el1, cntkctl_el1, 160
	\op csselr_el1, mdscr_el1, 176
.endm

.macro save_pair first, second, offset
	mrs	x2, \first
	mrs	x3, \second
	stp	x2, x3, [x0, #\offset]
.endm

.macro load_pair first, second, offset
	ldp	x1, x2, [x0, #\offset]
	msr	\first, x1
	msr	\second, x2
.endm

/* void arch_el1_save(struct arch_vcpu_ctx *save): a best-effort vCPU leaving a core idle */
	.global arch_el1_save
arch_el1_save:
	el1_registers save_pair
	ret

/* void arch_el1_switch(struct arch_vcpu_ctx *save, const struct arch_vcpu_ctx *load) */
	.global arch_el1_switch
arch_el1_switch:
	el1_registers save_pair
	mov	x0, x1
	/* and on into the load */

/* void arch_el1_load(const struct arch_vcpu_ctx *a) */
	.global arch_el1_load
arch_el1_load:
	el1_registers load_pair
	ret

/* q0-q31, FPCR and FPSR to the FP/SIMD save area at \base (x7, x8 scratch), as fpsimd_save. */
.macro fp_save_to base
	stp	q0, q1, [\base, #0]
	stp	q2, q3, [\base, #32]
	stp	q4, q5, [\base, #64]
	stp	q6, q7, [\base, #96]
	stp	q8, q9, [\base, #128]
	stp	q10, q11, [\base, #160]
	stp	q12, q13, [\base, #192]
	stp	q14, q15, [\base, #224]
	stp	q16, q17, [\base, #256]
	stp	q18, q19, [\base, #288]
	stp	q20, q21, [\base, #320]
	stp	q22, q23, [\base, #352]
	stp	q24, q25, [\base, #384]
	stp	q26, q27, [\base, #416]
	stp	q28, q29, [\base, #448]
	stp	q30, q31, [\base, #480]
	mrs	x7, fpcr
	mrs	x8, fpsr
	str	x7, [\base, #512]
	str	x8, [\base, #520]
.endm

/* void arch_vcpu_give_back(struct vcpu *v, struct vcpu *home)
 * cpu.c's aarch64_give_back_slow (FP/SIMD detach, then arch_vcpu_switch(v, home)) in one pass,
 * for the hand-back's common case: home is a vCPU, nothing of either's virtual timer
 * interrupt to take back or make active (virq_withdraw, vtimer_active), every list register
 * empty and home saved so (no list register to move either way), one active-priority register
 * (vgic_plain_lrs), and no displaced owner's FP/SIMD state to load back (fp_home). Anything
 * else goes the C way, before anything is touched. In arch_vcpu_switch's order: v's FP/SIMD
 * registers if it owns them (not trapped then: cpu.c fp_detach_owner), its virtual timer, its
 * GIC interface, its EL1 registers out and home's in, home's stage 2, timer and GIC interface,
 * and CPTR_EL2: FP/SIMD trapped unless home owns the registers. */
	.global arch_vcpu_give_back
arch_vcpu_give_back:
	cbz	x1, aarch64_give_back_slow
	ldr	w2, [x0, #VCPU_VIRQ_FORWARDED]
	tbnz	w2, #INTID_VTIMER, aarch64_give_back_slow
	ldr	x2, [x1, #VCPU_ARCH + CTX_VTIMER_ACTIVE]   /* and lrs_live */
	cbnz	x2, aarch64_give_back_slow
	mrs	x2, ich_elrsr_el2
	adrp	x3, vgic_plain_lrs
	ldr	x3, [x3, :lo12:vgic_plain_lrs]
	bics	xzr, x3, x2
	b.ne	aarch64_give_back_slow
	mrs	x2, tpidr_el2
	ldp	x4, x5, [x2, #PERCPU_FP_OWNER]  /* the owner, the displaced one (fp_home) */
	mov	x9, #(CPTR_EL2_TRAP_FP & 0xffff) /* x9: CPTR_EL2 for home, trapped unless it */
	movk	x9, #(CPTR_EL2_TRAP_FP >> 16), lsl #16 /* owns the registers (load_rest) */
	cmp	x4, x0
	b.ne	1f                              /* v's FP/SIMD state is not in the registers */
	cbnz	x5, aarch64_give_back_slow
	add	x5, x0, #VCPU_ARCH + CTX_FP
	fp_save_to x5
	str	xzr, [x2, #PERCPU_FP_OWNER]     /* no owner: fp_home is none */
	b	2f
1:	cmp	x4, x1
	b.ne	2f
	and	x9, x9, #~(1 << CPTR_EL2_TFP_BIT)
2:	add	x0, x0, #VCPU_ARCH
	add	x1, x1, #VCPU_ARCH
	mrs	x2, cntv_ctl_el0
	mrs	x3, cntv_cval_el0
	stp	x2, x3, [x0, #CTX_CNTV_CTL]
	msr	cntv_ctl_el0, xzr               /* its timer must not fire for the next vCPU */
	mrs	x2, ich_vmcr_el2
	mrs	x3, ich_hcr_el2
	stp	x2, x3, [x0, #CTX_VMCR]
	mrs	x2, ich_ap1r0_el2
	str	x2, [x0, #CTX_AP1R]
	str	xzr, [x0, #CTX_VTIMER_ACTIVE]   /* and lrs_live: nothing in flight */
	el1_registers save_pair
	mov	x0, x1
	el1_registers load_pair
	ldp	x1, x2, [x0, #CTX_VMPIDR]
	msr	vmpidr_el2, x1
	msr	vttbr_el2, x2
	ldp	x1, x2, [x0, #CTX_CNTV_CTL]
	msr	cntv_cval_el0, x2
	msr	cntv_ctl_el0, x1
	ldp	x1, x2, [x0, #CTX_VMCR]
	msr	ich_vmcr_el2, x1
	ldr	x1, [x0, #CTX_AP1R]
	msr	ich_ap1r0_el2, x1
	orr	x2, x2, #1                      /* the virtual CPU interface on (vgic_load) */
	msr	ich_hcr_el2, x2
	msr	cptr_el2, x9
	isb
	ret
