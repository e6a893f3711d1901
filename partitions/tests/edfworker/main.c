/* edfworker: periodic tasks for EDF scheduling, one per partition, by partition id
 * (modulo 4):
 *   0: period 10 ms, work 2 ms;  1: period 20 ms, work 5 ms;  2: period 40 ms, work 8 ms;
 *   3: "overrun": spins forever without a hypercall (its budget must contain it).
 * A periodic task is released at first_release + k * period; it then consumes `work` of
 * its own execution time (BH_CLOCK_EXEC, so preemption does not count as work) and
 * reports a deadline miss if it completed after release + period. */
#include "bhtest.h"

#define ROLE_COUNT       4u
#define ROLE_OVERRUN     3u
#define P0_PERIOD_NS     5000000ull
#define P0_WORK_NS       1000000ull
#define P1_PERIOD_NS     10000000ull
#define P1_WORK_NS       2500000ull
#define P2_PERIOD_NS     20000000ull
#define P2_WORK_NS       4000000ull
#define ACTIVATIONS      30u
#define FOREVER_SLEEP_MS 1000u

struct task {
	unsigned long long period_ns;
	unsigned long long work_ns;
};

static const struct task tasks[ROLE_OVERRUN] = {
	{ P0_PERIOD_NS, P0_WORK_NS },
	{ P1_PERIOD_NS, P1_WORK_NS },
	{ P2_PERIOD_NS, P2_WORK_NS },
};

struct results {
	unsigned long long max_response_ns;
	unsigned misses;
	long exec_error;  /* first BH_CLOCK_EXEC failure, or BH_OK */
};

static volatile unsigned long spin_count;

_Noreturn static void overrun(void)
{
	bh_puts("edf overrun: spinning");
	for (;;)
		spin_count++;
}

/* Loops until this vCPU has run work_ns more; returns BH_OK or the clock's error. */
static long consume_exec(unsigned long long work_ns)
{
	unsigned long long start, now;
	long rc = bh_get_exec_time(&start);

	if (rc < 0)
		return rc;
	do {
		rc = bh_get_exec_time(&now);
		if (rc < 0)
			return rc;
	} while (now - start < work_ns);
	return BH_OK;
}

static void activation(const struct task *t, unsigned k, unsigned long long release,
		       struct results *res)
{
	bh_sleep_until_ns(release);
	long rc = consume_exec(t->work_ns);
	unsigned long long done = bh_now_ns();

	if (rc < 0 && res->exec_error == BH_OK)
		res->exec_error = rc;
	if (done - release > res->max_response_ns)
		res->max_response_ns = done - release;
	if (done > release + t->period_ns) {
		res->misses++;
		bh_deadline_miss(k);
	}
}

static void report(unsigned id, const struct results *res)
{
	char name[32], detail[64];

	bh_printf("BHSTAT edf_p%u_max_response_ns %llu\n", id, res->max_response_ns);
	bh_printf("BHSTAT edf_p%u_misses %u\n", id, res->misses);
	bh_snprintf(name, sizeof(name), "edf_p%u_no_miss", id);
	bh_snprintf(detail, sizeof(detail), "%u misses, exec clock rc %ld", res->misses,
		    res->exec_error);
	bh_test_report(name, res->misses == 0 && res->exec_error == BH_OK, detail);
}

_Noreturn static void periodic(unsigned id, const struct task *t)
{
	struct results res = { 0, 0, BH_OK };
	unsigned long long first = bh_now_ns();

	bh_printf("edf p%u: start\n", id);
	for (unsigned k = 0; k < ACTIVATIONS; k++)
		activation(t, k, first + k * t->period_ns, &res);
	report(id, &res);
	bh_test_summary();
	for (;;)
		bh_sleep_ms(FOREVER_SLEEP_MS);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned part = bh_partition_id();

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	unsigned role = part % ROLE_COUNT;

	if (role == ROLE_OVERRUN)
		overrun();
	periodic(part, &tasks[role]);
}
