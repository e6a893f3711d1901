/* Paravirtual API dispatch (numbers in partitions/include/bulkhead/abi.h). */
#ifndef BULKHEAD_HYPERCALL_H
#define BULKHEAD_HYPERCALL_H

#include <stdint.h>
#include "arch.h"

struct vcpu;

/* Serve the call in r->x[0]. Returns the guest's new x0; extra results go into r->x[1..]. */
int64_t hypercall_dispatch(struct vcpu *v, struct arch_regs *r);

#endif
