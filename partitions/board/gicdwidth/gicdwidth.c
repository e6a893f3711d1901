/* gicdwidth: a firmware image for QEMU's virt machine (GICv3) that writes and reads back the
 * distributor's and its redistributor's per-interrupt registers at the widths and offsets a
 * driver may use (word, byte, halves of 64-bit registers) and prints what it reads, so that QEMU's
 * own GIC (-bios) and a Bulkhead board partition's print the same lines
 * (tests/system/test_emuatk.py). The active state is left out: the partition's distributor does
 * not track it (docs/architecture.md). */
#define PROBE_NAME "gicdwidth"
#include "fwprobe.h"

#define GICD 0x08000000ul
#define GICR_SGI (0x080a0000ul + 0x10000ul)
#define SPI 40u /* an SPI no device of the board uses */

static uint8_t rd8(unsigned long a) { return *(volatile uint8_t *)a; }
static void wr8(unsigned long a, uint8_t v) { *(volatile uint8_t *)a = v; }

static uint64_t rd64(unsigned long a)
{
	uint64_t v;
	__asm__ volatile("ldr %0, [%1]" : "=r"(v) : "r"(a) : "memory");
	return v;
}

static void wr64(unsigned long a, uint64_t v)
{
	__asm__ volatile("str %0, [%1]" : : "r"(v), "r"(a) : "memory");
}

int main(void)
{
	puts_("gicdwidth: start\n");
	show("gicd_ctlr", mmio_rd(GICD + 0x0));
	mmio_wr(GICD + 0x0, 0x12); /* ARE, EnableGrp1 */
	show("gicd_ctlr after enabling group 1", mmio_rd(GICD + 0x0) & 0x13);

	/* Redistributor of CPU 0, SGI frame: groups, enables, priorities, configuration. */
	show("gicr_icfgr0 (sgis)", mmio_rd(GICR_SGI + 0xc00));
	mmio_wr(GICR_SGI + 0xc00, 0);
	show("gicr_icfgr0 after writing 0", mmio_rd(GICR_SGI + 0xc00));
	mmio_wr(GICR_SGI + 0x80, 0xffffffffu);
	show("gicr_igroupr0", mmio_rd(GICR_SGI + 0x80));
	mmio_wr(GICR_SGI + 0x100, 0x0000ffffu);
	show("gicr_isenabler0", mmio_rd(GICR_SGI + 0x100));
	mmio_wr(GICR_SGI + 0x180, 0x0000ff00u);
	show("gicr_icenabler0 after clearing 8-15", mmio_rd(GICR_SGI + 0x180));
	mmio_wr(GICR_SGI + 0x180, 0xffffffffu);
	wr8(GICR_SGI + 0x400 + 3, 0xa5);
	show("gicr_ipriorityr0 after a byte write", mmio_rd(GICR_SGI + 0x400));
	show("gicr_ipriorityr byte 3", rd8(GICR_SGI + 0x400 + 3));
	mmio_wr(GICR_SGI + 0x41c, 0x80604020u);
	show("gicr_ipriorityr7 (ppis 28-31)", mmio_rd(GICR_SGI + 0x41c));

	/* Distributor, one SPI: group, enable, pending, priority, configuration, route. */
	unsigned long word = 4 * (SPI / 32), bit = 1u << (SPI % 32);
	mmio_wr(GICD + 0x80 + word, bit);
	show("gicd_igroupr1", mmio_rd(GICD + 0x80 + word));
	mmio_wr(GICD + 0x100 + word, bit);
	show("gicd_isenabler1", mmio_rd(GICD + 0x100 + word));
	mmio_wr(GICD + 0x180 + word, bit);
	show("gicd_isenabler1 after clearing", mmio_rd(GICD + 0x100 + word));
	wr8(GICD + 0x400 + SPI, 0x5a);
	show("gicd_ipriorityr byte", rd8(GICD + 0x400 + SPI));
	show("gicd_ipriorityr word", mmio_rd(GICD + 0x400 + (SPI & ~3u)));
	mmio_wr(GICD + 0xc00 + 4 * (SPI / 16), 0xffffffffu);
	show("gicd_icfgr all written", mmio_rd(GICD + 0xc00 + 4 * (SPI / 16)));
	mmio_wr(GICD + 0xc00 + 4 * (SPI / 16), 0);
	mmio_wr(GICD + 0x200 + word, bit); /* disabled, so it stays pending */
	show("gicd_ispendr1", mmio_rd(GICD + 0x200 + word) & bit);
	mmio_wr(GICD + 0x280 + word, bit);
	show("gicd_ispendr1 after clearing", mmio_rd(GICD + 0x200 + word) & bit);
	unsigned long router = GICD + 0x6000 + 8 * SPI;
	show("gicd_irouter low", mmio_rd(router));
	show("gicd_irouter high", mmio_rd(router + 4));
	wr64(router, 1); /* Aff0 1: the second CPU */
	show("gicd_irouter after a 64-bit write, low", (uint32_t)rd64(router));
	mmio_wr(router, 0);
	show("gicd_irouter after a 32-bit write of 0, low", mmio_rd(router));
	mmio_wr(router, 1);
	show("gicd_irouter after a 32-bit write of 1, low", mmio_rd(router));
	mmio_wr(router, 0);
	show("sgi and ppi words of the distributor: isenabler0", mmio_rd(GICD + 0x100));
	show("ipriorityr of an sgi in the distributor", mmio_rd(GICD + 0x400));
	puts_("gicdwidth: done\n");
	return 0;
}
