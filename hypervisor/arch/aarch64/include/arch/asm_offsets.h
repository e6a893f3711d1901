/* Offsets and constants shared by assembly and C; C checks them with static_assert. */
#ifndef AARCH64_ASM_OFFSETS_H
#define AARCH64_ASM_OFFSETS_H

#define STACK_SIZE     0x4000
#define PERCPU_SIZE    0x800
#define PERCPU_REGS    0     /* struct percpu: pointer to the running vCPU's register save area */
#define PERCPU_STACK   8     /* struct percpu: top of this core's stack */
#define PERCPU_CORE    16    /* struct percpu: this core's number */
#define PERCPU_EXIT_WORK 20  /* struct percpu: work before returning to a guest */
#define PERCPU_VCPU    24    /* struct percpu: the vCPU running on this core */
#define PERCPU_LOADED  32    /* struct percpu: the vCPU whose EL1 state is loaded (after VCPU) */
#define PERCPU_TRACE   40    /* struct percpu: this core's trace ring */
#define PERCPU_FP_OWNER 48   /* struct percpu: arch.fp_owner, then arch.fp_home */
#define VCPU_ARCH            272  /* struct vcpu: arch (struct arch_vcpu_ctx) */
#define VCPU_VTIMER_PRIORITY 680  /* struct vcpu: arch.vtimer_priority */
#define VCPU_TRACE_SOURCE    1240 /* struct vcpu: trace_source */
#define VCPU_VIRQ_DISABLED   1380 /* struct vcpu: virq.disabled[0] */
#define VCPU_VIRQ_FORWARDED  1416 /* struct vcpu: virq.forwarded[0] */
#define VCPU_VIRQ_COUNT      1452 /* struct vcpu: virq.count */
#define RING_HEAD      4     /* struct trace_ring */
#define RING_TAIL      8
#define RING_SCRATCH   16
#define RING_EVENTS    40
#define RING_SIZE_LOG2 11    /* TRACE_RING_EVENTS = 1 << RING_SIZE_LOG2 */
#define EVENT_SIZE     24    /* struct trace_raw_event */
#define TRACE_VIRQ     5     /* BH_TRACE_VIRQ */
#define INTID_VTIMER   27    /* PPI_VTIMER */
#define LR_PENDING_HW_GROUP1 0x7000 /* ICH_LR<n>_EL2 bits 63:48: pending, hardware, group 1 */
#define CTX_CNTV_CTL   192   /* struct arch_vcpu_ctx: cntv_ctl, then cntv_cval */
#define CTX_VMPIDR     208   /* vmpidr, then vttbr */
#define CTX_VMCR       352   /* vmcr, then ich_hcr */
#define CTX_AP1R       368   /* ap1r[0] */
#define CTX_VTIMER_ACTIVE 400 /* vtimer_active, then lrs_live (32 bits each) */
#define CTX_FP         416   /* fp[32] (16 bytes each), then fpcr and fpsr at CTX_FP + 512, + 520 */
#define CPTR_EL2_PLAIN 0x401033ff /* CPTR_EL2_RES1 (aarch64.h): FP/SIMD not trapped */
#define CPTR_EL2_TFP_BIT 10  /* CPTR_TFP */
#define CPTR_EL2_TRAP_FP 0x401037ff /* CPTR_EL2_PLAIN with CPTR_TFP: FP/SIMD trapped */
#define REGS_ELR       248   /* struct arch_regs: x[31] then elr, spsr */
#define REGS_SPSR      256
#define REGS_SIZE      264
#define EC_HVC64       0x16  /* ESR_EL2 exception class of HVC from AArch64 */
#define EC_SMC64       0x17  /* SMC from AArch64 */
#define EC_DABT_LOW    0x24  /* data abort from a lower EL */

#define SCTLR_EL2_RES1   0x30C50830
#define SCTLR_EL2_MMU_ON 0x81005   /* M | C | I | WXN: whatever EL2 can write, it cannot execute */

#endif
