/* apexrta: an APEX partition whose processes and limits come from the system description
 * (tests/system/configs/apex_rta.yaml, its `apex:` key), for tests/system/test_apex_rta.py.
 *
 * The initialization first checks that the library refuses, with INVALID_CONFIG, whatever the
 * description does not declare (one line `APEXRTA limit NAME ok|FAIL` each), then creates the
 * declared processes. Each periodic process executes exactly its declared work per activation
 * (a loop of two instructions per iteration: under -icount shift=0, 2 ns) and calls
 * PERIODIC_WAIT; libapex records its worst response (release point to PERIODIC_WAIT). The error
 * handler counts each process's missed deadlines and lets it go on. After RUN_NS the reporter,
 * the lowest priority, stops the periodic processes and prints one line per process:
 *   APEXRTA process NAME completions N worst_response_ns R deadline_misses M handler_misses H
 * and then `APEXRTA done`.
 */
#include "apex/apex.h"

#define RUN_NS    300000000ll   /* 300 ms: 75 hyperperiods of 4 ms */
#define STACK     2048
#define NPERIODIC 3

/* The declared processes (the same numbers as apex_rta.yaml, which CREATE_PROCESS checks). */
struct periodic {
	const char *name;
	SYSTEM_TIME_TYPE period, capacity;
	long long work_ns;       /* the loop's share of the declared wcet */
	PRIORITY_TYPE priority;
	PROCESS_ID_TYPE id;
	unsigned long long handler_misses;
};

/* The loop and the call around it take less than 100 ns more than work_ns. */
static struct periodic periodic[NPERIODIC] = {
	{ "fast", 1000000, 1000000, 100000 - 100, 30, 0, 0 },
	{ "tight", 2000000, 580000, 250000 - 100, 20, 0, 0 },
	{ "late", 4000000, 1000000, 400000 - 100, 10, 0, 0 },
};

static void name_copy(char *dst, const char *src)
{
	unsigned i = 0;

	for (; i < MAX_NAME_LENGTH && src[i]; i++)
		dst[i] = src[i];
	for (; i < MAX_NAME_LENGTH; i++)
		dst[i] = 0;
}

static void spin_ns(long long ns)
{
	unsigned long long n = (unsigned long long)ns / 2;

	if (n)
		__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
}

static struct periodic *self(void)
{
	PROCESS_ID_TYPE id;
	RETURN_CODE_TYPE rc;

	GET_MY_ID(&id, &rc);
	for (unsigned i = 0; i < NPERIODIC; i++)
		if (periodic[i].id == id)
			return &periodic[i];
	return 0;
}

static void periodic_body(void)
{
	struct periodic *me = self();
	RETURN_CODE_TYPE rc;

	for (;;) {
		spin_ns(me->work_ns);
		PERIODIC_WAIT(&rc);
	}
}

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	for (GET_ERROR_STATUS(&e, &rc); rc == NO_ERROR; GET_ERROR_STATUS(&e, &rc)) {
		for (unsigned i = 0; i < NPERIODIC; i++)
			if (e.ERROR_CODE == DEADLINE_MISSED && periodic[i].id == e.FAILED_PROCESS_ID)
				periodic[i].handler_misses++;
	}
}

static void reporter(void)
{
	RETURN_CODE_TYPE rc;

	TIMED_WAIT(RUN_NS, &rc);
	for (unsigned i = 0; i < NPERIODIC; i++)
		STOP(periodic[i].id, &rc);
	for (unsigned i = 0; i < NPERIODIC; i++) {
		struct apex_process_counters c;

		apex_get_process_counters(periodic[i].id, &c, &rc);
		bh_printf("APEXRTA process %s completions %llu worst_response_ns %lld deadline_misses %llu "
			  "handler_misses %llu\n", periodic[i].name, c.completions, c.worst_response,
			  c.deadline_misses, periodic[i].handler_misses);
	}
	bh_puts("APEXRTA done");
}

static PROCESS_ATTRIBUTE_TYPE attributes(const struct periodic *p, STACK_SIZE_TYPE stack)
{
	PROCESS_ATTRIBUTE_TYPE a = { p->period, p->capacity, periodic_body, stack, p->priority, HARD, "" };

	name_copy(a.NAME, p->name);
	return a;
}

