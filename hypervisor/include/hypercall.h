/* Paravirtual API dispatch (numbers in partitions/include/bulkhead/abi.h). */
#ifndef BULKHEAD_HYPERCALL_H
#define BULKHEAD_HYPERCALL_H

#include "arch.h"

struct vcpu;

/* Serve the call in r->x[0]; results go back into r. */
void hypercall_dispatch(struct vcpu *v, struct arch_regs *r);

#endif
