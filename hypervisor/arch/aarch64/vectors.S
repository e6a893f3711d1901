/* EL2 exception vectors. Exceptions from a partition save its registers into the save area
 * that percpu.regs points to and call C; C either returns here (back to the same guest) or
 * leaves through aarch64_vcpu_resume / the idle loop. Anything taken from EL2 itself is a
 * hypervisor bug: dump and stop. */
#include "arch/asm_offsets.h"

/* x2-x17 to or from the save area at \base. */
.macro x2_to_x17 op, base
	\op	x2, x3, [\base, #16]
	\op	x4, x5, [\base, #32]
	\op	x6, x7, [\base, #48]
	\op	x8, x9, [\base, #64]
	\op	x10, x11, [\base, #80]
	\op	x12, x13, [\base, #96]
	\op	x14, x15, [\base, #112]
	\op	x16, x17, [\base, #128]
.endm

.macro save_guest_regs
	stp	x0, x1, [sp, #-16]!
	mrs	x0, tpidr_el2
	ldr	x0, [x0, #PERCPU_REGS]
	x2_to_x17 stp, x0
	stp	x18, x19, [x0, #144]
	stp	x20, x21, [x0, #160]
	stp	x22, x23, [x0, #176]
	stp	x24, x25, [x0, #192]
	stp	x26, x27, [x0, #208]
	stp	x28, x29, [x0, #224]
	str	x30, [x0, #240]
	ldp	x2, x3, [sp], #16
	stp	x2, x3, [x0, #0]
	mrs	x2, elr_el2
	mrs	x3, spsr_el2
	stp	x2, x3, [x0, #REGS_ELR]
.endm

.macro guest_vector handler
	.balign 0x80
	save_guest_regs
	bl	\handler
	b	aarch64_guest_return
.endm

.macro el2_vector kind
	.balign 0x80
	sub	sp, sp, #REGS_SIZE + 8
	stp	x0, x1, [sp, #0]
	mov	x1, #\kind
	b	el2_unexpected
.endm

	.section .text.vectors, "ax"
	.balign 0x800
	.global aarch64_el2_vectors
aarch64_el2_vectors:
	el2_vector 0    /* current EL, SP_EL0: sync */
	el2_vector 1    /* irq */
	el2_vector 2    /* fiq */
	el2_vector 3    /* serror */
	el2_vector 4    /* current EL, SP_ELx: sync */
	el2_vector 5    /* irq */
	el2_vector 6    /* fiq */
	el2_vector 7    /* serror */
	.balign 0x80                         /* lower EL, AArch64: sync */
	stp	x0, x1, [sp, #-16]!
	mrs	x1, esr_el2
	lsr	x1, x1, #26
	cmp	x1, #EC_HVC64
	b.eq	guest_hvc
	ldp	x0, x1, [sp], #16
	b	guest_sync_full
	guest_vector aarch64_guest_irq
	guest_vector aarch64_guest_fiq
	guest_vector aarch64_guest_serror
	el2_vector 12   /* lower EL, AArch32 (not allowed: HCR_EL2.RW = 1) */
	el2_vector 13
	el2_vector 14
	el2_vector 15

guest_sync_full:
	save_guest_regs
	bl	aarch64_guest_sync
	b	aarch64_guest_return

/* Hypercall fast path, straight into hypercall_dispatch(vcpu, regs). The dispatcher
 * preserves x19-x29 (AAPCS64), so only what it may clobber is saved: x0-x18 and x30, and ELR
 * for handlers that report the PC. ELR_EL2 and SPSR_EL2 themselves are untouched while it runs
 * (EL2 takes no exceptions), so a handler cannot change where the guest resumes. A handler that
 * needs more (switching vCPUs, delivering interrupts) sets percpu.exit_work and the exit goes
 * the slow way. x2-x17 are restored as well, so no hypervisor value leaks into the guest. */
guest_hvc:
	mrs	x1, tpidr_el2
	ldr	x0, [x1, #PERCPU_VCPU]
	ldr	x1, [x1, #PERCPU_REGS]
	x2_to_x17 stp, x1
	str	x18, [x1, #144]
	str	x30, [x1, #240]
	ldp	x2, x3, [sp], #16
	stp	x2, x3, [x1, #0]
	mrs	x2, elr_el2
	str	x2, [x1, #REGS_ELR]
	bl	hypercall_dispatch      /* x0 = the result for the guest's x0 */
	mrs	x1, tpidr_el2
	ldr	w2, [x1, #PERCPU_EXIT_WORK]
	cbnz	w2, hvc_slow_exit
	ldr	x1, [x1, #PERCPU_REGS]
	x2_to_x17 ldp, x1
	ldr	x18, [x1, #144]
	ldr	x30, [x1, #240]
	ldr	x1, [x1, #8]
	eret

/* The hypercall left work (a vCPU switch, interrupts to deliver): complete the save area
 * first. x19-x29 hold the guest's values again now that the C code has returned. */
hvc_slow_exit:
	ldr	x1, [x1, #PERCPU_REGS]
	str	x0, [x1, #0]
	stp	x19, x20, [x1, #152]
	stp	x21, x22, [x1, #168]
	stp	x23, x24, [x1, #184]
	stp	x25, x26, [x1, #200]
	stp	x27, x28, [x1, #216]
	str	x29, [x1, #232]
	mrs	x2, spsr_el2
	str	x2, [x1, #REGS_SPSR]
	bl	core_exit_work
	b	aarch64_guest_return

/* Save what the hypervisor was doing into a frame on the stack and report it. */
el2_unexpected:
	x2_to_x17 stp, sp
	stp	x18, x19, [sp, #144]
	stp	x20, x21, [sp, #160]
	stp	x22, x23, [sp, #176]
	stp	x24, x25, [sp, #192]
	stp	x26, x27, [sp, #208]
	stp	x28, x29, [sp, #224]
	str	x30, [sp, #240]
	mrs	x2, elr_el2
	mrs	x3, spsr_el2
	stp	x2, x3, [sp, #REGS_ELR]
	mov	x0, sp
	bl	aarch64_el2_exception
1:	wfi
	b	1b

/* Return to the vCPU whose save area percpu.regs points to. */
	.global aarch64_guest_return
aarch64_guest_return:
	mrs	x0, tpidr_el2
	ldr	x0, [x0, #PERCPU_REGS]
	ldp	x2, x3, [x0, #REGS_ELR]
	msr	elr_el2, x2
	msr	spsr_el2, x3
	x2_to_x17 ldp, x0
	ldp	x18, x19, [x0, #144]
	ldp	x20, x21, [x0, #160]
	ldp	x22, x23, [x0, #176]
	ldp	x24, x25, [x0, #192]
	ldp	x26, x27, [x0, #208]
	ldp	x28, x29, [x0, #224]
	ldr	x30, [x0, #240]
	ldp	x0, x1, [x0, #0]
	eret

/* Leave the hypervisor for the current vCPU from any call depth: the stack starts afresh. */
	.global aarch64_resume_fresh_stack
aarch64_resume_fresh_stack:
	mrs	x0, tpidr_el2
	ldr	x1, [x0, #PERCPU_STACK]
	mov	sp, x1
	b	aarch64_guest_return
