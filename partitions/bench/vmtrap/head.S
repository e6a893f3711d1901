/* vmtrap: the arm64 Image header and entry of a tiny freestanding guest that the tool boots as a
 * Linux kernel (a `linux:` partition) and QEMU boots bare (`-kernel`), x0 = device tree, MMU off.
 * The code is position independent (PC-relative addressing only), so it runs where either loads
 * it: the base of the partition's RAM, or 0x40000000 on QEMU without the hypervisor. */
	.section .head, "ax"
	.globl	_head
_head:
	b	entry			/* code0 */
	.long	0			/* code1 */
	.quad	0			/* text_offset */
	.quad	_image_size		/* image_size: code, data, bss and stack */
	.quad	0xa			/* flags: little endian, 4K pages, placement anywhere */
	.quad	0, 0, 0			/* res2-res4 */
	.ascii	"ARM\x64"		/* magic */
	.long	0			/* res5 */

entry:
	msr	daifset, #0xf
	mov	x19, x0
	adrp	x1, _stack_top
	add	x1, x1, :lo12:_stack_top
	mov	sp, x1
	adrp	x1, vmtrap_vectors
	add	x1, x1, :lo12:vmtrap_vectors
	msr	vbar_el1, x1
	isb
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:	mov	x0, x19
	bl	vmtrap_main
3:	wfe
	b	3b

/* Every exception is unexpected: report it and stop. */
	.macro	vector kind
	.balign	0x80
	mov	x0, #\kind
	b	vmtrap_exception
	.endm

	.text
	.balign	0x800
	.globl	vmtrap_vectors
vmtrap_vectors:
	.irp	kind, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vector	\kind
	.endr
