/* irqstart: the forwarded-interrupt probes' entry and vectors, and two more CPU entries. */
#include "blk_irq_start.S"

	.section .text.start, "ax"
/* PSCI CPU_ON target of the third CPU: x0 is its stack top; then starter(). */
	.global cpu2_entry
cpu2_entry:
	mov	sp, x0
	bl	starter
1:	wfi
	b	1b

/* PSCI CPU_ON target of the first CPU once it is off: straight back off (CPU_OFF). */
	.global cpu0_off
cpu0_off:
	ldr	x0, =0x84000002
	smc	#0
1:	b	1b

	.section .bss
	.balign 16
	.space 8192
	.global stack2_top
stack2_top:
	.section .note.GNU-stack,"",%progbits
