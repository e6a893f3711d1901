/* edfreset: an EDF vCPU whose own partition restarts it over and over, to get its budget back
 * (tests/system/configs/edf_reset.yaml, tests/system/test_edfreset.py). vCPU 1, on the EDF
 * core, spins; vCPU 0, on a core of its own, halts and starts it every RESET_NS, before its
 * budget runs out. A start resets the vCPU; if a reset also released it (a full budget now, a
 * deadline a period from now), vCPU 1 would hold the core far beyond its budget per period,
 * with deadlines earlier than its neighbours', and they would miss theirs. Every 200 resets it
 * prints how long vCPU 1 ran (its execution clock before each halt) in the wall time since. */
#include "bhtest.h"

#define RESET_NS 500000ull /* 0.5 ms, against a budget of 1 ms every 2 ms */

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	for (;;)
		__asm__ volatile("" ::: "memory");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	bh_vcpu_start(1);
	unsigned long long total = 0, t0 = bh_now_ns(), exec;
	for (unsigned n = 1;; n++) {
		bh_sleep_ns(RESET_NS);
		if (bh_vcpu_status(1, 0, &exec) >= 0)
			total += exec;
		bh_vcpu_ctl(BH_VCPU_HALT, 1, 0);
		bh_vcpu_ctl(BH_VCPU_START, 1, 0);
		if (n % 200 == 0) {
			bh_printf("edfreset: vCPU 1 ran %llu us of the last %llu us\n", total / 1000,
				  (bh_now_ns() - t0) / 1000);
			total = 0, t0 = bh_now_ns();
		}
	}
}
