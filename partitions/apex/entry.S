/* libapex exception entry: the only place a context is saved or restored.
 *
 * apex_init points VBAR_EL1 here. Processes, the initialization and the idle loop all run at
 * EL1h on their own stacks, so an IRQ or an SVC arrives at "current EL, SP_ELx" and the
 * frame (struct apex_frame: x0..x30, ELR_EL1, SPSR_EL1) goes on the stack of the context it
 * interrupted. The C side then runs on the kernel stack with IRQs masked and returns the frame
 * to resume, perhaps another context's: a context switch is resuming a different frame.
 *
 *   IRQ     -> apex_kernel_irq(frame): dispatch the interrupts, then maybe preempt.
 *   SVC #0  -> apex_kernel_svc(frame): a service gave up the CPU (apex_reschedule).
 *   no room for the frame below SP (the stack reached its guard page, with the MMU on) ->
 *              apex_kernel_stack_fault(): the process stops with STACK_OVERFLOW.
 *   other synchronous exceptions -> apex_kernel_fault(frame): in a process, that process's
 *              error for the error handler; elsewhere libbhpart's (bh_el1_vectors), which
 *              reports it and stops the partition.
 *
 * The other vectors (FIQ, SError, EL1t, lower ELs) are not the kernel's: they go, registers
 * untouched, to the same vector of libbhpart's table.
 * Only general-purpose registers are saved (partitions use no FP/SIMD: -mgeneral-regs-only).
 */
