/* ticker: periodic activation straight from the EL1 virtual timer interrupt, to measure
 * interrupt latency and jitter through the virtual GIC. The handler records each
 * activation and re-arms the timer for the previous deadline + period (absolute, so
 * errors never accumulate); main idles between ticks with IRQs unmasked. It prints the
 * statistics and the interval before every activation (BHINTERVAL runs) for the harness. */
#include "bhtest.h"

#define TICK_NS             1000000ll  /* 1 ms */
#define TICKS               10000u
#define PRINT_EVERY         1000u
#define JITTER_TOLERANCE_NS 1000ll
#define CNTV_CTL_ENABLE     1ul

struct tick_stats {
	long long first_deadline;  /* ns, bh_now_ns time base */
	long long deadline;        /* the deadline the timer is armed for */
	long long last;            /* previous activation */
	long long interval_err_min, interval_err_max;
	long long late_min, late_max, late_first;
};

/* Interval error per tick, run-length encoded (ticks first..last all had error err): the
 * whole series of 10 000 intervals for the harness to plot, in a few console lines. */
#define MAX_RUNS 64u
struct interval_run {
	unsigned first, last;
	long long err;
};

/* Written by the handler only; main reads it after the last tick. */
static struct tick_stats st;
static struct interval_run runs[MAX_RUNS];
static unsigned run_count, runs_dropped;
/* Polled by main while the handler runs. */
static volatile unsigned ticks;

static void vtimer_arm(long long deadline_ns)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_ns_to_ticks((unsigned long long)deadline_ns)),
			   "r"(CNTV_CTL_ENABLE) : "memory");
}

static void note_interval(unsigned tick, long long err)
{
	struct interval_run *r = run_count ? &runs[run_count - 1] : 0;

	if (r && r->err == err && r->last + 1 == tick)
		r->last = tick;
	else if (run_count < MAX_RUNS)
		runs[run_count++] = (struct interval_run){ tick, tick, err };
	else
		runs_dropped++;
}

static void record(long long now)
{
	long long late = now - st.deadline;

	if (ticks == 0) {
		st.late_first = st.late_min = st.late_max = late;
	} else {
		long long err = now - st.last - TICK_NS;

		if (ticks == 1 || err < st.interval_err_min)
			st.interval_err_min = err;
		if (ticks == 1 || err > st.interval_err_max)
			st.interval_err_max = err;
		note_interval(ticks, err);
		if (late < st.late_min)
			st.late_min = late;
		if (late > st.late_max)
			st.late_max = late;
	}
	st.last = now;
	ticks = ticks + 1;
}

/* Re-arming moves the compare value into the future, which drops the timer's level
 * before the EOI; it keeps re-arming after the last tick so main's idle always ends. */
static void on_tick(unsigned intid)
{
	long long now = (long long)bh_now_ns();

	(void)intid;
	if (ticks < TICKS)
		record(now);
	st.deadline += TICK_NS;
	vtimer_arm(st.deadline);
}

/* The last activation against its ideal time, counted from the first deadline. */
static long long drift(void)
{
	return st.last - (st.first_deadline + (long long)(TICKS - 1) * TICK_NS);
}

static void print_stats(void)
{
	bh_printf("BHSTAT ticks %u\n", ticks);
	bh_printf("BHSTAT period_ns %lld\n", TICK_NS);
	bh_printf("BHSTAT interval_err_min_ns %lld\n", st.interval_err_min);
	bh_printf("BHSTAT interval_err_max_ns %lld\n", st.interval_err_max);
	bh_printf("BHSTAT lateness_min_ns %lld\n", st.late_min);
	bh_printf("BHSTAT lateness_max_ns %lld\n", st.late_max);
	bh_printf("BHSTAT drift_ns %lld\n", drift());
	bh_printf("BHSTAT interval_runs_dropped %u\n", runs_dropped);
	for (unsigned i = 0; i < run_count; i++)
		bh_printf("BHINTERVAL %u %u %lld\n", runs[i].first, runs[i].last, runs[i].err);
}

static void report(void)
{
	long long spread = st.late_max - st.late_min;
	long long drift_off = drift() - st.late_first;
	char detail[96];

	if (drift_off < 0)
		drift_off = -drift_off;
	bh_snprintf(detail, sizeof(detail),
		    "lateness spread %lld ns, drift - first lateness %lld ns", spread, drift_off);
	bh_test_report("ticker_period_kept",
		       spread <= JITTER_TOLERANCE_NS && drift_off <= JITTER_TOLERANCE_NS, detail);
}

/* A tick that lands between the check and the idle is not lost: the handler has already
 * re-armed the timer, so idle ends at the next one. */
static void wait_for_ticks(void)
{
	unsigned printed = 0;

	while (ticks < TICKS) {
		bh_idle();
		while (printed + PRINT_EVERY <= ticks) {
			printed += PRINT_EVERY;
			bh_printf("ticker: tick %u\n", printed);
		}
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_irq_set_handler(BH_VIRQ_VTIMER, on_tick);
	st.first_deadline = (long long)bh_now_ns() + TICK_NS;
	st.deadline = st.first_deadline;
	vtimer_arm(st.deadline);
	bh_irq_enable();
	wait_for_ticks();
	bh_irq_disable();
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	print_stats();
	report();
	bh_test_summary();
	bh_halt_self();
}
