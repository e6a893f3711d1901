/* kickstorm: entry (EL1, interrupts masked: WFI wakes on a pending one, taken by polling). */
	.section .text.start, "ax"
	.global _start
_start:
	ldr	x9, =__bss_start
	ldr	x10, =__bss_end
1:	cmp	x9, x10
	b.hs	2f
	stp	xzr, xzr, [x9], #16
	b	1b
2:	ldr	x9, =stack_top
	mov	sp, x9
	bl	main
1:	wfi
	b	1b

/* PSCI CPU_ON target: x0 is the stack top; cpu_main(MPIDR.Aff0). */
	.global secondary_entry
secondary_entry:
	mov	sp, x0
	mrs	x0, mpidr_el1
	and	x0, x0, #0xff
	bl	cpu_main
1:	wfi
	b	1b

	.global smc_call
smc_call:
	smc	#0
	ret

	.section .bss
	.balign 16
	.space 8192
stack_top:
	.global stack1_top, stack2_top
	.space 4096
stack1_top:
	.space 4096
stack2_top:
	.section .note.GNU-stack,"",%progbits
