/* focus: a board guest that only holds the console's input focus (the first partition with an
 * emulated UART has it at boot) and then sleeps, so that another board partition's UART output
 * is a partition's without focus: queued as records and drained (tests/system/test_uartwait.py,
 * uartwait_nofocus.yaml). */
#define PROBE_NAME "focus"
#include "fwprobe.h"

int main(void)
{
	puts_("focus: holding the input\n");
	return 0;
}
