/* AArch64 implementation of the per-core parts of the arch interface. */
#include <assert.h>
#include <stddef.h>
#include "arch.h"
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "arch/vmachine.h"
#include "console.h"
#include "format.h"
#include "lib.h"
#include "partition.h"
#include "percpu.h"
#include "platform.h"
#include "sched.h"

#define ICH_HCR_EL2_EN (1ul << 0) /* the virtual CPU interface */

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

/* How far ahead a waiter for a lock arms the EL1 physical timer: 2 us of the 62.5 MHz counter. */
#define SPIN_TURN_TICKS 125ul
#define CNTP_CTL_ENABLE_MASKED 3ul /* ENABLE, IMASK: it counts, it never raises its interrupt */

void arch_spin_lock(struct spinlock *l)
{
	uint32_t ticket = __atomic_fetch_add(&l->word, 0x10000u, __ATOMIC_ACQUIRE) >> 16;
	uint64_t owner;

	if ((__atomic_load_n(&l->word, __ATOMIC_ACQUIRE) & 0xffff) == ticket)
		return; /* free: no WFE, which would cost a scheduling round under -icount */
	/* LDAXRH arms the exclusive monitor: the owner's release store wakes our WFE. Each pass
	 * also arms the EL1 physical timer, masked, SPIN_TURN_TICKS ahead (the hypervisor's own:
	 * guests' accesses to it trap). On hardware it does nothing. Under -icount QEMU 7.2 runs
	 * the cores in turn, each until the next timer deadline of any core, and a WFE ends a
	 * turn: without a deadline near, a busy guest's core ran to its own next timer,
	 * milliseconds away, before the owner's turn came, at every hand-over of the lock (a
	 * best-effort Linux benchmark then took more than 15 minutes instead of 23 s:
	 * docs/performance.md). */
	__asm__ volatile("	sevl\n"
			 "1:	wfe\n"
			 "	mrs	%0, cntpct_el0\n"
			 "	add	%0, %0, %3\n"
			 "	msr	cntp_cval_el0, %0\n"
			 "	msr	cntp_ctl_el0, %4\n"
			 "	ldaxrh	%w0, [%1]\n"
			 "	cmp	%w0, %w2\n"
			 "	b.ne	1b\n"
			 "	msr	cntp_ctl_el0, xzr\n"
			 : "=&r"(owner)
			 : "r"(&l->word), "r"(ticket), "r"(SPIN_TURN_TICKS), "r"(CNTP_CTL_ENABLE_MASKED)
			 : "cc", "memory");
}

void arch_turn_deadline(uint64_t at)
{
	__asm__ volatile("	msr	cntp_cval_el0, %0\n"
			 "	msr	cntp_ctl_el0, %1\n"
			 : : "r"(at), "r"(CNTP_CTL_ENABLE_MASKED) : "memory");
}

/* A turn of QEMU -icount's round robin runs to the next timer deadline of any core: a holder's
 * 4 KiB port copy under a channel's lock ran 3 500 instructions in one turn while the cores
 * waiting for it, and a victim's instant on one of them, waited for that turn to end
 * (docs/performance.md, "Lock-wait windows and the emulator's turns"). 48 ticks: with 16 a
 * distributor storm's CPUs wrote a tenth less (test_lockwait.py's count). */
#define TURN_POINT_TICKS 48ul
#define CNTP_CTL_ISTATUS 4ul

void arch_turn_point(void)
{
	uint64_t ctl;

	__asm__ volatile("mrs %0, cntp_ctl_el0" : "=r"(ctl));
	if ((ctl & (CNTP_CTL_ENABLE_MASKED | CNTP_CTL_ISTATUS)) == CNTP_CTL_ENABLE_MASKED)
		return; /* one is pending: kept, or a deadline moved ahead at every look never comes */
	arch_turn_deadline(arch_counter_read() + TURN_POINT_TICKS);
}

void arch_turn_point_if_waited(const struct spinlock *l)
{
	uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);

	if ((uint16_t)((w >> 16) - (w & 0xffff)) > 1) /* a ticket beyond the holder's */
		arch_turn_point();
}

/* Not a ticket: a waiter that gives up cannot leave the queue. Each pass arms the turn timer as
 * arch_spin_lock does, at give_up_at at the latest, so that under -icount the core looks at the
 * time then; the WFE ends at any store to the lock word (a release, a ticket taken). */
