/* GICv3 virtual CPU interface: pending virtual interrupts go into the list registers of the
 * loaded vCPU; the list registers travel with the vCPU at every switch.
 *
 * Forwarded physical interrupts (the virtual timer, assigned SPIs) stay active at the GIC after
 * the hypervisor takes them, and their list register is hardware-linked to them: the guest's
 * end of the virtual interrupt deactivates the physical one, with no exit. Until then it cannot
 * fire again, so a level interrupt never storms the hypervisor. */
#include "arch/aarch64.h"
#include "arch/asm_offsets.h"
#include "arch/sysreg.h"
#include "arch/vmachine.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"

#define LR_PENDING (1ul << 62)
#define LR_ACTIVE (1ul << 63)
#define LR_GROUP1 (1ul << 60)
#define LR_PRIORITY(p) ((uint64_t)(p) << 48)
#define LR_HW (1ul << 61)
#define LR_EOI (1ul << 41) /* not hardware-linked: a maintenance interrupt at its end */
#define LR_PINTID(intid) ((uint64_t)(intid) << 32)
#define LR_STATE (LR_PENDING | LR_ACTIVE)
#define LR_INTID(lr) ((unsigned)((lr) & 0xffffffffu))
#define ICH_HCR_EN (1ul << 0)
#define ICH_HCR_UIE (1ul << 1)

/* vectors.S writes the timer's list register itself, from these bits. */
_Static_assert((LR_PENDING | LR_HW | LR_GROUP1) == (uint64_t)LR_PENDING_HW_GROUP1 << 48,
	       "LR_PENDING_HW_GROUP1 in asm_offsets.h");

static unsigned lr_count;
/* ICH_AP1Rn_EL2 implemented: 1, 2 or 4 for 5, 6 or 7 priority bits (ICH_VTR_EL2.PREbits). The
 * guest's active priorities must all move with it, or an interrupt it is handling at a
 * priority the saved registers do not cover blocks or lets through the wrong ones. */
static unsigned apr_count;
uint64_t vgic_lrs_all_empty; /* ICH_ELRSR_EL2 with every list register empty */
/* The same where one active-priority register holds them all (el1_ctx.S arch_vcpu_give_back
 * moves only that one); with more, no ICH_ELRSR_EL2 value: that way is never taken. */
uint64_t vgic_plain_lrs;

/* The list registers are separate system registers: these name each implemented one. */
#define EACH_LR(op) op(15) op(14) op(13) op(12) op(11) op(10) op(9) op(8) op(7) op(6) op(5) \
		    op(4) op(3) op(2) op(1) op(0)

#define LR_READ(n) case n: return read_ich_lr##n##_el2();
static uint64_t lr_read(unsigned n)
{
	switch (n) {
	EACH_LR(LR_READ)
	}
	return 0;
}

#define LR_WRITE(n) case n: write_ich_lr##n##_el2(v); return;
static void lr_write(unsigned n, uint64_t v)
{
	switch (n) {
	EACH_LR(LR_WRITE)
	}
}

void vgic_init_core(void)
{
	lr_count = (unsigned)(read_ich_vtr_el2() & 0x1f) + 1;
	if (lr_count > VGIC_MAX_LRS)
		lr_count = VGIC_MAX_LRS;
	vgic_lrs_all_empty = (1ul << lr_count) - 1;
	unsigned pre_bits = (unsigned)((read_ich_vtr_el2() >> 26) & 7) + 1;
	apr_count = pre_bits >= 7 ? 4 : pre_bits == 6 ? 2 : 1;
	vgic_plain_lrs = apr_count == 1 ? vgic_lrs_all_empty : ~0ul;
}

/* Active-priority registers: AP1R0 always, the others (6 or 7 priority bits) after one
 * comparison, off the switch path of cores with 5 bits such as QEMU's. */
static __attribute__((noinline)) void apr_save_more(struct arch_vcpu_ctx *a)
{
	a->ap1r[1] = read_ich_ap1r1_el2();
	if (apr_count == 4) {
		a->ap1r[2] = read_ich_ap1r2_el2();
		a->ap1r[3] = read_ich_ap1r3_el2();
	}
}

static __attribute__((noinline)) void apr_load_more(const struct arch_vcpu_ctx *a)
{
	write_ich_ap1r1_el2(a->ap1r[1]);
	if (apr_count == 4) {
		write_ich_ap1r2_el2(a->ap1r[2]);
		write_ich_ap1r3_el2(a->ap1r[3]);
	}
}

