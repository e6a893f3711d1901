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
struct bh_system_cfg;

/* Time: the system counter shared by all cores. */
uint64_t arch_counter_read(void);
uint64_t arch_counter_freq(void);

/* Console hardware: one character to the physical UART; received bytes go to console_input. */
void arch_console_putc(char c);
void arch_console_input_enable(void);

/* Ticket locks for data shared between cores: FIFO, so no core waits behind another that
 * takes the lock again and again. Waiting executes WFE so -icount never hangs. */
struct spinlock { volatile uint32_t word; }; /* owner in bits 15:0, next ticket in 31:16 */
void arch_spin_lock(struct spinlock *l);
bool arch_spin_trylock(struct spinlock *l);
/* l taken, true; or false, nothing taken, if it is still held when the counter reaches
 * give_up_at or a physical interrupt is pending (TIME_NEVER: arch_spin_lock). For a trap on a
 * core whose instant is near: it waits for other cores' holders only until the core's timer
 * or a kick, then leaves the trapped access to run again (core_give_way_at). Not fair: it
 * takes the lock only when it is free. */
bool arch_spin_lock_before(struct spinlock *l, uint64_t give_up_at);
void arch_spin_unlock(struct spinlock *l);
/* One step of a cross-core wait loop (YIELD/WFE). */
void arch_cpu_relax(void);

/* Guest memory. */
void *arch_phys_to_ptr(uint64_t pa);
bool arch_guest_va_to_ipa(uint64_t va, bool write, uint64_t *ipa);
void arch_sync_loaded_image(void *p, size_t len); /* clean caches after writing guest code */

/* Stage-2 address space of a partition, built once at boot from its areas; arch_stage2_init
 * first takes the system's table pool and block limit, forgetting any tables built before. */
void arch_stage2_init(const struct bh_system_cfg *sys);
void arch_stage2_build(struct partition *p);
/* The partition (re)starts: put its emulated machine, if it has one, in its reset state. */
void arch_partition_reset(struct partition *p);
/* The partition restarts: drop its stage-2 and stage-1 translations from every core's TLB. */
void arch_stage2_flush(struct partition *p);
/* Event line `line` of the partition's emulated machine pulses (0: a port became ready,
 * 1: a doorbell rang); nothing for partitions without one. */
void arch_vmachine_event(struct partition *p, unsigned line);
/* A byte of console input for the partition's emulated UART. */
bool arch_vuart_receive(struct partition *p, char c); /* false: no room, dropped */

/* vCPU context, always handled by the core that owns the vCPU. */
void arch_vcpu_reset(struct vcpu *v, uint64_t entry, uint64_t a0, uint64_t a1, uint64_t a2,
		     uint64_t a3);
/* registers -> prev->arch (prev: the loaded vCPU, or NULL), then next->arch -> registers
 * (next NULL: nothing is loaded after prev) */
void arch_vcpu_switch(struct vcpu *prev, struct vcpu *next);
/* Best-effort v, still loaded, leaves this core for any other: what of it the switch does not
 * save (FP/SIMD registers, moved lazily) goes to v->arch now, and the registers get back the
 * FP/SIMD state of the core's own vCPU that v displaced, if any. */
void arch_vcpu_detach(struct vcpu *v);
/* Best-effort v, loaded, leaves this core idle: detached (arch_vcpu_detach) and switched out
 * for `home`, the core's own vCPU that was loaded when v came (or for nothing: NULL). */
void arch_vcpu_give_back(struct vcpu *v, struct vcpu *home);
void arch_vcpu_load(struct vcpu *v); /* v->arch -> registers, stage 2 and GIC included */
/* v stops (on its core, loaded or not): its virtual timer is switched off, and the interrupts
 * its list registers held are withdrawn, forwarded physical ones ended; FP state dropped. */
void arch_vcpu_release(struct vcpu *v);
/* Enter the current vCPU (percpu.regs) from any call depth, on a fresh stack. */
_Noreturn void arch_vcpu_resume(void);
/* Skip the instruction that trapped (after an emulated or ignored access). */
void arch_skip_instruction(struct arch_regs *r);
/* The hypercall this core's vCPU is making, r its live frame (percpu.regs), is to be made again:
 * the guest resumes at the call instruction itself (hypercall_again). */
void arch_hypercall_again(struct arch_regs *r);
/* The loaded vCPU's EL1 virtual timer has its interrupt pending on this core. */
bool arch_vtimer_due(void);
/* Counter value at which v's virtual timer fires (at most: for the loaded vCPU, whether its
 * interrupt is already in flight is not looked at), or TIME_NEVER. */
uint64_t arch_vtimer_deadline(const struct vcpu *v);

/* Virtual interrupt delivery to the loaded vCPU. */
void arch_vgic_flush(struct vcpu *v);
bool arch_vgic_pending(void); /* a list register holds a pending interrupt */

/* The core's hypervisor timer: one deadline in counter ticks, TIME_NEVER switches it off. */
void arch_timer_program(uint64_t deadline);
/* A physical interrupt is pending for this core (the hypervisor runs with them masked). */
bool arch_irq_pending(void);
/* Idle until an interrupt arrives, then handle the pending physical interrupts. */
void arch_wait_for_interrupt(void);
/* A deadline at `at` that raises nothing: a core that waits for an instant by reading the
 * counter keeps it, so that an emulator running the cores in turn (QEMU -icount) ends the
 * other cores' turns then. Nothing on hardware. */
void arch_turn_deadline(uint64_t at);
/* In a long path under a lock other cores may wait for (a channel's message of kilobytes):
 * such a deadline a little ahead unless one is pending, so that the emulator ends this core's
 * turn there too and the waiting cores (and the instants due on them) are not held up by it.
 * Nothing on hardware but a register read and, at most, two writes. */
void arch_turn_point(void);
/* The same only while other cores wait in l's ticket queue (a distributor write's 32
 * injections): a path nobody waits for runs on in its turn, as on hardware, and is timed as one
 * path (test_gicdstorm.py). */
void arch_turn_point_if_waited(const struct spinlock *l);
/* Whether a guest's wait-for-interrupt on this core comes to the hypervisor (a shared core
 * must give the wait to others) or sleeps in hardware (a core the vCPU has to itself). */
void arch_core_trap_guest_wait(bool trap);
/* Boot: forward physical interrupt intid (an SPI) to `core`. */
void arch_irq_route(unsigned intid, unsigned core);
/* Boot, a second line behind the tool's checks: whether a device area [pa, pa + size) or a
 * forwarded interrupt may be a partition's at all, i.e. is none of what the hypervisor owns
 * (the GIC, its console UART and that UART's interrupt, QEMU's fw_cfg with its DMA). */
bool arch_device_assignable(uint64_t pa, uint64_t size);
bool arch_irq_assignable(unsigned intid);
/* A forwarded interrupt's vCPU moved (best-effort): it fires on `core` from now on. */
void arch_irq_move(unsigned intid, unsigned core);
/* A forwarded physical interrupt whose guest will never end it (the partition restarts):
 * deactivate it, so it can fire again. */
void arch_irq_release(unsigned intid);

/* Cross-core requests: interrupt another core so it looks at its vCPUs' requests. */
void arch_kick_core(unsigned core);

/* Platform power. */
_Noreturn void arch_system_off(void);
/* Print the trapping context; used by panics. */
void arch_dump_regs(const struct arch_regs *r);

#endif
