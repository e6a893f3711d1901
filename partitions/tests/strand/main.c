/* strand: one console write longer than a drain's chunk (8 numbered lines of 32 bytes in one
 * BH_HC_CONSOLE_WRITE), then a count forever without a hypercall: whatever the write's own
 * drain left queued must still reach the wire though its writer never writes or idles again
 * (attack test, tests/system/test_attack.py). */
#include "bhtest.h"

static volatile unsigned long count;

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	static char text[8 * 32];

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	for (unsigned line = 0; line < 8; line++) {
		char *l = text + line * 32;
		for (unsigned i = 0; i < 31; i++)
			l[i] = (char)('a' + (i + line) % 26);
		l[0] = (char)('0' + line);
		l[31] = '\n';
	}
	/* Late enough that the boot's output is out and every idle core asleep. */
	for (unsigned long long until = bh_now_ns() + 50000000ull; bh_now_ns() < until;)
		;
	bh_console_write(text, sizeof(text));
	for (;;)
		count++;
	return 0;
}
