/* attack_hyp: identity mapped at 0x43000000 (linked there, PART_BASE_attack_hyp), it
 * stores to the physical addresses of the hypervisor image and of the start of RAM. */
#include "bhtest.h"

#define HYP_IMAGE_IPA 0x40080000ul   /* where the hypervisor is loaded */
#define RAM_START_IPA 0x40000000ul

static void attack(unsigned long addr)
{
	bh_printf("attack_hyp: writing to 0x%08lx\n", addr);
	bh_write32(addr, 0xdead);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	attack(HYP_IMAGE_IPA);
	attack(RAM_START_IPA);
	bh_test_report("attack_hyp_continued", 1, "");
	return 0;
}
