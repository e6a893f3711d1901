/* The fake architecture keeps no EL1 state. */
#ifndef FAKE_VCPU_CTX_H
#define FAKE_VCPU_CTX_H

#include <stdint.h>

struct arch_vcpu_ctx {
	uint64_t entry;
	uint32_t loaded;
	uint32_t released; /* arch_vcpu_release calls */
	uint32_t detached; /* arch_vcpu_detach calls */
	uint32_t vtimer_set; /* its virtual timer is vtimer_at, not fake.vtimer_deadline */
	uint64_t vtimer_at;
};

struct arch_core {
	uint32_t unused;
};

#endif
