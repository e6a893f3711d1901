/* Per-core trace rings of timestamped events (types in partitions/include/bulkhead/trace.h).
 * Each core writes only its own ring; readers take events oldest first under the ring's lock.
 * A full ring drops new events until a reader makes room. */
#ifndef BULKHEAD_HYP_TRACE_H
#define BULKHEAD_HYP_TRACE_H

#include <stdint.h>
#include "bulkhead/trace.h"

#define TRACE_RING_EVENTS 2048u

struct vcpu;

void trace_emit(unsigned type, const struct vcpu *v, uint64_t arg);
/* The same with an explicit time (counter ticks). */
void trace_emit_at(unsigned type, const struct vcpu *v, uint64_t arg, uint64_t time);
/* Copy up to max events of `core` into out, oldest first; returns how many. */
unsigned trace_read(unsigned core, struct bh_trace_event *out, unsigned max);

#endif
