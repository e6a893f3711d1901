/* apexatk3: a hostile APEX application against libapex's services: time sums at the edge of
 * what the services accept, a preemption lock left behind by SUSPEND, messages that straddle
 * an unmapped page, bad pointers handed to services (tests/system/test_attack3_apex.py,
 * configs/apex_atk3.yaml). Each test provokes one thing and checks that the caller gets its
 * return code or its own error, and that the kernel's state (its timers, its lock level, the
 * objects other processes use, the error queue) is what the services say. The partition has
 * no partition period (no apex key): a periodic process may have any period. The tests run in
 * source order, the driver above every other process.
 */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE
#define MAX_TIME (1ll << 62) /* the longest delay, time-out or capacity the services take */
#define PAGE 4096ul
#define MAX_SEEN 32
#define STACK 4096 /* with its canary zone, two pages: the guard pages lie right below them */
#define STACK_PAGES (2 * PAGE)

/* The image runs twice (apex_atk3.yaml): as partition 0 every test but one, as partition 1
 * (with memory_violation: propagate) only the one about a propagated fault inside a service. */
#define ONLY_IN(id) do { if (bh_partition_id() != (id)) return; } while (0)

/* --- What the error handler saw, and what it was told to do ----------------------------------- */

struct seen {
	ERROR_CODE_TYPE code;
	PROCESS_ID_TYPE pid;
	MESSAGE_SIZE_TYPE length;
};

static struct seen seen[MAX_SEEN];
static volatile unsigned nseen;
static volatile PROCESS_ID_TYPE handler_suspends; /* SUSPEND this process on its next error */
static volatile RETURN_CODE_TYPE handler_suspend_rc = -1;

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	for (;;) {
		GET_ERROR_STATUS(&e, &rc);
		if (rc != NO_ERROR)
			break;
		seen[nseen % MAX_SEEN] = (struct seen){ e.ERROR_CODE, e.FAILED_PROCESS_ID, e.LENGTH };
		nseen++;
		if (handler_suspends && e.FAILED_PROCESS_ID == handler_suspends) {
			SUSPEND(handler_suspends, &rc);
			handler_suspend_rc = rc;
			handler_suspends = 0;
		}
	}
}

static unsigned errors_of(PROCESS_ID_TYPE pid, unsigned n0)
{
	unsigned n = 0;

	for (unsigned i = n0; i < nseen; i++)
		n += seen[i % MAX_SEEN].pid == pid;
	return n;
}

static int seen_since(PROCESS_ID_TYPE pid, ERROR_CODE_TYPE code, unsigned n0)
{
	for (unsigned i = n0; i < nseen; i++)
		if (seen[i % MAX_SEEN].pid == pid && seen[i % MAX_SEEN].code == code)
			return 1;
	return 0;
}

/* --- Processes --------------------------------------------------------------------------------- */

static PROCESS_ID_TYPE driver, sleeper, far_start, far_periodic, locker, lock_victim;
static PROCESS_ID_TYPE pad, straddler, receiver, bad_sender, bad_locker, far_sender;
static PROCESS_ID_TYPE spinner;
static BLACKBOARD_ID_TYPE board;
static BUFFER_ID_TYPE buffer;
static SEMAPHORE_ID_TYPE sem;

static volatile int sleeper_back;

/* Blocks in a short TIMED_WAIT: its wake-up tells whether the core's timers still fire. */
static void sleeper_body(void)
{
	apexutil_sleep(300 * US);
	sleeper_back = 1;
}

static void idle_body(void)
{
	for (;;)
		apexutil_sleep(MAX_TIME);
}

/* PERIODIC_WAIT with the longest period and capacity: its next deadline is two of them away. */
static volatile RETURN_CODE_TYPE far_periodic_rc = -1;
static void far_periodic_body(void)
{
	RETURN_CODE_TYPE rc;

	PERIODIC_WAIT(&rc);
	far_periodic_rc = rc;
}

/* Busy (the driver keeps the CPU, so no service it calls can hide a stalled timer) for `d`,
 * then whether the sleeper's 300 us timed wait has ended. */
static int timers_fire(SYSTEM_TIME_TYPE d)
{
	SYSTEM_TIME_TYPE t0 = apexutil_now();

	while (apexutil_now() - t0 < d)
		;
	return apexutil_state_of(sleeper) == READY;
}

