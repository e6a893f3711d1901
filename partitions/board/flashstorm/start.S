/* flashstorm: vCPU 0 at the reset vector, vCPUs 1-3 (PSCI CPU_ON) at `second`, each with a
 * stack of its own in RAM (0x40300000 + 64 KiB * its MPIDR.Aff0), then cpu_main(Aff0). */
#include "fw_start.S"
	.section .text.start, "ax"
	.global second
second:
	mrs	x0, mpidr_el1
	and	x0, x0, #0xff
	ldr	x9, =0x40300000
	add	x9, x9, x0, lsl #16
	mov	sp, x9
	bl	cpu_main
2:	wfi
	b	2b
	.section .note.GNU-stack,"",%progbits
