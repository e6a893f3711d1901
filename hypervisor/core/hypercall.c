/* Hypercall dispatch: a table of thin handlers, one per call in bulkhead/abi.h. Each handler
 * checks its arguments and returns the value for x0; extra results go into x1.. */
#include "bulkhead/abi.h"
#include "console.h"
#include "guest_mem.h"
#include "hm.h"
#include "hypercall.h"
#include "partition.h"
#include "percpu.h"

typedef int64_t (*hypercall_fn)(struct vcpu *v, struct arch_regs *r);

static int64_t hc_console_write(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arch_regs_arg(r, 1), len = arch_regs_arg(r, 2);
	char chunk[256];

	/* Check all of it first, so a bad buffer prints nothing. */
	if (len > BH_CONSOLE_MAX_WRITE || !guest_readable(v, va, len))
		return BH_INVALID_PARAM;
	for (uint64_t done = 0; done < len;) {
		uint64_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
		if (!guest_copy_from(v, chunk, va + done, n))
			return BH_INVALID_PARAM;
		console_guest_write(v, chunk, n);
		done += n;
	}
	return (int64_t)len;
}

static int64_t hc_get_ids(struct vcpu *v, struct arch_regs *r)
{
	arch_regs_set(r, 1, v->partition->cfg->id);
	arch_regs_set(r, 2, v->id);
	return BH_OK;
}

static uint64_t counter_to_ns(uint64_t ticks)
{
	uint64_t f = arch_counter_freq();
	return ticks / f * 1000000000u + ticks % f * 1000000000u / f;
}

static int64_t hc_get_time(struct vcpu *v, struct arch_regs *r)
{
	(void)v;
	if (arch_regs_arg(r, 1) != BH_CLOCK_HW)
		return BH_INVALID_PARAM;
	arch_regs_set(r, 1, counter_to_ns(arch_counter_read()));
	return BH_OK;
}

static int64_t hc_halt_self(struct vcpu *v, struct arch_regs *r)
{
	(void)r;
	console_guest_flush(v);
	partition_halt(v->partition);
	core_idle();
}

static int64_t hc_idle(struct vcpu *v, struct arch_regs *r)
{
	(void)v;
	(void)r;
	while (!arch_wait_virtual_timer())
		core_handle_requests();
	return BH_OK;
}

static int64_t hc_reset_self(struct vcpu *v, struct arch_regs *r)
{
	uint64_t mode = arch_regs_arg(r, 1);

	if (mode != BH_RESET_COLD && mode != BH_RESET_WARM)
		return BH_INVALID_PARAM;
	console_guest_flush(v);
	partition_restart(v->partition, mode == BH_RESET_COLD);
	core_idle(); /* only if another core restarted the partition first */
}

static int64_t hc_raise_event(struct vcpu *v, struct arch_regs *r)
{
	struct hm_event ev = {
		.kind = BH_HM_PARTITION_ERROR,
		.address = arch_regs_arg(r, 1),
		.pc = arch_regs_pc(r),
		.detail = "raised by the partition",
	};
	hm_raise(v, &ev);
	return BH_OK;
}

static int64_t hc_halt_system(struct vcpu *v, struct arch_regs *r)
{
	(void)r;
	if (!(v->partition->cfg->flags & BH_PART_SYSTEM))
		return BH_PERM_ERROR;
	console_guest_flush(v);
	bh_log("system halted by partition %s", v->partition->cfg->name);
	arch_system_off();
}

/* Every entry is set: a call number below BH_HC_COUNT always has a handler. */
static const hypercall_fn hypercalls[BH_HC_COUNT] = {
	[BH_HC_CONSOLE_WRITE & 0xffff] = hc_console_write,
	[BH_HC_GET_IDS & 0xffff] = hc_get_ids,
	[BH_HC_GET_TIME & 0xffff] = hc_get_time,
	[BH_HC_HALT_SELF & 0xffff] = hc_halt_self,
	[BH_HC_IDLE & 0xffff] = hc_idle,
	[BH_HC_RESET_SELF & 0xffff] = hc_reset_self,
	[BH_HC_RAISE_EVENT & 0xffff] = hc_raise_event,
	[BH_HC_HALT_SYSTEM & 0xffff] = hc_halt_system,
};

int64_t hypercall_dispatch(struct vcpu *v, struct arch_regs *r)
{
	/* SMCCC: the function ID is W0; unsigned wrap-around sends IDs below the base away. */
	uint32_t index = (uint32_t)arch_regs_arg(r, 0) - BH_HC_BASE;

	if (index >= BH_HC_COUNT)
		return BH_UNKNOWN_HYPERCALL;
	return hypercalls[index](v, r);
}
