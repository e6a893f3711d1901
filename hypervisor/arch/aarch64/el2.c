/* EL2 controls for running a partition: what traps, and which stage-2 tables apply. */
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "config_tables.h"

#define HCR_VM (1ul << 0)
#define HCR_SWIO (1ul << 1)
#define HCR_FMO (1ul << 3)
#define HCR_IMO (1ul << 4)
#define HCR_AMO (1ul << 5)
#define HCR_FB (1ul << 9)
#define HCR_BSU_INNER (1ul << 10)
#define HCR_TWI (1ul << 13)   /* WFI traps: a waiting vCPU gives its core away */
#define HCR_TSC (1ul << 19)   /* SMC traps: guests never reach the firmware */
#define HCR_TIDCP (1ul << 20) /* implementation-defined registers */
#define HCR_TACR (1ul << 21)  /* ACTLR_EL1 */
#define HCR_TSW (1ul << 22)   /* cache maintenance by set/way */
#define HCR_RW (1ul << 31)    /* EL1 is AArch64 */

#define MDCR_TPMCR (1ul << 5) /* PMU control */
#define MDCR_TPM (1ul << 6)   /* PMU registers */
#define MDCR_TDA (1ul << 9)   /* debug registers */
#define MDCR_TDOSA (1ul << 10)
#define MDCR_TDRA (1ul << 11)

#define CNTHCTL_EL1PCTEN (1ul << 0) /* EL1 may read the physical counter, not its timer */

/* VTCR_EL2: 4 GiB IPA (T0SZ 32), level-1 start, inner-shareable write-back walks,
 * 4 KiB granule, 40-bit PA. */
/* T0SZ from the guest address width the tool checks descriptions against (config_tables.h). */
#define VTCR_VALUE (0x80023540ul | (64u - BH_IPA_BITS))
_Static_assert(BH_IPA_BITS >= 31 && BH_IPA_BITS <= 39, "a one-page level-1 stage-2 root");

void aarch64_el2_init_core(void)
{
	uint64_t pmcr_n = (read_pmcr_el0() >> 11) & 0x1f;

	write_hcr_el2(HCR_VM | HCR_SWIO | HCR_FMO | HCR_IMO | HCR_AMO | HCR_FB | HCR_BSU_INNER |
		      HCR_TWI | HCR_TSC | HCR_TIDCP | HCR_TACR | HCR_TSW | HCR_RW);
	write_mdcr_el2(pmcr_n | MDCR_TPMCR | MDCR_TPM | MDCR_TDA | MDCR_TDOSA | MDCR_TDRA);
	write_cptr_el2(CPTR_EL2_RES1); /* FP/SIMD: arch_vcpu_load sets TFP lazily */
	write_cnthctl_el2(CNTHCTL_EL1PCTEN);
	write_cntvoff_el2(0);
	write_vpidr_el2(read_midr_el1());
	write_vtcr_el2(VTCR_VALUE);
	isb();
	__asm__ volatile("tlbi alle1\n dsb nsh\n isb" ::: "memory");
}

void arch_core_trap_guest_wait(bool trap)
{
	uint64_t hcr = read_hcr_el2();

	write_hcr_el2(trap ? hcr | HCR_TWI : hcr & ~HCR_TWI);
	isb();
}

uint64_t aarch64_vttbr(uint64_t stage2_root, unsigned vmid)
{
	return stage2_root | (uint64_t)vmid << 48;
}
