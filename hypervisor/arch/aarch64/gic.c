/* GICv3 as the hypervisor itself uses it: SGIs to kick other cores, and the virtual timer's
 * PPI as a wake-up source while a vCPU idles. Partitions get no physical interrupts yet. */
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "panic.h"
#include "percpu.h"
#include "platform.h"

#define GICD_CTLR 0x0000
#define GICD_CTLR_ARE (1u << 4)
#define GICD_CTLR_GRP1 (1u << 1)
#define GICD_CTLR_RWP (1u << 31)
#define GICD_IGROUPR 0x0080
#define GICD_ISENABLER 0x0100
#define GICD_ICENABLER 0x0180
#define GICD_ICACTIVER 0x0380
#define GICD_IPRIORITYR 0x0400
#define GICD_IROUTER 0x6000

#define GICR_TYPER 0x0008
#define GICR_TYPER_LAST (1ul << 4)
#define GICR_WAKER 0x0014
#define GICR_WAKER_SLEEP (1u << 1)
#define GICR_WAKER_ASLEEP (1u << 2)
#define GICR_SGI 0x10000 /* SGI_base frame */
#define GICR_IGROUPR0 (GICR_SGI + 0x0080)
#define GICR_ISENABLER0 (GICR_SGI + 0x0100)
#define GICR_ICENABLER0 (GICR_SGI + 0x0180)
#define GICR_ISPENDR0 (GICR_SGI + 0x0200)
#define GICR_ISACTIVER0 (GICR_SGI + 0x0300)
#define GICR_ICACTIVER0 (GICR_SGI + 0x0380)
#define ICC_CTLR_EOIMODE (1ul << 1)
#define GICR_IPRIORITYR (GICR_SGI + 0x0400)

#define ICC_SRE_SRE (1ul << 0)
#define ICC_SRE_ENABLE (1ul << 3)
#define INTID_SPURIOUS 1020u
#define DRAIN_MAX 64u

static uintptr_t redist[BH_MAX_CORES];

static volatile uint32_t *reg32(uintptr_t base, unsigned off)
{
	return (volatile uint32_t *)(base + off);
}

static void wait_bit_clear(volatile uint32_t *r, uint32_t bit)
{
	for (unsigned i = 0; *r & bit; i++) {
		if (i > 1000000)
			bh_panic("GIC register at %p stuck with bit 0x%x set", (void *)r, bit);
		__asm__ volatile("yield");
	}
}

void gic_init_distributor(void)
{
	*reg32(PLAT_GICD_BASE, GICD_CTLR) = GICD_CTLR_ARE | GICD_CTLR_GRP1;
	wait_bit_clear(reg32(PLAT_GICD_BASE, GICD_CTLR), GICD_CTLR_RWP);
}

static uintptr_t find_redistributor(uint64_t mpidr)
{
	uint64_t aff = (mpidr & 0xffffff) | ((mpidr >> 8) & 0xff000000);

	for (unsigned i = 0; i < PLAT_GICR_MAX; i++) {
		uintptr_t base = PLAT_GICR_BASE + i * PLAT_GICR_STRIDE;
		uint64_t typer = *(volatile uint64_t *)(base + GICR_TYPER);
		if ((typer >> 32) == aff)
			return base;
		if (typer & GICR_TYPER_LAST)
			break;
	}
	bh_panic("no GIC redistributor for MPIDR 0x%lx", mpidr);
}

void gic_init_this_core(unsigned core)
{
	uintptr_t rd = find_redistributor(read_mpidr_el1());

	redist[core] = rd;
	*reg32(rd, GICR_WAKER) &= ~GICR_WAKER_SLEEP;
	wait_bit_clear(reg32(rd, GICR_WAKER), GICR_WAKER_ASLEEP);
	*reg32(rd, GICR_IGROUPR0) = 0xffffffffu;
	for (unsigned i = 0; i < 8; i++)
		*reg32(rd, GICR_IPRIORITYR + 4 * i) = 0x80808080u;
	*reg32(rd, GICR_ICENABLER0) = 0xffffffffu;
	*reg32(rd, GICR_ISENABLER0) = 1u << SGI_KICK | 1u << PPI_MAINTENANCE | 1u << PPI_HYP_TIMER |
				      1u << PPI_VTIMER;
	write_icc_sre_el2(ICC_SRE_SRE | ICC_SRE_ENABLE);
	isb();
	write_icc_pmr_el1(0xff);
	write_icc_bpr1_el1(0);
	/* EOI only drops the priority; deactivation is separate, so a forwarded interrupt can stay
	 * active until its guest ends it (hardware-linked list registers). */
	write_icc_ctlr_el1(ICC_CTLR_EOIMODE);
	write_icc_igrpen1_el1(1);
	isb();
}

void gic_send_sgi(unsigned core, unsigned intid)
{
	uint64_t aff = plat_core_affinity(core);
	uint64_t target = 1ul << (aff & 0xf);
	uint64_t aff1 = (aff >> 8) & 0xff;

	write_icc_sgi1r_el1((uint64_t)intid << 24 | aff1 << 16 | target);
	isb();
}

void gic_set_spi_enabled(unsigned intid, int enabled)
{
	unsigned off = (enabled ? GICD_ISENABLER : GICD_ICENABLER) + 4 * (intid / 32);

	*reg32(PLAT_GICD_BASE, off) = 1u << (intid % 32);
	if (!enabled)
		wait_bit_clear(reg32(PLAT_GICD_BASE, GICD_CTLR), GICD_CTLR_RWP);
}

void gic_route_spi(unsigned intid, uint64_t affinity)
{
	volatile uint8_t *prio = (volatile uint8_t *)(PLAT_GICD_BASE + GICD_IPRIORITYR + intid);

	*reg32(PLAT_GICD_BASE, GICD_IGROUPR + 4 * (intid / 32)) |= 1u << (intid % 32);
	*prio = 0x80;
	*(volatile uint64_t *)(PLAT_GICD_BASE + GICD_IROUTER + 8 * intid) = affinity;
}

unsigned gic_ack(void)
{
	return (unsigned)(read_icc_iar1_el1() & 0xffffff);
}

void gic_end(unsigned intid)
{
	write_icc_eoir1_el1(intid);
	write_icc_dir_el1(intid);
	isb();
}

void gic_drop(unsigned intid)
{
	write_icc_eoir1_el1(intid);
	isb();
}

bool gic_ppi_pending(unsigned intid)
{
	return *reg32(redist[this_cpu()->core], GICR_ISPENDR0) & (1u << intid);
}

void gic_set_ppi_active(unsigned intid, int active)
{
	uintptr_t rd = redist[this_cpu()->core];

	*reg32(rd, active ? GICR_ISACTIVER0 : GICR_ICACTIVER0) = 1u << intid;
}

void gic_deactivate_spi(unsigned intid)
{
	*reg32(PLAT_GICD_BASE, GICD_ICACTIVER + 4 * (intid / 32)) = 1u << (intid % 32);
}
