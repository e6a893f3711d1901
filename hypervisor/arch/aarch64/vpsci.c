/* PSCI 1.0 for unmodified guests, through SMC: the partition's vCPUs are its CPUs, and the
 * system it may switch off or reset is the partition itself. Anything else is not ours to
 * emulate: the caller turns it into a health-monitor event. */
#include "arch/vmachine.h"
#include "console.h"
#include "partition.h"

#define PSCI_VERSION 0x84000000u
#define PSCI_CPU_OFF 0x84000002u
#define PSCI_CPU_ON 0xc4000003u
#define PSCI_AFFINITY_INFO 0xc4000004u
#define PSCI_MIGRATE_INFO_TYPE 0x84000006u
#define PSCI_SYSTEM_OFF 0x84000008u
#define PSCI_SYSTEM_RESET 0x84000009u
#define PSCI_FEATURES 0x8400000au
#define SMC32_TO_64 0x40000000u /* CPU_ON and AFFINITY_INFO also come as SMC32 */

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
	return vcpu_public_state(t) == VCPU_HALTED ? 1 : 0; /* OFF : ON */
}

static int64_t call(struct vcpu *v, uint32_t fn, const uint64_t *x)
{
	struct partition *p = v->partition;

	switch (fn) {
	case PSCI_VERSION: return PSCI_VERSION_1_0;
	case PSCI_FEATURES: return emulated((uint32_t)x[1]) ? 0 : PSCI_NOT_SUPPORTED;
	case PSCI_MIGRATE_INFO_TYPE: return PSCI_TOS_NOT_PRESENT;
	case PSCI_CPU_ON: return cpu_on(v, x[1], x[2], x[3]);
	case PSCI_AFFINITY_INFO: return affinity_info(v, x[1], x[2]);
	case PSCI_CPU_OFF:
		vcpu_control(v, BH_VCPU_HALT, v->id, 0);
		return PSCI_SUCCESS; /* never seen: the vCPU stops at its exit */
	case PSCI_SYSTEM_OFF:
		bh_log("partition %s: PSCI SYSTEM_OFF: halting the partition", p->cfg->name);
		partition_halt(p);
		return PSCI_SUCCESS;
	case PSCI_SYSTEM_RESET:
		bh_log("partition %s: PSCI SYSTEM_RESET: restarting the partition", p->cfg->name);
		partition_restart(p, true);
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
