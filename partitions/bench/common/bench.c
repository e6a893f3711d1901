/* Platform-independent helpers of the benchmark programs (partition and bare builds). */
#include "bench.h"

int bench_check_counter(void)
{
	unsigned long long f = bh_counter_freq();

	if (f * BENCH_NS_PER_TICK == 1000000000ull)
		return 0;
	bh_printf("BENCH-ERROR counter runs at %llu Hz, the stamps assume 62500000\n", f);
	return -1;
}

void bench_report(const char *name, unsigned long long value, const char *unit)
{
	bh_printf("BENCH %s %llu %s\n", name, value, unit);
}