static void verdict(const char *what, int ok)
{
	bh_printf("APEXRTA limit %s %s\n", what, ok ? "ok" : "FAIL");
}

/* What the description does not declare is refused with INVALID_CONFIG; what it does, not. */
static void check_declared_limits(void)
{
	PROCESS_ATTRIBUTE_TYPE a = attributes(&periodic[0], STACK);
	PROCESS_ATTRIBUTE_TYPE stranger = a;
	PROCESS_ID_TYPE id;
	SEMAPHORE_ID_TYPE sem;
	EVENT_ID_TYPE ev;
	BUFFER_ID_TYPE buf;
	BLACKBOARD_ID_TYPE bb;
	SAMPLING_PORT_ID_TYPE sp;
	RETURN_CODE_TYPE rc;

	name_copy(stranger.NAME, "stranger");
	CREATE_PROCESS(&stranger, &id, &rc);
	verdict("unlisted_process", rc == INVALID_CONFIG);
	a.BASE_PRIORITY = 31;
	CREATE_PROCESS(&a, &id, &rc);
	verdict("listed_process_other_priority", rc == INVALID_CONFIG);
	a = attributes(&periodic[0], 64 * 1024);
	CREATE_PROCESS(&a, &id, &rc);
	verdict("stack_beyond_stack_total", rc == INVALID_CONFIG);
	CREATE_SEMAPHORE("s1", 1, 1, FIFO, &sem, &rc);
	verdict("semaphore_declared", rc == NO_ERROR);
	CREATE_SEMAPHORE("s2", 1, 1, FIFO, &sem, &rc);
	verdict("semaphore_beyond_declared", rc == INVALID_CONFIG);
	CREATE_EVENT("e1", &ev, &rc);
	verdict("event_none_declared", rc == INVALID_CONFIG);
	CREATE_BUFFER("b1", 16, 2, FIFO, &buf, &rc);
	verdict("buffer_declared", rc == NO_ERROR);
	CREATE_BUFFER("b2", 16, 2, FIFO, &buf, &rc);
	verdict("buffer_beyond_declared", rc == INVALID_CONFIG);
	CREATE_BLACKBOARD("bb1", 4096, &bb, &rc);
	verdict("blackboard_beyond_message_pool", rc == INVALID_CONFIG);
	CREATE_BLACKBOARD("bb1", 16, &bb, &rc);
	verdict("blackboard_declared", rc == NO_ERROR);
	CREATE_SAMPLING_PORT("status", 16, SOURCE, 1000000, &sp, &rc);
	verdict("port_declared", rc == NO_ERROR);
	CREATE_SAMPLING_PORT("status_in", 16, DESTINATION, 1000000, &sp, &rc);
	verdict("port_beyond_declared", rc == INVALID_CONFIG);
}

static void create_processes(void)
{
	PROCESS_ATTRIBUTE_TYPE r = { INFINITE_TIME_VALUE, INFINITE_TIME_VALUE, reporter, STACK, 1,
				     SOFT, "reporter" };
	PROCESS_ID_TYPE id;
	RETURN_CODE_TYPE rc;

	CREATE_ERROR_HANDLER(error_handler, STACK, &rc);
	verdict("error_handler", rc == NO_ERROR);
	for (unsigned i = 0; i < NPERIODIC; i++) {
		PROCESS_ATTRIBUTE_TYPE a = attributes(&periodic[i], STACK);

		CREATE_PROCESS(&a, &periodic[i].id, &rc);
		verdict(periodic[i].name, rc == NO_ERROR);
		START(periodic[i].id, &rc);
	}
	CREATE_PROCESS(&r, &id, &rc);
	verdict("reporter", rc == NO_ERROR);
	START(id, &rc);
	r.ENTRY_POINT = reporter;
	name_copy(r.NAME, "fast");
	CREATE_PROCESS(&r, &id, &rc);
	verdict("process_beyond_declared", rc == INVALID_CONFIG);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	PARTITION_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	GET_PARTITION_STATUS(&st, &rc);
	bh_printf("APEXRTA partition_period_ns %lld\n", st.PERIOD);
	check_declared_limits();
	create_processes();
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
