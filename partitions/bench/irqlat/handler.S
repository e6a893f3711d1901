/* void irqlat_handler(unsigned intid): the BH_VIRQ_VTIMER handler of irqlat.c, in assembly
 * so that its very first instruction reads the counter: 16 back-to-back reads (a stamp,
 * see bench.h) into x2..x17, which a called function may clobber. Then it stores them,
 * disables the timer (its interrupt is level-triggered) and sets irqlat_fired. */
	.text
	.global	irqlat_handler
	.type	irqlat_handler, %function
	.balign	4
irqlat_handler:
	mrs	x2, cntvct_el0
	mrs	x3, cntvct_el0
	mrs	x4, cntvct_el0
	mrs	x5, cntvct_el0
	mrs	x6, cntvct_el0
	mrs	x7, cntvct_el0
	mrs	x8, cntvct_el0
	mrs	x9, cntvct_el0
	mrs	x10, cntvct_el0
	mrs	x11, cntvct_el0
	mrs	x12, cntvct_el0
	mrs	x13, cntvct_el0
	mrs	x14, cntvct_el0
	mrs	x15, cntvct_el0
	mrs	x16, cntvct_el0
	mrs	x17, cntvct_el0
	adrp	x1, irqlat_reads
	add	x1, x1, :lo12:irqlat_reads
	stp	x2, x3, [x1, #0]
	stp	x4, x5, [x1, #16]
	stp	x6, x7, [x1, #32]
	stp	x8, x9, [x1, #48]
	stp	x10, x11, [x1, #64]
	stp	x12, x13, [x1, #80]
	stp	x14, x15, [x1, #96]
	stp	x16, x17, [x1, #112]
	msr	cntv_ctl_el0, xzr
	isb
	adrp	x1, irqlat_fired
	mov	w2, #1
	str	w2, [x1, :lo12:irqlat_fired]
	ret
	.size	irqlat_handler, . - irqlat_handler

	.section .note.GNU-stack, "", %progbits
