/* GICv3 distributor and redistributor emulation for unmodified guests.
 *
 * The guest programs enables, priorities and routes through trapped MMIO; this file keeps that
 * state and turns it into the per-vCPU virtual interrupt sets of virq.c, which the list
 * registers drain. A shared interrupt (SPI) is pending in exactly one vCPU, the one its
 * GICD_IROUTER names; a private one (SGI, PPI) in its own vCPU. Groups are accepted and read
 * back but every interrupt is delivered as group 1 (Linux uses only group 1). Active state is
 * not tracked here (it lives in the list registers): ISACTIVER reads as zero. */
#include "arch/aarch64.h"
#include "arch/vmachine.h"
#include "lib.h"
#include "partition.h"
#include "percpu.h"
#include "platform.h"
#include "virq.h"

/* Distributor registers (offsets in the 64 KiB frame). */
#define GICD_CTLR 0x0000
#define GICD_TYPER 0x0004
#define GICD_IIDR 0x0008
#define GICD_IGROUPR 0x0080
#define GICD_ISENABLER 0x0100
#define GICD_ICENABLER 0x0180
#define GICD_ISPENDR 0x0200
#define GICD_ICPENDR 0x0280
#define GICD_ISACTIVER 0x0300
#define GICD_ICACTIVER 0x0380
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR 0x0c00
#define GICD_IROUTER 0x6000
#define GICD_PIDR2 0xffe8

#define GICD_CTLR_ENABLES 0x3u         /* EnableGrp0, EnableGrp1 */
#define GICD_CTLR_FIXED ((1u << 4) | (1u << 6)) /* ARE and DS: one security state */
#define GICD_TYPER_VALUE ((VGIC_WORDS - 1) | (9u << 19) | (1u << 25)) /* 10 INTID bits, No1N */
#define GIC_IIDR_VALUE (0x42u << 24)   /* product 'B', no implementer: matches no quirk */
#define GIC_PIDR2_V3 0x3bu

/* Redistributor: RD_base frame, then SGI_base frame 64 KiB later. */
#define GICR_FRAME 0x10000
#define GICR_STRIDE 0x20000
#define GICR_CTLR 0x0000
#define GICR_IIDR 0x0004
#define GICR_TYPER 0x0008
#define GICR_WAKER 0x0014
#define GICR_PIDR2 0xffe8
#define GICR_WAKER_SLEEP (1u << 1)
#define GICR_WAKER_CHILDREN_ASLEEP (1u << 2)
#define GICR_TYPER_LAST (1ul << 4)

#define GICR_ICFGR0_SGIS 0xaaaaaaaau /* every SGI edge-triggered, as QEMU's GIC reads it */

/* Register blocks with one bit per interrupt, in the same place in both frames. */
#define BITS_BLOCK(off, base) ((off) >= (base) && (off) < (base) + 0x80)

static struct vmachine *vm(const struct vcpu *v)
{
	return vmachine_of(v->partition);
}

static bool is_spi(unsigned intid)
{
	return intid >= 32 && intid < VGIC_IRQS;
}

static struct vcpu *spi_target(struct partition *p, struct vmachine *m, unsigned intid)
{
	return &p->vcpus[m->dist.target[intid]];
}

static bool spi_forwarded(const struct partition *p, unsigned intid)
{
	for (uint32_t i = 0; i < p->cfg->irq_count; i++)
		if (p->cfg->irqs[i] == intid)
			return true;
	return false;
}

uint8_t vgic_priority(const struct vcpu *v, unsigned intid)
{
	return *vgic_priority_ref(v, intid);
}

const uint8_t *vgic_priority_ref(const struct vcpu *v, unsigned intid)
{
	struct vmachine *m = vm(v);

	return intid < 32 ? &m->redist[v->id].priority[intid] : &m->dist.priority[intid];
}