static void apr_save(struct arch_vcpu_ctx *a)
{
	a->ap1r[0] = read_ich_ap1r0_el2();
	if (apr_count > 1)
		apr_save_more(a);
}

static void apr_load(const struct arch_vcpu_ctx *a)
{
	write_ich_ap1r0_el2(a->ap1r[0]);
	if (apr_count > 1)
		apr_load_more(a);
}

static uint64_t empty_lrs(void)
{
	return read_ich_elrsr_el2() & vgic_lrs_all_empty;
}

/* Every implemented list register, highest first, by falling through from lr_count: the
 * switch path's cost is one access per register. */
#define LR_SAVE(n) case n + 1: a->lr[n] = read_ich_lr##n##_el2(); __attribute__((fallthrough));
#define LR_LOAD(n) case n + 1: write_ich_lr##n##_el2(a->lr[n]); __attribute__((fallthrough));

#define LR_CLEAR(n) case n + 1: write_ich_lr##n##_el2(0); __attribute__((fallthrough));

void vgic_clear(void)
{
	switch (lr_count) {
	EACH_LR(LR_CLEAR)
	case 0:
		break;
	}
}

/* The occupied list registers of a vCPU switched out: taken, and the registers emptied. */
static __attribute__((noinline)) void save_lrs(struct arch_vcpu_ctx *a)
{
	switch (lr_count) {
	EACH_LR(LR_SAVE)
	case 0:
		break;
	}
	vgic_clear();
	a->vtimer_active = vgic_holds_forwarded(a, PPI_VTIMER);
}

/* Its list registers back, into empty ones (see vgic_save). */
static __attribute__((noinline)) void load_lrs(const struct arch_vcpu_ctx *a)
{
	switch (lr_count) {
	EACH_LR(LR_LOAD)
	case 0:
		break;
	}
}

/* Between vCPUs every list register is empty: a save that finds some occupied takes and
 * clears them. Mostly none is occupied at a switch: then neither the save nor the load
 * after it touches them. Inline into the switch (the build is one LTO unit); the rare parts
 * are out of line. */
HOT_INLINE_GLOBAL void vgic_save(struct arch_vcpu_ctx *a)
{
	a->lrs_live = empty_lrs() != vgic_lrs_all_empty;
	/* Only an occupied list register can hold the timer interrupt. */
	a->vtimer_active = 0;
	if (a->lrs_live)
		save_lrs(a);
	a->vmcr = read_ich_vmcr_el2();
	apr_save(a);
	a->ich_hcr = read_ich_hcr_el2();
}

/* Into empty list registers (see vgic_save). */
HOT_INLINE_GLOBAL void vgic_load(const struct arch_vcpu_ctx *a)
{
	if (a->lrs_live)
		load_lrs(a);
	write_ich_vmcr_el2(a->vmcr);
	apr_load(a);
	write_ich_hcr_el2(a->ich_hcr | ICH_HCR_EN);
}

void vgic_reset(struct arch_vcpu_ctx *a)
{
	for (unsigned n = 0; n < VGIC_MAX_LRS; n++)
		a->lr[n] = 0;
	a->lrs_live = 0;
	a->vmcr = (0xfful << 24) | (1ul << 1); /* VPMR 0xff, group 1 enabled */
	for (unsigned n = 0; n < VGIC_MAX_APRS; n++)
		a->ap1r[n] = 0;
	a->ich_hcr = ICH_HCR_EN;
}

static int lr_holding(unsigned intid)
{
	for (unsigned n = 0; n < lr_count; n++) {
		uint64_t lr = lr_read(n);
		if ((lr & (LR_PENDING | LR_ACTIVE)) && LR_INTID(lr) == intid)
			return (int)n;
	}
	return -1;
}

enum placed { PLACED, NO_ROOM, AFTER_ITS_END };

/* A forwarded physical interrupt whose INTID a list register already holds without the link:
 * one the guest pended by hand (GICD_ISPENDR). Still pending there, it becomes the physical one
 * (one delivery, whose end deactivates it). Active, the list register cannot take it: a
 * hardware-linked interrupt is never active and pending in one, and two list registers must not
 * hold one INTID. It waits for that end, which the list register signals by a maintenance
 * interrupt (LR_EOI; vgic_maintenance). Merged as pending into the unlinked one, as before, the
 * link was lost: the guest's end never deactivated the physical interrupt, and its device never
 * interrupted again (partitions/board/irqpend). */
