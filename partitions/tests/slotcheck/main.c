/* slotcheck: a victim that measures its own slot starts against the plan, never against what
 * it first observed. It spins on the counter; a jump means it was switched out, and the first
 * read after one is the start of a slot. Its slot is SLOT_OFFSET into every major frame of
 * FRAME (the description it runs in must say so), counted from the frame start the hypervisor
 * reports (BH_HC_PLAN_STATUS), so a late start is measured as late, and a missed slot as
 * missed. Prints the figures as BHSTAT lines for the harness and reports one verdict. */
#include "bhtest.h"

#define FRAME_NS       2000000ull /* the description's major frame */
#define SLOT_OFFSET_NS 1000000ull /* where slotcheck's slot starts in it */
#define SLOTS          200u       /* slot starts to measure */
#define GAP_TICKS      32u        /* a jump this long between two reads: switched out */

struct slot_stats {
	unsigned long long slots, missed, late_max, interruptions;
};

static void measure(struct slot_stats *st)
{
	unsigned long long frame = bh_ns_to_ticks(FRAME_NS), offset = bh_ns_to_ticks(SLOT_OFFSET_NS);
	unsigned long long epoch_ns = 0;
	bh_plan_frame_start(&epoch_ns);
	unsigned long long epoch = bh_ns_to_ticks(epoch_ns), prev = bh_counter(), last_k = ~0ull;

	while (st->slots < SLOTS) {
		unsigned long long now = bh_counter();
		if (now - prev > GAP_TICKS && now >= epoch + offset) {
			unsigned long long k = (now - epoch - offset) / frame;
			unsigned long long late = now - (epoch + k * frame + offset);
			if (k == last_k) {
				st->interruptions++; /* inside its own slot */
			} else {
				if (last_k != ~0ull)
					st->missed += k - last_k - 1;
				if (late > st->late_max)
					st->late_max = late;
				st->slots++;
				last_k = k;
			}
		}
		prev = now;
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	struct slot_stats st = { 0 };
	char detail[128];

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	measure(&st);
	bh_printf("BHSTAT slots %llu\n", st.slots);
	bh_printf("BHSTAT missed %llu\n", st.missed);
	bh_printf("BHSTAT late_max_ticks %llu\n", st.late_max);
	bh_printf("BHSTAT interruptions %llu\n", st.interruptions);
	bh_snprintf(detail, sizeof(detail), "%llu slots, %llu missed, latest %llu ticks late",
		    st.slots, st.missed, st.late_max);
	bh_test_report("slotcheck_slots_on_plan", st.missed == 0, detail);
	bh_halt_self();
}
