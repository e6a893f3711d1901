/* Hypercalls from Linux user space: a trapped MMIO register takes the address of a call block
 * in the calling process, and the hypervisor runs the call as if the process had made it with
 * HVC (which EL0 cannot). A program reaches the register through /dev/mem (root only); the
 * block and every buffer it names are translated through the process's own page tables and
 * checked like any guest buffer. Only the calls a user program needs pass: identity, time,
 * ports and shared memory (docs/ports.md, "From Linux"). */
#include "arch/vmachine.h"
#include "guest_mem.h"
#include "hypercall.h"
#include "partition.h"


static bool allowed(uint64_t fn)
{
	return fn == BH_HC_GET_IDS || fn == BH_HC_GET_TIME ||
	       (fn >= BH_HC_SAMPLING_PORT_CREATE && fn <= BH_HC_SHM_DOORBELL);
}

/* The call's status, or HYPERCALL_AGAIN: it changed nothing, the block untouched (a port call
 * that gave up its channel's lock at the core's instant), and the write is to be made again. */
static int64_t call(struct vcpu *v, uint64_t va)
{
	struct bh_mmio_call b;
	struct arch_regs r = { 0 };

	if (va & 7 || !guest_copy_from(v, &b, va, sizeof(b)))
		return BH_INVALID_PARAM;
	for (unsigned i = 0; i < 8; i++)
		r.x[i] = b.x[i];
	int64_t result = allowed(b.x[0]) ? hypercall_dispatch(v, &r) : BH_UNKNOWN_HYPERCALL;
	if (result == HYPERCALL_AGAIN)
		return HYPERCALL_AGAIN;
	r.x[0] = (uint64_t)result;
	for (unsigned i = 0; i < 8; i++)
		b.x[i] = r.x[i];
	return guest_copy_to(v, va, &b, sizeof(b)) ? BH_OK : BH_INVALID_PARAM;
}

enum mmio_result vcall_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
			      uint64_t *val)
{
	struct vmachine *m = vmachine_of(v->partition);

	if (size != 8)
		return MMIO_UNCLAIMED;
	if (write && off == BH_CALL_PAGE_BLOCK) {
		int64_t status = call(v, *val);
		if (status == HYPERCALL_AGAIN)
			return MMIO_AGAIN;
		m->call_status[v->id] = status;
	} else if (!write) {
		*val = off == BH_CALL_PAGE_STATUS ? (uint64_t)m->call_status[v->id] :
		       off == BH_CALL_PAGE_ID ? BH_CALL_PAGE_MAGIC : 0;
	}
	return MMIO_DONE;
}
