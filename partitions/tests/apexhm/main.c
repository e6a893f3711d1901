/* apexhm: libapex's health monitoring with an error handler (tests/system/test_apex.py,
 * configs/apex_hm.yaml, where memory_violation is `propagate`).
 *
 * Every process-level error a process can cause is provoked once by a worker process and must
 * reach the error handler with its code, the failed process and address; the errors the
 * handler cannot take (raised before NORMAL, in the handler itself, beyond its queue) must
 * reach Bulkhead's health monitor, counted here with BH_HC_HM_STATUS (the console lines are
 * rate-limited, the counts are not).
 */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE
/* Outside the partition's 3 MiB (apex_hm.yaml), inside the 2 MiB block stage 1 maps whole. */
#define BAD_ADDRESS 0x40300000ul
#define QUEUE_FILLERS (APEX_MAX_PENDING_ERRORS + 1)
#define FILLER_CAPACITY (5 * MS)
#define MAX_SEEN 64

/* Bulkhead's health-monitor event numbers (configuration.md, health). */
enum { HM_MEMORY_VIOLATION = 0, HM_PARTITION_ERROR = 3, HM_DEADLINE_MISS = 6 };

/* --- What the error handler saw --------------------------------------------------------------- */

struct seen {
	ERROR_CODE_TYPE code;
	PROCESS_ID_TYPE pid;
	unsigned long address;
	ERROR_MESSAGE_SIZE_TYPE length;
	char msg[8];
	PROCESS_STATE_TYPE state; /* the failed process's state when the handler ran */
};

static struct seen seen[MAX_SEEN];
static volatile unsigned nseen, activations;

/* What the handler does besides reading errors, set by the test that needs it. */
enum handler_mode { DRAIN, ONE_PER_RUN, RAISE_OWN, FAULT_OWN, CHECK_RULES };
static volatile enum handler_mode mode = DRAIN;

/* The handler's own service results (CHECK_RULES). */
static RETURN_CODE_TYPE rule_rc[8];

static char trail[32];
static volatile unsigned logn;

static void note(char c)
{
	if (logn < sizeof(trail) - 1)
		trail[logn++] = c;
	trail[logn] = 0;
}

static void log_reset(void)
{
	logn = 0;
	trail[0] = 0;
}

static void record(const ERROR_STATUS_TYPE *e)
{
	struct seen *s = &seen[nseen % MAX_SEEN];

	s->code = e->ERROR_CODE;
	s->pid = e->FAILED_PROCESS_ID;
	s->address = (unsigned long)e->FAILED_ADDRESS;
	s->length = e->LENGTH;
	for (int i = 0; i < (int)sizeof(s->msg); i++)
		s->msg[i] = i < e->LENGTH ? (char)e->MESSAGE[i] : 0;
	s->state = apexutil_state_of(e->FAILED_PROCESS_ID);
	nseen++;
}

/* What ARINC 653 refuses the error handler: it has no id, cannot lock or wait. */
static void check_handler_rules(void)
{
	PROCESS_ID_TYPE id;
	LOCK_LEVEL_TYPE level;
	ERROR_STATUS_TYPE e;

	GET_MY_ID(&id, &rule_rc[0]);
	LOCK_PREEMPTION(&level, &rule_rc[1]);
	UNLOCK_PREEMPTION(&level, &rule_rc[2]);
	TIMED_WAIT(1 * MS, &rule_rc[3]);
	SUSPEND_SELF(1 * MS, &rule_rc[4]);
	REPLENISH(1 * MS, &rule_rc[5]);
	PERIODIC_WAIT(&rule_rc[6]);
	GET_ERROR_STATUS(&e, &rule_rc[7]); /* drained already: NO_ACTION */
}

/* Errors the handler causes itself go to Bulkhead's health monitor. */
static void misbehave(void)
{
	RETURN_CODE_TYPE rc;

	if (mode == RAISE_OWN) {
		mode = DRAIN;
		RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"own", 3, &rc);
		note(rc == NO_ERROR ? 'r' : '?');
	} else if (mode == FAULT_OWN) {
		mode = DRAIN;
		__asm__ volatile(".inst 0x00000000"); /* UDF #0: the handler is stopped here */
		note('!');
	}
}

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	activations++;
	note('H');
	for (;;) {
		GET_ERROR_STATUS(&e, &rc);
		if (rc != NO_ERROR)
			break;
		record(&e);
		if (mode == ONE_PER_RUN)
			STOP_SELF(); /* the others wait: the handler starts again */
	}
	if (mode == CHECK_RULES)
		check_handler_rules();
	misbehave();
}

