/* Small helpers the APEX test and benchmark partitions share (apextest, apexhm, apexbench). */
#ifndef APEXTEST_APEXUTIL_H
#define APEXTEST_APEXUTIL_H

#include "apex/apex.h"

static inline int apexutil_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static inline SYSTEM_TIME_TYPE apexutil_now(void)
{
	SYSTEM_TIME_TYPE t;
	RETURN_CODE_TYPE rc;

	GET_TIME(&t, &rc);
	return t;
}

static inline void apexutil_sleep(SYSTEM_TIME_TYPE d)
{
	RETURN_CODE_TYPE rc;

	TIMED_WAIT(d, &rc);
}

/* The process's state, or -1 for an unknown id. */
static inline PROCESS_STATE_TYPE apexutil_state_of(PROCESS_ID_TYPE id)
{
	PROCESS_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;

	GET_PROCESS_STATUS(id, &st, &rc);
	return rc == NO_ERROR ? st.PROCESS_STATE : (PROCESS_STATE_TYPE)-1;
}

/* CREATE_PROCESS from its attributes; prints why it failed (id 0 then). */
static inline PROCESS_ID_TYPE apexutil_make(const char *name, void (*entry)(void),
					    PRIORITY_TYPE prio, SYSTEM_TIME_TYPE period,
					    SYSTEM_TIME_TYPE capacity, STACK_SIZE_TYPE stack,
					    DEADLINE_TYPE deadline)
{
	PROCESS_ATTRIBUTE_TYPE a = { period, capacity, entry, stack, prio, deadline, "" };
	PROCESS_ID_TYPE id = 0;
	RETURN_CODE_TYPE rc;

	for (unsigned i = 0; name[i] && i < MAX_NAME_LENGTH; i++)
		a.NAME[i] = name[i];
	CREATE_PROCESS(&a, &id, &rc);
	if (rc != NO_ERROR)
		bh_printf("CREATE_PROCESS %s: %d\n", name, (int)rc);
	return rc == NO_ERROR ? id : 0;
}

/* The switch-cost measurements apextest and apexbench share: two processes of one priority
 * yield to each other `n` times each; a waiter above a signaller takes `n` units of `sem`.
 * Times are counter ticks (bh_counter), summed over the runs. */
struct apexutil_costs {
	SEMAPHORE_ID_TYPE sem;
	int n;
	volatile int yielders;                 /* set to 0 before the yielders start */
	unsigned long long yield_t0, yield_t1; /* the first yielder's start, the second's end */
	volatile unsigned long long t_sig, t_block;
	unsigned long long sum_sig, sum_block; /* signal -> waiter running, block -> next running */
};

static inline void apexutil_yielder(struct apexutil_costs *c)
{
	RETURN_CODE_TYPE rc;
	int first = c->yielders++ == 0;

	if (first)
		c->yield_t0 = bh_counter();
	for (int i = 0; i < c->n; i++)
		TIMED_WAIT(0, &rc);
	if (!first)
		c->yield_t1 = bh_counter();
}

static inline void apexutil_signaller(struct apexutil_costs *c)
{
	RETURN_CODE_TYPE rc;

	for (int i = 0; i < c->n; i++) {
		c->sum_block += bh_counter() - c->t_block;
		c->t_sig = bh_counter();
		SIGNAL_SEMAPHORE(c->sem, &rc);
	}
}

static inline void apexutil_waiter(struct apexutil_costs *c)
{
	RETURN_CODE_TYPE rc;

	for (int i = 0; i < c->n; i++) {
		c->t_block = bh_counter();
		WAIT_SEMAPHORE(c->sem, INFINITE_TIME_VALUE, &rc);
		c->sum_sig += bh_counter() - c->t_sig;
	}
}

/* In checks run outside a BH_TEST (initialization, restarts), with locals `int ok = 1` and
 * `char detail[...]`: the first failed condition goes to detail, for bh_test_report. */
#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (ok && !(cond)) {                                                     \
			ok = 0;                                                          \
			bh_snprintf(detail, sizeof(detail), "line %d: %s", __LINE__, #cond); \
		}                                                                        \
	} while (0)

#endif
