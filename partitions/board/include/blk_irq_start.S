/* blkprobe and the forwarded-interrupt probes (blk_irq_probe.h): entry and vectors. It starts at
 * EL1 (Bulkhead) or EL2 (bare QEMU with virtualization=on: it drops to EL1 with SMC untrapped and
 * the GIC system registers open to EL1, as bare-metal programs do). Interrupts stay masked: the
 * program polls the virtqueue, and the probes ICC_IAR1_EL1. */
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
	ldr	x9, =stack_top
	mov	sp, x9
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	mov	x0, x19
	bl	main
1:	wfi
	b	1b

drop_to_el1:
	mrs	x9, CurrentEL
	cmp	x9, #8
	b.ne	1f
	mov	x9, #(1 << 31)		/* HCR_EL2.RW; SMC not trapped */
	msr	hcr_el2, x9
	msr	cptr_el2, xzr
	mov	x9, #0xf		/* ICC_SRE_EL2: SRE, DFB, DIB, Enable (EL1 may use SRE) */
	msr	s3_4_c12_c9_5, x9
	isb
	mov	x9, #0x3c5		/* EL1h, DAIF masked */
	msr	spsr_el2, x9
	msr	elr_el2, x30
	isb
	eret
1:	ret

	.balign 2048
vectors:
	.rept 4				/* current EL with SP0 */
	b	.
	.balign 128
	.endr
	b	sync_trap		/* current EL with SPx: synchronous */
	.balign 128
	.rept 11
	b	.
	.balign 128
	.endr

sync_trap:
	mrs	x0, esr_el1
	mrs	x1, elr_el1
	mrs	x2, far_el1
	bl	unexpected
	b	.

	.global smc_call
smc_call:
	smc	#0
	ret

	.section .bss
	.balign 16
	.space 16384
stack_top:
	.section .note.GNU-stack,"",%progbits
