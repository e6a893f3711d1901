/* The EL1 system registers of a vCPU (struct arch_vcpu_ctx, fields sctlr to mdscr, in that
 * order: cpu.c checks the offsets), saved and loaded in pairs: every partition switch moves
 * all of them, so each instruction here is paid at every switch. */
#include "arch/asm_offsets.h"

	.text

/* void arch_el1_save(struct arch_vcpu_ctx *a) */
	.global arch_el1_save
arch_el1_save:
	mrs	x1, sctlr_el1
	mrs	x2, ttbr0_el1
	mrs	x3, ttbr1_el1
	mrs	x4, tcr_el1
	mrs	x5, mair_el1
	mrs	x6, amair_el1
	mrs	x7, vbar_el1
	mrs	x8, cpacr_el1
	stp	x1, x2, [x0, #0]
	stp	x3, x4, [x0, #16]
	stp	x5, x6, [x0, #32]
	stp	x7, x8, [x0, #48]
	mrs	x1, contextidr_el1
	mrs	x2, esr_el1
	mrs	x3, far_el1
	mrs	x4, par_el1
	mrs	x5, afsr0_el1
	mrs	x6, afsr1_el1
	mrs	x7, tpidr_el1
	mrs	x8, tpidr_el0
	stp	x1, x2, [x0, #64]
	stp	x3, x4, [x0, #80]
	stp	x5, x6, [x0, #96]
	stp	x7, x8, [x0, #112]
	mrs	x1, tpidrro_el0
	mrs	x2, sp_el0
	mrs	x3, sp_el1
	mrs	x4, elr_el1
	mrs	x5, spsr_el1
	mrs	x6, cntkctl_el1
	mrs	x7, csselr_el1
	mrs	x8, mdscr_el1
	stp	x1, x2, [x0, #128]
	stp	x3, x4, [x0, #144]
	stp	x5, x6, [x0, #160]
	stp	x7, x8, [x0, #176]
	ret

/* void arch_el1_load(const struct arch_vcpu_ctx *a) */
	.global arch_el1_load
arch_el1_load:
	ldp	x1, x2, [x0, #0]
	ldp	x3, x4, [x0, #16]
	ldp	x5, x6, [x0, #32]
	ldp	x7, x8, [x0, #48]
	msr	sctlr_el1, x1
	msr	ttbr0_el1, x2
	msr	ttbr1_el1, x3
	msr	tcr_el1, x4
	msr	mair_el1, x5
	msr	amair_el1, x6
	msr	vbar_el1, x7
	msr	cpacr_el1, x8
	ldp	x1, x2, [x0, #64]
	ldp	x3, x4, [x0, #80]
	ldp	x5, x6, [x0, #96]
	ldp	x7, x8, [x0, #112]
	msr	contextidr_el1, x1
	msr	esr_el1, x2
	msr	far_el1, x3
	msr	par_el1, x4
	msr	afsr0_el1, x5
	msr	afsr1_el1, x6
	msr	tpidr_el1, x7
	msr	tpidr_el0, x8
	ldp	x1, x2, [x0, #128]
	ldp	x3, x4, [x0, #144]
	ldp	x5, x6, [x0, #160]
	ldp	x7, x8, [x0, #176]
	msr	tpidrro_el0, x1
	msr	sp_el0, x2
	msr	sp_el1, x3
	msr	elr_el1, x4
	msr	spsr_el1, x5
	msr	cntkctl_el1, x6
	msr	csselr_el1, x7
	msr	mdscr_el1, x8
	ret
