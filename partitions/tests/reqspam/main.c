/* reqspam (tests/system/test_reqatk.py): a hostile partition whose vCPUs 0, 2 and 3 (cores 1, 3
 * and 0) suspend and resume its own vCPU 1 (pinned to core 2, where slotrun has the other half
 * of each frame) as fast as they can. Each call is a change to vCPU 1 from another core: since
 * 5e675f8 it raises core 2's requests flag (no kick), and core 2's decision loops while the flag
 * is up (sched.c decide: the re-check after the fence, serve_in_spare_time's `changed`). */
#include "bhtest.h"

static __attribute__((noreturn)) void spam(void)
{
	for (;;) {
		bh_vcpu_ctl(BH_VCPU_SUSPEND, 1, 0);
		bh_vcpu_ctl(BH_VCPU_RESUME, 1, 0);
	}
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	if (vcpu == 1)
		for (;;)
			bh_idle();
	spam();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	bh_vcpu_start(1);
	bh_vcpu_start(2);
	bh_vcpu_start(3);
	spam();
}