/* --- Worker processes ------------------------------------------------------------------------ */

static PROCESS_ID_TYPE driver, raiser, late, illegal, numeric, unaligned, outside, smasher;
static PROCESS_ID_TYPE locker, fillers[QUEUE_FILLERS], codewriter, victim, recurser;
static PROCESS_ID_TYPE victim2, bigframe;
static SEMAPHORE_ID_TYPE gate, victim_gate;
static RETURN_CODE_TYPE raise_rc[4];
static volatile unsigned long fault_pc;
static volatile int survived;
static LOCK_LEVEL_TYPE locker_level;

static void raiser_body(void)
{
	note('a');
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"boom", 4, &raise_rc[0]);
	note('b');
	RAISE_APPLICATION_ERROR(NUMERIC_ERROR, (MESSAGE_ADDR_TYPE)"x", 1, &raise_rc[1]);
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"x",
				MAX_ERROR_MESSAGE_SIZE + 1, &raise_rc[2]);
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"x", -1, &raise_rc[3]);
}

static void late_body(void)
{
	SYSTEM_TIME_TYPE t0 = apexutil_now();

	while (apexutil_now() - t0 < 2 * MS) /* capacity 1 ms */
		;
	note('l'); /* a missed deadline does not stop the process */
}

/* Each faulting body stores the address of its faulting instruction first; x10 = `arg`. */
#define FAULT_AT(insn, arg)                                                              \
	__asm__ volatile("mov x10, %1\n\tadr x9, 1f\n\tstr x9, [%0]\n1:\t" insn           \
			 : : "r"(&fault_pc), "r"(arg) : "x9", "x10", "memory")

static void illegal_body(void)
{
	FAULT_AT(".inst 0x00000000", 0ul); /* UDF #0 */
	survived = 1;
}

static void numeric_body(void)
{
	FAULT_AT("brk #0x4e55", 0ul); /* what APEX_NUMERIC_CHECK emits */
	survived = 1;
}

static void unaligned_body(void)
{
	/* A jump to an address that is not a multiple of 4: a PC alignment fault at EL1, the
	 * misaligned target in ELR (QEMU does not fault unaligned data accesses with the MMU
	 * off). */
	__asm__ volatile("adr x10, 1f\n\tadd x10, x10, #2\n\tstr x10, [%0]\n\tbr x10\n"
			 "1:\tnop\n\tnop"
			 : : "r"(&fault_pc) : "x10", "memory");
	survived = 1;
}

static void outside_body(void)
{
	/* Outside the partition: a stage-2 fault, propagated back by the hypervisor. */
	FAULT_AT("ldr x10, [x10]", BAD_ADDRESS);
	survived = 1;
}

static void __attribute__((noinline)) smash(void)
{
	volatile char buf[2048 + 256]; /* the stack is 2048 bytes: 256 and more into the guard */

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (char)i;
}

static void smasher_body(void)
{
	RETURN_CODE_TYPE rc;

	smash();
	TIMED_WAIT(1 * MS, &rc); /* the kernel finds the guard damaged at this entry */
	survived = 1;
}

/* Memory protection inside the partition: libapex runs it with the MMU on. */
static void codewriter_body(void)
{
	/* Its own code is read-only: a permission fault at EL1 (with the MMU off the store
	 * would simply change the code). */
	FAULT_AT("str wzr, [x10]", (unsigned long)codewriter_body);
	survived = 1;
}

#define VICTIM_WORDS 64
#define VICTIM_PATTERN 0x5a17c0de5a17c0deul
static volatile int victim_intact = -1;

/* Created just before recurser, so its stack ends right below recurser's guard page: it
 * fills a frame with a pattern, waits, and checks the pattern once recurser has run. */
static void victim_body(void)
{
	volatile unsigned long words[VICTIM_WORDS];
	RETURN_CODE_TYPE rc;
	int intact = 1;

	for (unsigned i = 0; i < VICTIM_WORDS; i++)
		words[i] = VICTIM_PATTERN ^ i;
	WAIT_SEMAPHORE(victim_gate, INF, &rc);
	for (unsigned i = 0; i < VICTIM_WORDS; i++)
		intact &= words[i] == (VICTIM_PATTERN ^ i);
	victim_intact = intact;
}

#define RECURSE_FRAME 192
static volatile unsigned depth_reached, depth_limit = ~0u;

