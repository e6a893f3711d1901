/* What the board guests that run on several CPUs of their own share (lockstorm, flashstorm,
 * kickwait, kickstorm; their entry: smp_start.S): the counter, a masked virtual timer kept near
 * (short turns under -icount: TURN_TICKS, which a guest may define first), a CPU's GIC
 * interface, WFI on the virtual timer, decimal output, PSCI by SMC. */
#ifndef BOARD_SMP_GUEST_H
#define BOARD_SMP_GUEST_H

#include <stdint.h>
#include "fwprobe.h"

#ifndef TURN_TICKS
#define TURN_TICKS 16ull /* a masked virtual timer this far ahead: short turns under -icount */
#endif

#define SYSREG_R(name) ({ uint64_t v_; __asm__ volatile("mrs %0, " name : "=r"(v_)); v_; })
#define SYSREG_W(name, v) __asm__ volatile("msr " name ", %0" :: "r"((uint64_t)(v)))
#define SMP_GICR 0x080a0000ul
#define SMP_GICR_STRIDE 0x20000ul
#define VTIMER_INTID 27u
#define PSCI_CPU_ON 0xc4000003ul
#define ICC_IAR1 "S3_0_C12_C12_0"
#define ICC_EOIR1 "S3_0_C12_C12_1"
#define ICC_SGI1R "S3_0_C12_C11_5"

extern uint64_t smc_call(uint64_t fn, uint64_t target, uint64_t entry, uint64_t context);
void cpu_main(unsigned cpu); /* a started CPU's C entry (smp_start.S) */

static inline uint64_t now(void)
{
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static inline void keep_turns_short(uint64_t n)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1"
			 : : "r"(n + TURN_TICKS), "r"(3ul) : "memory");
}

static inline void spin_until(uint64_t t)
{
	for (uint64_t n; (n = now()) < t;)
		keep_turns_short(n);
}

/* The CPU interface on, the PPIs/SGIs in `mask` enabled in group 1 (PSTATE.I stays masked:
 * a pending one ends WFI and is acknowledged by polling). */
static inline void gic_init_cpu(unsigned cpu, uint32_t mask)
{
	uint64_t rd = SMP_GICR + cpu * SMP_GICR_STRIDE, sgi = rd + 0x10000;

	mmio_wr(rd + 0x14, mmio_rd(rd + 0x14) & ~2u); /* GICR_WAKER.ProcessorSleep */
	mmio_wr(sgi + 0x80, mmio_rd(sgi + 0x80) | mask); /* GICR_IGROUPR0 */
	for (unsigned i = 0; i < 32; i++)
		if (mask & (1u << i))
			mmio_wr(sgi + 0x400 + (i & ~3u),
				mmio_rd(sgi + 0x400 + (i & ~3u)) | 0xa0u << (8 * (i & 3)));
	mmio_wr(sgi + 0x100, mask); /* GICR_ISENABLER0 */
	SYSREG_W("S3_0_C12_C12_5", SYSREG_R("S3_0_C12_C12_5") | 1); /* ICC_SRE_EL1.SRE */
	__asm__ volatile("isb");
	SYSREG_W("S3_0_C4_C6_0", 0xff); /* ICC_PMR_EL1 */
	SYSREG_W("S3_0_C12_C12_7", 1);  /* ICC_IGRPEN1_EL1 */
	__asm__ volatile("isb");
}

/* WFI on the virtual timer until t (its interrupt acknowledged by polling). */
static inline void sleep_until(uint64_t t)
{
	while (now() < t) {
		__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb\n\twfi"
				 : : "r"(t), "r"(1ul) : "memory");
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	uint32_t intid = (uint32_t)SYSREG_R(ICC_IAR1);
	if (intid < 1020)
		SYSREG_W(ICC_EOIR1, intid);
}

#endif
