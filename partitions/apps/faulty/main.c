/* faulty: boots, counts for three seconds, then stores into memory that belongs to the
 * control partition. The store faults at stage 2 and the health monitor restarts this
 * partition (per configuration); control must carry on undisturbed. */
#include "bulkhead/bulkhead.h"

/* An IPA outside this partition's memory: control's memory in the demo layout. */
#define FAULTY_TARGET_IPA 0x42000000ul

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	bh_printf("faulty: booted (restart #%u)\n", restarts);
	for (unsigned s = 1; s <= 3; s++) {
		bh_sleep_ms(1000);
		bh_printf("faulty: %u\n", s);
	}
	bh_printf("faulty: writing into control's memory at 0x%08lx\n", FAULTY_TARGET_IPA);
	bh_write32(FAULTY_TARGET_IPA, 0xbadc0de);
	/* Only reached when the configured action lets the partition continue. */
	bh_printf("faulty: the write did not stop me, halting\n");
	return 0;
}