/* Unbounded recursion (the limit is never reached), about RECURSE_FRAME bytes a level: the
 * stack runs down through its canary zone to its guard page. */
static unsigned __attribute__((noinline)) recurse(unsigned n)
{
	volatile char frame[RECURSE_FRAME];

	frame[0] = (char)n;
	depth_reached = n;
	if (n == depth_limit)
		return frame[0];
	return recurse(n + 1) + (unsigned)frame[0]; /* no tail call */
}

static void recurser_body(void)
{
	recurse(1);
	survived = 1;
}

#define BIG_FRAME 16384 /* more than the stack, its second page and the guard pages together */

/* One frame larger than everything between its stack's top and the stack below, written from
 * its lowest byte up: compiled without stack-clash protection, SP would land in the stack
 * below and the loop would overwrite it before reaching the guard pages. */
static char __attribute__((noinline)) big_frame(void)
{
	volatile char big[BIG_FRAME];

	for (unsigned i = 0; i < BIG_FRAME; i++)
		big[i] = 0;
	return big[BIG_FRAME - 1];
}

static void bigframe_body(void)
{
	survived = big_frame() + 1;
}

static void locker_body(void)
{
	RETURN_CODE_TYPE rc;

	LOCK_PREEMPTION(&locker_level, &rc);
	note('k');
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"lk", 2, &rc);
	note('u');
	UNLOCK_PREEMPTION(&locker_level, &rc);
}

static void filler_body(void)
{
	RETURN_CODE_TYPE rc;

	WAIT_SEMAPHORE(gate, INF, &rc); /* its deadline passes while it waits */
}

/* --- Helpers for the tests --------------------------------------------------------------------- */

static unsigned long long hm_count(unsigned event)
{
	struct bh_hm_status st;

	if (bh_hm_status(bh_partition_id(), &st) != BH_OK)
		return ~0ull;
	return st.counts[event];
}

static const struct seen *last_seen(void)
{
	return nseen ? &seen[(nseen - 1) % MAX_SEEN] : 0;
}

/* Runs a process that faults, expecting one error of `code` at its recorded address with the
 * process stopped. */
