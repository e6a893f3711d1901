/* slotrun: gapcount's victim, also measuring how much of each of its slots it gets: the runs
 * between two long gaps (its slot ends). Its slot is 1 ms; a run much shorter than that is
 * time its core spent elsewhere at the slot's start (a decision that does not end). */
#include "bhtest.h"

#define RUN_NS  300000000ull
#define GAP_MAX 3125ull /* ticks: 50 us */

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long prev = bh_counter(), start = prev, runs = 0, total = 0;
	unsigned long long min_run = ~0ull, short_runs = 0;
	unsigned long long end = bh_now_ns() + RUN_NS, freq = bh_counter_freq();

	(void)vcpu, (void)boot_kind, (void)restarts;
	while (bh_now_ns() < end) {
		unsigned long long now = bh_counter();
		if (now - prev >= GAP_MAX) { /* a slot ended at prev; the next began at now */
			unsigned long long run = prev - start;
			if (runs++) { /* the first was a partial slot */
				total += run;
				if (run < min_run)
					min_run = run;
				if (run * 1000000ull / freq < 900) /* under 900 us of a 1 ms slot */
					short_runs++;
			}
			start = now;
		}
		prev = now;
	}
	unsigned long long kicks = 0;
	bh_vcpu_kicks(0, &kicks);
	unsigned long long all = total + (prev - start); /* with the last, partial run */
	runs = runs > 1 ? runs - 1 : 1;
	bh_printf("BHSTAT slots %llu\nBHSTAT avg_run_us %llu\nBHSTAT min_run_us %llu\n"
		  "BHSTAT short_runs %llu\nBHSTAT kicks %llu\nBHSTAT ran_ms %llu\n", runs,
		  total * 1000000ull / freq / runs, min_run * 1000000ull / freq, short_runs, kicks,
		  all * 1000ull / freq);
	bh_test_report("slotrun_done", 1, "");
	bh_halt_self();
}