#define FRAME_SIZE 272	/* struct apex_frame; kernel.c checks these against it */
#define FRAME_ELR  248
#define FRAME_SPSR 256
#define ESR_SVC0 0x56000000	/* EC 0x15 (SVC64), IL 1, immediate 0 */
#define KSTACK_SIZE 8192
#define KSTACK_GUARD 8192	/* two unmapped pages below each kernel stack (partition.c) */
#define MAX_CORES 4	/* APEX_MAX_CORES: one kernel stack per vCPU */
#define CORE_KSTACK_TOP 0	/* struct apex_core, reached through TPIDR_EL0 */
#define LIGHT_SIZE 96	/* x19..x30 */

	.macro	save_x2_to_spsr
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x19, [sp, #144]
	stp	x20, x21, [sp, #160]
	stp	x22, x23, [sp, #176]
	stp	x24, x25, [sp, #192]
	stp	x26, x27, [sp, #208]
	stp	x28, x29, [sp, #224]
	mrs	x0, elr_el1
	mrs	x1, spsr_el1
	stp	x30, x0, [sp, #240]
	str	x1, [sp, #FRAME_SPSR]
	.endm

	/* x0 = the frame just saved; continue on this vCPU's kernel stack. */
	.macro	to_kernel_stack
	mov	x0, sp
	mrs	x1, tpidr_el0
	ldr	x1, [x1, #CORE_KSTACK_TOP]
	mov	sp, x1
	.endm

	/* Vector slot `index` (128 bytes, 32 instructions): the slot's end is checked, so code
	 * placed in it cannot spill into the next. The kernel's entry and resume code lives in
	 * the slots (the table is 2 KiB whatever it holds): 4 and 5 are the kernel's entries,
	 * the others start with their branch to libbhpart's vector and use the rest. */
	.macro	slot index
	.org	apex_vectors + \index * 128
	.endm
	.macro	to_libbhpart index
	slot	\index
	b	bh_el1_vectors + \index * 128
	.endm

	.section .text.apex_vectors, "ax", %progbits
	.balign	2048
	.global	apex_vectors
apex_vectors:
	to_libbhpart 0
	to_libbhpart 1
	to_libbhpart 2
	to_libbhpart 3

	/* Synchronous, EL1h: SVC #0 is a reschedule point (slot 9), anything else a fault (slot
	 * 8). First, whether the frame fits where SP points: a stack that ran into its guard
	 * pages (unmapped: kernel.c, lib/mmu.c) would fault again at every push, so its two
	 * ends are translated first (a guard is larger than a frame: no hole between them). */
	slot	4
	msr	sp_el0, x0		/* a scratch register: SP_EL0 is unused (all runs at EL1h) */
	/* Every stack (the processes', the kernel's, libbhpart's) lies in the image's writable
	 * segment: SP anywhere else (a process that set it so) is no stack, even where stage 1
	 * translates it (stage 2 may not: the hypervisor's fault, then the partition's). */
	adrp	x0, __part_data		/* page-aligned (part.ld) */
	cmp	sp, x0
	b.ls	stack_overflow
	adrp	x0, __part_end
	add	x0, x0, :lo12:__part_end
	cmp	sp, x0
	b.hi	stack_overflow
	sub	x0, sp, #FRAME_SIZE
	at	s1e1w, x0
	isb
	mrs	x0, par_el1
	tbnz	x0, #0, stack_overflow	/* PAR_EL1.F: no translation */
	sub	x0, sp, #16
	at	s1e1w, x0
	isb
	mrs	x0, par_el1
	tbnz	x0, #0, stack_overflow
	mrs	x0, sp_el0
	sub	sp, sp, #FRAME_SIZE
	stp	x0, x1, [sp, #0]
	mrs	x0, esr_el1
	mov	w1, #ESR_SVC0
	cmp	w0, w1
	b.ne	sync_fault
	b	svc_entry

	/* IRQ, EL1h. */
	slot	5
	sub	sp, sp, #FRAME_SIZE
	stp	x0, x1, [sp, #0]
	save_x2_to_spsr
	to_kernel_stack
	bl	apex_kernel_irq
	b	apex_resume

	/* x0 = the context to run: a full frame (address | 1: an exception saved it), or a light
	 * frame, which returns from apex_switch_to with IRQs still masked. */
	to_libbhpart 6
	.global	apex_resume
	.type	apex_resume, %function
apex_resume:
	tbz	x0, #0, resume_light
resume_full:
	sub	x0, x0, #1
	mov	sp, x0
	/* With several vCPUs (TPIDRRO_EL0 = 1) the kernel lock is held here: the frame resumed
	 * has none. */
	mrs	x1, tpidrro_el0
	cbz	x1, 1f
	adrp	x1, apex_lock
	add	x1, x1, :lo12:apex_lock
	stlr	wzr, [x1]
1:	ldr	x1, [sp, #FRAME_SPSR]
	ldp	x30, x0, [sp, #240]
	msr	elr_el1, x0
	msr	spsr_el1, x1
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x10, x11, [sp, #80]
	ldp	x12, x13, [sp, #96]
	ldp	x14, x15, [sp, #112]
	ldp	x16, x17, [sp, #128]
	ldp	x18, x19, [sp, #144]
	ldp	x20, x21, [sp, #160]
	ldp	x22, x23, [sp, #176]
	ldp	x24, x25, [sp, #192]
	ldp	x26, x27, [sp, #208]
	ldp	x28, x29, [sp, #224]
	ldp	x0, x1, [sp, #0]
	add	sp, sp, #FRAME_SIZE
	eret
	.size	apex_resume, . - apex_resume

	/* apex_switch_to(struct apex_frame **save, struct apex_frame *next): a service's voluntary
	 * switch (apex_reschedule, IRQs masked). The caller's callee-saved registers go on its
	 * own stack as a light frame, whose address goes to *save; then next resumes. The call
	 * returns, into the service, when the light frame is resumed. */
	to_libbhpart 7
	.global	apex_switch_to
	.type	apex_switch_to, %function
apex_switch_to:
	sub	sp, sp, #LIGHT_SIZE
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	mov	x2, sp
	str	x2, [x0]
	mov	x0, x1
	tbnz	x0, #0, resume_full
resume_light:
	mov	sp, x0
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	add	sp, sp, #LIGHT_SIZE
	ret
	.size	apex_switch_to, . - apex_switch_to

	/* A synchronous exception other than SVC #0 (from slot 4): a process's error
	 * (apex_kernel_fault returns the frame to run next), or, anywhere else, libbhpart's to
	 * report (it reads ESR, ELR and FAR itself and abandons the context). */
	to_libbhpart 8
sync_fault:
	save_x2_to_spsr
	to_kernel_stack
	bl	apex_kernel_fault
	cbnz	x0, apex_resume
	b	bh_el1_vectors + 4 * 128

	to_libbhpart 9
svc_entry:
	save_x2_to_spsr
	to_kernel_stack
	bl	apex_kernel_svc
	b	apex_resume

	/* No room for a frame (slot 4): the context is lost; on the kernel stack, the process
	 * is stopped for its error handler (apex_kernel_stack_fault returns the next context),
	 * or, outside a process, libbhpart reports the fault and stops the partition. */
	to_libbhpart 10
stack_overflow:
	mov	x0, sp			/* where it was: a kernel stack is the partition's fault */
	mrs	x1, tpidr_el0
	ldr	x1, [x1, #CORE_KSTACK_TOP]
	mov	sp, x1
	bl	apex_kernel_stack_fault
	cbnz	x0, apex_resume
	mrs	x0, sp_el0
	b	bh_el1_vectors + 4 * 128

	.irp	i, 11, 12, 13, 14, 15
	to_libbhpart \i
	.endr
	slot	16

	/* The kernel's own stack: interrupt handlers and the scheduler never run on a process
	 * stack, so a process needs room for one frame per nesting, not for the kernel. Each has
	 * its two guard pages below it (unmapped by init_core with the MMU on): an application's
	 * interrupt handler runs here, and one that overflows must not go on into what lies
	 * below (the message pool, another vCPU's kernel stack). */
	.section .bss.apex_kstack, "aw", %nobits
	.balign	4096
	.global	apex_kstack
apex_kstack:
	.space	(KSTACK_GUARD + KSTACK_SIZE) * MAX_CORES
	.global	apex_kstack_top
apex_kstack_top:

	.section .note.GNU-stack, "", %progbits