static void expect_fault(PROCESS_ID_TYPE id, ERROR_CODE_TYPE code, int exact_address)
{
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	survived = 0;
	fault_pc = 0;
	START(id, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT_EQ(nseen, n0 + 1);
	const struct seen *s = last_seen();
	BH_EXPECT_EQ(s->code, code);
	BH_EXPECT_EQ(s->pid, id);
	BH_EXPECT_EQ(s->state, DORMANT);
	if (exact_address)
		BH_EXPECT_EQ(s->address, fault_pc);
	BH_EXPECT_EQ(survived, 0);
	BH_EXPECT_EQ(apexutil_state_of(id), DORMANT);
}

/* --- Tests (the driver, priority 100) ---------------------------------------------------------- */

BH_TEST(apex_hm_queue_full_goes_to_health_monitor)
{
	struct apex_counters c;

	/* The fillers, started during initialization, all missed their deadline in the same
	 * timer interrupt: APEX_MAX_PENDING_ERRORS were queued, one more went to Bulkhead. The
	 * handler read one per activation, so it ran once per error. */
	apex_get_counters(&c);
	BH_EXPECT_EQ(c.errors_handled, APEX_MAX_PENDING_ERRORS);
	BH_EXPECT_EQ(c.errors_to_hm, 2); /* with the initialization's RAISE_APPLICATION_ERROR */
	BH_EXPECT_EQ(hm_count(HM_DEADLINE_MISS), 1);
	BH_EXPECT_EQ(nseen, APEX_MAX_PENDING_ERRORS);
	BH_EXPECT_EQ(activations, APEX_MAX_PENDING_ERRORS);
	for (unsigned i = 0; i < APEX_MAX_PENDING_ERRORS; i++) {
		BH_EXPECT_EQ(seen[i].code, DEADLINE_MISSED);
		BH_EXPECT_EQ(seen[i].pid, fillers[i]);
		BH_EXPECT_EQ(seen[i].state, WAITING);
	}
	mode = DRAIN;
}

BH_TEST(apex_hm_application_error_reaches_handler)
{
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	/* The handler runs inside RAISE_APPLICATION_ERROR, before it returns. */
	log_reset();
	START(raiser, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT(apexutil_streq(trail, "aHb"));
	BH_EXPECT_EQ(nseen, n0 + 1);
	const struct seen *s = last_seen();
	BH_EXPECT_EQ(s->code, APPLICATION_ERROR);
	BH_EXPECT_EQ(s->pid, raiser);
	BH_EXPECT_EQ(s->length, 4);
	BH_EXPECT(apexutil_streq(s->msg, "boom"));
	BH_EXPECT(s->address != 0);
	BH_EXPECT_EQ(raise_rc[0], NO_ERROR);
	BH_EXPECT_EQ(raise_rc[1], INVALID_PARAM);
	BH_EXPECT_EQ(raise_rc[2], INVALID_PARAM);
	BH_EXPECT_EQ(raise_rc[3], INVALID_PARAM);
}

BH_TEST(apex_hm_deadline_miss_reaches_handler)
{
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;
	unsigned long long hm0 = hm_count(HM_DEADLINE_MISS);

	log_reset();
	START(late, &rc);
	apexutil_sleep(3 * MS);
	BH_EXPECT(apexutil_streq(trail, "Hl")); /* the handler ran at the miss; the process went on */
	BH_EXPECT_EQ(nseen, n0 + 1);
	BH_EXPECT_EQ(last_seen()->code, DEADLINE_MISSED);
	BH_EXPECT_EQ(last_seen()->pid, late);
	BH_EXPECT_EQ(hm_count(HM_DEADLINE_MISS), hm0); /* not Bulkhead's */
}

BH_TEST(apex_hm_illegal_request_reaches_handler)
{
	expect_fault(illegal, ILLEGAL_REQUEST, 1);
}

BH_TEST(apex_hm_numeric_error_reaches_handler)
{
	expect_fault(numeric, NUMERIC_ERROR, 1);
}

BH_TEST(apex_hm_memory_violation_in_el1_reaches_handler)
{
	expect_fault(unaligned, MEMORY_VIOLATION, 1);
}

BH_TEST(apex_hm_propagated_memory_violation_reaches_handler)
{
	unsigned long long hm0 = hm_count(HM_MEMORY_VIOLATION);

	/* The hypervisor logs the event (action propagate), skips the load and raises
	 * BH_VIRQ_HM; libapex makes it the process's error. */
	expect_fault(outside, MEMORY_VIOLATION, 1);
	BH_EXPECT_EQ(hm_count(HM_MEMORY_VIOLATION), hm0 + 1);
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), 1); /* still only the initialization's */
}

BH_TEST(apex_hm_stack_overflow_reaches_handler)
{
	expect_fault(smasher, STACK_OVERFLOW, 0);
}

BH_TEST(apex_hm_write_to_own_code_is_a_memory_violation)
{
	expect_fault(codewriter, MEMORY_VIOLATION, 1);
}

/* The guard pages stop the recursion at its first access to them, beyond the process's own
 * pages (a 4 KiB stack, its canary zone and the rest of its second page), before the stack
 * below, another process's, is touched; the canary alone would find it only at the next
 * switch, with that stack overwritten. */
