/* EL2 exception vectors. Exceptions from a partition save its registers into the save area
 * that percpu.regs points to and call C; C either returns here (back to the same guest) or
 * leaves through aarch64_vcpu_resume / the idle loop. Anything taken from EL2 itself is a
 * hypervisor bug: dump and stop. */
#include "arch/asm_offsets.h"

.if REGS_ELR != 240 + 8
.error "irq_full stores x30 and ELR as a pair"
.endif

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

/* x18-x29 to or from the save area at \base. */
.macro x18_to_x29 op, base
	\op	x18, x19, [\base, #144]
	\op	x20, x21, [\base, #160]
	\op	x22, x23, [\base, #176]
	\op	x24, x25, [\base, #192]
	\op	x26, x27, [\base, #208]
	\op	x28, x29, [\base, #224]
.endm

/* What C may clobber besides x0 and x1 (x2-x18, x30), to or from the save area at \base:
 * the fast paths save only these around a C call. */
.macro caller_saved pair, single, base
	x2_to_x17 \pair, \base
	\single	x18, [\base, #144]
	\single	x30, [\base, #240]
.endm

.macro save_guest_regs
	stp	x0, x1, [sp, #-16]!
	mrs	x0, tpidr_el2
	ldr	x0, [x0, #PERCPU_REGS]
	x2_to_x17 stp, x0
	x18_to_x29 stp, x0
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
	lsr	x0, x1, #26
	cmp	x0, #EC_HVC64
	b.eq	guest_hvc
	cmp	x0, #EC_DABT_LOW
	b.eq	guest_dabt
	cmp	x0, #EC_SMC64
	b.eq	guest_emulate
	b	guest_sync_restore
	.balign 0x80                         /* lower EL, AArch64: irq */
	b	guest_irq
	guest_vector aarch64_guest_fiq
	guest_vector aarch64_guest_serror
	el2_vector 12   /* lower EL, AArch32 (not allowed: HCR_EL2.RW = 1) */
	el2_vector 13
	el2_vector 14
	el2_vector 15

/* A data abort whose register (ISS SRT) is one of x19-x29 goes the full way: the fast path's
 * save area does not hold them. */
guest_dabt:
	ubfx	x0, x1, #16, #5
	sub	x0, x0, #19
	cmp	x0, #(29 - 19)
	b.hi	guest_emulate
guest_sync_restore:
	ldp	x0, x1, [sp], #16
guest_sync_full:
	save_guest_regs
	bl	aarch64_guest_sync
	b	aarch64_guest_return

/* x19-x29 and SPSR into the save area at \base, completing it after a fast-path save once
 * the exit turns out to need everything. The C code in between preserved x19-x29. */
.macro save_rest base
	stp	x19, x20, [\base, #152]
	stp	x21, x22, [\base, #168]
	stp	x23, x24, [\base, #184]
	stp	x25, x26, [\base, #200]
	stp	x27, x28, [\base, #216]
	str	x29, [\base, #232]
	mrs	x2, spsr_el2
	str	x2, [\base, #REGS_SPSR]
.endm

/* Interrupt fast path. The running vCPU's own virtual timer, with nothing queued for the
 * vCPU and every list register empty, goes straight into list register 0, hardware-linked
 * (the guest's end of it deactivates the physical one), with its VIRQ trace event, and back
 * to the guest: x0-x9 saved, no C. This is the timer interrupt's whole cost on a core the
 * vCPU has to itself. Anything else, or the timer when that way is closed (an interrupt
 * queued or in flight, the timer disabled by the guest, no vCPU or another one loaded),
 * continues in aarch64_guest_irq with everything saved. Same result as the queued way
 * (virq_inject, then arch_vgic_flush on the way out), which vgic.c documents. Only x0 and x1
 * go to the stack before the interrupt is known: any other goes straight into the save area
 * (irq_full), the timer's way saves x2-x9 beside them. */
guest_irq:
	stp	x0, x1, [sp, #-80]!
	mrs	x0, icc_iar1_el1
	and	w0, w0, #0xffffff
	cmp	w0, #INTID_VTIMER
	b.ne	irq_full
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	mrs	x1, tpidr_el2
	ldp	x2, x3, [x1, #PERCPU_VCPU]      /* running, loaded */
	cmp	x2, x3
	ccmp	x2, #0, #4, eq                  /* Z: another one loaded, or none */
	b.eq	irq_timer_full
	ldr	w3, [x2, #VCPU_VIRQ_COUNT]
	cbnz	w3, irq_timer_full
	ldr	w3, [x2, #VCPU_VIRQ_DISABLED]
	tbnz	w3, #INTID_VTIMER, irq_timer_full
	mrs	x3, ich_elrsr_el2
	adrp	x4, vgic_lrs_all_empty
	ldr	x4, [x4, :lo12:vgic_lrs_all_empty]
	bics	xzr, x4, x3
	b.ne	irq_timer_full
	/* List register: pending, hardware, group 1, the guest's priority, pINTID = vINTID. */
	ldr	x4, [x2, #VCPU_VTIMER_PRIORITY]
	ldrb	w4, [x4]
	mov	x5, #INTID_VTIMER
	movk	x5, #INTID_VTIMER, lsl #32
	movk	x5, #LR_PENDING_HW_GROUP1, lsl #48
	orr	x5, x5, x4, lsl #48
	msr	ich_lr0_el2, x5
	msr	icc_eoir1_el1, x0               /* priority drop; active until the guest ends it */
	/* Trace event, as trace_emit_at: the next slot, or scratch when the ring is full. */
	ldr	x4, [x1, #PERCPU_TRACE]
	ldr	w5, [x4, #RING_HEAD]
	add	x6, x4, #RING_TAIL
	ldar	w6, [x6]
	sub	w6, w5, w6
	and	w7, w5, #((1 << RING_SIZE_LOG2) - 1)
	mov	x8, #EVENT_SIZE
	madd	x7, x7, x8, x4
	add	x7, x7, #RING_EVENTS
	add	x8, x4, #RING_SCRATCH
	cmp	w6, #(1 << RING_SIZE_LOG2)
	csel	x7, x7, x8, lo
	cinc	w5, w5, lo
	mrs	x8, cntpct_el0
	ldr	x9, [x2, #VCPU_TRACE_SOURCE]
	add	x9, x9, #TRACE_VIRQ              /* type: the low 16 bits, zero in source */
	stp	x8, x9, [x7]
	str	x0, [x7, #16]
	add	x6, x4, #RING_HEAD
	stlr	w5, [x6]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x0, x1, [sp], #80
	eret

irq_timer_full:                         /* the timer's way closed: x2-x9 back from the stack */
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
irq_full:                               /* x0 = the interrupt taken; x0, x1 on the stack */
	mrs	x1, tpidr_el2
	ldr	x1, [x1, #PERCPU_REGS]
	x2_to_x17 stp, x1
	x18_to_x29 stp, x1
	mrs	x2, elr_el2
	stp	x30, x2, [x1, #240]             /* x30, then ELR at REGS_ELR */
	mrs	x2, spsr_el2
	str	x2, [x1, #REGS_SPSR]
	ldp	x2, x3, [sp], #80
	stp	x2, x3, [x1, #0]
	bl	aarch64_guest_irq
	b	aarch64_guest_return

/* Hypercall fast path, straight into aarch64_hvc(vcpu, regs) (traps.c: hypercall_dispatch
 * for Bulkhead's calls, the SMCCC and PSCI for the rest). The dispatcher
 * preserves x19-x29 (AAPCS64), so only what it may clobber is saved: x0-x18 and x30, and ELR
 * for handlers that report the PC. ELR_EL2 and SPSR_EL2 themselves are untouched while it runs
 * (EL2 takes no exceptions), so a handler does not change where the guest resumes, save one
 * that is made again (hypercall_again: ELR_EL2 and the saved ELR back to the HVC). A handler that
 * needs more (switching vCPUs, delivering interrupts) sets percpu.exit_work and the exit goes
 * the slow way. x2-x17 are restored as well, so no hypervisor value leaks into the guest. */
guest_hvc:
	mrs	x1, tpidr_el2
	ldr	x0, [x1, #PERCPU_VCPU]
	ldr	x1, [x1, #PERCPU_REGS]
	caller_saved stp, str, x1
	ldp	x2, x3, [sp], #16
	stp	x2, x3, [x1, #0]
	mrs	x2, elr_el2
	str	x2, [x1, #REGS_ELR]
	bl	aarch64_hvc             /* x0 = the result for the guest's x0 */
	mrs	x1, tpidr_el2
	ldr	w2, [x1, #PERCPU_EXIT_WORK]
	cbnz	w2, hvc_slow_exit
	ldr	x1, [x1, #PERCPU_REGS]
	caller_saved ldp, ldr, x1
	ldr	x1, [x1, #8]
	eret

/* The hypercall left work (a vCPU switch, interrupts to deliver): complete the save area
 * first. x19-x29 hold the guest's values again now that the C code has returned. */
hvc_slow_exit:
	ldr	x1, [x1, #PERCPU_REGS]
	str	x0, [x1, #0]
	save_rest x1
	bl	core_exit_work
	b	aarch64_guest_return

/* Emulation fast path: a data abort (not through x19-x29) or an SMC, offered to
 * aarch64_emulate(vcpu, regs) with the hypercall path's partial save (x0-x18, x30) but not
 * ELR: the emulation never looks at the guest's PC (a call through the hypercall page runs on
 * a copy of the registers, vcall.c), and ELR_EL2 is stored only on the ways out that need it
 * (the full path, the full exit). What
 * it emulates (a device access, an SMCCC call) returns to the same vCPU at the next
 * instruction, with x0-x18 and x30 from the save area (the emulated load's destination among
 * them), when nothing is left for the exit to do; the full exit and its checks run otherwise
 * (requests from other cores come with their SGI, taken after the eret). What it declines it
 * has not touched: the save is completed and the full path (aarch64_guest_sync) takes the
 * exception as before, health-monitor events included. */
guest_emulate:
	mrs	x1, tpidr_el2
	ldr	x0, [x1, #PERCPU_VCPU]
	ldr	x1, [x1, #PERCPU_REGS]
	caller_saved stp, str, x1
	ldp	x2, x3, [sp], #16
	stp	x2, x3, [x1, #0]
	bl	aarch64_emulate         /* w0: enum mmio_result, bit 0 set for MMIO_DONE alone */
	mrs	x1, tpidr_el2
	ldr	w2, [x1, #PERCPU_EXIT_WORK]
	ldr	x1, [x1, #PERCPU_REGS]
	mrs	x3, elr_el2             /* untouched meanwhile: EL2 takes no exceptions */
	tbz	w0, #0, emulate_declined
	add	x3, x3, #4              /* emulated: on to the next instruction */
	cbnz	w2, emulate_slow_exit
	msr	elr_el2, x3
	caller_saved ldp, ldr, x1
	ldp	x0, x1, [x1, #0]
	eret

/* Declined, nothing changed: complete the save (x19-x29 are still the guest's) for the full
 * path. */
emulate_declined:
	str	x3, [x1, #REGS_ELR]
	save_rest x1
	mov	x0, x1
	bl	aarch64_guest_sync
	b	aarch64_guest_return

/* Emulated, but it left work (an interrupt to deliver, a vCPU switch): the full exit. */
emulate_slow_exit:
	str	x3, [x1, #REGS_ELR]
	save_rest x1
	bl	core_exit_work
	b	aarch64_guest_return

/* Save what the hypervisor was doing into a frame on the stack and report it. */
el2_unexpected:
	x2_to_x17 stp, sp
	x18_to_x29 stp, sp
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
	x18_to_x29 ldp, x0
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
