/* Exceptions from partitions: decode ESR_EL2 and hand each kind to its core handler.
 * Every handler is bounded; anything a guest can cause ends in a hypercall result or a
 * health-monitor event, never in a hypervisor fault. */
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "arch/vmachine.h"
#include "console.h"
#include "format.h"
#include "guest_mem.h"
#include "hm.h"
#include "hypercall.h"
#include "main.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "sched.h"

#define EC_WFX 0x01
#define EC_FP 0x07
#define EC_SMC64 0x17
#define EC_SYSREG 0x18
#define EC_IABT_LOW 0x20
#define EC_DABT_LOW 0x24

#define ISS_DABT_ISV (1ul << 24)
#define ISS_DABT_WNR (1ul << 6)

static struct vcpu *current_vcpu(void)
{
	struct vcpu *v = this_cpu()->vcpu;

	if (!v)
		bh_panic("exception from a guest on core %u, which runs no vCPU", this_cpu()->core);
	return v;
}

static uint64_t fault_ipa(void)
{
	return (read_hpfar_el2() >> 4) << 12 | (read_far_el2() & 0xfff);
}

/* An ignored read returns zero in its destination register. */
static void zero_destination(struct arch_regs *r, unsigned rt)
{
	if (rt < 31)
		r->x[rt] = 0;
}

/* Load pair of general-purpose registers (LDP, LDNP, LDPSW; every addressing mode): the common
 * load without a syndrome. Bits 29:27 101, V (26) 0, 25 0, L (22) 1. */
#define INSN_LDP_MASK 0x3e400000u
#define INSN_LDP 0x28400000u
#define INSN_RT(i) ((i) & 31)
#define INSN_RN(i) (((i) >> 5) & 31)
#define INSN_RT2(i) (((i) >> 10) & 31)
#define INSN_LDP_INDEX(i) (((i) >> 23) & 3) /* 1 post-index, 3 pre-index: writeback */
#define INSN_LDP_IMM7(i) ((int64_t)((uint64_t)(i) << 42) >> 57)
#define INSN_LDP_SCALE(i) (2 + ((i) >> 31)) /* opc 1x: 64-bit registers */

/* An ignored read without a syndrome (ISV 0): a load pair reads zero into both registers and
 * does its writeback (unless its base is SP, which the save area does not hold); any other
 * form (SIMD/FP loads, single loads with writeback) is skipped with its registers unchanged.
 * The instruction is read through the guest's own translation, like any guest buffer. */
static void zero_unsyndromed_load(struct vcpu *v, struct arch_regs *r)
{
	uint32_t insn;

	if (!guest_copy_from(v, &insn, r->elr, sizeof(insn)) || (insn & INSN_LDP_MASK) != INSN_LDP)
		return;
	zero_destination(r, INSN_RT(insn));
	zero_destination(r, INSN_RT2(insn));
	unsigned index = INSN_LDP_INDEX(insn), rn = INSN_RN(insn);
	if ((index == 1 || index == 3) && rn < 31)
		r->x[rn] += (uint64_t)INSN_LDP_IMM7(insn) << INSN_LDP_SCALE(insn);
}

/* A stage-2 fault on the guest's own stage-1 table walk is never an access by the instruction:
 * not to be emulated as MMIO even if the walk touched an emulated device's page. */
#define ISS_DABT_S1PTW (1ul << 7)
#define ISS_DABT_FNV (1ul << 10) /* FAR_EL2 not valid */
#define INSN_LDP_OPC(i) ((i) >> 30) /* 0: 32-bit, 1: LDPSW, 2: 64-bit */

/* The first element's guest address of a load pair (Rn not SP: the save area does not hold it). */
static bool load_pair_address(const struct arch_regs *r, uint32_t insn, uint64_t *va)
{
	unsigned rn = INSN_RN(insn);

	if (rn == 31)
		return false;
	*va = r->x[rn];
	if (INSN_LDP_INDEX(insn) != 1) /* post-index: the offset comes after */
		*va += (uint64_t)INSN_LDP_IMM7(insn) << INSN_LDP_SCALE(insn);
	return true;
}

/* A load pair of general-purpose registers from a firmware partition's flash where it traps (a
 * command mode, a busy bank, the erased part beyond the image): memcpy's and edk2's CopyMem read.
 * It has no syndrome; the instruction, read through the guest's translation like any guest
 * buffer, says which registers and address. Emulated as its two loads, when both elements lie in
 * the faulting page (the IPA is the fault's page; a pair across two pages is not emulated). */