BH_TEST(apex_hm_stack_overflow_stops_at_the_guard)
{
	RETURN_CODE_TYPE rc;

	victim_intact = -1;
	depth_reached = 0;
	START(victim, &rc);
	apexutil_sleep(1 * MS); /* it fills its frame and waits */
	expect_fault(recurser, STACK_OVERFLOW, 0);
	BH_EXPECT(depth_reached > 4096 / RECURSE_FRAME);
	BH_EXPECT(depth_reached < 8192 / RECURSE_FRAME);
	SIGNAL_SEMAPHORE(victim_gate, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(victim_intact, 1);
}

/* The same for one frame larger than the guard: the stack-clash probes GCC emits for it (the
 * APEX applications' flags) touch each page on the way down, and the first in the guard
 * faults. */
BH_TEST(apex_hm_a_frame_larger_than_the_guard_cannot_step_over_it)
{
	RETURN_CODE_TYPE rc;

	victim_intact = -1;
	START(victim2, &rc);
	apexutil_sleep(1 * MS);
	expect_fault(bigframe, STACK_OVERFLOW, 0);
	SIGNAL_SEMAPHORE(victim_gate, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(victim_intact, 1);
}

BH_TEST(apex_hm_handler_preempts_a_preemption_lock)
{
	RETURN_CODE_TYPE rc;

	log_reset();
	START(locker, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT(apexutil_streq(trail, "kHu"));
	BH_EXPECT_EQ(locker_level, 0);
	BH_EXPECT_EQ(last_seen()->pid, locker);
}

BH_TEST(apex_hm_handler_service_rules)
{
	RETURN_CODE_TYPE rc;
	ERROR_STATUS_TYPE e;

	mode = CHECK_RULES;
	START(raiser, &rc);
	apexutil_sleep(1 * MS);
	mode = DRAIN;
	BH_EXPECT_EQ(rule_rc[0], INVALID_MODE);  /* GET_MY_ID */
	BH_EXPECT_EQ(rule_rc[1], NO_ACTION);     /* LOCK_PREEMPTION */
	BH_EXPECT_EQ(rule_rc[2], NO_ACTION);     /* UNLOCK_PREEMPTION */
	BH_EXPECT_EQ(rule_rc[3], INVALID_MODE);  /* TIMED_WAIT */
	BH_EXPECT_EQ(rule_rc[4], INVALID_MODE);  /* SUSPEND_SELF */
	BH_EXPECT_EQ(rule_rc[5], NO_ACTION);     /* REPLENISH */
	BH_EXPECT_EQ(rule_rc[6], INVALID_MODE);  /* PERIODIC_WAIT */
	BH_EXPECT_EQ(rule_rc[7], NO_ACTION);     /* GET_ERROR_STATUS, nothing left */
	/* Only the handler reads errors; it exists already. */
	GET_ERROR_STATUS(&e, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_ERROR_HANDLER(error_handler, 4096, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
}

BH_TEST(apex_hm_errors_of_the_handler_go_to_health_monitor)
{
	RETURN_CODE_TYPE rc;
	unsigned long long pe0 = hm_count(HM_PARTITION_ERROR);

	/* Its own RAISE_APPLICATION_ERROR: partition_error, and it goes on. */
	log_reset();
	mode = RAISE_OWN;
	START(raiser, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT(apexutil_streq(trail, "aHrb"));
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), pe0 + 1);
	/* Its own illegal instruction: partition_error, the handler stopped there; the next
	 * error starts it afresh. */
	log_reset();
	mode = FAULT_OWN;
	START(raiser, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT(apexutil_streq(trail, "aHb"));
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), pe0 + 2);
	log_reset();
	START(raiser, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT(apexutil_streq(trail, "aHb"));
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), pe0 + 2);
}

/* RAISE_APPLICATION_ERROR from an interrupt handler is the partition's, not the interrupted
 * process's: Bulkhead's health monitor gets it, the error handler does not run. */
static RETURN_CODE_TYPE irq_raise_rc = NOT_AVAILABLE;

static void on_bh_timer(unsigned intid)
{
	(void)intid;
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"irq", 3, &irq_raise_rc);
}

BH_TEST(apex_hm_error_raised_in_an_interrupt_handler_is_partition_level)
{
	unsigned long long pe0 = hm_count(HM_PARTITION_ERROR);
	unsigned n0 = nseen, a0 = activations;

	BH_EXPECT_EQ(bh_irq_set_handler(BH_VIRQ_TIMER, on_bh_timer), BH_OK);
	BH_EXPECT_EQ(bh_set_timer(BH_CLOCK_HW, bh_now_ns() + 500 * US, 0), BH_OK);
	apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(irq_raise_rc, NO_ERROR);
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), pe0 + 1);
	BH_EXPECT_EQ(nseen, n0);
	BH_EXPECT_EQ(activations, a0);
}

/* --- Initialization ------------------------------------------------------------------------------ */

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
			    SYSTEM_TIME_TYPE capacity, STACK_SIZE_TYPE stack)
{
	return apexutil_make(name, entry, prio, INF, capacity, stack, SOFT);
}

static void driver_body(void)
{
	RETURN_CODE_TYPE rc;

	apexutil_sleep(FILLER_CAPACITY + 1 * MS); /* the fillers' deadlines pass first */
	bh_test_run_all();
	bh_test_summary();
	/* An error the description makes partition-level (smc: warm_restart): the health monitor
	 * restarts the partition, and the next incarnation must be told so. */
	__asm__ volatile("smc #0" : : : "memory");
	bh_puts("apexhm: the smc came back");
	SET_PARTITION_MODE(IDLE, &rc);
}

