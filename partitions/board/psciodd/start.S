/* psciodd: the firmware reset vector (as include/fw_start.S) and the entry its second CPU is
 * started at by PSCI CPU_ON: a stack of its own, then secondary(context id). */
	.section .text.start, "ax"
	.global _start
_start:
	ldr	x9, =0x40200000
	mov	sp, x9
	bl	main
1:	wfi
	b	1b

	.global secondary_entry
secondary_entry:
	ldr	x9, =0x40280000
	mov	sp, x9
	bl	secondary
1:	wfi
	b	1b
	.section .note.GNU-stack,"",%progbits
