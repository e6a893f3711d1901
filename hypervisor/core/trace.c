/* Trace rings: single writer (the core), readers serialized by a lock per ring. */
#include "arch.h"
#include "config_tables.h"
#include "partition.h"
#include "percpu.h"
#include "trace.h"

struct ring {
	struct spinlock lock;
	volatile uint32_t head; /* next slot the core writes */
	volatile uint32_t tail; /* next slot a reader takes */
	struct bh_trace_event events[TRACE_RING_EVENTS];
	struct bh_trace_event scratch; /* where an event goes when the ring is full */
};

static struct ring rings[BH_MAX_CORES];

void trace_emit(unsigned type, const struct vcpu *v, uint64_t arg)
{
	trace_emit_at(type, v, arg, arch_counter_read());
}

void trace_emit_at(unsigned type, const struct vcpu *v, uint64_t arg, uint64_t time)
{
	unsigned core = this_cpu()->core;
	struct ring *r = &rings[core];
	uint32_t head = r->head;
	bool full = head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= TRACE_RING_EVENTS;

	/* The same work whether the ring is full or not: tracing must not change timing. */
	*(full ? &r->scratch : &r->events[head % TRACE_RING_EVENTS]) = (struct bh_trace_event){
		.time = time,
		.type = (unsigned short)type,
		.core = (unsigned char)core,
		.partition = v ? (unsigned char)v->partition->cfg->id : BH_TRACE_IDLE_PARTITION,
		.vcpu = v ? (unsigned short)v->id : BH_TRACE_IDLE_VCPU,
		.arg = arg,
	};
	__atomic_store_n(&r->head, head + !full, __ATOMIC_RELEASE);
}

unsigned trace_read(unsigned core, struct bh_trace_event *out, unsigned max)
{
	struct ring *r = &rings[core];
	unsigned n = 0;

	arch_spin_lock(&r->lock);
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	for (; n < max && r->tail + n != head; n++)
		out[n] = r->events[(r->tail + n) % TRACE_RING_EVENTS];
	__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
	arch_spin_unlock(&r->lock);
	return n;
}
