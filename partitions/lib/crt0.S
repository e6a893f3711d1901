/* Partition start-up code and EL1 exception vectors.
 *
 * The hypervisor enters every vCPU here at EL1h, MMU off, DAIF masked, with
 *   x0 = vCPU id, x1 = boot kind (BH_BOOT_*), x2 = restart count, x3 = restart cause
 *   (BH_RESTART_*, kept in bh_restart_cause_at_entry by vCPU 0 for bh_restart_cause()).
 * Memory is not cleared here: the loader zeroes .bss on a cold (re)start, and a warm
 * restart must keep it.
 */
#include "bulkhead/layout.h"
#include "crt_asm.h"

	/* Defined before its use so the assembler knows its length. */
	.section .rodata.bh_crt0, "a", %progbits
bad_vcpu_msg:
	.ascii	"crt0: vCPU id beyond BH_PART_MAX_VCPUS, parking this vCPU\n"
bad_vcpu_msg_end:

	.section .text.start, "ax", %progbits
	.global	_start
	.type	_start, %function
_start:
	/* Keep the entry arguments in callee-saved registers until main is called. */
	mov	x19, x0
	mov	x20, x1
	mov	x21, x2
	mov	x22, x3
	cmp	x19, #BH_PART_MAX_VCPUS
	b.hs	bad_vcpu

	/* vCPU n owns the n-th stack counted down from bh_stacks_end. */
	adrp	x3, bh_stacks_end
	add	x3, x3, :lo12:bh_stacks_end
	sub	x3, x3, x19, lsl #BH_PART_STACK_SHIFT
	mov	sp, x3

	/* The exception path finds this vCPU's stack and nesting flag through TPIDR_EL1. */
	msr	tpidr_el1, x19
	adrp	x3, bh_exc_nesting
	add	x3, x3, :lo12:bh_exc_nesting
	strb	wzr, [x3, x19]		/* a warm restart keeps memory: drop a stale flag */

	adrp	x3, bh_el1_vectors
	add	x3, x3, :lo12:bh_el1_vectors
	msr	vbar_el1, x3
	isb

	mov	x0, x19
	bl	bh_crt_init_vcpu	/* GIC CPU interface, per-vCPU runtime state */

	mov	x29, xzr		/* terminate the frame-pointer chain */
	mov	x0, x19
	mov	x1, x20
	mov	x2, x21
	cbnz	x19, 1f
	adrp	x3, bh_restart_cause_at_entry
	str	w22, [x3, :lo12:bh_restart_cause_at_entry]
	bl	main
	bl	bh_crt_main_returned	/* halts the partition, never returns */
1:	bl	secondary_main
2:	wfi				/* a secondary that returns is parked */
	b	2b
	.size	_start, . - _start

	/* No stack exists for this vCPU (config gives more vCPUs than the runtime supports):
	 * say so without touching memory other than the message, then park the vCPU. */
bad_vcpu:
	ldr	x0, =BH_ASM_HC_CONSOLE_WRITE
	adrp	x1, bad_vcpu_msg
	add	x1, x1, :lo12:bad_vcpu_msg
	mov	x2, #(bad_vcpu_msg_end - bad_vcpu_msg)
	hvc	#0
3:	wfi
	b	3b
	.ltorg

	.bss
	.balign	4
	.global	bh_restart_cause_at_entry
bh_restart_cause_at_entry:
	.word	0
	.size	bh_restart_cause_at_entry, 4

	/* Weak default for partitions that do not use their secondary vCPUs (IRQs stay
	 * masked, so wfi just parks it). */
	.text
	.weak	secondary_main
	.type	secondary_main, %function
secondary_main:
	wfi
	b	secondary_main
	.size	secondary_main, . - secondary_main

/* EL1 vector table: 16 entries of 128 bytes, 2 KiB aligned (VBAR_EL1 bits [10:0] are RES0).
 * A partition runs at EL1h, so an IRQ arrives at "IRQ, current EL, SP_ELx" (index 5), which
 * goes to the interrupt path. Every other entry is unexpected, so it just passes its index
 * to the common path, which reports and never returns. */
#define VECTOR_IRQ_EL1H 5

	.macro	vector_entry index
	.balign	128
	.if	\index == VECTOR_IRQ_EL1H
	b	bh_irq_entry
	.else
	mov	x0, #\index
	b	bh_vector_common
	.endif
	.endm

	.section .text.vectors, "ax", %progbits
	.balign	2048
	.global	bh_el1_vectors
bh_el1_vectors:
	.irp	i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vector_entry \i
	.endr

	/* x0 = vector index. The interrupted context is abandoned, so restart at the top of
	 * this vCPU's stack: that keeps a stack overflow reportable. */
bh_vector_common:
	mrs	x4, tpidr_el1
	cmp	x4, #BH_PART_MAX_VCPUS
	b.hs	1f
	adrp	x5, bh_stacks_end
	add	x5, x5, :lo12:bh_stacks_end
	sub	x5, x5, x4, lsl #BH_PART_STACK_SHIFT
	mov	sp, x5
1:	mrs	x1, esr_el1
	mrs	x2, elr_el1
	mrs	x3, far_el1
	mov	x29, xzr
	mov	x30, xzr
	bl	bh_unhandled_exception	/* (index, esr, elr, far, vcpu), never returns */
2:	wfi
	b	2b

/* Interrupt path: saves what a C call may clobber (x0-x18, x29, x30) plus ELR_EL1 and
 * SPSR_EL1 (a handler's own exception would overwrite them), on the interrupted vCPU's
 * stack (AArch64 code keeps nothing below SP, so that is safe), then dispatches with IRQs
 * still masked. x19-x28 and SP are preserved by the C code itself. */
#define IRQ_FRAME_SIZE 192	/* 23 registers, rounded up to keep SP 16-byte aligned */

bh_irq_entry:
	sub	sp, sp, #IRQ_FRAME_SIZE
	stp	x0, x1, [sp, #0]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x29, [sp, #144]
	mrs	x0, elr_el1
	mrs	x1, spsr_el1
	stp	x30, x0, [sp, #160]
	str	x1, [sp, #176]
	bl	bh_irq_dispatch
	ldr	x1, [sp, #176]
	ldp	x30, x0, [sp, #160]
	msr	elr_el1, x0
	msr	spsr_el1, x1
	ldp	x18, x29, [sp, #144]
	ldp	x16, x17, [sp, #128]
	ldp	x14, x15, [sp, #112]
	ldp	x12, x13, [sp, #96]
	ldp	x10, x11, [sp, #80]
	ldp	x8, x9, [sp, #64]
	ldp	x6, x7, [sp, #48]
	ldp	x4, x5, [sp, #32]
	ldp	x2, x3, [sp, #16]
	ldp	x0, x1, [sp, #0]
	add	sp, sp, #IRQ_FRAME_SIZE
	eret

	/* Page-aligned: a partition that turns its MMU on may unmap the bottom pages of each as
	 * guards (bh_mmu_guard_vcpu_stacks, lib/mmu.c). */
	.section .bss.bh_stacks, "aw", %nobits
	.balign	4096
bh_stacks:
	.space	BH_PART_MAX_VCPUS * BH_PART_STACK_SIZE
	.global	bh_stacks_end
bh_stacks_end:

	.global	bh_exc_nesting
	.type	bh_exc_nesting, %object
bh_exc_nesting:
	.space	BH_PART_MAX_VCPUS
	.size	bh_exc_nesting, BH_PART_MAX_VCPUS

	.section .note.GNU-stack, "", %progbits
