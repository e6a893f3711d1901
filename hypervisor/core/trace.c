/* Trace rings: single writer (the core), readers serialized by a lock per ring. */
#include "arch.h"
#include "config_tables.h"
#include "lib.h"
#include "partition.h"
#include "percpu.h"
#include "trace.h"

_Static_assert(sizeof(struct trace_raw_event) == sizeof(struct bh_trace_event),
	       "trace event layout");
_Static_assert(BH_MAX_CORES <= 0x100 && BH_MAX_PARTITIONS <= 0x100 && BH_MAX_VCPUS <= 0x10000,
	       "trace_source's fields hold every core, partition and vCPU id (BH_HC_GET_IDS too)");
_Static_assert(BH_TRACE_IDLE_PARTITION == 0xff && BH_TRACE_IDLE_VCPU == 0xffff,
	       "trace_source_idle_of_core_in's idle fields");

static struct trace_ring rings[BH_MAX_CORES];

struct trace_ring *trace_ring_of(unsigned core)
{
	return &rings[core];
}

uint64_t trace_source(unsigned core, unsigned partition, unsigned vcpu)
{
	return (uint64_t)(core & 0xff) << 16 | (uint64_t)(partition & 0xff) << 24 |
	       (uint64_t)(vcpu & 0xffff) << 32;
}

void trace_emit(unsigned type, const struct vcpu *v, uint64_t arg)
{
	trace_emit_at(type, v, arg, arch_counter_read());
}

void trace_emit_at(unsigned type, const struct vcpu *v, uint64_t arg, uint64_t time)
{
	struct percpu *c = this_cpu();
	uint64_t source = v ? v->trace_source
			    : trace_source(c->core, BH_TRACE_IDLE_PARTITION, BH_TRACE_IDLE_VCPU);

	trace_record(c->trace, source | (type & 0xffff), arg, time);
}

/* A hand-back's record as readers get it: the timer's event now, and the switch's left in its
 * slot for the next one out (a reader with room for one event still takes every event). */
static void split_hand_back(struct trace_raw_event *e, struct bh_trace_event *out)
{
	uint64_t source = e->source & ~0xfffful;

	memcpy(out, e, sizeof(*out));
	out->type = BH_TRACE_HYP_TIMER;
	out->arg = e->arg = 0; /* the hand-back does not write it */
	e->source = trace_source_idle_of_core_in(source) | BH_TRACE_VCPU_SWITCH;
}

unsigned trace_read(unsigned core, struct bh_trace_event *out, unsigned max)
{
	struct trace_ring *r = &rings[core];
	unsigned n = 0;
	uint32_t taken = 0;

	arch_spin_lock(&r->lock);
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	while (n < max && r->tail + taken != head) {
		struct trace_raw_event *e = &r->events[(r->tail + taken) % TRACE_RING_EVENTS];
		if ((e->source & 0xffff) == TRACE_HAND_BACK) {
			split_hand_back(e, &out[n++]);
			continue; /* its switch event next, if there is room */
		}
		memcpy(&out[n++], e, sizeof(out[0]));
		taken++;
	}
	__atomic_store_n(&r->tail, r->tail + taken, __ATOMIC_RELEASE);
	arch_spin_unlock(&r->lock);
	return n;
}
