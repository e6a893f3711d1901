/* Per-core trace rings of timestamped events (types in partitions/include/bulkhead/trace.h).
 * Each core writes only its own ring; readers take events oldest first under the ring's lock.
 * A full ring drops new events until a reader makes room. */
#ifndef BULKHEAD_HYP_TRACE_H
#define BULKHEAD_HYP_TRACE_H

#include <stdint.h>
#include "arch.h"
#include "bulkhead/trace.h"

#define TRACE_RING_EVENTS 2048u /* a power of two */

/* struct bh_trace_event as three words: the middle one packs type, core, partition and vCPU
 * (little-endian), so an event is three stores on the interrupt and switch paths (also
 * written by the interrupt fast path in assembly: see the arch's asm_offsets.h). */
struct trace_raw_event {
	uint64_t time, source, arg;
};

struct trace_ring {
	struct spinlock lock;
	volatile uint32_t head; /* next slot the core writes */
	volatile uint32_t tail; /* next slot a reader takes */
	struct trace_raw_event scratch; /* where an event goes when the ring is full */
	struct trace_raw_event events[TRACE_RING_EVENTS];
};

struct vcpu;

struct trace_ring *trace_ring_of(unsigned core);

/* The source fields of an event (core, partition, vCPU), packed once per vCPU. */
uint64_t trace_source(unsigned core, unsigned partition, unsigned vcpu);
void trace_emit(unsigned type, const struct vcpu *v, uint64_t arg);
/* The same with an explicit time (counter ticks). */
void trace_emit_at(unsigned type, const struct vcpu *v, uint64_t arg, uint64_t time);
/* Copy up to max events of `core` into out, oldest first; returns how many. */
unsigned trace_read(unsigned core, struct bh_trace_event *out, unsigned max);

#endif
