/* attack_other: stores into an IPA outside its own memory (where another partition's
 * memory lies physically). Stage 2 must stop the store; if the configured action lets
 * the partition continue, it says so and tries a few more times. */
#include "bhtest.h"

#define ATTACK_OTHER_IPA 0x42400000ul

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_puts("attacking");
	bh_write32(ATTACK_OTHER_IPA, 0xdead);
	bh_test_report("attack_other_continued", 1, "");
	for (int i = 0; i < 3; i++)
		bh_write32(ATTACK_OTHER_IPA, 0xdead);
	return 0;
}
