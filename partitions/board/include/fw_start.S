/* The reset vector of a firmware guest (board.mk gives it to every guest without start code of
 * its own). It starts at EL1 with the MMU off (QEMU's -bios without virtualization, and a
 * Bulkhead firmware partition): a stack in RAM, then main. */
	.section .text.start, "ax"
	.global _start
_start:
	ldr	x9, =0x40200000
	mov	sp, x9
	bl	main
1:	wfi
	b	1b