static enum mmio_result flash_load_pair(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	uint32_t insn;
	uint64_t va, far = read_far_el2(), val[2];

	if (!v->partition->cfg->vmachine || (esr & (ISS_DABT_WNR | ISS_DABT_S1PTW | ISS_DABT_FNV)) ||
	    !guest_copy_from(v, &insn, r->elr, sizeof(insn)) || (insn & INSN_LDP_MASK) != INSN_LDP ||
	    INSN_LDP_OPC(insn) == 3 || !load_pair_address(r, insn, &va))
		return MMIO_UNCLAIMED;
	unsigned size = INSN_LDP_OPC(insn) == 2 ? 8 : 4;
	if (va >> 12 != far >> 12 || (va + 2 * size - 1) >> 12 != far >> 12)
		return MMIO_UNCLAIMED;
	enum mmio_result done = vflash_read_pair(v, fault_ipa() - (far - va), size, val);
	if (done != MMIO_DONE)
		return done;
	for (unsigned i = 0; i < 2; i++) {
		unsigned rt = i ? INSN_RT2(insn) : INSN_RT(insn);
		uint64_t x = size == 8 ? val[i] : (uint32_t)val[i];
		if (INSN_LDP_OPC(insn) == 1 && (x >> 31))
			x |= ~0xfffffffful; /* LDPSW */
		if (rt < 31)
			r->x[rt] = x;
	}
	unsigned index = INSN_LDP_INDEX(insn);
	if (index == 1 || index == 3)
		r->x[INSN_RN(insn)] += (uint64_t)INSN_LDP_IMM7(insn) << INSN_LDP_SCALE(insn);
	return MMIO_DONE;
}

/* Load register (immediate) with writeback, post- or pre-index, general-purpose (LDR, LDRB,
 * LDRH, LDRSB, LDRSH, LDRSW): bits 29:27 111, V (26) 0, 25:24 00, 21 0, 10 1; opc (23:22) not 00,
 * which is a store. */
#define INSN_LDR_WB_MASK 0x3f200400u
#define INSN_LDR_WB 0x38000400u
#define INSN_LDR_SIZE(i) (1u << ((i) >> 30))
#define INSN_LDR_OPC(i) (((i) >> 22) & 3) /* 1: zero-extend, 2: sign-extend to 64, 3: to 32 bits */
#define INSN_LDR_PRE(i) (((i) >> 11) & 1)
#define INSN_LDR_IMM9(i) ((int64_t)((uint64_t)(i) << 43) >> 55)

/* A single load with writeback from a firmware partition's flash where it traps (a checksum
 * loop's read): no syndrome either, emulated as flash_load_pair emulates a pair. */
static enum mmio_result flash_load_writeback(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	uint32_t insn;
	uint64_t far = read_far_el2(), val = 0;

	if (!v->partition->cfg->vmachine || (esr & (ISS_DABT_WNR | ISS_DABT_S1PTW | ISS_DABT_FNV)) ||
	    !guest_copy_from(v, &insn, r->elr, sizeof(insn)) ||
	    (insn & INSN_LDR_WB_MASK) != INSN_LDR_WB || INSN_RN(insn) == 31)
		return MMIO_UNCLAIMED;
	unsigned size = INSN_LDR_SIZE(insn), opc = INSN_LDR_OPC(insn), rt = INSN_RT(insn);
	if (opc == 0 || (opc == 2 && size == 8) || (opc == 3 && size >= 4))
		return MMIO_UNCLAIMED; /* a store, or unallocated */
	uint64_t va = r->x[INSN_RN(insn)] + (INSN_LDR_PRE(insn) ? (uint64_t)INSN_LDR_IMM9(insn) : 0);
	uint64_t ipa = fault_ipa() - (far - va);
	if (va >> 12 != far >> 12 || (ipa & (size - 1)))
		return MMIO_UNCLAIMED;
	enum mmio_result done = vflash_access(v, ipa, size, false, &val);
	if (done != MMIO_DONE)
		return done;
	uint64_t mask = size == 8 ? ~0ul : (1ul << (8 * size)) - 1;
	val &= mask;
	if (opc >= 2 && size < 8 && (val >> (8 * size - 1)))
		val |= ~mask;
	if (opc == 3)
		val &= 0xffffffffu;
	if (rt < 31)
		r->x[rt] = val;
	r->x[INSN_RN(insn)] += (uint64_t)INSN_LDR_IMM9(insn);
	return MMIO_DONE;
}

