/* AArch64 bring-up: console first, then MMU, GIC, the portable boot, and the other cores. */
#include "arch/aarch64.h"
#include "arch/asm_offsets.h"
#include "arch/sysreg.h"
#include "console.h"
#include "main.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "platform.h"

_Static_assert(sizeof(struct percpu) == PERCPU_SIZE, "PERCPU_SIZE in asm_offsets.h");
_Static_assert(__builtin_offsetof(struct percpu, regs) == PERCPU_REGS, "PERCPU_REGS");
_Static_assert(__builtin_offsetof(struct percpu, stack_top) == PERCPU_STACK, "PERCPU_STACK");
_Static_assert(__builtin_offsetof(struct percpu, vcpu) == PERCPU_VCPU, "PERCPU_VCPU");
_Static_assert(__builtin_offsetof(struct percpu, exit_work) == PERCPU_EXIT_WORK, "EXIT_WORK");
_Static_assert(__builtin_offsetof(struct arch_regs, spsr) == REGS_SPSR, "REGS_SPSR");
_Static_assert(__builtin_offsetof(struct arch_regs, elr) == REGS_ELR, "REGS_ELR");
_Static_assert(sizeof(struct arch_regs) == REGS_SIZE, "REGS_SIZE");
_Static_assert(__builtin_offsetof(struct percpu, loaded) == PERCPU_LOADED, "PERCPU_LOADED");
_Static_assert(__builtin_offsetof(struct percpu, trace) == PERCPU_TRACE, "PERCPU_TRACE");
_Static_assert(__builtin_offsetof(struct percpu, core) == PERCPU_CORE, "PERCPU_CORE");
_Static_assert(__builtin_offsetof(struct percpu, arch.fp_owner) == PERCPU_FP_OWNER &&
	       __builtin_offsetof(struct percpu, arch.fp_home) == PERCPU_FP_OWNER + 8, "PERCPU_FP_OWNER");
/* el1_ctx.S's arch_vcpu_give_back: these fields, some moved as pairs. */
_Static_assert(__builtin_offsetof(struct vcpu, arch) == VCPU_ARCH, "VCPU_ARCH");
_Static_assert(__builtin_offsetof(struct vcpu, virq.forwarded) == VCPU_VIRQ_FORWARDED,
	       "VCPU_VIRQ_FORWARDED");
_Static_assert(__builtin_offsetof(struct arch_vcpu_ctx, fp) == CTX_FP &&
	       __builtin_offsetof(struct arch_vcpu_ctx, fpcr) == CTX_FP + 512 &&
	       __builtin_offsetof(struct arch_vcpu_ctx, fpsr) == CTX_FP + 520, "CTX_FP");
_Static_assert(CPTR_EL2_PLAIN == CPTR_EL2_RES1 && CPTR_TFP == 1ul << CPTR_EL2_TFP_BIT &&
	       CPTR_EL2_TRAP_FP == (CPTR_EL2_RES1 | CPTR_TFP),
	       "CPTR_EL2_PLAIN");
_Static_assert(__builtin_offsetof(struct arch_vcpu_ctx, cntv_ctl) == CTX_CNTV_CTL &&
	       __builtin_offsetof(struct arch_vcpu_ctx, cntv_cval) == CTX_CNTV_CTL + 8, "CTX_CNTV_CTL");
_Static_assert(__builtin_offsetof(struct arch_vcpu_ctx, vmpidr) == CTX_VMPIDR &&
	       __builtin_offsetof(struct arch_vcpu_ctx, vttbr) == CTX_VMPIDR + 8, "CTX_VMPIDR");
_Static_assert(__builtin_offsetof(struct arch_vcpu_ctx, vmcr) == CTX_VMCR &&
	       __builtin_offsetof(struct arch_vcpu_ctx, ich_hcr) == CTX_VMCR + 8, "CTX_VMCR");
