/* A PL061 GPIO controller per unmodified guest, whose eight input lines are hypervisor events:
 * line 0 pulses when one of the partition's ports becomes ready, line 1 when a shared-memory
 * doorbell rings (docs/ports.md). Linux's own gpio-pl061 driver and GPIO character device turn
 * the pulses into events a user-space program waits for: no custom kernel module. Lines are
 * edge-triggered only (a pulse is a rising and a falling edge); they always read as 0. */
#include "arch/vmachine.h"
#include "partition.h"

#define GPIO_DATA_END 0x400
#define GPIO_DIR 0x400
#define GPIO_IS 0x404
#define GPIO_IBE 0x408
#define GPIO_IEV 0x40c
#define GPIO_IE 0x410
#define GPIO_RIS 0x414
#define GPIO_MIS 0x418
#define GPIO_IC 0x41c
#define GPIO_AFSEL 0x420
#define GPIO_ID 0xfe0

static const uint8_t pl061_id[8] = { 0x61, 0x10, 0x04, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

static void update_line(struct partition *p, struct vgpio *g)
{
	if (g->ris & g->ie)
		vgic_raise_spi(p, p->cfg->vmachine->gpio_intid);
}

static uint32_t read_reg(const struct vgpio *g, uint64_t off)
{
	switch (off) {
	case GPIO_DIR: return g->dir;
	case GPIO_IS: return g->is;
	case GPIO_IBE: return g->ibe;
	case GPIO_IEV: return g->iev;
	case GPIO_IE: return g->ie;
	case GPIO_RIS: return g->ris;
	case GPIO_MIS: return g->ris & g->ie;
	}
	if (off >= GPIO_ID && off < GPIO_ID + 32)
		return pl061_id[(off - GPIO_ID) / 4];
	return 0; /* GPIODATA (every line reads low), AFSEL */
}

static void write_reg(struct vgpio *g, uint64_t off, uint32_t val)
{
	val &= 0xff;
	switch (off) {
	case GPIO_DIR: g->dir = val; break;
	case GPIO_IS: g->is = val; break;
	case GPIO_IBE: g->ibe = val; break;
	case GPIO_IEV: g->iev = val; break;
	case GPIO_IE: g->ie = val; break;
	case GPIO_IC: g->ris &= ~val; break;
	}
}

bool vgpio_access(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val)
{
	struct partition *p = v->partition;
	struct vgpio *g = &vmachine_of(p)->gpio;

	if (size > 4 || (off & 3))
		return false;
	arch_spin_lock(&g->lock);
	if (write) {
		write_reg(g, off, (uint32_t)*val);
		update_line(p, g);
	} else {
		*val = read_reg(g, off);
	}
	arch_spin_unlock(&g->lock);
	return true;
}

void arch_vmachine_event(struct partition *p, unsigned line)
{
	struct vmachine *m = vmachine_of(p);

	if (!m || line >= 8)
		return;
	struct vgpio *g = &m->gpio;
	uint32_t bit = 1u << line;
	arch_spin_lock(&g->lock);
	/* A pulse: an edge-sensitive line sees its rising edge (IEV set), its falling edge
	 * (IEV clear), or both (IBE). */
	if (!(g->is & bit))
		g->ris |= bit;
	update_line(p, g);
	arch_spin_unlock(&g->lock);
}

void vgpio_reset(struct partition *p)
{
	struct vgpio *g = &vmachine_of(p)->gpio;

	arch_spin_lock(&g->lock);
	g->dir = g->is = g->ibe = g->iev = g->ie = g->ris = 0;
	arch_spin_unlock(&g->lock);
}
