/* rstwait (tests/system/test_reqatk.py, reqatk_restart.yaml): a partition with vCPU 0 alone on
 * a dedicated core and vCPU 1 on a fixed-priority core below another partition's spinner (so
 * vCPU 1 never gets its core). vCPU 0 starts vCPU 1, then restarts the partition (warm). Its
 * own core is free: a user expects vCPU 0 back at once, whatever vCPU 1's core does. Since
 * 5e675f8 the restart waits for vCPU 1's stop, served only in vCPU 1's own time or its core's
 * spare time - neither of which comes on a core the spinner fills. */
#include "bhtest.h"

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	for (;;)
		bh_idle();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind;
	if (restarts == 0) {
		bh_printf("rstwait: started vCPU 1: %ld\n", bh_vcpu_start(1));
		bh_sleep_ns(1000000);
		bh_printf("rstwait: restarting at %llu ms\n", bh_now_ns() / 1000000);
		bh_reset_self(BH_RESET_WARM);
		bh_printf("rstwait: reset_self returned\n");
		for (;;)
			bh_idle();
	}
	bh_test_report("rstwait_back_after_restart", restarts == 1, "");
	bh_printf("rstwait: back at %llu ms\n", bh_now_ns() / 1000000);
	bh_halt_self();
}
