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

static int64_t call(struct vcpu *v, uint64_t va)
{
	struct bh_mmio_call b;
	struct arch_regs r = { 0 };

	if (va & 7 || !guest_copy_from(v, &b, va, sizeof(b)))
		return BH_INVALID_PARAM;
	for (unsigned i = 0; i < 8; i++)
		r.x[i] = b.x[i];
	r.x[0] = allowed(b.x[0]) ? (uint64_t)hypercall_dispatch(v, &r) : (uint64_t)BH_UNKNOWN_HYPERCALL;
	for (unsigned i = 0; i < 8; i++)
		b.x[i] = r.x[i];
	return guest_copy_to(v, va, &b, sizeof(b)) ? BH_OK : BH_INVALID_PARAM;
}

bool vcall_access(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val)
{
	struct vmachine *m = vmachine_of(v->partition);

	if (size != 8)
		return false;
	if (write && off == BH_CALL_PAGE_BLOCK)
		m->call_status[v->id] = call(v, *val);
	else if (!write)
		*val = off == BH_CALL_PAGE_STATUS ? (uint64_t)m->call_status[v->id] :
		       off == BH_CALL_PAGE_ID ? BH_CALL_PAGE_MAGIC : 0;
	return true;
}
