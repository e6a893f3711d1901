/* lifekick: life-cycle calls on a vCPU that does not run must not interrupt the core it is pinned
 * to (tests/system/configs/lifeatk_kick.yaml, tests/system/test_lifeatk.py). vCPU 0 (core 1)
 * starts vCPU 1 (pinned to core 2, where it waits in its own slot), then suspends and resumes it,
 * or halts and starts it again, in a loop: none of these changes what core 2 does while it runs
 * another partition's slot. gapcount there counts the interruptions of its slot. */
#include "bhtest.h"

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	for (;;)
		bh_idle();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	bh_vcpu_start(1);
	for (unsigned long n = 0;; n++) {
		if (n & 1) {
			bh_vcpu_ctl(BH_VCPU_SUSPEND, 1, 0);
			bh_vcpu_ctl(BH_VCPU_RESUME, 1, 0);
		} else {
			bh_vcpu_ctl(BH_VCPU_HALT, 1, 0);
			bh_vcpu_ctl(BH_VCPU_START, 1, 0);
		}
		bh_sleep_ns(20000); /* its core idles meanwhile: -icount keeps every core's pace */
	}
}
