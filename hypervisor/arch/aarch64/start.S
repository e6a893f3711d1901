/* Entry from QEMU: an arm64 Linux Image header so `-kernel` starts us at EL2 with x0 = DTB,
 * then primary and secondary core bring-up before C. */
#include "arch/asm_offsets.h"

	.section .text.head, "ax"
	.global _start
_start:
	b	primary_entry           /* code0 */
	.long	0                       /* code1 */
	.quad	_text_offset            /* QEMU loads us at RAM base + this (hyp.ld: our link address) */
	.quad	_image_size             /* image_size, from the linker script */
	.quad	0x2                     /* flags: little endian, 4 KiB pages */
	.quad	0, 0, 0                 /* reserved */
	.ascii	"ARM\x64"               /* magic */
	.long	0                       /* reserved */

primary_entry:
	mov	x19, x0                 /* DTB address, kept for C */
	mov	x20, #0                 /* core 0 */
	bl	el2_cpu_setup
	/* Clear .bss (stacks and per-CPU data live there; nothing used it yet). */
	adrp	x0, __bss_start
	add	x0, x0, :lo12:__bss_start
	adrp	x1, __bss_end
	add	x1, x1, :lo12:__bss_end
1:	cmp	x0, x1
	b.hs	2f
	stp	xzr, xzr, [x0], #16
	b	1b
2:	bl	set_stack_and_percpu
	mov	x0, x19
	bl	aarch64_boot_primary
	b	park

	.global aarch64_secondary_entry
aarch64_secondary_entry:
	mov	x20, x0                 /* core index, passed as the PSCI CPU_ON context */
	bl	el2_cpu_setup
	bl	set_stack_and_percpu
	mov	x0, x20
	bl	aarch64_boot_secondary
	b	park

/* Known EL2 state: exceptions masked, vectors installed, MMU off. */
el2_cpu_setup:
	msr	daifset, #0xf
	adrp	x0, aarch64_el2_vectors
	add	x0, x0, :lo12:aarch64_el2_vectors
	msr	vbar_el2, x0
	ldr	x0, =SCTLR_EL2_RES1
	msr	sctlr_el2, x0
	isb
	ret

/* x20 = core index: SP = top of this core's stack, TPIDR_EL2 = &percpu[core]. */
set_stack_and_percpu:
	adrp	x0, aarch64_stacks
	add	x0, x0, :lo12:aarch64_stacks
	mov	x1, #STACK_SIZE
	madd	x0, x1, x20, x0
	add	sp, x0, x1
	adrp	x0, percpu
	add	x0, x0, :lo12:percpu
	mov	x1, #PERCPU_SIZE
	madd	x0, x1, x20, x0
	msr	tpidr_el2, x0
	ret

park:
	wfi
	b	park

/* void aarch64_mmu_enable(uint64_t ttbr, uint64_t tcr, uint64_t mair)
 * Sets M, C, I and WXN at once, after the TLB invalidation: TLB entries may hold WXN's effect,
 * so it must not change while the MMU is on. */
	.global aarch64_mmu_enable
aarch64_mmu_enable:
	msr	mair_el2, x2
	msr	tcr_el2, x1
	msr	ttbr0_el2, x0
	isb
	tlbi	alle2
	dsb	ish
	isb
	mrs	x0, sctlr_el2
	ldr	x1, =SCTLR_EL2_MMU_ON
	orr	x0, x0, x1
	msr	sctlr_el2, x0
	isb
	ic	iallu
	dsb	ish
	isb
	ret
