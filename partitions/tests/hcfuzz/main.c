/* hcfuzz: a hypercall fuzzer partition and the partitions that watch it
 * (tests/system/configs/campaign_fuzz.yaml, tests/system/test_campaign.py), by partition id:
 *   0 fuzzer:    two vCPUs (cores 1 and 2) issue random hypercalls with edge-biased arguments
 *                and check every result against docs/hypercalls.md and docs/ports.md
 *                (fuzzer.c); seed, call count and strictness come from its description.
 *   1 victim:    core 3, system partition: keeps a 64 KiB memory pattern, a 1 ms timer whose
 *                lateness it measures against the plan, exchanges messages with the fuzzer,
 *                and ends the run (victim.c).
 *   2 neighbour: core 1 beside fuzzer vCPU 0 at a higher priority: the same timer, to show
 *                that a hostile neighbour on the same core cannot delay it beyond the
 *                longest hypercall (victim.c). */
#include "fuzz.h"

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned id = bh_partition_id();

	(void)boot_kind;
	(void)restarts;
	if (id == VICTIM)
		victim_main();
	if (id == NEIGHBOUR)
		neighbour_main();
	fuzzer_main(vcpu);
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind;
	(void)restarts;
	fuzzer_main(vcpu);
}