/* Second incarnation, after the health monitor's warm restart. */
static void after_health_monitor_restart(void)
{
	RETURN_CODE_TYPE rc;
	PARTITION_STATUS_TYPE ps;
	int ok = 1;
	char detail[128] = "";

	GET_PARTITION_STATUS(&ps, &rc);
	CHECK(rc == NO_ERROR);
	CHECK(bh_restart_cause() == BH_RESTART_HM);
	CHECK(ps.OPERATING_MODE == WARM_START && ps.START_CONDITION == HM_PARTITION_RESTART);
	bh_test_report("apex_hm_restart_by_health_monitor_is_told", ok, detail);
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc);
}

static void create_processes(void)
{
	char name[8] = "fill00";
	RETURN_CODE_TYPE rc;

	driver = make("driver", driver_body, 100, INF, 8192);
	raiser = make("raiser", raiser_body, 20, INF, 4096);
	late = make("late", late_body, 20, 1 * MS, 4096);
	illegal = make("illegal", illegal_body, 20, INF, 4096);
	numeric = make("numeric", numeric_body, 20, INF, 4096);
	unaligned = make("unaligned", unaligned_body, 20, INF, 4096);
	outside = make("outside", outside_body, 20, INF, 4096);
	smasher = make("smasher", smasher_body, 20, INF, 2048);
	locker = make("locker", locker_body, 20, INF, 4096);
	CREATE_SEMAPHORE("gate", 0, 1, FIFO, &gate, &rc);
	CREATE_SEMAPHORE("vgate", 0, 1, FIFO, &victim_gate, &rc);
	for (unsigned i = 0; i < QUEUE_FILLERS; i++) {
		name[4] = (char)('0' + i / 10);
		name[5] = (char)('0' + i % 10);
		fillers[i] = make(name, filler_body, 5, FILLER_CAPACITY, 1024);
		START(fillers[i], &rc); /* released together at NORMAL: one deadline for all */
	}
	codewriter = make("codewriter", codewriter_body, 20, INF, 4096);
	victim = make("victim", victim_body, 20, INF, 4096);
	recurser = make("recurser", recurser_body, 20, INF, 4096); /* its stack right above */
	victim2 = make("victim2", victim_body, 20, INF, 4096);
	bigframe = make("bigframe", bigframe_body, 20, INF, 4096);
}

/* CREATE_ERROR_HANDLER's refusals, then the handler; errors before NORMAL are the
 * partition's; REPORT_APPLICATION_MESSAGE prints one console line. */
static void init_hm_checks(void)
{
	RETURN_CODE_TYPE rc;
	ERROR_STATUS_TYPE e;
	int ok = 1;
	char detail[96] = "";

	CREATE_ERROR_HANDLER(0, 4096, &rc);
	CHECK(rc == INVALID_PARAM);
	CREATE_ERROR_HANDLER(error_handler, APEX_MIN_STACK_SIZE - 16, &rc);
	CHECK(rc == INVALID_PARAM);
	CREATE_ERROR_HANDLER(error_handler, APEX_STACK_POOL_SIZE, &rc);
	CHECK(rc == INVALID_PARAM);
	CREATE_ERROR_HANDLER(error_handler, APEX_STACK_POOL_SIZE - APEX_STACK_GUARD_SIZE, &rc);
	CHECK(rc == INVALID_CONFIG); /* the processes took part of the pool */
	CREATE_ERROR_HANDLER(error_handler, 4096, &rc);
	CHECK(rc == NO_ERROR);
	CREATE_ERROR_HANDLER(error_handler, 4096, &rc);
	CHECK(rc == NO_ACTION);
	GET_ERROR_STATUS(&e, &rc);
	CHECK(rc == INVALID_CONFIG);
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"init", 4, &rc);
	CHECK(rc == NO_ERROR && hm_count(HM_PARTITION_ERROR) == 1);
	REPORT_APPLICATION_MESSAGE((MESSAGE_ADDR_TYPE)"hello report", 12, &rc);
	CHECK(rc == NO_ERROR);
	REPORT_APPLICATION_MESSAGE((MESSAGE_ADDR_TYPE)"x", MAX_ERROR_MESSAGE_SIZE + 1, &rc);
	CHECK(rc == INVALID_PARAM);
	REPORT_APPLICATION_MESSAGE((MESSAGE_ADDR_TYPE)"x", -1, &rc);
	CHECK(rc == INVALID_PARAM);
	bh_test_report("apex_hm_init_checks", ok, detail);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	if (boot_kind == BH_BOOT_WARM_RESTART) {
		after_health_monitor_restart();
		return 0;
	}
	create_processes();
	init_hm_checks();
	mode = ONE_PER_RUN;
	START(driver, &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
