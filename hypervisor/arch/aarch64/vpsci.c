/* The firmware interface of a partition: the SMC Calling Convention (SMCCC 1.1) with PSCI 1.0,
 * answered on both conduits (HVC for every partition, beside Bulkhead's own calls; SMC for
 * partitions with a virtual machine, whose device tree names it). The partition's vCPUs are
 * its CPUs, and the system it may switch off or reset is the partition itself. */
#include "arch/vmachine.h"
#include "bulkhead/abi.h"
#include "console.h"
#include "partition.h"

#define PSCI_VERSION BH_PSCI_VERSION
#define PSCI_CPU_OFF BH_PSCI_CPU_OFF
#define PSCI_CPU_ON BH_PSCI_CPU_ON
#define PSCI_AFFINITY_INFO BH_PSCI_AFFINITY_INFO
#define PSCI_MIGRATE_INFO_TYPE BH_PSCI_MIGRATE_INFO_TYPE
#define PSCI_SYSTEM_OFF BH_PSCI_SYSTEM_OFF
#define PSCI_SYSTEM_RESET BH_PSCI_SYSTEM_RESET
#define PSCI_FEATURES BH_PSCI_FEATURES
#define SMC32_TO_64 0x40000000u /* CPU_ON and AFFINITY_INFO also come as SMC32 */

/* SMCCC function IDs: bit 31 fast call, bits 23:16 zero in every fast call. */
#define SMCCC_FAST (1u << 31)
#define SMCCC_FAST_MBZ 0x00ff0000u

#define PSCI_SUCCESS 0
#define PSCI_NOT_SUPPORTED (-1)
#define PSCI_INVALID_PARAMETERS (-2)
#define PSCI_ALREADY_ON (-4)
#define PSCI_INVALID_ADDRESS (-9)
#define PSCI_VERSION_1_0 0x10000
#define PSCI_TOS_NOT_PRESENT 2

static bool emulated(uint32_t fn)
{
	switch (fn) {
	case PSCI_VERSION: case PSCI_CPU_OFF: case PSCI_CPU_ON: case PSCI_AFFINITY_INFO:
	case PSCI_MIGRATE_INFO_TYPE: case PSCI_SYSTEM_OFF: case PSCI_SYSTEM_RESET:
	case PSCI_FEATURES:
		return true;
	}
	return false;
}

/* PSCI_FEATURES: every PSCI call emulated here (none has feature flags), and SMCCC_VERSION,
 * which tells the caller to use SMCCC 1.1 (and so SMCCC_ARCH_FEATURES). */
static int64_t features(uint32_t fn)
{
	if (fn == (PSCI_CPU_ON & ~SMC32_TO_64) || fn == (PSCI_AFFINITY_INFO & ~SMC32_TO_64))
		fn |= SMC32_TO_64;
	return emulated(fn) || fn == BH_SMCCC_VERSION ? PSCI_SUCCESS : PSCI_NOT_SUPPORTED;
}

/* The vCPU a PSCI target affinity names: Aff0 = vCPU index, other levels zero. */
static struct vcpu *target(struct partition *p, uint64_t mpidr)
{
	if ((mpidr & 0xff00ffff00ul) || (mpidr & 0xff) >= p->cfg->vcpu_count)
		return NULL;
	return &p->vcpus[mpidr & 0xff];
}

static int64_t cpu_on(struct vcpu *v, uint64_t mpidr, uint64_t entry, uint64_t context)
{
	struct vcpu *t = target(v->partition, mpidr);

	if (!t)
		return PSCI_INVALID_PARAMETERS;
	switch (vcpu_power_on(t, entry, context)) {
	case BH_OK: return PSCI_SUCCESS;
	case BH_NO_ACTION: return PSCI_ALREADY_ON;
	default: return PSCI_INVALID_ADDRESS;
	}
}

static int64_t affinity_info(struct vcpu *v, uint64_t mpidr, uint64_t level)
{
	struct vcpu *t = target(v->partition, mpidr);

	if (!t || level != 0)
		return PSCI_INVALID_PARAMETERS;
	/* OFF (1) only once it is off: a CPU_OFF its core is still serving (the request taken, the
	 * release under way) reads ON (0), as a start posted to it does. Said OFF earlier, a CPU_ON
	 * right after could find it not yet halted and answer ALREADY_ON (psciodd, seen in CI). Its
	 * core sets the state last, so a halted state read first means the release is done. A
	 * start being served (shifted out of the posted bits while its core serves it, with a stop
	 * served first: the state reads halted until the reset) is ON too, as CPU_ON says. */
	bool off = __atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == VCPU_HALTED &&
		   !(__atomic_load_n(&t->request, __ATOMIC_SEQ_CST) &
		     (VCPU_REQ_STOP | VCPU_REQ_RESET | VCPU_REQ_RESET << VCPU_REQ_SERVED_SHIFT));
	return off ? 1 : 0;
}

