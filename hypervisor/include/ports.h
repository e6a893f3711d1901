/* Inter-partition communication: sampling and queuing ports, shared-memory doorbells
 * (docs/ports.md). Channels, ports and regions come from the configuration tables; the
 * hypervisor only keeps their run-time state. */
#ifndef BULKHEAD_PORTS_H
#define BULKHEAD_PORTS_H

#include <stdint.h>
#include "arch.h"
#include "config_tables.h"
#include "guest_mem.h"

struct vcpu;
struct port;

/* A vCPU's BH_HC_QUEUING_RECEIVE_WAIT, from the call until its result is in its registers
 * (struct vcpu.wait). Written by its own core, and by a sender's under the channel lock. */
struct port_wait {
	struct port *port;          /* the port it waits on; NULL: not in a wait */
	struct arch_regs *regs;     /* where the call's results go */
	struct guest_pieces buf;    /* its buffer, translated when it began to wait */
	int64_t result;             /* bytes, once a sender handed a message over */
	uint32_t length;            /* that message's length */
};

/* Boot, after partition_init_all: bind the run-time state to sys's channels and ports. */
void ports_init(const struct bh_system_cfg *sys);

/* Hypercall handlers (hypercall.c's table): each returns the guest's new x0. */
int64_t ports_hc_sampling_create(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_sampling_write(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_sampling_read(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_create(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_send(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_receive(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_receive_wait(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_receive_post(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_queuing_receive_cancel(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_status(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_info(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_ready(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_shm_info(struct vcpu *v, struct arch_regs *r);
int64_t ports_hc_shm_doorbell(struct vcpu *v, struct arch_regs *r);

/* On v's core, before v runs again after BH_HC_QUEUING_RECEIVE_WAIT blocked (v->wait.port
 * set): the message handed over, or BH_NOT_AVAILABLE if something else woke it, into its
 * registers; returns that x0. */
int64_t ports_wait_finish(struct vcpu *v);
/* p starts again after a restart: doorbells rung for its old incarnation are forgotten, so
 * the next ring raises BH_VIRQ_DOORBELL in the new one. */
void ports_partition_restarted(const struct partition *p);
/* p's restart is about to reload it: every post of it is withdrawn (channel locks taken). */
void ports_partition_reloading(const struct partition *p);
/* v is being reset or released: it waits for nothing any more; for vCPU 0, its partition's
 * posted buffers are withdrawn. */
void ports_vcpu_reset(struct vcpu *v);

#endif