/* The sleeper blocked in its timed wait before the attack arms anything. */
static void start_sleeper(void)
{
	RETURN_CODE_TYPE rc;

	sleeper_back = 0;
	START(sleeper, &rc);
	apexutil_sleep(50 * US); /* the sleeper runs and blocks */
}

static void end_sleeper(void)
{
	RETURN_CODE_TYPE rc;

	for (unsigned i = 0; i < 10 && !sleeper_back; i++)
		apexutil_sleep(1 * MS);
	STOP(sleeper, &rc);
}

/* An aperiodic process with the longest capacity, started with the longest delay: its
 * release is one longest delay away and its deadline two. The sum must not wrap into the
 * past, where the deadline timer would head the list with a compare value the counter never
 * reaches, and no timer of the core would fire again. */
BH_TEST(atk3_delayed_start_with_the_longest_delay_and_capacity_keeps_the_timers)
{
	ONLY_IN(0);
	PROCESS_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	start_sleeper();
	SYSTEM_TIME_TYPE now = apexutil_now();
	DELAYED_START(far_start, MAX_TIME, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	GET_PROCESS_STATUS(far_start, &st, &rc);
	bh_printf("atk3: deadline of the far start %lld (now %lld)\n", (long long)st.DEADLINE_TIME,
		  (long long)now);
	BH_EXPECT(st.DEADLINE_TIME > now);
	BH_EXPECT(timers_fire(2 * MS));
	BH_EXPECT(!seen_since(far_start, DEADLINE_MISSED, n0));
	STOP(far_start, &rc); /* cancels its timers: the others fire again */
	end_sleeper();
	BH_EXPECT_EQ(sleeper_back, 1);
}

/* A periodic process with the longest period and capacity: its PERIODIC_WAIT moves the release
 * one period on and the deadline a capacity beyond that. */
BH_TEST(atk3_periodic_wait_with_the_longest_period_keeps_the_timers)
{
	ONLY_IN(0);
	PROCESS_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	start_sleeper();
	SYSTEM_TIME_TYPE now = apexutil_now();
	START(far_periodic, &rc); /* above the driver: it runs now and waits for its next period */
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(apexutil_state_of(far_periodic), WAITING);
	GET_PROCESS_STATUS(far_periodic, &st, &rc);
	bh_printf("atk3: deadline of the far periodic %lld (now %lld)\n",
		  (long long)st.DEADLINE_TIME, (long long)now);
	BH_EXPECT(st.DEADLINE_TIME > now);
	BH_EXPECT(timers_fire(2 * MS));
	BH_EXPECT(!seen_since(far_periodic, DEADLINE_MISSED, n0));
	STOP(far_periodic, &rc);
	end_sleeper();
	BH_EXPECT_EQ(sleeper_back, 1);
}

/* The process that locked preemption raises an error; the handler SUSPENDs it. The lock must
 * not stay behind without its owner: the other processes would run with the core's level
 * above 0, every wait of theirs INVALID_MODE, their own LOCK/UNLOCK counting on the owner's. */
static volatile LOCK_LEVEL_TYPE locker_level = -1;
static volatile int locker_done;
static volatile RETURN_CODE_TYPE victim_rc = -1;
static volatile LOCK_LEVEL_TYPE victim_level = -1;

static void locker_body(void)
{
	LOCK_LEVEL_TYPE level;
	RETURN_CODE_TYPE rc;

	LOCK_PREEMPTION(&level, &rc);
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"locked", 6, &rc);
	UNLOCK_PREEMPTION(&level, &rc);
	locker_level = level;
	locker_done = 1;
}

static void lock_victim_body(void)
{
	PARTITION_STATUS_TYPE ps;
	RETURN_CODE_TYPE rc;

	GET_PARTITION_STATUS(&ps, &rc);
	victim_level = ps.LOCK_LEVEL;
	TIMED_WAIT(100 * US, &rc);
	victim_rc = rc;
}

