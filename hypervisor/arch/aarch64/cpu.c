/* AArch64 implementation of the per-core parts of the arch interface. */
#include "arch.h"
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "console.h"
#include "format.h"
#include "lib.h"
#include "partition.h"
#include "percpu.h"
#include "platform.h"

#define SPSR_EL1H_MASKED 0x3c5ul       /* EL1h, D A I F masked */
#define SCTLR_EL1_RESET 0x30D00800ul   /* RES1 bits; MMU and caches off */
#define CNTV_CTL_ENABLE (1ul << 0)
#define CNTV_CTL_IMASK (1ul << 1)
#define CNTV_CTL_ISTATUS (1ul << 2)

uint64_t arch_counter_read(void)
{
	isb();
	return read_cntpct_el0();
}

uint64_t arch_counter_freq(void)
{
	return read_cntfrq_el0();
}

void arch_console_putc(char c)
{
	plat_uart_putc(c);
}

void arch_spin_lock(struct spinlock *l)
{
	uint32_t busy;

	__asm__ volatile("	sevl\n"
			 "1:	wfe\n"
			 "2:	ldaxr	%w0, [%1]\n"
			 "	cbnz	%w0, 1b\n"
			 "	stxr	%w0, %w2, [%1]\n"
			 "	cbnz	%w0, 2b\n"
			 : "=&r"(busy)
			 : "r"(&l->locked), "r"(1u)
			 : "memory");
}

void arch_spin_unlock(struct spinlock *l)
{
	__asm__ volatile("stlr wzr, [%0]\n sev" : : "r"(&l->locked) : "memory");
}

void arch_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

void *arch_phys_to_ptr(uint64_t pa)
{
	return (void *)(uintptr_t)pa; /* EL2 maps all memory one to one */
}

bool arch_guest_va_to_ipa(uint64_t va, bool write, uint64_t *ipa)
{
	if (!(read_sctlr_el1() & 1)) {
		*ipa = va; /* guest MMU off: addresses are IPAs */
		return true;
	}
	uint64_t saved = read_par_el1(), par;
	if (write)
		__asm__ volatile("at s1e1w, %0" : : "r"(va));
	else
		__asm__ volatile("at s1e1r, %0" : : "r"(va));
	isb();
	par = read_par_el1();
	write_par_el1(saved);
	if (par & 1)
		return false;
	*ipa = (par & 0x0000fffffffff000ul) | (va & 0xfff);
	return true;
}

void arch_sync_loaded_image(void *p, size_t len)
{
	uint64_t line = 4ul << ((read_ctr_el0() >> 16) & 0xf);
	uint64_t start = (uint64_t)p & ~(line - 1), end = (uint64_t)p + len;

	/* The guest starts with its MMU off (non-cacheable): push the copy to memory. */
	for (uint64_t a = start; a < end; a += line)
		__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
	dsb_ish();
	__asm__ volatile("ic ialluis" ::: "memory");
	dsb_ish();
	isb();
}

static void reset_el1_sysregs(void)
{
	write_sctlr_el1(SCTLR_EL1_RESET);
	write_ttbr0_el1(0);
	write_ttbr1_el1(0);
	write_tcr_el1(0);
	write_mair_el1(0);
	write_amair_el1(0);
	write_vbar_el1(0);
	write_cpacr_el1(0);
	write_contextidr_el1(0);
	write_esr_el1(0);
	write_far_el1(0);
	write_par_el1(0);
	write_afsr0_el1(0);
	write_afsr1_el1(0);
	write_tpidr_el1(0);
	write_tpidr_el0(0);
	write_tpidrro_el0(0);
	write_sp_el0(0);
	write_sp_el1(0);
	write_elr_el1(0);
	write_spsr_el1(0);
	write_cntkctl_el1(0);
	write_cntv_ctl_el0(0);
	write_cntv_cval_el0(0);
}

void arch_vcpu_reset(struct vcpu *v, uint64_t entry, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct partition *p = v->partition;

	memset(&v->regs, 0, sizeof(v->regs));
	v->regs.x[0] = a0;
	v->regs.x[1] = a1;
	v->regs.x[2] = a2;
	v->regs.elr = entry;
	v->regs.spsr = SPSR_EL1H_MASKED;
	aarch64_vcpu_configure_el2(p->stage2_root, p->cfg->id + 1, v->id);
	reset_el1_sysregs();
	isb();
}

void arch_vcpu_resume(struct vcpu *v)
{
	this_cpu()->regs = &v->regs;
	aarch64_resume_fresh_stack();
}

void arch_skip_instruction(struct arch_regs *r)
{
	r->elr += 4;
}

static bool vtimer_fired(void)
{
	uint64_t ctl = read_cntv_ctl_el0();
	return (ctl & (CNTV_CTL_ENABLE | CNTV_CTL_IMASK | CNTV_CTL_ISTATUS)) ==
	       (CNTV_CTL_ENABLE | CNTV_CTL_ISTATUS);
}

bool arch_wait_virtual_timer(void)
{
	bool fired = vtimer_fired();

	if (fired)
		return true;
	/* The timer's PPI is enabled only while waiting: it wakes WFI, and is never taken. */
	gic_set_ppi_enabled(PPI_VTIMER, 1);
	__asm__ volatile("wfi" ::: "memory");
	gic_set_ppi_enabled(PPI_VTIMER, 0);
	gic_drain();
	return vtimer_fired();
}

void arch_wait_for_interrupt(void)
{
	__asm__ volatile("wfi" ::: "memory");
	gic_drain();
}

void arch_kick_core(unsigned core)
{
	dsb_ish();
	gic_send_sgi(core, SGI_KICK);
}

void arch_system_off(void)
{
	psci_system_off();
}

void arch_dump_regs(const struct arch_regs *r)
{
	char line[96];

	for (unsigned i = 0; i < 31; i += 3) {
		format(line, sizeof(line), "  x%02u %016lx  x%02u %016lx  x%02u %016lx\n", i,
		       r->x[i], i + 1, i + 1 < 31 ? r->x[i + 1] : 0, i + 2,
		       i + 2 < 31 ? r->x[i + 2] : 0);
		console_emergency(line);
	}
	format(line, sizeof(line), "  elr %016lx spsr %016lx\n", r->elr, r->spsr);
	console_emergency(line);
}
