/* A host "architecture": core/ runs against it in unit tests. Hardware effects become records
 * in `fake`; noreturn calls jump back to the test through fake.escape. */
#include <string.h>
#include "arch.h"
#include "arch/fake.h"
#include "partition.h"
#include "percpu.h"

struct fake_state fake;
uint8_t fake_ram[FAKE_RAM_SIZE];

void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	memset(fake_ram, 0, sizeof(fake_ram));
	memset(percpu, 0, sizeof(percpu));
	for (unsigned c = 0; c < BH_MAX_CORES; c++) {
		percpu[c].core = c;
		percpu[c].trace = trace_ring_of(c);
	}
	fake.vtimer_deadline = UINT64_MAX;
}

static _Noreturn void leave(enum fake_exit why)
{
	fake.exit = why;
	longjmp(fake.escape, 1);
}

struct percpu *arch_this_cpu(void) { return &percpu[fake.core]; }
uint64_t arch_counter_read(void)
{
	fake.counter += fake.counter_step;
	if (fake.counter != fake.still_at) {
		fake.still_at = fake.counter;
		fake.still_reads = 0;
	} else if (++fake.still_reads >= FAKE_STILL_READS) {
		fake.counter_stuck = true;
		fake.still_at = ++fake.counter;
		fake.still_reads = 0;
	}
	if (fake.counter_hook)
		fake.counter_hook();
	return fake.counter;
}
uint64_t arch_counter_freq(void) { return 62500000; }

void arch_console_putc(char c)
{
	if (fake.uart_len + 1 < sizeof(fake.uart))
		fake.uart[fake.uart_len++] = c;
}

void arch_spin_lock(struct spinlock *l)
{
	if (fake.lock_hook)
		fake.lock_hook();
	fake.held_lock_takes += l->word != 0;
	l->word = 1;
}
void arch_spin_unlock(struct spinlock *l) { l->word = 0; }

bool arch_spin_trylock(struct spinlock *l)
{
	if (l->word)
		return false;
	l->word = 1;
	return true;
}
/* As on target: a lock held (by a hook playing another core) is waited for, the other cores
 * played by arch_cpu_relax, only until give_up_at or a pending interrupt. */
bool arch_spin_lock_before(struct spinlock *l, uint64_t give_up_at)
{
	if (give_up_at == UINT64_MAX) {
		arch_spin_lock(l);
		return true;
	}
	if (fake.lock_hook)
		fake.lock_hook();
	while (!arch_spin_trylock(l)) {
		if (arch_counter_read() >= give_up_at || fake.irq_pending)
			return false;
		arch_cpu_relax();
	}
	return true;
}
void arch_cpu_relax(void)
{
	fake.counter += 16;
	if (fake.relax_hook)
		fake.relax_hook();
}

void *arch_phys_to_ptr(uint64_t pa)
{
	if (fake.copy_hook)
		fake.copy_hook();
	if (pa < FAKE_RAM_BASE || pa >= FAKE_RAM_BASE + FAKE_RAM_SIZE)
		return NULL;
	return &fake_ram[pa - FAKE_RAM_BASE];
}

bool arch_guest_va_to_ipa(uint64_t va, bool write, uint64_t *ipa)
{
	(void)write;
	*ipa = va;
	return !fake.guest_mmu_fault;
}

void arch_sync_loaded_image(void *p, size_t len) { (void)p; (void)len; }

void arch_vcpu_reset(struct vcpu *v, uint64_t entry, uint64_t a0, uint64_t a1, uint64_t a2,
		     uint64_t a3)
{
	memset(&v->regs, 0, sizeof(v->regs));
	v->regs.elr = entry;
	v->regs.x[0] = a0;
	v->regs.x[1] = a1;
	v->regs.x[2] = a2;
	v->regs.x[3] = a3;
	v->arch.entry = entry;
	fake.reset_entry = entry;
	fake.reset_args[0] = a0;
	fake.reset_args[1] = a1;
	fake.reset_args[2] = a2;
	fake.reset_args[3] = a3;
	fake.resets++;
}

void arch_vcpu_load(struct vcpu *v) { v->arch.loaded = 1; fake.loads++; }
void arch_vcpu_switch(struct vcpu *prev, struct vcpu *next)
{
	if (prev) {
		prev->arch.loaded = 0;
		fake.saves++;
	}
	if (next)
		arch_vcpu_load(next);
	if (fake.switch_hook)
		fake.switch_hook();
}
void arch_vcpu_detach(struct vcpu *v) { v->arch.detached++; fake.detaches++; }
void arch_vcpu_give_back(struct vcpu *v, struct vcpu *home)
{
	arch_vcpu_detach(v);
	arch_vcpu_switch(v, home);
}
void arch_vcpu_release(struct vcpu *v)
{
	v->arch.released++;
	fake.releases++;
	if (fake.release_hook)
		fake.release_hook(v);
}
void arch_stage2_flush(struct partition *p) { (void)p; fake.stage2_flushes++; }
bool arch_irq_pending(void) { return fake.irq_pending; }
void arch_vcpu_resume(void) { leave(FAKE_RESUMED); }
void arch_skip_instruction(struct arch_regs *r) { r->elr += 4; }
void arch_hypercall_again(struct arch_regs *r) { r->elr -= 4; }
bool arch_vtimer_due(void) { return fake.vtimer_fired; }
uint64_t arch_vtimer_deadline(const struct vcpu *v)
{
	return v->arch.vtimer_set ? v->arch.vtimer_at : fake.vtimer_deadline;
}
void arch_vgic_flush(struct vcpu *v) { (void)v; fake.flushes++; }
bool arch_vgic_pending(void) { return false; }
void arch_timer_program(uint64_t deadline) { fake.timer = deadline; }
void arch_wait_for_interrupt(void) { leave(FAKE_IDLED); }
void arch_turn_deadline(uint64_t at) { (void)at; }
void arch_turn_point(void) {}
void arch_turn_point_if_waited(const struct spinlock *l) { (void)l; }
void arch_core_trap_guest_wait(bool trap) { (void)trap; }
void arch_irq_route(unsigned intid, unsigned core) { (void)intid; (void)core; }
void arch_irq_move(unsigned intid, unsigned core) { fake.irq_core[intid % 512] = core; }
/* As qemu-virt's: the GIC window, the console UART and fw_cfg are the hypervisor's. */
bool arch_device_assignable(uint64_t pa, uint64_t size)
{
	return !(pa < 0x09000000ul + 0x1000 && 0x08000000ul < pa + size) &&
	       !(pa < 0x09020000ul + 0x1000 && 0x09020000ul < pa + size);
}
bool arch_irq_assignable(unsigned intid) { return intid != 33; }
void arch_irq_release(unsigned intid)
{
	fake.irq_released[intid % 512]++;
	if (fake.irq_release_hook)
		fake.irq_release_hook(intid);
}
void arch_partition_reset(struct partition *p) { (void)p; }
bool arch_vuart_receive(struct partition *p, char c) { (void)p; fake.uart_input[fake.uart_input_len++ % sizeof(fake.uart_input)] = c; return true; }
void arch_console_input_enable(void) {}
void arch_vmachine_event(struct partition *p, unsigned line) { (void)p; (void)line; }
void arch_kick_core(unsigned core) { fake.kicks[core]++; }
void arch_system_off(void) { leave(FAKE_SYSTEM_OFF); }
void arch_dump_regs(const struct arch_regs *r) { (void)r; }