void vgic_raise_spi(struct partition *p, unsigned intid)
{
	struct vmachine *m = vmachine_of(p);

	if (m && is_spi(intid))
		virq_inject(spi_target(p, m, intid), intid, false);
}

/* ---- enables, pending bits and routes, shared by both frames ---- */

/* ICPENDR: a forwarded physical interrupt the hypervisor took from the GIC (active there) and
 * holds for t, not yet in a list register, is given back to the GIC: the guest's end of it would
 * have deactivated it, and now nothing will. Left active, its device could never interrupt again
 * (until the partition restarts); deactivated, a level-sensitive one still asserted is taken
 * again at once, as it would stay pending on a real GIC. Only when t is this core's: the
 * physical interrupt is routed to t's core, and one given back from here for a vCPU of another
 * core was taken again there at once, in whoever's time that core ran; a guest clearing it in a
 * loop interrupted another partition's slots once per write (tests/system/test_emuatk.py,
 * partitions/board/irqrefire). Held for a vCPU of another core, it stays pending for it: its
 * end, on its own core, gives it back (a spurious interrupt if the device was acknowledged
 * meanwhile, which a driver ignores). */
HOT_INLINE void clear_pending(struct vcpu *t, unsigned intid)
{
	if (intid < 32 || t->core == this_cpu()->core) {
		if (intid >= 32 && virq_withdraw_held(t, intid))
			arch_irq_release(intid);
		else
			virq_clear_pending(t, intid);
	} else if (!(__atomic_load_n(&t->virq.forwarded[intid / 32], __ATOMIC_RELAXED) &
		     (1u << (intid % 32)))) {
		virq_clear_pending(t, intid);
	}
}

/* One 32-interrupt word of a set/clear-enable or set/clear-pending register. */
/* The interrupts a register write made pending or enabled for best-effort vCPUs, told to each
 * once after the write's loop, as for an enabled one of them if there is one: told one at a
 * time, 32 interrupts routed to a best-effort vCPU took the system-wide best-effort queue's lock
 * 32 times under the machine lock (be_notify), and the write held it for 324 ticks
 * (tests/system/test_gicdbe.py, session 31's attack review). A pinned vCPU is told of each at
 * once, as before: its notice takes no shared lock. */
struct notices {
	uint32_t vcpus;                        /* bit n: p->vcpus[n] is told */
	uint32_t enabled;                      /* bit n: as for an enabled interrupt */
	unsigned intid[VMACHINE_MAX_VCPUS];    /* as for this interrupt */
};

static bool enabled_in(const struct vcpu *t, unsigned intid)
{
	return !(t->virq.disabled[intid / 32] & (1u << intid % 32));
}

static void note(struct notices *n, const struct vcpu *t, unsigned intid)
{
	uint32_t b = 1u << t->id;

	if (n->enabled & b)
		return;
	if (enabled_in(t, intid))
		n->enabled |= b;
	else if (n->vcpus & b)
		return;
	n->vcpus |= b;
	n->intid[t->id] = intid;
}

static void tell(struct partition *p, const struct notices *n)
{
	for (uint32_t left = n->vcpus; left; left &= left - 1) {
		unsigned id = (unsigned)__builtin_ctz(left);
		virq_notify(&p->vcpus[id], n->intid[id]);
	}
}

/* n: the notices of best-effort vCPUs, or NULL for a partition that has none. */
HOT_INLINE void set_enabled(struct vcpu *t, uint32_t *word, unsigned intid, bool on,
			    struct notices *n)
{
	if (on)
		*word |= 1u << (intid % 32);
	else
		*word &= ~(1u << (intid % 32));
	if (!n || !vcpu_is_best_effort(t))
		virq_enable(t, intid, on);
	else if (virq_set_enabled_quietly(t, intid, on))
		note(n, t, intid);
}

HOT_INLINE void make_pending(struct vcpu *t, unsigned intid, struct notices *n)
{
	if (!n || !vcpu_is_best_effort(t))
		virq_inject(t, intid, false);
	else if (virq_make_pending(t, intid, false))
		note(n, t, intid);
}

