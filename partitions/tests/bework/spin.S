/* unsigned long be_spin(unsigned long seed, unsigned long iterations)
 *
 * Fills x19-x28 and v0-v31 (both halves) with values derived from seed, spins for
 * `iterations` turns of a loop that touches none of them, then counts the registers that no
 * longer hold their value (0: all kept). Meanwhile the vCPU may be interrupted, switched out,
 * moved to another core and back any number of times: whatever the hypervisor does, these
 * registers must come back as they were. Value n (n = 0, 1, ...) of each bank is
 * seed + n * STEP; the upper half of v<n> holds its complement. */

#define STEP x9

	.text
	.global	be_spin
	.type	be_spin, %function
be_spin:
	stp	x19, x20, [sp, #-96]!
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	ldr	STEP, =0x9e3779b97f4a7c15

	/* Fill: x10 runs through the values. */
	mov	x10, x0
	.irp r,19,20,21,22,23,24,25,26,27,28
	mov	x\r, x10
	add	x10, x10, STEP
	.endr
	mov	x10, x0
	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	fmov	d\n, x10
	mvn	x11, x10
	mov	v\n\().d[1], x11
	add	x10, x10, STEP
	.endr

	/* Spin; x12 keeps the seed for the check. */
	mov	x12, x0
1:	subs	x1, x1, #1
	b.hi	1b

	/* Count what changed. */
	mov	x0, #0
	mov	x10, x12
	.irp r,19,20,21,22,23,24,25,26,27,28
	cmp	x\r, x10
	cinc	x0, x0, ne
	add	x10, x10, STEP
	.endr
	mov	x10, x12
	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	fmov	x11, d\n
	cmp	x11, x10
	cinc	x0, x0, ne
	mov	x11, v\n\().d[1]
	mvn	x13, x10
	cmp	x11, x13
	cinc	x0, x0, ne
	add	x10, x10, STEP
	.endr

	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x19, x20, [sp], #96
	ret
	.size	be_spin, . - be_spin
	.ltorg