static void data_abort(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	if ((esr & ISS_DABT_ISV) && !(esr & ISS_DABT_S1PTW)) {
		enum mmio_result done = arch_vmachine_mmio(v, r, esr, fault_ipa());
		if (done == MMIO_DONE)
			arch_skip_instruction(r);
		if (done != MMIO_UNCLAIMED)
			return;
	}
	if (!(esr & ISS_DABT_ISV)) {
		enum mmio_result done = flash_load_pair(v, r, esr);
		if (done == MMIO_UNCLAIMED)
			done = flash_load_writeback(v, r, esr);
		if (done == MMIO_DONE)
			arch_skip_instruction(r);
		if (done != MMIO_UNCLAIMED)
			return;
	}
	/* Any other load without a syndrome from a busy flash bank in read-array mode (one with
	 * writeback, SIMD registers): made again, a step later, until the bank is mapped. Never a
	 * write: a store in read-array mode is a permission fault that no remapping ends. */
	if (!(esr & (ISS_DABT_ISV | ISS_DABT_WNR | ISS_DABT_S1PTW)) && vflash_wait(v, fault_ipa()))
		return;
	bool write = esr & ISS_DABT_WNR;
	struct hm_event ev = {
		.kind = BH_HM_MEMORY_VIOLATION,
		.address = fault_ipa(),
		.pc = r->elr,
		.detail = write ? "write" : "read",
	};
	if (!hm_raise(v, &ev))
		return;
	if (!write && (esr & ISS_DABT_ISV))
		zero_destination(r, (unsigned)(esr >> 16) & 31);
	else if (!write && !(esr & ISS_DABT_S1PTW))
		zero_unsyndromed_load(v, r);
	arch_skip_instruction(r);
}

static void instruction_abort(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	if (!(esr & ISS_DABT_S1PTW) && vflash_wait(v, fault_ipa()))
		return; /* code in a busy flash bank: fetched again, a step later */
	struct hm_event ev = {
		.kind = BH_HM_MEMORY_VIOLATION,
		.address = fault_ipa(),
		.pc = r->elr,
		.detail = "exec",
	};
	if (!hm_raise(v, &ev))
		return;
	/* There is no instruction to skip: an ignored fetch fault cannot go on. */
	partition_halt_because(v->partition, "instruction fetch fault cannot be ignored");
}

static void sysreg_trap(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	char what[48];
	bool read = esr & 1;

	if (arch_vmachine_sysreg(v, r, esr)) {
		arch_skip_instruction(r);
		return;
	}
	format(what, sizeof(what), "%s S%u_%u_C%u_C%u_%u", read ? "mrs" : "msr",
	       (unsigned)(esr >> 20) & 3, (unsigned)(esr >> 14) & 7, (unsigned)(esr >> 10) & 15,
	       (unsigned)(esr >> 1) & 15, (unsigned)(esr >> 17) & 7);
	struct hm_event ev = {
		.kind = BH_HM_TRAPPED_INSTRUCTION, .address = r->elr, .pc = r->elr, .detail = what,
	};
	if (!hm_raise(v, &ev))
		return;
	if (read)
		zero_destination(r, (unsigned)(esr >> 5) & 31);
	arch_skip_instruction(r);
}

/* SMC is the firmware conduit of a partition with a virtual machine (its device tree says
 * so): an SMCCC call there is answered like the same call by HVC. Anything else -- an SMC of
 * a paravirtual partition, which has no firmware, or one that is not an SMCCC call (a
 * non-zero immediate, a yielding call, reserved bits set) -- is an `smc` event. */
static void smc_trap(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	if (v->partition->cfg->vmachine &&
	    vpsci_smc_is_smccc((uint32_t)r->x[0], (unsigned)esr & 0xffff)) {
		r->x[0] = (uint64_t)vpsci_smccc_call(v, r);
		arch_skip_instruction(r);
		return;
	}
	struct hm_event ev = {
		.kind = BH_HM_SMC, .address = r->x[0], .pc = r->elr, .detail = "smc function id",
	};
	if (!hm_raise(v, &ev))
		return;
	r->x[0] = (uint64_t)BH_SMCCC_NOT_SUPPORTED;
	arch_skip_instruction(r);
}

static void other_trap(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	char what[32];
	format(what, sizeof(what), "ESR 0x%lx", esr);
	struct hm_event ev = {
		.kind = BH_HM_TRAPPED_INSTRUCTION, .address = r->elr, .pc = r->elr, .detail = what,
	};
	if (hm_raise(v, &ev))
		arch_skip_instruction(r);
}

static void guest_trap(struct arch_regs *r, uint64_t esr)
{
	struct vcpu *v = current_vcpu();

	switch (esr >> 26) {
	case EC_WFX:
		/* WFI waits like BH_HC_IDLE, so a shared core goes to others. WFE does not trap
		 * (HCR_EL2.TWE clear: Linux's spin locks use it); should it come, it is a hint. */
		if (!(esr & 1))
			sched_vcpu_idle(v);
		arch_skip_instruction(r);
		break;
	case EC_FP:
		aarch64_fp_trap(v); /* the instruction runs again, with its registers */
		break;
	case EC_SMC64:
		smc_trap(v, r, esr);
		break;
	case EC_SYSREG:
		sysreg_trap(v, r, esr);
		break;
	case EC_DABT_LOW:
		data_abort(v, r, esr);
		break;
	case EC_IABT_LOW:
		instruction_abort(v, r, esr);
		break;
	default:
		other_trap(v, r, esr);
	}
}