HOT_INLINE void write_bits_noting(struct vcpu *v, unsigned first, uint32_t bits, unsigned block,
				  struct notices *n)
{
	struct partition *p = v->partition;
	struct vmachine *m = vm(v);

	for (; bits; bits &= bits - 1) {
		arch_turn_point_if_waited(&m->lock); /* up to 32 injections: a long hold */
		unsigned intid = first + (unsigned)__builtin_ctz(bits);
		struct vcpu *t = intid < 32 ? v : spi_target(p, m, intid);
		uint32_t *enabled = intid < 32 ? &m->redist[v->id].enabled
					       : &m->dist.enabled[intid / 32];
		switch (block) {
		case GICD_ISENABLER: set_enabled(t, enabled, intid, true, n); break;
		case GICD_ICENABLER: set_enabled(t, enabled, intid, false, n); break;
		case GICD_ISPENDR: make_pending(t, intid, n); break;
		case GICD_ICPENDR: clear_pending(t, intid); break;
		default: break; /* active state: not tracked */
		}
	}
}

/* Two copies of the loop: a partition without best-effort vCPUs (most) keeps the loop it had. */
static void write_bits(struct vcpu *v, unsigned first, uint32_t bits, unsigned block)
{
	struct partition *p = v->partition;

	if (!p->best_effort_vcpus) {
		write_bits_noting(v, first, bits, block, NULL);
		return;
	}
	struct notices n = { 0 };
	write_bits_noting(v, first, bits, block, &n);
	tell(p, &n);
}

static uint32_t read_bits(struct vcpu *v, unsigned first, unsigned block)
{
	struct partition *p = v->partition;
	struct vmachine *m = vm(v);
	uint32_t word = 0;

	switch (block) {
	case GICD_ISENABLER:
	case GICD_ICENABLER:
		return first < 32 ? m->redist[v->id].enabled : m->dist.enabled[first / 32];
	case GICD_ISPENDR:
	case GICD_ICPENDR:
		for (unsigned i = 0; i < 32; i++) {
			struct vcpu *t = first < 32 ? v : spi_target(p, m, first + i);
			if (virq_is_pending(t, first + i))
				word |= 1u << i;
		}
		return word;
	}
	return 0;
}

static void set_route(struct vcpu *v, unsigned intid, uint64_t affinity)
{
	struct partition *p = v->partition;
	struct vmachine *m = vm(v);
	unsigned to = (unsigned)(affinity & 0xff);

	/* Only Aff0 names a vCPU; a route to nowhere keeps the old target. */
	if ((affinity & 0xff00ffff00ul) || to >= p->cfg->vcpu_count || to == m->dist.target[intid])
		return;
	struct vcpu *old = spi_target(p, m, intid), *new = &p->vcpus[to];
	bool on = m->dist.enabled[intid / 32] & (1u << (intid % 32));
	/* The physical interrupt moves with its forwarded state: one the hypervisor holds is
	 * pending in the new vCPU as that physical one (its end deactivates it), one pended by
	 * ISPENDR as a plain virtual interrupt (ending it must not deactivate a physical one). */
	bool held = virq_withdraw_held(old, intid);
	bool was_pending = held || virq_is_pending(old, intid);

	virq_enable(old, intid, false);
	virq_clear_pending(old, intid);
	m->dist.target[intid] = (uint8_t)to;
	/* The physical route moves now only with a held interrupt (active at the GIC: nothing
	 * fires). Any other follows when the interrupt is next taken, where it was routed, and
	 * forwarded to its new vCPU (virq_forward_physical), active then. Moved at once, one
	 * active in a list register here and ended after the move fired on the new vCPU's core
	 * at once, its line still high: a guest taking it, routing it to a vCPU of another
	 * core, ending it and routing it back interrupted that core, in whoever's time, once per
	 * round (tests/system/test_emuatk.py, partitions/board/irqflip). So an inactive one
	 * fires only on the core of the vCPU whose end (or whose core's release) made it so. */
	if (spi_forwarded(p, intid)) {
		virq_set_owner(intid, new);
		if (held)
			gic_route_spi(intid, plat_core_affinity(new->core));
	}
	virq_enable(new, intid, on);
	if (was_pending)
		virq_inject(new, intid, held);
}

