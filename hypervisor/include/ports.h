/* Inter-partition communication: sampling and queuing ports, shared-memory doorbells
 * (docs/ports.md). Channels, ports and regions come from the configuration tables; the
 * hypervisor only keeps their run-time state. */
#ifndef BULKHEAD_PORTS_H
#define BULKHEAD_PORTS_H

#include <stdint.h>
#include "arch.h"
#include "config_tables.h"

struct vcpu;

/* Boot, after partition_init_all: bind the run-time state to sys's channels and ports. */
void ports_init(const struct bh_system_cfg *sys);

/* Hypercall handlers (hypercall.c's table): each returns the guest's new x0. */
int64_t ports_hc_sampling_create(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_sampling_write(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_sampling_read(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_create(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_send(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_receive(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_status(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_info(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_ready(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_shm_info(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_shm_doorbell(struct vcpu *v, struct arch_regs *r);

#endif