bool arch_spin_lock_before(struct spinlock *l, uint64_t give_up_at)
{
	if (arch_spin_trylock(l))
		return true; /* free: nobody queued to be fair to */
	if (give_up_at == UINT64_MAX) {
		arch_spin_lock(l);
		return true;
	}
	do {
		uint64_t now = arch_counter_read(), turn_at = now + SPIN_TURN_TICKS;
		uint32_t seen = __atomic_load_n(&l->word, __ATOMIC_RELAXED), word;
		/* A physical interrupt pending (a kick: a vCPU of the core woken from another core, a
		 * request; a device's): the core has something to look at before its timer, and the
		 * holders may keep the lock taken until then. */
		if (now >= give_up_at || arch_irq_pending())
			return false;
		__asm__ volatile("	msr	cntp_cval_el0, %2\n"
				 "	msr	cntp_ctl_el0, %3\n"
				 "	ldaxr	%w0, [%1]\n"
				 "	cmp	%w0, %w4\n"
				 "	b.ne	1f\n"
				 "	wfe\n"
				 "1:	msr	cntp_ctl_el0, xzr\n"
				 : "=&r"(word)
				 : "r"(&l->word), "r"(turn_at < give_up_at ? turn_at : give_up_at),
				   "r"(CNTP_CTL_ENABLE_MASKED), "r"(seen)
				 : "cc", "memory");
	} while (!arch_spin_trylock(l));
	return true;
}

