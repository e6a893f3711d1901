/* mmioatk: entry, vectors, and accesses to emulated devices that carry no syndrome
 * (tests/system/test_boards.py). Written for QEMU's `virt` machine, with no Bulkhead code. */
#include "el1_entry.S"
	.global ldxr_at
ldxr_at:
	ldxr	w0, [x0]
	ret
	.global stxr_at              /* returns the status register, 7 if never written */
stxr_at:
	mov	w2, #7
	stxr	w2, w1, [x0]
	mov	w0, w2
	ret
	.global ldaxp_at
ldaxp_at:
	ldaxp	x0, x1, [x0]
	ret
	.global dc_zva_at
dc_zva_at:
	dc	zva, x0
	ret
	.global dc_civac_at
dc_civac_at:
	dc	civac, x0
	ret
	.global ldp_at               /* returns the sum of both loads */
ldp_at:
	ldp	w1, w2, [x0]
	add	w0, w1, w2
	ret
	.global ldr_post_at          /* returns the base after the writeback */
ldr_post_at:
	ldr	w1, [x0], #4
	ret
	.global str_pre_at           /* returns the base after the writeback */
str_pre_at:
	str	w1, [x0, #4]!
	ret
	.global stp_at
stp_at:
	stp	w1, w1, [x0]
	ret
	.section .bss
	.balign 16
	.space 8192
stack_top:
	.section .note.GNU-stack,"",%progbits
