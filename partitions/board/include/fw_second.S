/* A firmware guest's second vCPU, started by PSCI CPU_ON at `second`: its own stack, then
 * main2. A guest's start.S includes it after fw_start.S. */
	.section .text.start, "ax"
	.global second
second:
	ldr	x9, =0x40300000
	mov	sp, x9
	bl	main2
2:	wfi
	b	2b
