/* libbhport: Bulkhead ports, shared memory and doorbells from Linux user space, with no kernel
 * module (docs/ports.md, "From Linux"). Calls go through the partition's hypercall page, mapped
 * from /dev/mem (root only); notifications arrive as edges on two lines of the partition's event
 * GPIO, read through Linux's GPIO character device. Results are Bulkhead's (BH_OK, BH_* errors). */
#ifndef BHPORT_H
#define BHPORT_H

#include "bulkhead/abi.h"

/* Map the hypercall page; every other call needs it. Returns 0, or -1 with errno set. */
int bhp_open(void);
/* One hypercall: fn and up to five arguments; out (may be NULL) gets x0..x7 after it. */
long bhp_call(unsigned long long fn, unsigned long long a1, unsigned long long a2,
	      unsigned long long a3, unsigned long long a4, unsigned long long a5,
	      unsigned long long out[8]);

/* Open a port by name with the parameters the description gives it (read with PORT_INFO);
 * returns its descriptor or a BH_* error. *info (may be NULL) gets the configuration. */
long bhp_port_open(const char *name, struct bh_port_info *info);
long bhp_sampling_write(int desc, const void *buf, unsigned size);
/* Bytes copied or BH_NO_ACTION (never written); *valid: within the refresh period. */
long bhp_sampling_read(int desc, void *buf, unsigned size, int *valid);
long bhp_queuing_send(int desc, const void *buf, unsigned size);
/* Bytes copied or BH_NOT_AVAILABLE (empty). */
long bhp_queuing_receive(int desc, void *buf, unsigned size);
long bhp_port_ready(unsigned long long *ports, unsigned long long *doorbells);

/* A shared-memory region: its id (for the doorbell) and the caller's view of it, mapped. */
struct bhp_region {
	int id;
	struct bh_shm_info info;
	volatile unsigned char *mem;
};
long bhp_shm_open(const char *name, struct bhp_region *region);
long bhp_shm_doorbell(int id);

/* Wait up to timeout_ms (-1: forever) for the next edge on event line BH_EVENT_LINE_PORT or
 * BH_EVENT_LINE_DOORBELL. Returns 1 on an edge, 0 on timeout, -1 on error. Waiting starts at
 * the call: check bhp_port_ready() after it returns, since one edge may stand for several. */
int bhp_wait_event(unsigned line, int timeout_ms);

const char *bhp_error_name(long rc);

#endif
