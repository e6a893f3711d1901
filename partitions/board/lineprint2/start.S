/* flashrace: vCPU 0 at the reset vector, vCPU 1 (PSCI CPU_ON) at second. */
	.section .text.start, "ax"
	.global _start
_start:
	ldr	x9, =0x40200000
	mov	sp, x9
	bl	main
1:	wfi
	b	1b
	.global second
second:
	ldr	x9, =0x40300000
	mov	sp, x9
	bl	main2
2:	wfi
	b	2b
