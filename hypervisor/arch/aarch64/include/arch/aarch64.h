/* Private interfaces between the AArch64 files. */
#ifndef AARCH64_PRIVATE_H
#define AARCH64_PRIVATE_H

#include <stdint.h>
#include "arch/regs.h"

/* EL2 stage 1: identity map, devices below RAM, RAM cacheable. */
void aarch64_mmu_init(void);
void aarch64_mmu_enable_this_core(void);
void aarch64_mmu_enable(uint64_t ttbr, uint64_t tcr, uint64_t mair); /* start.S */

/* GICv3 physical interface as the hypervisor uses it. */
#define SGI_KICK 1u
#define PPI_VTIMER 27u
void gic_init_distributor(void);
void gic_init_this_core(unsigned core);
void gic_send_sgi(unsigned core, unsigned intid);
void gic_set_ppi_enabled(unsigned intid, int enabled);
/* Acknowledge and end every pending interrupt; returns how many there were. */
unsigned gic_drain(void);

/* PSCI through SMC to the firmware (QEMU's built-in PSCI). */
int64_t psci_cpu_on(uint64_t affinity, uint64_t entry, uint64_t context);
_Noreturn void psci_system_off(void);

/* Configure EL2 traps and stage 2 for the vCPU about to run on this core. */
void aarch64_vcpu_configure_el2(uint64_t stage2_root, unsigned vmid, unsigned vcpu_id);

_Noreturn void aarch64_resume_fresh_stack(void); /* vectors.S */
extern char aarch64_secondary_entry[];             /* start.S */

#endif