/* ---- byte and word fields ---- */

static uint64_t read_bytes(const uint8_t *field, unsigned size)
{
	uint64_t val = 0;
	for (unsigned i = 0; i < size; i++)
		val |= (uint64_t)field[i] << (8 * i);
	return val;
}

static void write_bytes(uint8_t *field, unsigned size, uint64_t val)
{
	for (unsigned i = 0; i < size; i++)
		field[i] = (uint8_t)(val >> (8 * i));
}

/* Registers common to the distributor (SPIs) and the SGI frame (private interrupts), for
 * INTIDs lo..hi-1. The arrays are indexed from INTID 0, whatever lo is. */
static bool irq_regs(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val,
		     uint32_t *group, uint32_t *config, uint8_t *priority, unsigned lo, unsigned hi)
{
	if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + hi) {
		unsigned intid = (unsigned)(off - GICD_IPRIORITYR);
		if (intid < lo || intid + size > hi)
			return false;
		if (write)
			write_bytes(&priority[intid], size, *val);
		else
			*val = read_bytes(&priority[intid], size);
		return true;
	}
	if (size != 4)
		return false;
	unsigned word = (unsigned)(off & 0x7f) / 4, first = word * 32;
	if (off >= GICD_ICFGR && off < GICD_ICFGR + hi / 4) {
		unsigned n = (unsigned)(off - GICD_ICFGR) / 4;
		if (n * 16 < lo)
			return false;
		if (n == 0) /* GICR_ICFGR0: SGIs are always edge-triggered, read-only */
			*val = write ? *val : GICR_ICFGR0_SGIS;
		else if (write)
			config[n] = (uint32_t)*val & 0xaaaaaaaau; /* edge bits only */
		else
			*val = config[n];
		return true;
	}
	if (first < lo || first >= hi)
		return false;
	if (BITS_BLOCK(off, GICD_IGROUPR)) {
		if (write)
			group[word] = (uint32_t)*val;
		else
			*val = group[word];
		return true;
	}
	for (unsigned block = GICD_ISENABLER; block <= GICD_ICACTIVER; block += 0x80) {
		if (!BITS_BLOCK(off, block))
			continue;
		if (write)
			write_bits(v, first, (uint32_t)*val, block);
		else
			*val = read_bits(v, first, block);
		return true;
	}
	return false;
}

/* The reads a guest makes most that need no lock, answered before it is taken: the SPI enable
 * words (one aligned word, written whole under the lock: a read sees it before or after a
 * change, as one of a real GIC's would) and the identification registers (constants). The
 * same values as the locked path's for the same offsets and sizes. */
static bool dist_read_unlocked(const struct vcpu *v, uint64_t off, unsigned size, uint64_t *val)
{
	uint64_t rel = off - GICD_ISENABLER; /* ISENABLER, then ICENABLER: 0x100-0x1ff */
	unsigned word = (unsigned)(rel & 0x7f) / 4;

	/* Word 0 is never written (INTIDs 0-31 are the redistributors'): it reads 0, as the
	 * locked path answers for it. */
	if (rel < 2 * 0x80 && size == 4 && word < VGIC_WORDS) {
		*val = __atomic_load_n(&vmachine_of_emulated(v->partition)->dist.enabled[word],
				       __ATOMIC_RELAXED);
		return true;
	}
	switch (off) {
	case GICD_TYPER: *val = GICD_TYPER_VALUE; return true;
	case GICD_IIDR: *val = GIC_IIDR_VALUE; return true;
	case GICD_PIDR2: *val = GIC_PIDR2_V3; return true;
	}
	return false;
}

