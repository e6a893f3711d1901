/* tracer: a system partition that copies the hypervisor's trace rings to the console as
 * BHTRACE lines (for `bulkhead trace`) until MAJOR_FRAMES major frames have run, then
 * halts the system. */
#include "bhtest.h"

#define DRAIN_MS     1u  /* every major frame: each drain stays short */
#define TRACE_CORES  4u
#define MAJOR_FRAMES 1000ull

/* Drains every core; returns the first error a read returned, or BH_OK. */
static long drain_all(void)
{
	long first_err = BH_OK;

	for (unsigned core = 0; core < TRACE_CORES; core++) {
		long rc = bh_trace_drain_rc(core, 0);

		if (rc < 0 && first_err == BH_OK) {
			bh_printf("tracer: trace_read(core %u) failed: %ld\n", core, rc);
			first_err = rc;
		}
	}
	return first_err;
}

_Noreturn static void finish(int ok, const char *detail)
{
	bh_test_report("tracer_done", ok, detail);
	bh_test_summary();
	long rc = bh_halt_system();

	bh_printf("tracer: halt_system failed: %ld\n", rc);
	bh_halt_self();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long frames = 0;
	long err = BH_OK;
	char detail[64];

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_trace_print_freq();
	while (frames < MAJOR_FRAMES) {
		/* Relative: a slow drain just delays the next one, it does not cause a burst. */
		bh_sleep_ms(DRAIN_MS);
		long rc = drain_all();

		if (err == BH_OK)
			err = rc;
		rc = bh_plan_status(0, 0, &frames, 0);
		if (rc < 0) {
			bh_snprintf(detail, sizeof(detail), "plan_status failed: %ld", rc);
			finish(0, detail);
		}
	}
	long rc = drain_all();

	if (err == BH_OK)
		err = rc;
	bh_snprintf(detail, sizeof(detail), "a trace read failed: %ld", err);
	finish(err == BH_OK, detail);
}