static enum placed place_beside_unlinked(unsigned n, uint64_t lr, unsigned intid)
{
	if (!(lr & LR_ACTIVE)) {
		lr_write(n, lr | LR_HW | LR_PINTID(intid));
		return PLACED;
	}
	lr_write(n, lr | LR_EOI);
	return AFTER_ITS_END;
}

/* Place one interrupt: PLACED, NO_ROOM if every list register is taken, AFTER_ITS_END if it
 * must wait for the end of the one a list register holds (place_beside_unlinked). */
static enum placed place(unsigned intid, uint8_t priority, bool forwarded, uint64_t *empty)
{
	/* Only an occupied list register can already hold it. */
	int held = *empty == (1ul << lr_count) - 1 ? -1 : lr_holding(intid);

	if (held >= 0) { /* already there: active becomes active and pending */
		uint64_t lr = lr_read((unsigned)held);
		if (forwarded && !(lr & LR_HW))
			return place_beside_unlinked((unsigned)held, lr, intid);
		lr_write((unsigned)held, lr | LR_PENDING);
		return PLACED;
	}
	if (!*empty)
		return NO_ROOM;
	unsigned n = (unsigned)__builtin_ctzll(*empty);
	*empty &= *empty - 1;
	lr_write(n, LR_PENDING | LR_GROUP1 | LR_PRIORITY(priority) |
			    (forwarded ? LR_HW | LR_PINTID(intid) : 0) | intid);
	return PLACED;
}

static uint8_t priority_of(const struct vcpu *v, unsigned intid)
{
	/* An emulated GIC has the guest's priorities; paravirtual partitions have one for all. */
	return v->partition->cfg->vmachine ? vgic_priority(v, intid) : VGIC_PARAVIRT_PRIORITY;
}

void arch_vgic_flush(struct vcpu *v)
{
	bool forwarded;
	int intid;

	if (!v || !virq_has_pending(v))
		return;
	uint64_t empty = empty_lrs();
	while ((intid = virq_take(v, &forwarded)) >= 0) {
		enum placed r = place((unsigned)intid, priority_of(v, (unsigned)intid), forwarded,
				      &empty);
		if (r != PLACED) {
			virq_put_back(v, (unsigned)intid, forwarded);
			/* Overflow: the underflow maintenance interrupt asks again. Waiting for an
			 * end: its own maintenance interrupt does (the rest waits as long: taking
			 * on would only find the same interrupt first again). */
			if (r == NO_ROOM)
				write_ich_hcr_el2(read_ich_hcr_el2() | ICH_HCR_UIE);
			break;
		}
	}
	isb();
}

bool arch_vgic_pending(void)
{
	/* Only an occupied list register can hold a pending interrupt, and mostly none is: a vCPU
	 * that blocks usually has taken everything delivered to it. */
	uint64_t occupied = ~empty_lrs() & vgic_lrs_all_empty;

	for (; occupied; occupied &= occupied - 1)
		if (lr_read((unsigned)__builtin_ctzll(occupied)) & LR_PENDING)
			return true;
	return false;
}

/* A saved vCPU context still has intid in flight in a hardware-linked list register. */
bool vgic_holds_forwarded(const struct arch_vcpu_ctx *a, unsigned intid)
{
	for (unsigned n = 0; n < lr_count; n++)
		if ((a->lr[n] & LR_HW) && (a->lr[n] & LR_STATE) && LR_INTID(a->lr[n]) == intid)
			return true;
	return false;
}

unsigned vgic_lr_forwarded(uint64_t lr)
{
	return (lr & LR_HW) && (lr & LR_STATE) ? (unsigned)((lr >> 32) & 0x3ff) : 0;
}

/* Maintenance interrupt: list registers drained while more were pending (underflow), or one
 * marked LR_EOI ended. */
void vgic_maintenance(void)
{
	/* A list register that ended with LR_EOI asks until it is rewritten: emptied here, so the
	 * interrupt that waited for it (place_beside_unlinked) goes in at the flush. */
	for (uint64_t ended = read_ich_eisr_el2() & vgic_lrs_all_empty; ended; ended &= ended - 1)
		lr_write((unsigned)__builtin_ctzll(ended), 0);
	write_ich_hcr_el2(read_ich_hcr_el2() & ~ICH_HCR_UIE);
	isb();
	exit_work_set(EXIT_FLUSH);
}