_Static_assert(__builtin_offsetof(struct arch_vcpu_ctx, ap1r) == CTX_AP1R, "CTX_AP1R");
_Static_assert(__builtin_offsetof(struct arch_vcpu_ctx, vtimer_active) == CTX_VTIMER_ACTIVE &&
	       __builtin_offsetof(struct arch_vcpu_ctx, lrs_live) == CTX_VTIMER_ACTIVE + 4,
	       "CTX_VTIMER_ACTIVE");
_Static_assert(__builtin_offsetof(struct vcpu, arch.vtimer_priority) == VCPU_VTIMER_PRIORITY,
	       "VCPU_VTIMER_PRIORITY");
_Static_assert(__builtin_offsetof(struct vcpu, trace_source) == VCPU_TRACE_SOURCE,
	       "VCPU_TRACE_SOURCE");
_Static_assert(__builtin_offsetof(struct vcpu, virq.disabled) == VCPU_VIRQ_DISABLED,
	       "VCPU_VIRQ_DISABLED");
_Static_assert(__builtin_offsetof(struct vcpu, virq.count) == VCPU_VIRQ_COUNT, "VCPU_VIRQ_COUNT");
_Static_assert(__builtin_offsetof(struct trace_ring, head) == RING_HEAD, "RING_HEAD");
_Static_assert(__builtin_offsetof(struct trace_ring, tail) == RING_TAIL, "RING_TAIL");
_Static_assert(__builtin_offsetof(struct trace_ring, scratch) == RING_SCRATCH, "RING_SCRATCH");
_Static_assert(__builtin_offsetof(struct trace_ring, events) == RING_EVENTS, "RING_EVENTS");
_Static_assert(TRACE_RING_EVENTS == 1u << RING_SIZE_LOG2, "RING_SIZE_LOG2");
_Static_assert(sizeof(struct trace_raw_event) == EVENT_SIZE, "EVENT_SIZE");
_Static_assert(BH_TRACE_VIRQ == TRACE_VIRQ, "TRACE_VIRQ");
_Static_assert(PPI_VTIMER == INTID_VTIMER, "INTID_VTIMER");

uint8_t aarch64_stacks[BH_MAX_CORES][STACK_SIZE] __attribute__((aligned(16)));

static void percpu_init(void)
{
	for (unsigned c = 0; c < BH_MAX_CORES; c++) {
		percpu[c].core = c;
		percpu[c].stack_top = (uint64_t)(uintptr_t)&aarch64_stacks[c][STACK_SIZE];
		percpu[c].regs = &percpu[c].idle_regs;
		percpu[c].trace = trace_ring_of(c);
	}
}

static void start_secondaries(unsigned cores)
{
	for (unsigned c = 1; c < cores; c++) {
		int64_t err = psci_cpu_on(plat_core_affinity(c), (uint64_t)aarch64_secondary_entry, c);
		if (err)
			bh_panic("PSCI CPU_ON for core %u failed (%ld): the description has %u cores; "
				 "start QEMU with -smp %u or more", c, err, cores, cores);
	}
}

void aarch64_boot_primary(uint64_t dtb)
{
	console_emergency("\r\n[bulkhead] Bulkhead hypervisor starting on core 0\r\n");
	if (((read_currentel() >> 2) & 3) != 2)
		bh_panic("entered at EL%lu; Bulkhead needs EL2 (QEMU: -M virt,virtualization=on)",
			 (read_currentel() >> 2) & 3);
	percpu_init();
	aarch64_mmu_init();
	aarch64_mmu_enable_this_core();
	aarch64_mmu_check(true);
	gic_init_distributor();
	gic_init_this_core(0);
	vgic_init_core();
	aarch64_el2_init_core();
	bh_log("EL2, MMU on, GICv3 up; device tree at 0x%lx", dtb);
	const struct bh_system_cfg *sys = bh_boot_primary();
	start_secondaries(sys->core_count);
	bh_enter_core(0);
}

void aarch64_boot_secondary(unsigned core)
{
	aarch64_mmu_enable_this_core();
	aarch64_mmu_check(false);
	gic_init_this_core(core);
	vgic_init_core();
	aarch64_el2_init_core();
	bh_enter_core(core);
}