bool arch_spin_trylock(struct spinlock *l)
{
	uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);

	if ((w >> 16) != (w & 0xffff))
		return false;
	return __atomic_compare_exchange_n(&l->word, &w, w + 0x10000u, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void arch_spin_unlock(struct spinlock *l)
{
	uint16_t next_owner = (uint16_t)(l->word + 1);

	__atomic_store_n((volatile uint16_t *)&l->word, next_owner, __ATOMIC_RELEASE);
	__asm__ volatile("sev" ::: "memory");
}

void arch_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

void *arch_phys_to_ptr(uint64_t pa)
{
	return (void *)(uintptr_t)pa; /* EL2 maps all memory one to one */
}

#define SPSR_M_MASK 0xful
#define SPSR_M_EL0T 0x0ul

/* True when the access being served came from EL0 (Linux user space through the hypercall
 * page): SPSR_EL2 still holds the mode of the trap, as EL2 takes no exception meanwhile. */
static bool trapped_from_el0(void)
{
	return (read_spsr_el2() & SPSR_M_MASK) == SPSR_M_EL0T;
}

/* Stage 1 only, with the privilege of the access that trapped: an EL0 caller reaches only
 * what its own page tables give EL0, never kernel memory. (AT S1E1R/W ignore PSTATE.PAN; a
 * core with FEAT_PAN would need AT S1E1RP/WP for EL1 callers running with PAN set. The
 * cortex-a53 has no PAN, so an EL1 caller may name any memory its kernel maps.) */
static uint64_t stage1_translate(uint64_t va, bool write)
{
	if (trapped_from_el0()) {
		if (write)
			__asm__ volatile("at s1e0w, %0" : : "r"(va));
		else
			__asm__ volatile("at s1e0r, %0" : : "r"(va));
	} else {
		if (write)
			__asm__ volatile("at s1e1w, %0" : : "r"(va));
		else
			__asm__ volatile("at s1e1r, %0" : : "r"(va));
	}
	isb();
	return read_par_el1();
}

/* The guest's MMU is on: its stage 1 says, and PAR_EL1 keeps the guest's value. */
static __attribute__((noinline)) bool stage1_va_to_ipa(uint64_t va, bool write, uint64_t *ipa)
{
	uint64_t saved = read_par_el1();
	uint64_t par = stage1_translate(va, write);

	write_par_el1(saved);
	if (par & 1)
		return false;
	*ipa = (par & 0x0000fffffffff000ul) | (va & 0xfff);
	return true;
}

/* Inline into every guest copy (the build is one LTO unit): with the guest's MMU off, as the
 * partitions built on libbhpart run, it is one register read. */
HOT_INLINE_GLOBAL bool arch_guest_va_to_ipa(uint64_t va, bool write, uint64_t *ipa)
{
	if (!(read_sctlr_el1() & 1)) {
		*ipa = va; /* guest MMU off: addresses are IPAs, for EL0 as for EL1 */
		return true;
	}
	return stage1_va_to_ipa(va, write, ipa);
}

void aarch64_clean_dcache(const void *p, size_t len)
{
	uint64_t line = 4ul << ((read_ctr_el0() >> 16) & 0xf);
	uint64_t start = (uint64_t)p & ~(line - 1), end = (uint64_t)p + len;

	/* The guest starts with its MMU off (non-cacheable): push the copy to memory. */
	for (uint64_t a = start; a < end; a += line)
		__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
	dsb_ish();
}

void aarch64_sync_icache(void)
{
	__asm__ volatile("ic ialluis" ::: "memory");
	dsb_ish();
	isb();
}

void arch_sync_loaded_image(void *p, size_t len)
{
	aarch64_clean_dcache(p, len);
	aarch64_sync_icache();
}

/* v's FP/SIMD state is no longer in its core's registers, nor to be loaded back there. */
static void fp_forget(struct vcpu *v)
{
	struct arch_core *a = &percpu[v->core].arch;

	if (a->fp_owner == v)
		a->fp_owner = NULL;
	if (a->fp_home == v)
		a->fp_home = NULL;
}

static const uint8_t paravirt_priority = VGIC_PARAVIRT_PRIORITY;

void arch_vcpu_reset(struct vcpu *v, uint64_t entry, uint64_t a0, uint64_t a1, uint64_t a2,
		     uint64_t a3)
{
	struct arch_vcpu_ctx *a = &v->arch;
	struct partition *p = v->partition;

	memset(&v->regs, 0, sizeof(v->regs));
	v->regs.x[0] = a0;
	v->regs.x[1] = a1;
	v->regs.x[2] = a2;
	v->regs.x[3] = a3;
	v->regs.elr = entry;
	v->regs.spsr = SPSR_EL1H_MASKED;
	if (this_cpu()->loaded == v)
		gic_set_ppi_active(PPI_VTIMER, 0); /* its list registers go: so does what they held */
	memset(a, 0, sizeof(*a));
	fp_forget(v); /* the registers no longer hold its (now zero) state */
	a->sctlr = SCTLR_EL1_RESET;
	a->vmpidr = (1ul << 31) | v->id;
	a->vttbr = aarch64_vttbr(p->stage2_root, p->cfg->id + 1);
	vgic_reset(a);
	if (p->cfg->vmachine)
		vgic_reset_redist(v);
	a->vtimer_priority =
		p->cfg->vmachine ? vgic_priority_ref(v, PPI_VTIMER) : &paravirt_priority;
}

void arch_el1_switch(struct arch_vcpu_ctx *save, const struct arch_vcpu_ctx *load);
void arch_el1_load(const struct arch_vcpu_ctx *a);
void arch_el1_save(struct arch_vcpu_ctx *a);
/* el1_ctx.S moves the fields from sctlr to mdscr, in declaration order, by these offsets. */
static_assert(offsetof(struct arch_vcpu_ctx, sctlr) == 0 &&
	      offsetof(struct arch_vcpu_ctx, cpacr) == 56 &&
	      offsetof(struct arch_vcpu_ctx, contextidr) == 64 &&
	      offsetof(struct arch_vcpu_ctx, tpidr_el0) == 120 &&
	      offsetof(struct arch_vcpu_ctx, tpidrro) == 128 &&
	      offsetof(struct arch_vcpu_ctx, mdscr) == 184, "el1_ctx.S offsets");

/* The loaded vCPU's timer and GIC virtual interface, before the switch. */
HOT_INLINE void save_timer_and_gic(struct vcpu *v)
{
	struct arch_vcpu_ctx *a = &v->arch;

	a->cntv_ctl = read_cntv_ctl_el0();
	a->cntv_cval = read_cntv_cval_el0();
	write_cntv_ctl_el0(0); /* its timer must not fire for the next vCPU */
	vgic_save(a);
	/* Its timer interrupt, still in flight, must not keep the next vCPU's from firing. One in
	 * a list register goes with it and is made active again when it returns; one taken but
	 * not delivered yet (the guest disabled it, or the switch came first) is withdrawn: the
	 * timer's level raises it again once the vCPU is back. */
	if (virq_withdraw(v, PPI_VTIMER) || a->vtimer_active)
		gic_set_ppi_active(PPI_VTIMER, 0);
}

/* Everything of v but its EL1 registers, after they are in. */
HOT_INLINE void load_rest(struct vcpu *v)
{
	const struct arch_vcpu_ctx *a = &v->arch;

	write_vmpidr_el2(a->vmpidr);
	write_vttbr_el2(a->vttbr);
	write_cntv_cval_el0(a->cntv_cval);
	write_cntv_ctl_el0(a->cntv_ctl);
	vgic_load(a);
	/* FP/SIMD moves lazily: trap the first use unless the registers already hold v's. */
	write_cptr_el2(percpu[v->core].arch.fp_owner == v ? CPTR_EL2_RES1 : CPTR_EL2_RES1 | CPTR_TFP);
	if (a->vtimer_active)
		gic_set_ppi_active(PPI_VTIMER, 1); /* its guest ends it, as before the switch */
	isb();
}

/* prev saved, nothing loaded after it: its virtual interface off, with nothing in it. */
static __attribute__((noinline)) void unload(struct vcpu *prev)
{
	save_timer_and_gic(prev);
	arch_el1_save(&prev->arch);
	write_ich_hcr_el2(0);
	isb();
}

/* One function for the whole switch, its helpers inline: it is on the path of every message
 * handed to a waiting receiver. Without prev, the registers hold nothing to keep. */
void arch_vcpu_switch(struct vcpu *prev, struct vcpu *next)
{
	if (!next) {
		unload(prev);
		return;
	}
	if (prev) {
		save_timer_and_gic(prev);
		arch_el1_switch(&prev->arch, &next->arch);
	} else {
		vgic_clear();
		arch_el1_load(&next->arch);
	}
	load_rest(next);
}

/* Over whatever the registers hold: nothing saved yet, or v's own state before its reset. */
void arch_vcpu_load(struct vcpu *v)
{
	arch_vcpu_switch(NULL, v);
}

/* Forwarded physical interrupts a saved context still holds in its list registers: ended, as
 * its guest never will. Its timer's PPI was made inactive when it was switched out. */
static void release_saved_lrs(struct arch_vcpu_ctx *a)
{
	for (unsigned n = 0; n < VGIC_MAX_LRS; n++) {
		unsigned pintid = vgic_lr_forwarded(a->lr[n]);
		if (pintid >= 32)
			arch_irq_release(pintid);
		a->lr[n] = 0;
	}
	a->lrs_live = 0;
	a->vtimer_active = 0;
}

void arch_vcpu_release(struct vcpu *v)
{
	struct arch_vcpu_ctx *a = &v->arch;

	if (this_cpu()->loaded == v)
		save_timer_and_gic(v); /* as if switched out; it stays loaded, empty and silent */
	a->cntv_ctl = 0;
	release_saved_lrs(a);
	fp_forget(v);
}

void arch_stage2_flush(struct partition *p)
{
	uint64_t vmid = aarch64_vttbr(p->stage2_root, p->cfg->id + 1), saved = read_vttbr_el2();

	/* TLBI VMALLS12E1IS acts on the VMID in VTTBR_EL2, on every core of the inner domain. */
	write_vttbr_el2(vmid);
	isb();
	__asm__ volatile("tlbi vmalls12e1is\n dsb ish" ::: "memory");
	write_vttbr_el2(saved);
	isb();
}

bool arch_irq_pending(void)
{
	return (read_icc_hppir1_el1() & 0xffffff) < 1020;
}

static void fp_save(struct vcpu *v)
{
	fpsimd_save(v->arch.fp, &v->arch.fpcr, &v->arch.fpsr);
}

static void fp_load(struct vcpu *v)
{
	fpsimd_load(v->arch.fp, v->arch.fpcr, v->arch.fpsr);
}

void aarch64_fp_trap(struct vcpu *v)
{
	struct arch_core *a = &this_cpu()->arch;
	struct vcpu **owner = &a->fp_owner;

	write_cptr_el2(CPTR_EL2_RES1);
	isb();
	if (*owner == v)
		return;
	if (*owner)
		fp_save(*owner);
	/* A best-effort vCPU displaces the core's own owner only until it leaves; one of the
	 * core's own vCPUs is the owner to come back to from now on. */
	if (!vcpu_is_best_effort(v))
		a->fp_home = NULL;
	else if (*owner && !vcpu_is_best_effort(*owner))
		a->fp_home = *owner;
	fp_load(v);
	*owner = v;
}

/* v's FP/SIMD registers out, the displaced owner's back in (arch_vcpu_detach), with v owning
 * them: FP/SIMD is not trapped (v's first use cleared CPTR_EL2.TFP, aarch64_fp_trap, or its
 * load found it the owner, load_rest) and the next vCPU's load sets the trap again. */
HOT_INLINE void fp_detach_owner(struct vcpu *v, struct arch_core *a)
{
	fp_save(v);
	a->fp_owner = a->fp_home;
	if (a->fp_home)
		fp_load(a->fp_home);
	a->fp_home = NULL;
}

/* Only while it owns the registers: otherwise nothing of it is in them, and the owner is the
 * core's own vCPU, untouched. */
void arch_vcpu_detach(struct vcpu *v)
{
	struct arch_core *a = &this_cpu()->arch;

	if (a->fp_owner != v)
		return;
	write_cptr_el2(CPTR_EL2_RES1); /* FP at EL2 too; the next vCPU's load sets it again */
	isb();
	fp_detach_owner(v, a);
}

/* arch_vcpu_give_back (el1_ctx.S) for anything but its common case: called from there alone. */
__attribute__((used)) void aarch64_give_back_slow(struct vcpu *v, struct vcpu *home)
{
	struct arch_core *a = &this_cpu()->arch;

	if (a->fp_owner == v)
		fp_detach_owner(v, a);
	arch_vcpu_switch(v, home);
}

void arch_vcpu_resume(void)
{
	aarch64_resume_fresh_stack();
}

void arch_skip_instruction(struct arch_regs *r)
{
	r->elr += 4;
}

/* HVC's preferred return is the next instruction: back by one. ELR_EL2 itself too, as the
 * hypercall fast path (vectors.S guest_hvc) returns through it without reloading the frame; the
 * frame's copy is for the slow exit, which returns through it. */
void arch_hypercall_again(struct arch_regs *r)
{
	r->elr -= 4;
	write_elr_el2(r->elr);
}

static bool vtimer_fires(uint64_t ctl)
{
	return (ctl & (CNTV_CTL_ENABLE | CNTV_CTL_IMASK)) == CNTV_CTL_ENABLE;
}

bool arch_vtimer_due(void)
{
	/* The interrupt line, not the timer's status bit: an emulator may set the status some
	 * instructions before it raises the line, and a vCPU sent back to its guest in between
	 * would only come back to wait again, later than usual. */
	return gic_ppi_pending(PPI_VTIMER);
}

/* The loaded vCPU's timer is in the registers, and whether its interrupt is in flight is in
 * its list registers: an instant not later than the one it fires at. */
static uint64_t live_vtimer_deadline(void)
{
	return vtimer_fires(read_cntv_ctl_el0()) ? read_cntv_cval_el0() : TIME_NEVER;
}

uint64_t arch_vtimer_deadline(const struct vcpu *v)
{
	if (this_cpu()->loaded == v)
		return live_vtimer_deadline();
	/* A timer whose interrupt the guest disabled wakes nobody (BH_HC_IRQ_CTL, the vGIC). */
	if (!vtimer_fires(v->arch.cntv_ctl) || v->arch.vtimer_active ||
	    (v->virq.disabled[PPI_VTIMER / 32] & (1u << (PPI_VTIMER % 32))))
		return TIME_NEVER;
	return v->arch.cntv_cval; /* CNTVOFF_EL2 is 0: virtual time is physical time */
}

void arch_timer_program(uint64_t deadline)
{
	if (deadline == TIME_NEVER) {
		write_cnthp_ctl_el2(0);
	} else {
		write_cnthp_cval_el2(deadline);
		write_cnthp_ctl_el2(1);
	}
	isb();
}

void arch_wait_for_interrupt(void)
{
	struct percpu *c = this_cpu();
	/* Idle with a vCPU still loaded (switched out ready, out of budget or slot): a pending
	 * interrupt in its list registers keeps the virtual CPU interface signalling, and WFI does
	 * not wait while it does (QEMU wakes on any virtual IRQ, at EL2 too), so the idle core
	 * would spin through this loop until its next event. The interface is off while the core
	 * sleeps; nothing of the vCPU's changes. */
	bool vif_off = !c->vcpu && c->loaded;

	if (vif_off) {
		write_ich_hcr_el2(read_ich_hcr_el2() & ~ICH_HCR_EL2_EN);
		isb();
	}
	__asm__ volatile("dsb sy\n wfi" ::: "memory");
	if (vif_off)
		write_ich_hcr_el2(read_ich_hcr_el2() | ICH_HCR_EL2_EN);
	/* A vCPU waiting in place for its own timer: the interrupt stays pending and is taken on
	 * the way back into the guest, through the vector's fast path, so its latency is the
	 * same whether it came before or during the wait. */
	if (c->vcpu && c->vcpu == c->loaded && (read_icc_hppir1_el1() & 0xffffff) == PPI_VTIMER)
		return;
	aarch64_handle_irqs(gic_ack());
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
