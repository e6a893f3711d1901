/* fanread: one of many destinations of a sampling channel (tests/system/configs/fan_*.yaml):
 * waits for BH_VIRQ_PORT and reads the port, which re-arms its notification, so that every
 * write of the source notifies it again. */
#include "bhtest.h"

static char buf[4096];

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	long port = bh_port_open("fan_in");

	if (port < 0) {
		bh_puts("fanread: no port fan_in");
		for (;;)
			bh_idle();
	}
	for (;;) {
		bh_sampling_read((int)port, buf, sizeof(buf), 0, 0);
		bh_idle();
		bh_irq_poll();
	}
}
