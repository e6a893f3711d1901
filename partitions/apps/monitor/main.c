/* monitor: the system partition of the demo; reports the hypervisor's uptime every 2 s. */
#include "bulkhead/bulkhead.h"

#define REPORT_PERIOD_NS 2000000000ull

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long deadline = bh_now_ns();

	(void)vcpu;
	bh_printf("monitor: started (boot %u, restart #%u)\n", boot_kind, restarts);
	for (;;) {
		deadline += REPORT_PERIOD_NS;
		bh_sleep_until_ns(deadline);

		unsigned long long ns;
		long rc = bh_get_time(&ns);

		if (rc < 0) {
			bh_printf("monitor: get_time failed: %ld\n", rc);
			continue;
		}
		unsigned long long ms = ns / 1000000ull;

		bh_printf("uptime %llu.%03llu s: system ok\n", ms / 1000, ms % 1000);
	}
	return 0;
}
