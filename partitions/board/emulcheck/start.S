/* emulcheck: entry, vectors, and the accesses whose destination or source register matters
 * (tests/system/test_boards.py). Written for QEMU's `virt` machine, with no Bulkhead code. */
#include "el1_entry.S"
/* uint32_t read_x19(addr): a 32-bit load into x19, which the emulation fast path leaves to the
 * full path (x19-x29 are not in its save area). */
	.global read_x19
read_x19:
	str	x19, [sp, #-16]!
	ldr	w19, [x0]
	mov	x0, x19
	ldr	x19, [sp], #16
	ret

/* void write_x21(addr, value): a 32-bit store from x21, the same way. */
	.global write_x21
write_x21:
	str	x21, [sp, #-16]!
	mov	x21, x1
	str	w21, [x0]
	ldr	x21, [sp], #16
	ret

/* uint64_t read64(addr), uint32_t read16(addr): loads of other sizes. */
	.global read64
read64:
	ldr	x0, [x0]
	ret
	.global read16
read16:
	ldrh	w0, [x0]
	ret

/* int64_t smc_imm1(fn): an SMC that is not an SMCCC call (immediate 1). */
	.global smc_imm1
smc_imm1:
	smc	#1
	ret
	.global smc_call
smc_call:
	smc	#0
	ret
	.global hvc_call
hvc_call:
	hvc	#0
	ret

	.section .bss
	.balign 16
	.space 8192
stack_top:
	.section .note.GNU-stack,"",%progbits
