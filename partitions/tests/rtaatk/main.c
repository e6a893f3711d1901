/* rtaatk: an APEX partition that runs whatever process list its system description declares
 * (the `apex:` key, read back from apex_config), for tests/system/test_rta_attack_runs.py: measured worst
 * responses against `bulkhead analyse`.
 *
 * Each listed process's behaviour is in its name: NAME_wW[_cC[_oO]] (microseconds). A periodic
 * process executes W per activation (a two-instruction loop, 2 ns an iteration under -icount
 * shift=0), the first O of it outside, then C holding the partition's one semaphore "s" (when C is
 * given), then the rest; then PERIODIC_WAIT. The aperiodic process "reporter" (the lowest
 * priority) waits RUN_NS, stops the others and prints one line each:
 *   RTAATK process NAME completions N worst_response_ns R deadline_misses M handler_misses H
 * and then `RTAATK done`. The error handler counts missed deadlines and lets the process go on.
 * A reporter named reporter_dD_fF sets NORMAL only D us into a major frame of F us (a long
 * initialization: where the first releases fall when the partition has no partition period).
 */
#include "apex/apex.h"

#define RUN_NS 120000000ll /* 120 ms */
#define STACK  2048

struct proc {
	char name[MAX_NAME_LENGTH + 1];
	long long work_ns, crit_ns, off_ns;
	PROCESS_ID_TYPE id;
	unsigned long long handler_misses;
};

static struct proc procs[APEX_MAX_PROCESSES];
static unsigned nprocs;
static SEMAPHORE_ID_TYPE sem;

static void spin_ns(long long ns)
{
	unsigned long long n = ns > 0 ? (unsigned long long)ns / 2 : 0;

	if (n)
		__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
}

/* The number after "_<key>" in name, in us, as ns (0 when absent). */
static long long field(const char *name, char key)
{
	for (unsigned i = 0; name[i] && name[i + 1]; i++) {
		if (name[i] == '_' && name[i + 1] == key) {
			long long v = 0;

			for (unsigned j = i + 2; name[j] >= '0' && name[j] <= '9'; j++)
				v = v * 10 + (name[j] - '0');
			return v * 1000;
		}
	}
	return 0;
}

static struct proc *self(void)
{
	PROCESS_ID_TYPE id;
	RETURN_CODE_TYPE rc;

	GET_MY_ID(&id, &rc);
	for (unsigned i = 0; i < nprocs; i++)
		if (procs[i].id == id)
			return &procs[i];
	return 0;
}

/* The loop and the calls around it take less than 100 ns more than work_ns: 100 ns less. */
static void periodic_body(void)
{
	struct proc *me = self();
	RETURN_CODE_TYPE rc;

	for (;;) {
		if (me->crit_ns) {
			spin_ns(me->off_ns);
			WAIT_SEMAPHORE(sem, INFINITE_TIME_VALUE, &rc);
			spin_ns(me->crit_ns);
			SIGNAL_SEMAPHORE(sem, &rc);
			spin_ns(me->work_ns - me->off_ns - me->crit_ns - 100);
		} else {
			spin_ns(me->work_ns - 100);
		}
		PERIODIC_WAIT(&rc);
	}
}

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	for (GET_ERROR_STATUS(&e, &rc); rc == NO_ERROR; GET_ERROR_STATUS(&e, &rc))
		for (unsigned i = 0; i < nprocs; i++)
			if (e.ERROR_CODE == DEADLINE_MISSED && procs[i].id == e.FAILED_PROCESS_ID)
				procs[i].handler_misses++;
}

static void reporter(void)
{
	RETURN_CODE_TYPE rc;

	TIMED_WAIT(RUN_NS, &rc);
	for (unsigned i = 0; i < nprocs; i++)
		STOP(procs[i].id, &rc);
	for (unsigned i = 0; i < nprocs; i++) {
		struct apex_process_counters c;

		apex_get_process_counters(procs[i].id, &c, &rc);
		bh_printf("RTAATK process %s completions %llu worst_response_ns %lld deadline_misses %llu "
			  "handler_misses %llu\n", procs[i].name, c.completions, c.worst_response,
			  c.deadline_misses, procs[i].handler_misses);
	}
	bh_puts("RTAATK done");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;
	int need_sem = 0;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	CREATE_ERROR_HANDLER(error_handler, STACK, &rc);
	if (rc != NO_ERROR)
		bh_puts("RTAATK FAIL error_handler");
	for (unsigned i = 0; i < apex_config.process_count; i++) {
		const struct apex_config_process *d = &apex_config.process_list[i];
		PROCESS_ATTRIBUTE_TYPE a = { d->period, d->time_capacity, periodic_body, STACK,
					     (PRIORITY_TYPE)d->priority, d->deadline ? HARD : SOFT, "" };
		PROCESS_ID_TYPE id;

		for (unsigned j = 0; j < MAX_NAME_LENGTH; j++)
			a.NAME[j] = d->name[j];
		if (d->period == INFINITE_TIME_VALUE) {
			a.ENTRY_POINT = reporter;
			CREATE_PROCESS(&a, &id, &rc);
		} else {
			struct proc *p = &procs[nprocs++];

			for (unsigned j = 0; j < MAX_NAME_LENGTH; j++)
				p->name[j] = d->name[j];
			p->work_ns = field(p->name, 'w');
			p->crit_ns = field(p->name, 'c');
			p->off_ns = field(p->name, 'o');
			need_sem |= p->crit_ns != 0;
			CREATE_PROCESS(&a, &p->id, &rc);
			id = p->id;
		}
		if (rc != NO_ERROR)
			bh_printf("RTAATK FAIL create %d\n", (int)i);
		START(id, &rc);
	}
	if (need_sem)
		CREATE_SEMAPHORE("s", 1, 1, PRIORITY, &sem, &rc);
	for (unsigned i = 0; i < apex_config.process_count; i++) {
		const char *n = apex_config.process_list[i].name;
		long long d = field(n, 'd'), f = field(n, 'f');
		unsigned long long f0, t;

		if (apex_config.process_list[i].period == INFINITE_TIME_VALUE && f &&
		    bh_plan_frame_start(&f0) >= 0) {
			do
				t = bh_now_ns();
			while (t < f0 || (long long)((t - f0) % (unsigned long long)f) < d - 20000 ||
			       (long long)((t - f0) % (unsigned long long)f) > d);
			bh_printf("RTAATK normal at %lld ns into the frame (frame start %llu, now %llu)\n",
				  (long long)((t - f0) % (unsigned long long)f), f0, t);
		}
	}
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
