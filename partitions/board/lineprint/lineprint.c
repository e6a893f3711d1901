/* lineprint: whole lines to the PL011 as fast as it goes (one trapped store a byte: the direct
 * and queued console paths), numbered; two partitions run it at once (attack test). */
#define PROBE_NAME "lp"
#include "fwprobe.h"

int main(void)
{
	for (uint32_t i = 0; i < 3000; i++) {
		puts_("lp: 0123456789abcdefghijklmnopqrstuvwxyz ");
		puthex(i);
		puts_("\n");
	}
	puts_("lp: done\n");
	return 0;
}
