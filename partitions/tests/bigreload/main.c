/* bigreload: a partition with a 16 MiB .bss that cold-restarts itself RESTARTS times. Each
 * incarnation first checks that the reload cleared what the previous one wrote, so a reload
 * cut into steps is still complete. A neighbour (slotcheck) checks that these reloads cost
 * only this partition's own slots. */
#include "bhtest.h"

#define BIG (16u << 20)
#define RESTARTS 10u

static volatile unsigned char big[BIG];

static int cleared(void)
{
	for (unsigned i = 0; i < BIG; i += 4096)
		if (big[i])
			return 0;
	return big[BIG - 1] == 0;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	if (!cleared()) {
		bh_test_report("bigreload_bss_cleared", 0, "a cold restart left .bss dirty");
		bh_halt_self();
	}
	if (restarts < RESTARTS) {
		for (unsigned i = 0; i < BIG; i += 4096)
			big[i] = 1;
		big[BIG - 1] = 1;
		bh_reset_self(BH_RESET_COLD);
	}
	bh_test_report("bigreload_bss_cleared", boot_kind == BH_BOOT_COLD_RESTART, "");
	bh_halt_self();
}
