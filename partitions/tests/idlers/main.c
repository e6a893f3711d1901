/* idlers: every vCPU of the partition waits for ever (BH_HC_IDLE, no timer armed): vCPU 0
 * starts the others first (tests/system/configs/crowd_cyclic.yaml). A crowd of waiting vCPUs on
 * a core, each looked at by every decision of the core. */
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
	for (unsigned i = 1; bh_vcpu_start(i) == BH_OK; i++)
		;
	for (;;)
		bh_idle();
}
