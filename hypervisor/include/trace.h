/* Per-core trace rings of timestamped events (types in partitions/include/bulkhead/trace.h).
 * Each core writes only its own ring; readers take events oldest first under the ring's lock.
 * A full ring drops new events until a reader makes room. */
#ifndef BULKHEAD_HYP_TRACE_H
#define BULKHEAD_HYP_TRACE_H

#include <stdbool.h>
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

/* Where event number `head` goes: its slot, or the scratch event when the ring is full. The same
 * instructions whether the ring is full or not: tracing must not change timing (a full ring used
 * to skip the slot's address, 5 instructions: a real-time vCPU's wake-up came a tick earlier once
 * best-effort work had filled the ring). The empty asm makes the slot's address a value the
 * compiler must compute; the mask selects without a branch. */
static inline struct trace_raw_event *trace_slot(struct trace_ring *r, uint32_t head, uint32_t full)
{
	uintptr_t slot = (uintptr_t)&r->events[head % TRACE_RING_EVENTS];
	uintptr_t mask = -(uintptr_t)full;
	__asm__("" : "+r"(slot), "+r"(mask));
	return (struct trace_raw_event *)((slot & ~mask) | ((uintptr_t)&r->scratch & mask));
}

/* One event into r, the calling core's ring: source packed with the type already; with_arg
 * false leaves the argument word to the reader (TRACE_HAND_BACK's). Inline for the switch path;
 * trace_emit_at is the general form. */
static inline void trace_record_words(struct trace_ring *r, uint64_t source, uint64_t arg,
				      uint64_t time, bool with_arg)
{
	uint32_t head = r->head;
	uint32_t full = head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= TRACE_RING_EVENTS;
	struct trace_raw_event *e = trace_slot(r, head, full);

	e->time = time;
	e->source = source;
	if (with_arg)
		e->arg = arg;
	__atomic_store_n(&r->head, head + !full, __ATOMIC_RELEASE);
}

static inline void trace_record(struct trace_ring *r, uint64_t source, uint64_t arg,
				uint64_t time)
{
	trace_record_words(r, source, arg, time, true);
}

/* A best-effort hand-back's one record: the core's timer interrupt in the vCPU that leaves (the
 * record's source) and the switch to nothing, at one time. One slot instead of two on the
 * hand-back's path; trace_read gives readers the two events (the ABI has no such type). */
#define TRACE_HAND_BACK 0x8000u

struct trace_ring *trace_ring_of(unsigned core);

/* The source fields of an event (core, partition, vCPU), packed once per vCPU. */
uint64_t trace_source(unsigned core, unsigned partition, unsigned vcpu);
/* And back: a running vCPU's own are current (a best-effort vCPU's core is set as it is taken),
 * so BH_HC_GET_IDS answers from its one word. */
static inline unsigned trace_source_core(uint64_t s) { return (unsigned)(s >> 16) & 0xff; }
/* The idle source (BH_TRACE_IDLE_PARTITION, BH_TRACE_IDLE_VCPU) of the core s names: s's core
 * field, the others all ones (trace_source's layout). */
static inline uint64_t trace_source_idle_of_core_in(uint64_t s)
{
	return (s & 0xff0000ul) | 0xffffff000000ul;
}
static inline unsigned trace_source_partition(uint64_t s) { return (unsigned)(s >> 24) & 0xff; }
static inline unsigned trace_source_vcpu(uint64_t s) { return (unsigned)(s >> 32) & 0xffff; }
void trace_emit(unsigned type, const struct vcpu *v, uint64_t arg);
/* The same with an explicit time (counter ticks). */
void trace_emit_at(unsigned type, const struct vcpu *v, uint64_t arg, uint64_t time);
/* Copy up to max events of `core` into out, oldest first; returns how many. */
unsigned trace_read(unsigned core, struct bh_trace_event *out, unsigned max);

#endif
