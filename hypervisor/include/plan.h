/* Cyclic plans: which plan is in force, and where in its major frame a given instant lies.
 * One plan state for the whole system, so every cyclic core switches plans at the same
 * instant, at a major-frame boundary or at once. */
#ifndef BULKHEAD_PLAN_H
#define BULKHEAD_PLAN_H

#include <stdint.h>
#include "config_tables.h"

struct vcpu;

/* A slot in counter ticks, resolved at boot. */
struct slot_rt {
	uint64_t start, end;  /* offsets in the major frame */
	struct vcpu *vcpu;
	uint32_t flags;       /* BH_SLOT_* */
};

struct plan_position {
	uint32_t plan;
	uint64_t frame;       /* major frames of this plan since it took effect */
	uint64_t frame_start; /* counter value where this frame began */
	uint64_t frame_end;   /* next boundary: frame end, or a pending switch if earlier */
};

/* Boot: convert the plans to ticks and start the initial plan at t0. */
void plan_init(const struct bh_system_cfg *sys, uint64_t t0);
/* Where `now` lies; commits a plan switch that is due. */
void plan_locate(uint64_t now, struct plan_position *pos);
/* The slots plan `plan` gives `core`. */
const struct slot_rt *plan_slots(uint32_t plan, unsigned core, unsigned *count);
/* BH_HC_PLAN_SWITCH: returns a BH_* code. */
int plan_request(uint32_t plan, uint32_t when, uint64_t now);
void plan_status(uint64_t now, uint32_t *current, uint32_t *next, uint64_t *frames);
unsigned plan_count(void);
/* Nanoseconds to counter ticks. */
uint64_t ns_to_ticks(uint64_t ns);
uint64_t ticks_to_ns(uint64_t ticks);

#endif
