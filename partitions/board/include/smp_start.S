/* Entry of a bare-metal board guest that starts its other CPUs (PSCI CPU_ON): EL1, interrupts
 * masked. CPU 0 clears .bss and calls main() on stack_top; a started CPU gets its stack top as
 * the CPU_ON context argument and calls cpu_main(MPIDR.Aff0). Three 4 KiB stacks for the
 * others (stack1_top to stack3_top) and smc_call(fn, a1, a2, a3), the SMC conduit. A guest's own
 * start.S includes this file (partitions/board/board.mk: its .S files replace fw_start.S). */
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
	.global stack1_top, stack2_top, stack3_top
	.space 4096
stack1_top:
	.space 4096
stack2_top:
	.space 4096
stack3_top:
	.section .note.GNU-stack,"",%progbits