BH_TEST(atk3_suspend_of_the_preemption_lock_holder_leaves_no_lock_behind)
{
	ONLY_IN(0);
	PARTITION_STATUS_TYPE ps;
	RETURN_CODE_TYPE rc;

	handler_suspends = locker;
	START(locker, &rc);
	START(lock_victim, &rc);
	apexutil_sleep(2 * MS);
	bh_printf("atk3: handler's SUSPEND of the lock holder: %d; the other saw level %d, its wait "
		  "%d\n", (int)handler_suspend_rc, (int)victim_level, (int)victim_rc);
	GET_PARTITION_STATUS(&ps, &rc);
	BH_EXPECT_EQ(ps.LOCK_LEVEL, 0);
	BH_EXPECT_EQ(victim_level, 0);
	BH_EXPECT_EQ(victim_rc, NO_ERROR);
	BH_EXPECT_EQ(handler_suspend_rc, INVALID_MODE); /* refused: it holds the core */
	/* Clean up whatever happened. */
	handler_suspends = 0;
	if (apexutil_state_of(locker) == WAITING)
		RESUME(locker, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(locker_done, 1);
	BH_EXPECT_EQ(locker_level, 0);
	STOP(lock_victim, &rc);
}

/* --- Messages that run into an unmapped page ---------------------------------------------------- */

/* The straddler's stack is carved right after pad's (which is never started), so its guard
 * pages lie right above pad's stack: the last 32 bytes of pad's stack, then the guard. */
#define HEAD 32
enum straddle_mode { DISPLAY_IT, RAISE_IT };
static volatile enum straddle_mode straddle_mode;
static volatile int straddler_survived;

/* The top of the caller's guard pages (the bottom of its stack's pages). */
static unsigned long my_guard_top(void)
{
	unsigned long sp;

	__asm__ volatile("mov %0, sp" : "=r"(sp));
	return ((sp + PAGE - 1) & ~(PAGE - 1)) - STACK_PAGES;
}

static MESSAGE_ADDR_TYPE straddling_message(void)
{
	MESSAGE_ADDR_TYPE m = (MESSAGE_ADDR_TYPE)(my_guard_top() - 2 * PAGE - HEAD);

	for (unsigned i = 0; i < HEAD; i++)
		m[i] = 'B';
	return m;
}

static void straddler_body(void)
{
	MESSAGE_ADDR_TYPE m = straddling_message();
	RETURN_CODE_TYPE rc;

	if (straddle_mode == DISPLAY_IT)
		DISPLAY_BLACKBOARD(board, m, 64, &rc);
	else
		RAISE_APPLICATION_ERROR(APPLICATION_ERROR, m, 64, &rc);
	straddler_survived = 1;
}

static void run_straddler(enum straddle_mode mode)
{
	RETURN_CODE_TYPE rc;

	straddle_mode = mode;
	straddler_survived = 0;
	START(straddler, &rc);
	for (unsigned i = 0; i < 10 && apexutil_state_of(straddler) != DORMANT; i++)
		apexutil_sleep(200 * US);
}

/* A DISPLAY whose message runs into a guard page is the displayer's MEMORY_VIOLATION, and the
 * board keeps the message it had: never half of one and half of the other. */
BH_TEST(atk3_display_of_a_message_into_a_guard_page_leaves_the_board_as_it_was)
{
	ONLY_IN(0);
	static APEX_BYTE old[64], got[64];
	MESSAGE_SIZE_TYPE len = 0;
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen, changed = 0;

	for (unsigned i = 0; i < 64; i++)
		old[i] = 'A';
	DISPLAY_BLACKBOARD(board, old, 64, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	run_straddler(DISPLAY_IT);
	BH_EXPECT_EQ(apexutil_state_of(straddler), DORMANT);
	BH_EXPECT_EQ(straddler_survived, 0);
	BH_EXPECT(seen_since(straddler, MEMORY_VIOLATION, n0));
	READ_BLACKBOARD(board, 0, got, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(len, 64);
	for (unsigned i = 0; i < 64; i++)
		changed += got[i] != 'A';
	bh_printf("atk3: the board after the faulting DISPLAY: %u bytes changed\n", changed);
	BH_EXPECT_EQ(changed, 0);
}

/* RAISE_APPLICATION_ERROR with a message that runs into a guard page: the caller's
 * MEMORY_VIOLATION, and no APPLICATION_ERROR half copied into the handler's queue. */
BH_TEST(atk3_raise_with_a_message_into_a_guard_page_queues_only_the_fault)
{
	ONLY_IN(0);
	unsigned n0 = nseen;

	run_straddler(RAISE_IT);
	BH_EXPECT_EQ(apexutil_state_of(straddler), DORMANT);
	BH_EXPECT_EQ(straddler_survived, 0);
	bh_printf("atk3: errors of the raiser: %u\n", errors_of(straddler, n0));
	BH_EXPECT(seen_since(straddler, MEMORY_VIOLATION, n0));
	BH_EXPECT(!seen_since(straddler, APPLICATION_ERROR, n0));
	BH_EXPECT_EQ(errors_of(straddler, n0), 1);
}

/* --- Bad pointers handed to services ---------------------------------------------------------- */

static APEX_BYTE received[64];
static volatile MESSAGE_SIZE_TYPE received_len = -1;
static volatile RETURN_CODE_TYPE received_rc = -1;
static volatile int bad_sender_survived;

static void receiver_body(void)
{
	MESSAGE_SIZE_TYPE len;
	RETURN_CODE_TYPE rc;

	RECEIVE_BUFFER(buffer, INF, received, &len, &rc);
	received_len = len;
	received_rc = rc;
}

static void bad_sender_body(void)
{
	RETURN_CODE_TYPE rc;

	/* Its own guard page: unmapped (NULL is mapped by stage 1, and only stage 2 refuses it:
	 * the hypervisor's fault, which the description's health action takes). */
	SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)(my_guard_top() - 64), 8, 0, &rc);
	bad_sender_survived = 1;
}

/* A send from an unmapped address to a waiting receiver: the sender's MEMORY_VIOLATION; the receiver keeps
 * waiting and takes the next good message whole. */
BH_TEST(atk3_send_from_a_guard_page_to_a_waiting_receiver_faults_the_sender_only)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	START(receiver, &rc);
	apexutil_sleep(100 * US);
	BH_EXPECT_EQ(apexutil_state_of(receiver), WAITING);
	START(bad_sender, &rc);
	apexutil_sleep(200 * US);
	BH_EXPECT_EQ(bad_sender_survived, 0);
	BH_EXPECT(seen_since(bad_sender, MEMORY_VIOLATION, n0));
	BH_EXPECT_EQ(apexutil_state_of(receiver), WAITING);
	SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)"good", 4, 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(100 * US);
	BH_EXPECT_EQ(received_rc, NO_ERROR);
	BH_EXPECT_EQ(received_len, 4);
	BH_EXPECT(received[0] == 'g' && received[3] == 'd');
}

