/* fanwrite: the source of a sampling channel with as many destinations as a description may
 * give it (tests/system/configs/fan_*.yaml), each a partition waiting for the port's interrupt
 * (fanread). It writes the channel's largest message from an odd address, so that the copy is
 * mutually misaligned, and times each write by the counter: alone on a dedicated core, a write's
 * time is the hypervisor's path for it. It prints the longest, in counter ticks. */
#include "bhtest.h"

#define WRITES   200u
#define GAP_NS   100000ull /* the readers read and re-arm meanwhile */
#define START_NS 20000000ull

static char buf[4096 + 8];

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	long port = bh_port_open("fan_out");
	unsigned long long longest = 0;
	struct bh_port_info info;

	if (port < 0 || bh_port_info("fan_out", &info) != BH_OK) {
		bh_puts("fanwrite: no port fan_out");
		info.max_message_size = 0;
	}

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (char)i;
	bh_sleep_until_ns(START_NS);
	for (unsigned n = 0; n < WRITES; n++) {
		unsigned long long t0 = bh_counter();
		long rc = bh_sampling_write((int)port, buf + 1, info.max_message_size);
		unsigned long long d = bh_counter() - t0;
		if (rc != BH_OK)
			bh_printf("fanwrite: write %u: %ld\n", n, rc);
		if (d > longest)
			longest = d;
		bh_sleep_ns(GAP_NS);
	}
	bh_printf("BHSTAT fan_write_longest_ticks %llu (%u bytes)\n", longest, info.max_message_size);
	bh_test_report("fan_write_done", 1, "");
	for (;;)
		bh_idle();
}
