/* The architecture interface: everything core/ needs from an architecture, nothing more.
 * Implemented by arch/aarch64 on target and arch/fake on the host for unit tests. */
#ifndef BULKHEAD_ARCH_H
#define BULKHEAD_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/regs.h"
#include "arch/this_cpu.h"

struct partition;
struct vcpu;
struct percpu;

/* Time: the system counter shared by all cores. */
uint64_t arch_counter_read(void);
uint64_t arch_counter_freq(void);

/* Console hardware: one character to the physical UART. */
void arch_console_putc(char c);

/* Locks for data shared between cores. Waiting executes WFE so -icount never hangs. */
struct spinlock { volatile uint32_t locked; };
void arch_spin_lock(struct spinlock *l);
void arch_spin_unlock(struct spinlock *l);
/* One step of a cross-core wait loop (YIELD/WFE). */
void arch_cpu_relax(void);

/* Guest memory. */
void *arch_phys_to_ptr(uint64_t pa);
bool arch_guest_va_to_ipa(uint64_t va, bool write, uint64_t *ipa);
void arch_sync_loaded_image(void *p, size_t len); /* clean caches after writing guest code */

/* Stage-2 address space of a partition, built once at boot from its areas. */
void arch_stage2_build(struct partition *p);

/* vCPU life cycle, always on the core that owns the vCPU. */
void arch_vcpu_reset(struct vcpu *v, uint64_t entry, uint64_t a0, uint64_t a1, uint64_t a2);
_Noreturn void arch_vcpu_resume(struct vcpu *v);
/* Skip the instruction that trapped (after an emulated or ignored access). */
void arch_skip_instruction(struct arch_regs *r);
/* Wait with a masked core until the vCPU's virtual timer fires or another core asks for
 * attention; returns true if the timer fired. */
bool arch_wait_virtual_timer(void);
/* Idle with a masked core until an interrupt is pending; acknowledges it. */
void arch_wait_for_interrupt(void);

/* Cross-core requests: interrupt another core so it looks at its percpu.request. */
void arch_kick_core(unsigned core);

/* Platform power. */
_Noreturn void arch_system_off(void);
/* Print the trapping context; used by panics. */
void arch_dump_regs(const struct arch_regs *r);

#endif
