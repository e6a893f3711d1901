/* emulbench: entry, vectors and the timed stretches. Written for QEMU's `virt` machine, with no
 * Bulkhead code; started at EL1 (MMU off) with x0 = the device tree. */
#include "el1_entry.S"
/* The 16 counter reads of a stamp into x2-x17 (see partitions/bench/common/stamp.h). */
.macro read16
	.irp r, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17
	mrs	x\r, cntvct_el0
	.endr
.endm

/* x2-x17 into the 16 words at [x19, #\at]. */
.macro store16 at
	stp	x2, x3, [x19, #\at]
	stp	x4, x5, [x19, #\at + 16]
	stp	x6, x7, [x19, #\at + 32]
	stp	x8, x9, [x19, #\at + 48]
	stp	x10, x11, [x19, #\at + 64]
	stp	x12, x13, [x19, #\at + 80]
	stp	x14, x15, [x19, #\at + 96]
	stp	x16, x17, [x19, #\at + 112]
.endm

/* unsigned long long reads[32]; void timed_<name>(addr, value, reads): a stamp, the stores of
 * its reads, one `insn` (with x1 = addr, x0 = value: a guest's usual registers), the next
 * stamp. Every
 * function is the same code but for `insn`, so the difference from timed_nop is the cost of
 * `insn` less one (the nop), whatever the stores and reads cost. An SMCCC call may change
 * x0-x17: the first stamp's reads are stored before it, the second's are read after it. */
.macro timed name, insn
	.global timed_\name
timed_\name:
	str	x19, [sp, #-16]!
	mov	x19, x2
	mov	x2, x0
	mov	x0, x1
	mov	x1, x2
	read16
	store16 0
	\insn
	read16
	store16 128
	ldr	x19, [sp], #16
	ret
.endm

	timed nop, "nop"
	timed ldr32, "ldr w0, [x1]"
	timed str32, "str w0, [x1]"
	timed hvc, "hvc #0"
	timed smc, "smc #0"

	.section .bss
	.balign 16
	.space 8192
stack_top:
	.section .note.GNU-stack,"",%progbits
