/* What emulbench and emulcheck share: the entry (a stack, the vector table, main) and a vector
 * table whose only live entry, a synchronous exception at the current EL, reports ESR and ELR
 * to unexpected(esr, elr). Included by their start.S; the includer defines stack_top. */
	.section .text.start, "ax"
	.global _start
_start:
	ldr	x9, =stack_top
	mov	sp, x9
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	bl	main
1:	wfi
	b	1b

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
	bl	unexpected
	b	.