/* Everything else, under the machine's lock; out of line, so that the reads above build no
 * stack frame for it. The partition's vCPUs on other cores may keep the lock busy (a
 * GICD_ISPENDR write holds it for up to 32 injections): a core whose instant comes first
 * stops waiting at its timer, and the guest makes the access again (MMIO_AGAIN). */
static __attribute__((noinline)) enum mmio_result dist_access_locked(struct vcpu *v,
								      uint64_t off, unsigned size,
								      bool write, uint64_t *val)
{
	struct vmachine *m = vm(v);
	struct vgic_dist *d = &m->dist;
	uint64_t value = write ? *val : 0;

	if (!trap_lock(&m->lock))
		return MMIO_AGAIN;
	if (off >= GICD_IROUTER + 8 * 32 && off < GICD_IROUTER + 8 * VGIC_IRQS && size >= 4) {
		unsigned intid = (unsigned)(off - GICD_IROUTER) / 8;
		if (!write)
			value = off & 4 ? 0 : d->target[intid]; /* upper half: Aff3 */
		else if (!(off & 4))
			set_route(v, intid, value);
	} else if (off == GICD_CTLR && size == 4) {
		if (write)
			d->ctlr = (uint32_t)value & GICD_CTLR_ENABLES;
		value = d->ctlr | GICD_CTLR_FIXED;
	} else if (off == GICD_TYPER && !write) {
		value = GICD_TYPER_VALUE;
	} else if (off == GICD_IIDR && !write) {
		value = GIC_IIDR_VALUE;
	} else if (off == GICD_PIDR2 && !write) {
		value = GIC_PIDR2_V3;
	} else if (!irq_regs(v, off, size, write, &value, d->group, d->config, d->priority, 32,
			     VGIC_IRQS)) {
		value = 0; /* INTIDs below 32 (banked in the redistributors) and reserved space */
	}
	arch_spin_unlock(&m->lock);
	if (!write)
		*val = value;
	return MMIO_DONE; /* reserved registers read as zero and ignore writes, as on hardware */
}

enum mmio_result vgic_dist_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
				  uint64_t *val)
{
	if (!write && dist_read_unlocked(v, off, size, val))
		return MMIO_DONE;
	return dist_access_locked(v, off, size, write, val);
}

static uint64_t redist_typer(const struct partition *p, unsigned index)
{
	uint64_t typer = (uint64_t)index << 32 | (uint64_t)index << 8;

	if (index + 1 == p->cfg->vcpu_count)
		typer |= GICR_TYPER_LAST;
	return typer;
}

/* Under the machine's lock, given up at the core's timer as the distributor's. */
enum mmio_result vgic_redist_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
				    uint64_t *val)
{
	struct partition *p = v->partition;
	unsigned index = (unsigned)(off / GICR_STRIDE);
	uint64_t reg = off % GICR_STRIDE;

	if (index >= p->cfg->vcpu_count)
		return MMIO_UNCLAIMED;
	struct vmachine *m = vm(v);
	struct vgic_redist *rd = &m->redist[index];
	struct vcpu *owner = &p->vcpus[index];
	uint64_t value = write ? *val : 0;

	if (!trap_lock(&m->lock))
		return MMIO_AGAIN;
	if (reg >= GICR_FRAME) {
		/* The bit blocks act on the redistributor's own vCPU, whoever writes them. */
		if (!irq_regs(owner, reg - GICR_FRAME, size, write, &value, &rd->group, rd->config,
			      rd->priority, 0, 32))
			value = 0;
	} else if (reg == GICR_TYPER && size >= 4 && !write) {
		/* Whole, or its low word alone (processor number, Last), as a driver with 32-bit
		 * accessors reads it: one that found Last zero walked past the last frame. */
		value = size == 8 ? redist_typer(p, index) : (uint32_t)redist_typer(p, index);
	} else if (reg == GICR_TYPER + 4 && size == 4 && !write) {
		value = redist_typer(p, index) >> 32;
	} else if (reg == GICR_WAKER && size == 4) {
		if (write)
			rd->waker = (uint32_t)value & GICR_WAKER_SLEEP;
		value = rd->waker ? GICR_WAKER_SLEEP | GICR_WAKER_CHILDREN_ASLEEP : 0;
	} else if (reg == GICR_IIDR && !write) {
		value = GIC_IIDR_VALUE;
	} else if (reg == GICR_PIDR2 && !write) {
		value = GIC_PIDR2_V3;
	} else {
		value = 0; /* GICR_CTLR and the LPI registers: no LPIs */
	}
	arch_spin_unlock(&m->lock);
	if (!write)
		*val = value;
	return MMIO_DONE;
}

