/* gapcount: a victim that counts the interruptions of its own run. It spins on the counter for
 * RUN_NS; a jump of GAP_MIN..GAP_MAX ticks between two reads is a short gap, a longer one its slot
 * end. Short gaps are interruptions of its slot by the hypervisor (a kick, a trap on its core:
 * microseconds), but not only: without -icount the host descheduling QEMU's thread for the core,
 * under -icount (one clock for all cores, run in turn) any other core's instructions. So it also
 * reports the kicks that reached its core while it ran (bh_vcpu_kicks): the hypervisor's alone. */
#include "bhtest.h"

#define RUN_NS  400000000ull
#define GAP_MIN 32ull   /* ticks: 0.5 us */
#define GAP_MAX 3125ull /* ticks: 50 us */

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long short_gaps = 0, long_gaps = 0, prev = bh_counter();
	unsigned long long end = bh_now_ns() + RUN_NS;

	(void)vcpu, (void)boot_kind, (void)restarts;
	while (bh_now_ns() < end) {
		unsigned long long now = bh_counter(), gap = now - prev;
		if (gap >= GAP_MAX)
			long_gaps++;
		else if (gap >= GAP_MIN)
			short_gaps++;
		prev = now;
	}
	unsigned long long kicks = 0;
	bh_vcpu_kicks(0, &kicks);
	bh_printf("BHSTAT short_gaps %llu\nBHSTAT long_gaps %llu\nBHSTAT kicks %llu\n", short_gaps, long_gaps,
		  kicks);
	bh_test_report("gapcount_done", 1, "");
	bh_halt_self();
}
