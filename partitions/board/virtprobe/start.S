/* virtprobe: entry and vectors. Written for QEMU's `virt` machine, with no Bulkhead code: it
 * starts at EL1 (Bulkhead, or QEMU without virtualization) or at EL2 (QEMU with
 * virtualization=on, where QEMU's PSCI is on SMC): at EL2 it installs a stub that forwards
 * the HVC conduit to SMC and drops to EL1, as bare-metal programs do. */
	.section .text.start, "ax"
	.global _start
_start:
	mov	x19, x0			/* device tree (or 0) */
	bl	drop_to_el1
	/* Clear .bss (the stacks too): loaded as a raw binary, nothing else does. */
	ldr	x9, =__bss_start
	ldr	x10, =__bss_end
1:	cmp	x9, x10
	b.hs	2f
	stp	xzr, xzr, [x9], #16
	b	1b
2:
	ldr	x9, =stack0_top
	mov	sp, x9
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	mov	x0, x19
	bl	main
1:	wfi
	b	1b

/* PSCI CPU_ON target: x0 is the context argument (the stack top). */
	.global secondary_entry
secondary_entry:
	mov	x19, x0
	bl	drop_to_el1
	mov	sp, x19
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	bl	secondary_main
1:	wfi
	b	1b

drop_to_el1:
	mrs	x9, CurrentEL
	cmp	x9, #8
	b.ne	1f
	adr	x9, el2_vectors
	msr	vbar_el2, x9
	mov	x9, #(1 << 31)		/* HCR_EL2.RW; SMC not trapped, no IRQ routing */
	msr	hcr_el2, x9
	msr	cntvoff_el2, xzr
	mov	x9, #3			/* EL1 may use the physical counter and timer */
	msr	cnthctl_el2, x9
	mov	x9, #0xf		/* ICC_SRE_EL2: SRE, DFB, DIB, Enable (EL1 may use SRE) */
	msr	S3_4_C12_C9_5, x9
	msr	cptr_el2, xzr
	mov	x9, #0x3c5		/* EL1h, DAIF masked */
	msr	spsr_el2, x9
	msr	elr_el2, x30
	isb
	eret
1:	ret

/* EL2 stub (bare QEMU with virtualization only): an HVC from EL1 becomes an SMC to QEMU's PSCI. */
	.balign 2048
el2_vectors:
	.rept 8
	b	.
	.balign 128
	.endr
	smc	#0			/* lower EL, AArch64, synchronous: the HVC */
	eret
	.balign 128
	.rept 7
	b	.
	.balign 128
	.endr

	.balign 2048
vectors:
	.rept 4				/* current EL with SP0 */
	b	.
	.balign 128
	.endr
	b	sync_trap		/* current EL with SPx: synchronous */
	.balign 128
	b	irq_trap		/* IRQ */
	.balign 128
	.rept 10
	b	.
	.balign 128
	.endr

sync_trap:
	mrs	x0, esr_el1
	mrs	x1, elr_el1
	bl	unexpected
	b	.

irq_trap:
	stp	x29, x30, [sp, #-192]!
	stp	x0, x1, [sp, #16]
	stp	x2, x3, [sp, #32]
	stp	x4, x5, [sp, #48]
	stp	x6, x7, [sp, #64]
	stp	x8, x9, [sp, #80]
	stp	x10, x11, [sp, #96]
	stp	x12, x13, [sp, #112]
	stp	x14, x15, [sp, #128]
	stp	x16, x17, [sp, #144]
	str	x18, [sp, #160]
	bl	irq_handler
	ldr	x18, [sp, #160]
	ldp	x16, x17, [sp, #144]
	ldp	x14, x15, [sp, #128]
	ldp	x12, x13, [sp, #112]
	ldp	x10, x11, [sp, #96]
	ldp	x8, x9, [sp, #80]
	ldp	x6, x7, [sp, #64]
	ldp	x4, x5, [sp, #48]
	ldp	x2, x3, [sp, #32]
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #192
	eret

	.global smc_call
smc_call:
	smc	#0
	ret
	.global hvc_call
hvc_call:
	hvc	#0
	ret

	.section .bss
	.balign 16
	.space 8192
stack0_top:
	.global stack1_top
	.space 8192
stack1_top:
	.section .note.GNU-stack,"",%progbits