/* An address in the partition's code: read-only with the MMU on. */
static void code_target(void) { __asm__ volatile("nop"); }

/* LOCK_PREEMPTION with its level written to the code: the caller's fault after the level
 * went up; the lock must go with it. */
static void bad_locker_body(void)
{
	RETURN_CODE_TYPE rc;

	LOCK_PREEMPTION((LOCK_LEVEL_TYPE *)(unsigned long)code_target, &rc);
	for (;;)
		;
}

BH_TEST(atk3_lock_preemption_with_a_read_only_level_drops_the_lock)
{
	ONLY_IN(0);
	PARTITION_STATUS_TYPE ps;
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	START(bad_locker, &rc);
	apexutil_sleep(200 * US);
	BH_EXPECT_EQ(apexutil_state_of(bad_locker), DORMANT);
	BH_EXPECT(seen_since(bad_locker, MEMORY_VIOLATION, n0));
	GET_PARTITION_STATUS(&ps, &rc);
	BH_EXPECT_EQ(ps.LOCK_LEVEL, 0);
	TIMED_WAIT(100 * US, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
}

/* Bad times, ids, priorities: each its return code, nothing armed. */
BH_TEST(atk3_bad_arguments_get_their_return_codes)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;
	LOCK_LEVEL_TYPE level;

	TIMED_WAIT(INF, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	TIMED_WAIT(-2, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	TIMED_WAIT(MAX_TIME + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	WAIT_SEMAPHORE(sem, -5, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	WAIT_SEMAPHORE(sem + 1, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DELAYED_START(far_periodic, MAX_TIME, &rc); /* not below its period */
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DELAYED_START(sleeper, -1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	PERIODIC_WAIT(&rc); /* the driver is aperiodic */
	BH_EXPECT_EQ(rc, INVALID_MODE);
	REPLENISH(-5, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	REPLENISH(MAX_TIME + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SET_PRIORITY(sleeper, 10, &rc); /* DORMANT */
	BH_EXPECT_EQ(rc, INVALID_MODE);
	SET_PRIORITY(driver, MAX_PRIORITY_VALUE + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SUSPEND(driver, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	STOP(0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	START(APEX_MAX_PROCESSES + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	for (unsigned i = 0; i < MAX_LOCK_LEVEL; i++)
		LOCK_PREEMPTION(&level, &rc);
	LOCK_PREEMPTION(&level, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	BH_EXPECT_EQ(level, MAX_LOCK_LEVEL);
	TIMED_WAIT(1 * MS, &rc); /* cannot wait with preemption locked */
	BH_EXPECT_EQ(rc, INVALID_MODE);
	for (unsigned i = 0; i < MAX_LOCK_LEVEL; i++)
		UNLOCK_PREEMPTION(&level, &rc);
	BH_EXPECT_EQ(level, 0);
	UNLOCK_PREEMPTION(&level, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	TIMED_WAIT(100 * US, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
}

/* NULL handed to services, one call at a time by a process of its own: each is that process's
 * MEMORY_VIOLATION, and the partition goes on (no health action: stage 2 alone would make each
 * the hypervisor's memory_violation, whose default action halts the partition). */
static volatile unsigned null_case;
static volatile int nuller_survived;
static PROCESS_ID_TYPE nuller;
#define NULL_CASES 5

static void nuller_body(void)
{
	MESSAGE_SIZE_TYPE len;
	RETURN_CODE_TYPE rc;
	SEMAPHORE_ID_TYPE id;

	switch (null_case) {
	case 0: /* the receiver waits: straight into its buffer */
		SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)0, 8, 0, &rc);
		break;
	case 1:
		GET_SEMAPHORE_ID((const char *)0, &id, &rc);
		break;
	case 2:
		GET_TIME((SYSTEM_TIME_TYPE *)0, &rc);
		break;
	case 3:
		RECEIVE_BUFFER(buffer, 0, received, (MESSAGE_SIZE_TYPE *)0, &rc);
		break;
	default:
		SIGNAL_SEMAPHORE(sem, (RETURN_CODE_TYPE *)0);
		break;
	}
	(void)len;
	nuller_survived = 1;
}

BH_TEST(atk3_null_pointers_to_services_are_the_callers_memory_violation)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;

	received_rc = -1;
	START(receiver, &rc);
	apexutil_sleep(100 * US);
	BH_EXPECT_EQ(apexutil_state_of(receiver), WAITING);
	for (unsigned k = 0; k < NULL_CASES; k++) {
		unsigned n0 = nseen;

		null_case = k;
		nuller_survived = 0;
		START(nuller, &rc);
		for (unsigned i = 0; i < 10 && apexutil_state_of(nuller) != DORMANT; i++)
			apexutil_sleep(100 * US);
		bh_printf("atk3: NULL case %u: survived %d, errors %u\n", k, nuller_survived,
			  errors_of(nuller, n0));
		BH_EXPECT_EQ(nuller_survived, 0);
		BH_EXPECT(seen_since(nuller, MEMORY_VIOLATION, n0));
	}
	BH_EXPECT_EQ(apexutil_state_of(receiver), WAITING); /* nothing was delivered */
	SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)"good", 4, 0, &rc);
	apexutil_sleep(100 * US);
	BH_EXPECT_EQ(received_rc, NO_ERROR);
	BH_EXPECT_EQ(received_len, 4);
}

/* --- Services from an application's interrupt handler ------------------------------------------ */

/* An interrupt handler is no process: a service it calls must not act for the process it
 * happened to interrupt (stop it, lock preemption for it, tell its id, move its deadline). */
static volatile int irq_ran, spinner_done;
static volatile RETURN_CODE_TYPE irq_id_rc = -1, irq_lock_rc = -1, irq_replenish_rc = -1;
static volatile LOCK_LEVEL_TYPE irq_level = -1;

static void irq_handler(unsigned intid)
{
	PROCESS_ID_TYPE id;
	LOCK_LEVEL_TYPE level;
	RETURN_CODE_TYPE rc;

	(void)intid;
	GET_MY_ID(&id, &rc);
	irq_id_rc = rc;
	LOCK_PREEMPTION(&level, &rc);
	irq_lock_rc = rc;
	irq_level = level;
	if (rc == NO_ERROR)
		UNLOCK_PREEMPTION(&level, &rc);
	REPLENISH(1 * MS, &rc);
	irq_replenish_rc = rc;
	STOP_SELF(); /* the initialization's and a handler's: no effect */
	irq_ran = 1;
}

static void spinner_body(void)
{
	while (!irq_ran)
		;
	spinner_done = 1;
}

BH_TEST(atk3_services_from_an_interrupt_handler_do_not_act_for_the_interrupted_process)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;

	BH_EXPECT_EQ(bh_irq_set_handler(BH_VIRQ_TIMER, irq_handler), BH_OK);
	START(spinner, &rc);
	BH_EXPECT_EQ(bh_set_timer(BH_CLOCK_HW, bh_now_ns() + 300 * US, 0), BH_OK);
	for (unsigned i = 0; i < 20 && !spinner_done; i++)
		apexutil_sleep(200 * US);
	bh_printf("atk3: from the interrupt handler: GET_MY_ID %d, LOCK_PREEMPTION %d (level %d), "
		  "REPLENISH %d; the interrupted process done %d\n", (int)irq_id_rc, (int)irq_lock_rc,
		  (int)irq_level, (int)irq_replenish_rc, spinner_done);
	BH_EXPECT_EQ(irq_ran, 1);
	BH_EXPECT_EQ(spinner_done, 1);
	BH_EXPECT_EQ(irq_id_rc, INVALID_MODE);
	BH_EXPECT_EQ(irq_lock_rc, NO_ACTION);
	BH_EXPECT_EQ(irq_replenish_rc, NO_ACTION);
	STOP(spinner, &rc);
}

/* --- A propagated fault inside a service (partition 1: memory_violation: propagate) ------------- */

/* An address outside the partition, beyond the first 2 MiB: stage 2 does not map it, and stage
 * 1 must not either (or the hypervisor skips each access and raises BH_VIRQ_HM after the
 * service has gone on). */
#define OUTSIDE 0x80000000ul
static volatile int far_sender_survived;

static void far_sender_body(void)
{
	RETURN_CODE_TYPE rc;

	/* One byte: one access, one propagated event (a second before the first is taken halts
	 * the partition). */
	SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)OUTSIDE, 1, 0, &rc);
	far_sender_survived = 1;
	for (;;)
		apexutil_sleep(MAX_TIME);
}

/* The sender's copy reads outside the partition while the receiver waits: the error must be
 * the sender's, and the receiver must not be handed a message made of skipped loads. */
BH_TEST(atk3_send_from_outside_the_partition_is_the_senders_error)
{
	ONLY_IN(1);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	received_rc = -1;
	START(receiver, &rc);
	/* Under -icount the other partition's core takes most of the instruction clock: wait for
	 * states, not for times. */
	for (unsigned i = 0; i < 50 && apexutil_state_of(receiver) != WAITING; i++)
		apexutil_sleep(200 * US);
	BH_EXPECT_EQ(apexutil_state_of(receiver), WAITING);
	START(far_sender, &rc);
	for (unsigned i = 0; i < 50 && !far_sender_survived && nseen == n0; i++)
		apexutil_sleep(200 * US);
	apexutil_sleep(500 * US);
	bh_printf("atk3: far send: sender survived %d, its errors %u, the receiver's %u (its "
		  "receive %d)\n", far_sender_survived, errors_of(far_sender, n0),
		  errors_of(receiver, n0), (int)received_rc);
	BH_EXPECT(seen_since(far_sender, MEMORY_VIOLATION, n0));
	BH_EXPECT_EQ(errors_of(receiver, n0), 0);
	BH_EXPECT(received_rc != NO_ERROR);
}

/* --- Initialization ------------------------------------------------------------------------------ */

static void driver_body(void)
{
	RETURN_CODE_TYPE rc;

	bh_test_run_all();
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc);
}

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio)
{
	return apexutil_make(name, entry, prio, INF, INF, STACK, SOFT);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	driver = make("driver", driver_body, 100);
	sleeper = make("sleeper", sleeper_body, 10);
	far_start = apexutil_make("farstart", idle_body, 10, INF, MAX_TIME, STACK, SOFT);
	far_periodic = apexutil_make("farperiodic", far_periodic_body, 110, MAX_TIME, MAX_TIME,
				     STACK, SOFT);
	locker = make("locker", locker_body, 20);
	lock_victim = make("lockvictim", lock_victim_body, 10);
	pad = make("pad", idle_body, 10); /* never started: its stack lies below the straddler's */
	straddler = make("straddler", straddler_body, 20);
	receiver = make("receiver", receiver_body, 30);
	bad_sender = make("badsender", bad_sender_body, 20);
	bad_locker = make("badlocker", bad_locker_body, 20);
	far_sender = make("farsender", far_sender_body, 20);
	spinner = make("spinner", spinner_body, 20);
	nuller = make("nuller", nuller_body, 20);
	(void)pad;
	CREATE_BLACKBOARD("board", 64, &board, &rc);
	CREATE_BUFFER("buffer", 64, 4, FIFO, &buffer, &rc);
	CREATE_SEMAPHORE("sem", 0, 1, FIFO, &sem, &rc);
	CREATE_ERROR_HANDLER(error_handler, 4096, &rc);
	START(driver, &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
