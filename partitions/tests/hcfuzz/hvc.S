/* fz_hvc(struct fz_regs *r): loads x0..x17 from r, calls the hypervisor, stores x0..x17 back.
 * Loading x6..x17 with known values lets the fuzzer check that the hypervisor returns them
 * unchanged (docs/hypercalls.md, "Convention") and leaks nothing of its own through them. */
	.text
	.global	fz_hvc
	.type	fz_hvc, %function
fz_hvc:
	stp	x19, x30, [sp, #-16]!
	mov	x19, x0
	ldp	x0, x1, [x19, #0]
	ldp	x2, x3, [x19, #16]
	ldp	x4, x5, [x19, #32]
	ldp	x6, x7, [x19, #48]
	ldp	x8, x9, [x19, #64]
	ldp	x10, x11, [x19, #80]
	ldp	x12, x13, [x19, #96]
	ldp	x14, x15, [x19, #112]
	ldp	x16, x17, [x19, #128]
	hvc	#0
	stp	x0, x1, [x19, #0]
	stp	x2, x3, [x19, #16]
	stp	x4, x5, [x19, #32]
	stp	x6, x7, [x19, #48]
	stp	x8, x9, [x19, #64]
	stp	x10, x11, [x19, #80]
	stp	x12, x13, [x19, #96]
	stp	x14, x15, [x19, #112]
	stp	x16, x17, [x19, #128]
	ldp	x19, x30, [sp], #16
	ret
	.size	fz_hvc, . - fz_hvc

	.section .note.GNU-stack, "", %progbits