static int64_t call(struct vcpu *v, uint32_t fn, const uint64_t *x)
{
	struct partition *p = v->partition;

	switch (fn) {
	case PSCI_VERSION: return PSCI_VERSION_1_0;
	case PSCI_FEATURES: return features((uint32_t)x[1]);
	case PSCI_MIGRATE_INFO_TYPE: return PSCI_TOS_NOT_PRESENT;
	case PSCI_CPU_ON: return cpu_on(v, x[1], x[2], x[3]);
	case PSCI_AFFINITY_INFO: return affinity_info(v, x[1], x[2]);
	case PSCI_CPU_OFF:
		vcpu_control(v, BH_VCPU_HALT, v->id, 0);
		return PSCI_SUCCESS; /* never seen: the vCPU stops at its exit */
	/* Their lines name the call; neither is formatted here, in the trap (partition.h). */
	case PSCI_SYSTEM_OFF:
		partition_halt_because(p, "PSCI SYSTEM_OFF: halting the partition");
		return PSCI_SUCCESS;
	case PSCI_SYSTEM_RESET:
		partition_restart_because(p, true, BH_RESTART_SELF,
					  "PSCI SYSTEM_RESET: restarting the partition");
		return PSCI_SUCCESS;
	}
	return PSCI_NOT_SUPPORTED;
}

bool vpsci_call(struct vcpu *v, struct arch_regs *r)
{
	uint32_t fn = (uint32_t)r->x[0];

	if (fn == (PSCI_CPU_ON & ~SMC32_TO_64) || fn == (PSCI_AFFINITY_INFO & ~SMC32_TO_64))
		fn |= SMC32_TO_64;
	if (!emulated(fn))
		return false;
	r->x[0] = (uint64_t)call(v, fn, r->x);
	return true;
}

/* Paravirtualized time, in partitions with a virtual machine (paravirtual ones have
 * BH_HC_GET_TIME): the guest's stolen-time record (vmachine.c). */
static bool has_pv_time(const struct vcpu *v, uint32_t fn)
{
	return (fn == BH_PV_TIME_FEATURES || fn == BH_PV_TIME_ST) && v->partition->cfg->vmachine;
}

static int64_t pv_time_call(const struct vcpu *v, uint32_t fn, uint64_t arg)
{
	if (fn == BH_PV_TIME_FEATURES)
		return has_pv_time(v, (uint32_t)arg) ? 0 : BH_SMCCC_NOT_SUPPORTED;
	return (int64_t)(v->partition->cfg->vmachine->steal_ipa + v->id * BH_PV_TIME_RECORD);
}

/* SMCCC_ARCH_FEATURES: the convention's own calls and paravirtualized time; no CPU erratum
 * workaround is offered (the cortex-a53 needs none of WORKAROUND_1..3), so the guest does not
 * call one. */
static int64_t arch_features(const struct vcpu *v, uint32_t fn)
{
	if (fn == BH_SMCCC_VERSION || fn == BH_SMCCC_ARCH_FEATURES ||
	    (fn == BH_PV_TIME_FEATURES && has_pv_time(v, fn)))
		return 0;
	return BH_SMCCC_NOT_SUPPORTED;
}

int64_t vpsci_smccc_call(struct vcpu *v, struct arch_regs *r)
{
	uint32_t fn = (uint32_t)r->x[0];

	/* The call guests make most (Linux before every other, probing the conduit), answered
	 * before the two switches of vpsci_call: the same constant they return. */
	if (fn == PSCI_VERSION)
		return PSCI_VERSION_1_0;
	if (fn == BH_SMCCC_VERSION)
		return BH_SMCCC_VERSION_1_1;
	if (fn == BH_SMCCC_ARCH_FEATURES)
		return arch_features(v, (uint32_t)r->x[1]);
	if (has_pv_time(v, fn))
		return pv_time_call(v, fn, r->x[1]);
	if (vpsci_call(v, r))
		return (int64_t)r->x[0];
	return BH_SMCCC_NOT_SUPPORTED;
}

bool vpsci_smc_is_smccc(uint32_t fn, unsigned imm)
{
	return imm == 0 && (fn & SMCCC_FAST) && !(fn & SMCCC_FAST_MBZ);
}