/* ICC_SGI1R_EL1: TargetList 15:0, Aff1 23:16, INTID 27:24, Aff2 39:32, IRM 40, RS 47:44,
 * Aff3 55:48. vCPU n has Aff0 = n and the rest zero, so TargetList bit b with range selector
 * RS names vCPU 16 * RS + b. */
#define SGI1R_TARGETS 0xfffful
#define SGI1R_AFF123 0xff00ff00ff0000ul
#define SGI1R_IRM (1ul << 40)
#define SGI1R_RS(value) ((unsigned)((value) >> 44) & 0xf)

void vgic_send_sgi(struct vcpu *v, uint64_t value)
{
	struct partition *p = v->partition;
	unsigned intid = (unsigned)(value >> 24) & 0xf;

	if (value & SGI1R_IRM) {
		for (unsigned i = 0; i < p->cfg->vcpu_count; i++)
			if (i != v->id)
				virq_inject(&p->vcpus[i], intid, false);
		return;
	}
	if (value & SGI1R_AFF123) /* nobody there */
		return;
	unsigned first = 16 * SGI1R_RS(value);
	for (uint64_t bits = value & SGI1R_TARGETS; bits; bits &= bits - 1) {
		unsigned i = first + (unsigned)__builtin_ctzll(bits);
		if (i < p->cfg->vcpu_count)
			virq_inject(&p->vcpus[i], intid, false);
	}
}

void vgic_reset_dist(struct partition *p)
{
	struct vmachine *m = vmachine_of(p);

	memset(&m->dist, 0, sizeof(m->dist));
	memset(m->redist, 0, sizeof(m->redist));
	for (unsigned i = 0; i < VMACHINE_MAX_VCPUS; i++)
		m->redist[i].waker = GICR_WAKER_SLEEP;
	/* Every SPI routes to vCPU 0 again: so must the physical ones the guest had moved. */
	for (uint32_t i = 0; i < p->cfg->irq_count; i++) {
		virq_set_owner(p->cfg->irqs[i], &p->vcpus[0]);
		gic_route_spi(p->cfg->irqs[i], plat_core_affinity(p->vcpus[0].core));
	}
}

/* A vCPU starts with every interrupt disabled except the SPIs the guest already enabled and
 * routed to it (a secondary vCPU restarted by PSCI finds the distributor as it left it). */
void vgic_reset_redist(struct vcpu *v)
{
	struct vmachine *m = vm(v);

	virq_enable_word(v, 0, m->redist[v->id].enabled);
	for (unsigned w = 1; w < VGIC_WORDS; w++) {
		uint32_t on = m->dist.enabled[w];
		for (uint32_t bits = on; bits; bits &= bits - 1) {
			unsigned n = (unsigned)__builtin_ctz(bits);
			if (m->dist.target[32 * w + n] != v->id)
				on &= ~(1u << n);
		}
		virq_enable_word(v, w, on);
	}
}
