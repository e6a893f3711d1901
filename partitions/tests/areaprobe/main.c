/* areaprobe: hypercall buffers in the last of many memory areas (tests/system/configs/areas_*.yaml,
 * tests/system/test_areas.py). The hypervisor checks a guest buffer against the partition's
 * areas; alone on a dedicated core, a call's time is its path. It times, by the counter, console
 * writes of 256 bytes that cross a page inside the area given by the test parameter `at` (its
 * guest address; 1: its RAM), and prints the longest, in counter ticks. */
#include "bhtest.h"

#define CALLS 200u

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	static char ram_buf[8192] __attribute__((aligned(4096)));
	unsigned long long at = bh_test_param("at");
	char *area = at > 1 ? (char *)(unsigned long)at : ram_buf;
	char *buf = area + 4096 - 128; /* 128 bytes in each of two pages */
	unsigned long long longest = 0;

	for (unsigned i = 0; i < 256; i++)
		buf[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26); /* four whole lines */
	for (unsigned n = 0; n < CALLS; n++) {
		while (bh_console_flush() > 0) /* an empty ring: the write queues all of it */
			;
		unsigned long long t0 = bh_counter();
		long rc = bh_console_write(buf, 256);
		unsigned long long d = bh_counter() - t0;
		if (rc != 256)
			bh_printf("areaprobe: write %u: %ld\n", n, rc);
		if (d > longest)
			longest = d;
	}
	bh_printf("\nBHSTAT area_write_longest_ticks %llu\n", longest);
	bh_test_report("areaprobe_done", 1, "");
	for (;;)
		bh_idle();
}
