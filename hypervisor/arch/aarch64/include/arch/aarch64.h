/* Private interfaces between the AArch64 files. */
#ifndef AARCH64_PRIVATE_H
#define AARCH64_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/regs.h"

/* EL2 stage 1: identity map, devices below RAM, RAM cacheable, W^X (mmu.c). */
void aarch64_mmu_init(void);
void aarch64_mmu_enable_this_core(void);
/* Probe this core's live EL2 map with AT and panic unless it is W^X as mmu.c intends; with
 * report, log one line saying what was checked. */
void aarch64_mmu_check(bool report);
void aarch64_mmu_enable(uint64_t ttbr, uint64_t tcr, uint64_t mair); /* start.S */

/* GICv3 physical interface as the hypervisor uses it. */
#define SGI_KICK 1u
#define PPI_MAINTENANCE 25u
#define PPI_HYP_TIMER 26u
#define PPI_VTIMER 27u

/* CPTR_EL2 (HCR_EL2.E2H 0), the value every vCPU runs with: the architectural RES1 bits (13:12,
 * 9, 7:0) and the traps Bulkhead always sets. TZ (8) traps SVE, whose state is not switched
 * (without SVE, as on the cortex-a53, the bit is RES1 anyway); TTA (20) traps the trace
 * registers and TAM (30) the activity monitors: neither is virtualized (on the cortex-a53
 * neither exists, and their encodings are UNDEFINED in the guest before any trap). The name
 * is kept for the vCPU switch code that uses it; TFP is added there while FP is not loaded. */
#define CPTR_EL2_ARCH_RES1 0x32fful
#define CPTR_TZ (1ul << 8)
#define CPTR_TFP (1ul << 10)
#define CPTR_TTA (1ul << 20)
#define CPTR_TAM (1ul << 30)
#define CPTR_EL2_RES1 (CPTR_EL2_ARCH_RES1 | CPTR_TZ | CPTR_TTA | CPTR_TAM)
void gic_init_distributor(void);
void gic_init_this_core(unsigned core);
void gic_send_sgi(unsigned core, unsigned intid);
void gic_set_spi_enabled(unsigned intid, int enabled);
void gic_route_spi(unsigned intid, uint64_t affinity);
/* Acknowledge the highest pending interrupt: its INTID, or >= 1020 if none. */
unsigned gic_ack(void);
/* End an interrupt the hypervisor handled: drop the priority and deactivate it. */
void gic_end(unsigned intid);
/* Drop the priority only: the interrupt stays active until its guest ends the virtual one
 * (hardware-linked list register), so it cannot fire again meanwhile. */
void gic_drop(unsigned intid);
void gic_set_ppi_active(unsigned intid, int active); /* this core's redistributor */
bool gic_ppi_pending(unsigned intid);                /* this core's redistributor */
void gic_deactivate_spi(unsigned intid);
/* Handle `first` (already acknowledged, or >= 1020 for none), then every other pending
 * physical interrupt (at EL2, with interrupts masked). */
void aarch64_handle_irqs(unsigned first);
bool aarch64_timer_hands_back(void);
/* An interrupt from a guest that vectors.S's fast path did not finish, already taken. */
void aarch64_guest_irq(unsigned intid);

/* Virtual CPU interface (vgic.c). */
struct arch_vcpu_ctx;
struct vcpu;
void vgic_init_core(void);
void vgic_save(struct arch_vcpu_ctx *a); /* ... and leaves every list register empty */
void vgic_clear(void);                   /* empties every list register */
void vgic_load(const struct arch_vcpu_ctx *a);
void vgic_reset(struct arch_vcpu_ctx *a);
void vgic_maintenance(void);
bool vgic_holds_forwarded(const struct arch_vcpu_ctx *a, unsigned intid);
/* The physical INTID a saved list register holds in flight, hardware-linked, or 0. */
unsigned vgic_lr_forwarded(uint64_t lr);
/* ICH_ELRSR_EL2 when every list register is empty (vectors.S reads it too). */
extern uint64_t vgic_lrs_all_empty;
/* The same if one active-priority register is all a switch moves, else none (el1_ctx.S). */
extern uint64_t vgic_plain_lrs;

/* arch_vcpu_give_back's way (el1_ctx.S) for anything but its common case. */
void aarch64_give_back_slow(struct vcpu *v, struct vcpu *home);
/* The guest touched FP/SIMD while its state was not loaded: load it (lazy switch). */
void aarch64_fp_trap(struct vcpu *v);
/* FP/SIMD registers (fpsimd.S). */
void fpsimd_save(__uint128_t *regs, uint64_t *fpcr, uint64_t *fpsr);
void fpsimd_load(const __uint128_t *regs, uint64_t fpcr, uint64_t fpsr);

/* PSCI through SMC to the firmware (QEMU's built-in PSCI). */
int64_t psci_cpu_on(uint64_t affinity, uint64_t entry, uint64_t context);
_Noreturn void psci_system_off(void);

/* EL2 controls shared by every vCPU, once per core. */
void aarch64_el2_init_core(void);
/* arch_sync_loaded_image in two halves, for work done in steps (vflash.c): clean [p, p + len)
 * to memory, then, once the last step is done, invalidate every instruction cache. */
void aarch64_clean_dcache(const void *p, size_t len);
void aarch64_sync_icache(void);
/* VTTBR_EL2 value for a partition. */
uint64_t aarch64_vttbr(uint64_t stage2_root, unsigned vmid);

_Noreturn void aarch64_resume_fresh_stack(void); /* vectors.S */
extern char aarch64_secondary_entry[];             /* start.S */

#endif
