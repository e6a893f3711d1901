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

/* bool aarch64_switch_plain(struct arch_vcpu_ctx *save, const struct arch_vcpu_ctx *load,
 *                           uint64_t cptr)
 * cpu.c's arch_vcpu_switch in one pass, for its common case: every list register empty (the
 * vCPU switched out has nothing in flight), and what cpu.c's caller has checked (one
 * active-priority register, nothing to withdraw or make active, the vCPU switched in saved with
 * empty list registers). The saved vCPU's virtual timer, then its GIC interface, its EL1
 * registers out and the next's in, then the next's stage 2, timer and GIC interface, in
 * arch_vcpu_switch's order; CPTR_EL2 = cptr (its FP/SIMD trap). Returns 0, having touched
 * nothing, if a list register is occupied: arch_vcpu_switch's way then. */
	.global aarch64_switch_plain
aarch64_switch_plain:
	mrs	x3, ich_elrsr_el2
	adrp	x4, vgic_lrs_all_empty
	ldr	x4, [x4, :lo12:vgic_lrs_all_empty]
	bics	xzr, x4, x3
	b.ne	1f
	mov	x9, x2
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
	mov	w0, #1
	ret
1:	mov	w0, #0
	ret
