/* lockstorm: keeps its partition's virtual-machine lock (m->lock,
 * hypervisor/arch/aarch64/vgic_dist.c) busy from several cores with GICD_ISPENDR writes (each one
 * makes up to 32 virtual interrupts pending under the lock), while its CPU 0 aims one such write
 * at each of the victim's leads: the windows of partitions/board/include/storm.h
 * (tests/system/test_lockwait.py). */
#define PROBE_NAME "lockstorm"
#include "smp_guest.h"

#define GICD 0x08000000ul
#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define GICD_IROUTER 0x6000
#define WORDS 9u            /* INTIDs 0-287: word 0 is the redistributor's */
/* CPU c writes only the two words of SPIs routed to itself, 1 + 2c and 2 + 2c: an injection
 * into the vCPU of the writing core kicks no other core. */
#define OWN_WORD(cpu, k) (1u + 2u * (cpu) + (unsigned)((k) & 1))

static void storm_prepare(void)
{
	/* Every SPI stays disabled, routed to the CPU that writes its word (OWN_WORD): a write
	 * makes 32 of them pending under the lock all the same, and no other core is kicked.
	 * Routed to CPU 0, each of the others' writes kicked CPU 0's core (into its list
	 * registers), a load on the victim's core that is not the lock's; and a CPU with enabled
	 * interrupts pending that it never takes (PSTATE.I masked) returns from each WFI at once
	 * and keeps its core busy (under -icount that core ran whole turns of QEMU's round robin:
	 * the victim 300 000 ticks late). */
	for (unsigned i = 32; i < 32 * WORDS; i++)
		mmio_wr(GICD + GICD_IROUTER + 8 * i, (i / 32 - 1) / 2);
}

static void storm_step(unsigned cpu, uint64_t k)
{
	unsigned w = OWN_WORD(cpu, k);

	mmio_wr(GICD + GICD_ISPENDR + 4 * w, ~0u);
	mmio_wr(GICD + GICD_ICPENDR + 4 * w, ~0u);
}

static void aimed_step(uint64_t k)
{
	mmio_wr(GICD + GICD_ISPENDR + 4 * OWN_WORD(0, k), ~0u);
}

static void aimed_after(uint64_t k)
{
	mmio_wr(GICD + GICD_ICPENDR + 4 * OWN_WORD(0, k), ~0u);
}

static void storm_before_report(void)
{
}

#include "storm.h"
