/* The EL1 system registers of a vCPU (struct arch_vcpu_ctx, fields sctlr to mdscr, in that
 * order: cpu.c checks the offsets), saved and loaded in pairs: every partition switch moves
 * all of them, so each instruction here is paid at every switch. */

	.text

/* The registers, two by two, with the offset of the first of each pair. */
.macro el1_registers op
	\op sctlr_el1, ttbr0_el1, 0
	\op ttbr1_el1, tcr_el1, 16
	\op mair_el1, amair_el1, 32
	\op vbar_el1, cpacr_el1, 48
	\op contextidr_el1, esr_el1, 64
	\op far_el1, par_el1, 80
	\op afsr0_el1, afsr1_el1, 96
	\op tpidr_el1, tpidr_el0, 112
	\op tpidrro_el0, sp_el0, 128
	\op sp_el1, elr_el1, 144
	\op spsr_el1, cntkctl_el1, 160
	\op csselr_el1, mdscr_el1, 176
.endm

.macro save_pair first, second, offset
	mrs	x2, \first
	mrs	x3, \second
	stp	x2, x3, [x0, #\offset]
.endm

.macro load_pair first, second, offset
	ldp	x1, x2, [x0, #\offset]
	msr	\first, x1
	msr	\second, x2
.endm

/* void arch_el1_save(struct arch_vcpu_ctx *save): a best-effort vCPU leaving a core idle */
	.global arch_el1_save
arch_el1_save:
	el1_registers save_pair
	ret

/* void arch_el1_switch(struct arch_vcpu_ctx *save, const struct arch_vcpu_ctx *load) */
	.global arch_el1_switch
arch_el1_switch:
	el1_registers save_pair
	mov	x0, x1
	/* and on into the load */

/* void arch_el1_load(const struct arch_vcpu_ctx *a) */
	.global arch_el1_load
arch_el1_load:
	el1_registers load_pair
	ret
