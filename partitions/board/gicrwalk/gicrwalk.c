/* gicrwalk: a firmware image for QEMU's virt machine (GICv3) that finds its redistributors as a
 * driver using 32-bit accessors does: frame after frame, reading GICR_TYPER as two words, until
 * the one whose Last bit is set. It prints each frame's processor number, Last bit and affinity,
 * and checks the 64-bit read of the same register against the two words, so that QEMU's own GIC
 * (-bios, two CPUs) and a Bulkhead board partition with two vCPUs print the same lines
 * (tests/system/test_emuatk.py). PLPIS and the other LPI fields are not printed: the partition's
 * GIC has no LPIs, QEMU's has. */
#define PROBE_NAME "gicrwalk"
#include "fwprobe.h"

#define GICR 0x080a0000ul
#define GICR_STRIDE 0x20000ul
#define GICR_TYPER 0x8
#define TYPER_LAST (1u << 4)
#define MAX_FRAMES 8u

static uint64_t mmio_rd64(unsigned long addr)
{
	uint64_t v;
	__asm__ volatile("ldr %0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

int main(void)
{
	unsigned n;

	puts_("gicrwalk: start\n");
	for (n = 0; n < MAX_FRAMES; n++) {
		unsigned long typer = GICR + n * GICR_STRIDE + GICR_TYPER;
		uint32_t lo = mmio_rd(typer), hi = mmio_rd(typer + 4);
		uint64_t whole = mmio_rd64(typer);
		show("frame", n);
		show("  processor number", (lo >> 8) & 0xffff);
		show("  last", !!(lo & TYPER_LAST));
		show("  affinity", hi);
		show("  64-bit read is the two words", whole == ((uint64_t)hi << 32 | lo));
		if (lo & TYPER_LAST)
			break;
	}
	show("redistributors", n + 1);
	puts_("gicrwalk: done\n");
	return 0;
}