/* HVC, from vectors.S's fast path (x0-x18 and x30 saved): Bulkhead's own calls first, with
 * the same single comparison as hypercall_dispatch's (the compiler merges them, so the way to a
 * hypercall is as short as before); every other SMCCC function ID is the firmware interface. */
int64_t aarch64_hvc(struct vcpu *v, struct arch_regs *r)
{
	uint32_t index = (uint32_t)r->x[0] - BH_HC_BASE;

	if (__builtin_expect(index < BH_HC_COUNT, 1))
		return hypercall_dispatch(v, r);
	if (index < BH_HC_RANGE_SIZE)
		return BH_UNKNOWN_HYPERCALL; /* Bulkhead's range, a call it does not have */
	return vpsci_smccc_call(v, r);
}

/* From vectors.S's emulation fast path (x0-x18, x30 and ELR saved; x19-x29 are live in the
 * registers, not in the save area, so vectors.S sends an access through one of them the full
 * way): a data abort on an emulated device or an SMCCC call by SMC, the same emulation and the
 * same checks as data_abort and smc_trap, and MMIO_DONE; vectors.S then skips the instruction
 * (as they do). Anything else -- an access no device takes, a fault, an SMC that is not a
 * firmware call -- returns MMIO_UNCLAIMED with nothing changed, and the full path raises its
 * health-monitor event as before (arch_vmachine_mmio changes nothing when it fails); MMIO_AGAIN
 * (a lock given up, nothing changed) takes the full path too, which asks the device again and
 * leaves the instruction to run again. vectors.S tells MMIO_DONE by its bit 0 alone. */
enum mmio_result aarch64_emulate(struct vcpu *v, struct arch_regs *r)
{
	uint64_t esr = read_esr_el2();

	if (esr >> 26 == EC_SMC64) {
		if (!v->partition->cfg->vmachine ||
		    !vpsci_smc_is_smccc((uint32_t)r->x[0], (unsigned)esr & 0xffff))
			return MMIO_UNCLAIMED;
		r->x[0] = (uint64_t)vpsci_smccc_call(v, r);
		return MMIO_DONE;
	}
	if (!(esr & ISS_DABT_ISV) || (esr & ISS_DABT_S1PTW))
		return MMIO_UNCLAIMED;
	if (esr & ISS_DABT_WNR) /* tail calls: no frame here */
		return arch_vmachine_mmio_write(v, r, esr, fault_ipa());
	return arch_vmachine_mmio(v, r, esr, fault_ipa());
}

/* Hypercalls do not come here: vectors.S sends them to aarch64_hvc. */
void aarch64_guest_sync(struct arch_regs *r)
{
	guest_trap(r, read_esr_el2());
	core_exit_work();
}

void aarch64_guest_irq(unsigned intid)
{
	if (intid == PPI_HYP_TIMER && aarch64_timer_hands_back()) {
		sched_hand_back_and_exit();
		return;
	}
	aarch64_handle_irqs(intid);
	core_exit_work();
}

void aarch64_guest_fiq(struct arch_regs *r)
{
	(void)r;
	aarch64_guest_irq(gic_ack());
}

void aarch64_guest_serror(struct arch_regs *r)
{
	struct hm_event ev = {
		.kind = BH_HM_INTERNAL_ERROR, .address = read_esr_el2(), .pc = r->elr,
		.detail = "SError",
	};
	hm_raise(current_vcpu(), &ev);
	core_exit_work();
}

static const char *const el2_kinds[] = {
	"sync (SP_EL0)", "IRQ (SP_EL0)", "FIQ (SP_EL0)", "SError (SP_EL0)",
	"sync", "IRQ", "FIQ", "SError",
	"", "", "", "",
	"sync from AArch32", "IRQ from AArch32", "FIQ from AArch32", "SError from AArch32",
};

void aarch64_el2_exception(struct arch_regs *frame, unsigned kind)
{
	char line[160];

	format(line, sizeof(line),
	       "\n[bulkhead] PANIC: unexpected %s exception in the hypervisor on core %u\n"
	       "  ESR_EL2 0x%lx FAR_EL2 0x%lx\n",
	       kind < 16 ? el2_kinds[kind] : "?", this_cpu()->core, read_esr_el2(),
	       read_far_el2());
	console_emergency(line);
	arch_dump_regs(frame);
	console_emergency("[bulkhead] internal error: halting the system\n");
	arch_system_off();
}
