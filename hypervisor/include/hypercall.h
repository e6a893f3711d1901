/* Paravirtual API dispatch (numbers in partitions/include/bulkhead/abi.h). */
#ifndef BULKHEAD_HYPERCALL_H
#define BULKHEAD_HYPERCALL_H

#include <stdint.h>
#include "arch.h"

struct vcpu;

/* Serve the call in r->x[0]. Returns the guest's new x0; extra results go into r->x[1..]. */
int64_t hypercall_dispatch(struct vcpu *v, struct arch_regs *r);

/* What a call returns when it found a lock that other cores held until this core's instant
 * (percpu.h trap_lock) and changed nothing, registers included: hypercall_again(r). The call
 * is made again, the same call with the same registers, after the core's decision. For the live
 * frame of an HVC (r == percpu.regs) the guest's PC goes back to the HVC and the result is the
 * guest's own x0, its function ID; for a copy of a call's registers (a call through the
 * hypercall page, vcall.c) it is HYPERCALL_AGAIN, and the caller has the access made again. */
#define HYPERCALL_AGAIN INT64_MIN /* no result of any call */
int64_t hypercall_again(struct arch_regs *r);

#endif
