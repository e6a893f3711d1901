/* apextest: the APEX library kernel, service by service (tests/system/test_apex.py,
 * configs/apex.yaml, under -icount: one instruction is one nanosecond).
 *
 * main is the initialization: it checks what may and may not be done before NORMAL mode,
 * creates every process and resource the tests use (none can be created later), starts the
 * driver and enters NORMAL. The driver (priority 100) runs the BH_TEST bodies below in order;
 * each starts worker processes and watches what they record. At the end the driver asks for a
 * warm restart; the second incarnation checks it came back in WARM_START with nothing of the
 * first, prints the summary and goes IDLE (the hypervisor logs the partition halted).
 *
 * Timing expectations compare with instants planned in advance (a release point from the
 * partition period grid, a delay added to the time of the call), never with a first
 * observation.
 */
#include "bhtest.h"

#include "apex/apex.h"
#include "apexutil.h"
#include "peer_protocol.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE

/* Wake-up bound under -icount (ns = instructions): from a timer's expiry, or the peer's send,
 * to the woken process running while the background partition holds the core (a vCPU switch
 * in the hypervisor first). Measured 1.3 us (timer) and 2.2 us (port); docs/apex.md. */
#define WAKE_LATE_MAX_NS (5 * US)
#define PARTITION_PERIOD (1 * MS)
#define BAD_ADDRESS 0x80000000ul /* outside the partition (stage 1 maps it, stage 2 not) */
#define PER_PERIOD (2 * MS)
#define PER_N 50
#define PINGPONG_N 500

/* --- Logging what processes do ------------------------------------------------------------- */

static char tag_of[APEX_MAX_PROCESSES + 1];
static char logbuf[64];
static unsigned logn;

static void note(char c)
{
	unsigned long f = bh_irq_save();

	if (logn < sizeof(logbuf) - 1)
		logbuf[logn++] = c;
	logbuf[logn] = 0;
	bh_irq_restore(f);
}

static void log_reset(void)
{
	logn = 0;
	logbuf[0] = 0;
}


#define EXPECT_LOG(want)                                                                 \
	do {                                                                             \
		if (!apexutil_streq(logbuf, want)) {                                              \
			char what_[96];                                                  \
			bh_snprintf(what_, sizeof(what_), "log '%s', expected '%s'", logbuf, \
				    want);                                               \
			bh_test_fail(__FILE__, __LINE__, what_);                         \
		}                                                                        \
	} while (0)


static char my_tag(void)
{
	PROCESS_ID_TYPE id = 0;
	RETURN_CODE_TYPE rc;

	GET_MY_ID(&id, &rc);
	return rc == NO_ERROR ? tag_of[id] : '?';
}

static void busy_ns(SYSTEM_TIME_TYPE d)
{
	SYSTEM_TIME_TYPE t0 = apexutil_now();

	while (apexutil_now() - t0 < d)
		;
}



static int wait_dormant(PROCESS_ID_TYPE id)
{
	for (int i = 0; i < 200 && apexutil_state_of(id) != DORMANT; i++)
		apexutil_sleep(100 * US);
	return apexutil_state_of(id) == DORMANT;
}

/* --- Resources created during initialization ------------------------------------------------ */

static PROCESS_ID_TYPE driver, pa, pb, pc, pl, ph, spin, fa, fb, fc, lk, ss, sw, ds, per, sg;
static PROCESS_ID_TYPE w20, w40, w30, rx, dm, pm, dr, so, y1, y2, sa, sb, early, bs, held;
static SEMAPHORE_ID_TYPE sem_zero, sem_two, sem_prio, sem_fifo, sem_sig;
static EVENT_ID_TYPE ev_test, ev_per_done;
static BUFFER_ID_TYPE buf_fifo, buf_prio;
static BLACKBOARD_ID_TYPE board;
static SAMPLING_PORT_ID_TYPE s_out, s_in;
static QUEUING_PORT_ID_TYPE cmd_out;
static SYSTEM_TIME_TYPE init_end;

/* --- Worker process bodies ----------------------------------------------------------------- */

static volatile int stop_spin;
static volatile unsigned long spins;

static void rec_once(void)
{
	note(my_tag());
}

static void rec_yield(void)
{
	RETURN_CODE_TYPE rc;

	note(my_tag());
	TIMED_WAIT(0, &rc);
	note(my_tag());
}

static void spin_body(void)
{
	while (!stop_spin)
		spins = spins + 1;
}

static void preempt_low(void)
{
	RETURN_CODE_TYPE rc;

	note('L');
	START(ph, &rc); /* ph (30) preempts this process (10) inside START */
	note('l');
}

/* Waits on what wait_kind says without time-out, then notes its tag (and, for a message,
 * its first byte). */
enum { ON_SEMAPHORE, ON_EVENT, ON_BUFFER, ON_BLACKBOARD, ON_PORT };
static volatile int wait_kind;
static QUEUING_PORT_ID_TYPE rsp_in;
/* ON_PORT: a waiter's receive on rsp_in (a PRIORITY port, below rx). */
static struct peer_answer rl_msg;
static RETURN_CODE_TYPE rl_rc;
static volatile SEMAPHORE_ID_TYPE waiter_sem;

static void waiter_body(void)
{
	RETURN_CODE_TYPE rc;
	APEX_BYTE msg[16] = { 0 };
	MESSAGE_SIZE_TYPE len = 0;

	if (wait_kind == ON_EVENT)
		WAIT_EVENT(ev_test, INF, &rc);
	else if (wait_kind == ON_BUFFER)
		RECEIVE_BUFFER(buf_prio, INF, msg, &len, &rc);
	else if (wait_kind == ON_BLACKBOARD)
		READ_BLACKBOARD(board, INF, msg, &len, &rc);
	else if (wait_kind == ON_PORT)
		RECEIVE_QUEUING_MESSAGE(rsp_in, INF, (MESSAGE_ADDR_TYPE)&rl_msg, &len, &rl_rc);
	else
		WAIT_SEMAPHORE(waiter_sem, INF, &rc);
	if (rc == NO_ERROR)
		note(my_tag());
	if (rc == NO_ERROR && len > 0)
		note((char)msg[0]);
}

static RETURN_CODE_TYPE lock_rc[16];
static LOCK_LEVEL_TYPE lock_lv[16];

static void lock_body(void)
{
	RETURN_CODE_TYPE rc;
	LOCK_LEVEL_TYPE lv;
	unsigned i = 0;

	LOCK_PREEMPTION(&lock_lv[i], &lock_rc[i]);          /* 0: level 1 */
	i++;
	note('L');
	START(ph, &rc);                                     /* ph (30) must wait */
	note('l');
	TIMED_WAIT(1 * MS, &lock_rc[i++]);                  /* 1: INVALID_MODE */
	SUSPEND_SELF(0, &lock_rc[i++]);                     /* 2: INVALID_MODE */
	WAIT_SEMAPHORE(sem_zero, 1 * MS, &lock_rc[i++]);    /* 3: INVALID_MODE */
	WAIT_SEMAPHORE(sem_zero, 0, &lock_rc[i++]);         /* 4: NOT_AVAILABLE */
	LOCK_PREEMPTION(&lock_lv[i], &lock_rc[i]);          /* 5: level 2 */
	i++;
	UNLOCK_PREEMPTION(&lock_lv[i], &lock_rc[i]);        /* 6: level 1, ph still waits */
	i++;
	note('m');
	UNLOCK_PREEMPTION(&lock_lv[i], &lock_rc[i]);        /* 7: level 0: ph runs here */
	i++;
	note('u');
	UNLOCK_PREEMPTION(&lock_lv[i], &lock_rc[i]);        /* 8: NO_ACTION */
	i++;
	/* A release by the timer while locked waits for the unlock too. */
	LOCK_PREEMPTION(&lv, &rc);
	DELAYED_START(pb, 300 * US, &rc);
	busy_ns(1 * MS);
	note('x');
	UNLOCK_PREEMPTION(&lv, &rc);                        /* pb (20) runs here */
	note('y');
	/* MAX_LOCK_LEVEL, then one more. */
	for (int n = 0; n < MAX_LOCK_LEVEL; n++)
		LOCK_PREEMPTION(&lv, &rc);
	lock_lv[i] = lv;                                    /* 9: 16 */
	LOCK_PREEMPTION(&lock_lv[i], &lock_rc[i]);          /* 9: INVALID_CONFIG */
	i++;
	/* Stopping itself with the lock held releases it. */
	STOP_SELF();
}

static RETURN_CODE_TYPE ss_rc[2];
static SYSTEM_TIME_TYPE ss_t0, ss_t1;

static void suspend_self_body(void)
{
	note('s');
	SUSPEND_SELF(INF, &ss_rc[0]);
	note('r');
	ss_t0 = apexutil_now();
	SUSPEND_SELF(2 * MS, &ss_rc[1]);
	ss_t1 = apexutil_now();
	note('t');
}

static SYSTEM_TIME_TYPE ds_ran_at;

static void delayed_body(void)
{
	ds_ran_at = apexutil_now();
}

static volatile SYSTEM_TIME_TYPE per_act[PER_N];
static volatile unsigned per_n;
static RETURN_CODE_TYPE per_rc[4], per_wait_rc;

static void periodic_body(void)
{
	RETURN_CODE_TYPE rc;

	for (;;) {
		SYSTEM_TIME_TYPE t = apexutil_now();

		if (per_n < PER_N)
			per_act[per_n] = t;
		if (per_n == 0) {
			SUSPEND_SELF(0, &per_rc[0]);          /* periodic: INVALID_MODE */
			REPLENISH(3 * MS, &per_rc[1]);        /* beyond the next release: INVALID_MODE */
			REPLENISH(INF, &per_rc[2]);           /* INVALID_MODE */
			REPLENISH(500 * US, &per_rc[3]);      /* NO_ERROR */
		}
		if (++per_n == PER_N) {
			SET_EVENT(ev_per_done, &rc);
			return;
		}
		PERIODIC_WAIT(&rc);
		if (rc != NO_ERROR)
			per_wait_rc = rc;
	}
}

static RETURN_CODE_TYPE bs_rc = NOT_AVAILABLE;

static void buffer_sender_body(void)
{
	APEX_BYTE m[4] = "S";

	SEND_BUFFER(buf_fifo, m, 2, INF, &bs_rc); /* the buffer is full: waits for room */
	note('S');
}

static void signaller_body(void)
{
	RETURN_CODE_TYPE rc;

	TIMED_WAIT(1 * MS, &rc);
	SIGNAL_SEMAPHORE(sem_sig, &rc);
}

static struct peer_answer rx_msg;
static MESSAGE_SIZE_TYPE rx_len;
static RETURN_CODE_TYPE rx_rc;
static SYSTEM_TIME_TYPE rx_at;
static unsigned long rx_spins;

static void receiver_body(void)
{
	RECEIVE_QUEUING_MESSAGE(rsp_in, INF, (MESSAGE_ADDR_TYPE)&rx_msg, &rx_len, &rx_rc);
	rx_at = apexutil_now();
	rx_spins = spins;
}

static void overrun_body(void)
{
	busy_ns(2 * MS); /* capacity 1 ms: misses its deadline */
}

static void periodic_overrun_body(void)
{
	RETURN_CODE_TYPE rc;

	busy_ns(1 * MS); /* capacity 500 us */
	PERIODIC_WAIT(&rc);
	busy_ns(100 * US);
}

static RETURN_CODE_TYPE dr_rc;

static void replenish_body(void)
{
	busy_ns(700 * US);
	REPLENISH(1 * MS, &dr_rc); /* the deadline moves 1 ms from now */
	busy_ns(700 * US);
}

static volatile int so_survived;

static void __attribute__((noinline)) smash(void)
{
	volatile char buf[2048 + 256]; /* the stack is 2048 bytes: 256 and more into the guard */

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (char)i;
}

static volatile int so_illegal; /* so executes an undefined instruction instead */

static void overflow_body(void)
{
	RETURN_CODE_TYPE rc;

	if (so_illegal)
		__asm__ volatile(".inst 0x00000000" : : : "memory"); /* UDF #0 */
	else
		smash();
	TIMED_WAIT(1 * MS, &rc); /* the kernel finds the guard damaged at this entry */
	so_survived = 1;
}

static struct apexutil_costs costs = { .n = PINGPONG_N };

static void yield_body(void)
{
	apexutil_yielder(&costs);
}

static void pp_low_body(void)
{
	apexutil_signaller(&costs);
}

static void pp_high_body(void)
{
	apexutil_waiter(&costs);
}

static SYSTEM_TIME_TYPE early_ran_at;

static void early_body(void)
{
	early_ran_at = apexutil_now();
}

/* This partition's health-monitor events of one kind (BH_HC_HM_STATUS: never rate-limited). */
#define HM_PARTITION_ERROR 3
static unsigned long long hm_count(unsigned event)
{
	struct bh_hm_status st;

	if (bh_hm_status(bh_partition_id(), &st) != BH_OK)
		return ~0ull;
	return st.counts[event];
}

/* --- The tests (run by the driver, priority 100) --------------------------------------------- */

BH_TEST(apex_started_during_init_released_at_normal)
{
	/* early: DELAYED_START(1 ms) during initialization, priority above the driver. */
	SYSTEM_TIME_TYPE t = apexutil_now();

	apexutil_sleep(2 * MS);
	BH_EXPECT(early_ran_at >= init_end + 1 * MS);
	BH_EXPECT(early_ran_at <= t + 1 * MS + WAKE_LATE_MAX_NS);
	BH_EXPECT_EQ(apexutil_state_of(early), DORMANT);

	/* held (105, above the driver) was suspended during initialization: NORMAL did not make
	 * it ready; RESUME does, and it runs at once. */
	RETURN_CODE_TYPE rc;
	log_reset();
	BH_EXPECT_EQ(apexutil_state_of(held), WAITING);
	RESUME(held, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	EXPECT_LOG("h");
}

BH_TEST(apex_priority_order_and_preemption)
{
	RETURN_CODE_TYPE rc;

	/* Started below the driver, they run by priority once it waits. */
	log_reset();
	START(pa, &rc);
	START(pb, &rc);
	START(pc, &rc);
	BH_EXPECT_EQ(logbuf[0], 0);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("cba");

	/* A START inside a process preempts it at once for a higher priority. */
	log_reset();
	START(pl, &rc);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("LHl");

	/* The timer preempts a process that never gives up the CPU. */
	stop_spin = 0;
	spins = 0;
	START(spin, &rc);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	apexutil_sleep(2 * MS);
	SYSTEM_TIME_TYPE late = apexutil_now() - (t0 + 2 * MS);
	BH_EXPECT(spins > 0);
	BH_EXPECT(late >= 0 && late <= WAKE_LATE_MAX_NS);
	BH_EXPECT_EQ(apexutil_state_of(spin), READY);
	stop_spin = 1;
	BH_EXPECT(wait_dormant(spin));
}

BH_TEST(apex_fifo_among_equal_priorities)
{
	RETURN_CODE_TYPE rc;

	/* fa, fb, fc: priority 20, each notes, yields (TIMED_WAIT 0), notes again. */
	log_reset();
	START(fa, &rc);
	START(fb, &rc);
	START(fc, &rc);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("abcabc");
}

BH_TEST(apex_set_priority)
{
	RETURN_CODE_TYPE rc;

	/* Raised above the driver, pc runs inside SET_PRIORITY. */
	log_reset();
	START(pc, &rc);
	note('D');
	SET_PRIORITY(pc, 150, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	note('d');
	EXPECT_LOG("Dcd");

	/* The process becomes the newest of its new priority: pb (20 -> 10) queues behind pa
	 * (10), then pa (10 -> 10) behind pb. */
	log_reset();
	START(pa, &rc);
	START(pb, &rc);
	SET_PRIORITY(pb, 10, &rc);
	SET_PRIORITY(pa, 10, &rc);
	PROCESS_STATUS_TYPE st;
	GET_PROCESS_STATUS(pb, &st, &rc);
	BH_EXPECT_EQ(st.CURRENT_PRIORITY, 10);
	BH_EXPECT_EQ(st.ATTRIBUTES.BASE_PRIORITY, 20);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("ba");

	SET_PRIORITY(99, 10, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SET_PRIORITY(pa, MIN_PRIORITY_VALUE - 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SET_PRIORITY(pa, MAX_PRIORITY_VALUE + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SET_PRIORITY(pa, 10, &rc); /* dormant again */
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

BH_TEST(apex_lock_preemption)
{
	RETURN_CODE_TYPE rc;
	PARTITION_STATUS_TYPE ps;

	log_reset();
	START(lk, &rc);
	BH_EXPECT(wait_dormant(lk));
	EXPECT_LOG("LlmHuxby");
	BH_EXPECT_EQ(lock_rc[0], NO_ERROR);
	BH_EXPECT_EQ(lock_lv[0], 1);
	BH_EXPECT_EQ(lock_rc[1], INVALID_MODE);
	BH_EXPECT_EQ(lock_rc[2], INVALID_MODE);
	BH_EXPECT_EQ(lock_rc[3], INVALID_MODE);
	BH_EXPECT_EQ(lock_rc[4], NOT_AVAILABLE);
	BH_EXPECT_EQ(lock_lv[5], 2);
	BH_EXPECT_EQ(lock_rc[6], NO_ERROR);
	BH_EXPECT_EQ(lock_lv[6], 1);
	BH_EXPECT_EQ(lock_rc[7], NO_ERROR);
	BH_EXPECT_EQ(lock_lv[7], 0);
	BH_EXPECT_EQ(lock_rc[8], NO_ACTION);
	BH_EXPECT_EQ(lock_rc[9], INVALID_CONFIG);
	BH_EXPECT_EQ(lock_lv[9], MAX_LOCK_LEVEL);
	/* It stopped itself at level 16: the lock went with it. */
	GET_PARTITION_STATUS(&ps, &rc);
	BH_EXPECT_EQ(ps.LOCK_LEVEL, 0);
}

/* SUSPEND_SELF without time-out ends with RESUME; with one, at its time-out. */
static void suspend_self_until_resume_or_timeout(void)
{
	RETURN_CODE_TYPE rc;

	log_reset();
	START(ss, &rc);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("s");
	BH_EXPECT_EQ(apexutil_state_of(ss), WAITING);
	RESUME(ss, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("sr");
	apexutil_sleep(3 * MS);
	EXPECT_LOG("srt");
	BH_EXPECT_EQ(ss_rc[0], NO_ERROR);
	BH_EXPECT_EQ(ss_rc[1], TIMED_OUT);
	BH_EXPECT(ss_t1 - ss_t0 >= 2 * MS && ss_t1 - ss_t0 <= 2 * MS + WAKE_LATE_MAX_NS);
}

/* A suspended ready process does not run until resumed. */
static void suspended_ready_process_waits_for_resume(void)
{
	RETURN_CODE_TYPE rc;

	stop_spin = 0;
	spins = 0;
	START(spin, &rc);
	SUSPEND(spin, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(apexutil_state_of(spin), WAITING);
	SUSPEND(spin, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(spins, 0);
	RESUME(spin, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT(spins > 0);
	RESUME(spin, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	stop_spin = 1;
	BH_EXPECT(wait_dormant(spin));
}

/* Suspended while it waits on a semaphore, a process gets the unit but stays waiting. */
static void suspended_waiter_keeps_what_it_gets(void)
{
	RETURN_CODE_TYPE rc;
	SEMAPHORE_STATUS_TYPE sst;

	log_reset();
	wait_kind = ON_SEMAPHORE;
	waiter_sem = sem_zero;
	START(sw, &rc);
	apexutil_sleep(1 * MS);
	SUSPEND(sw, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	SIGNAL_SEMAPHORE(sem_zero, &rc);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("");
	BH_EXPECT_EQ(apexutil_state_of(sw), WAITING);
	GET_SEMAPHORE_STATUS(sem_zero, &sst, &rc);
	BH_EXPECT_EQ(sst.CURRENT_VALUE, 0);
	BH_EXPECT_EQ(sst.WAITING_PROCESSES, 0);
	RESUME(sw, &rc);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("w");
}

/* The refusals of SUSPEND, RESUME and SUSPEND_SELF. */
static void suspend_and_resume_errors(void)
{
	RETURN_CODE_TYPE rc;

	SUSPEND(driver, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SUSPEND(0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SUSPEND(pa, &rc); /* dormant */
	BH_EXPECT_EQ(rc, INVALID_MODE);
	RESUME(driver, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RESUME(APEX_MAX_PROCESSES + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RESUME(pa, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	SUSPEND_SELF(-5, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SUSPEND_SELF(0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	/* A periodic process cannot be suspended. */
	START(pm, &rc);
	SUSPEND(pm, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	STOP(pm, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
}

BH_TEST(apex_suspend_and_resume)
{
	suspend_self_until_resume_or_timeout();
	suspended_ready_process_waits_for_resume();
	suspended_waiter_keeps_what_it_gets();
	suspend_and_resume_errors();
}

/* DELAYED_START releases a process later; STOP before that, or while it waits, ends it. */
static void delayed_start_and_stop(void)
{
	RETURN_CODE_TYPE rc;
	PROCESS_STATUS_TYPE st;
	SEMAPHORE_STATUS_TYPE sst;

	/* Released 3 ms after the call; its deadline 10 ms (its capacity) after that. */
	ds_ran_at = 0;
	SYSTEM_TIME_TYPE t = apexutil_now();
	DELAYED_START(ds, 3 * MS, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	GET_PROCESS_STATUS(ds, &st, &rc);
	BH_EXPECT_EQ(st.PROCESS_STATE, WAITING);
	BH_EXPECT(st.DEADLINE_TIME >= t + 13 * MS && st.DEADLINE_TIME <= t + 13 * MS + 10 * US);
	DELAYED_START(ds, 1 * MS, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	START(ds, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	apexutil_sleep(4 * MS);
	BH_EXPECT(ds_ran_at >= t + 3 * MS && ds_ran_at <= t + 3 * MS + WAKE_LATE_MAX_NS);
	BH_EXPECT_EQ(apexutil_state_of(ds), DORMANT); /* its entry returned */

	/* Stopped before its delay ran out, it never runs. */
	ds_ran_at = 0;
	DELAYED_START(ds, 1 * MS, &rc);
	STOP(ds, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(2 * MS);
	BH_EXPECT_EQ(ds_ran_at, 0);

	/* Stopped while it waits on a semaphore, it leaves the queue. */
	wait_kind = ON_SEMAPHORE;
	waiter_sem = sem_zero;
	START(sw, &rc);
	apexutil_sleep(1 * MS);
	GET_SEMAPHORE_STATUS(sem_zero, &sst, &rc);
	BH_EXPECT_EQ(sst.WAITING_PROCESSES, 1);
	STOP(sw, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	GET_SEMAPHORE_STATUS(sem_zero, &sst, &rc);
	BH_EXPECT_EQ(sst.WAITING_PROCESSES, 0);
}

/* The refusals of START, DELAYED_START and STOP. */
static void start_and_stop_errors(void)
{
	RETURN_CODE_TYPE rc;

	START(0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	START(APEX_MAX_PROCESSES + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	START(driver, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	DELAYED_START(ds, INF, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DELAYED_START(ds, -2, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DELAYED_START(per, PER_PERIOD, &rc); /* not below its period */
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DELAYED_START(0, 1 * MS, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	STOP(driver, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	STOP(0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	STOP(ds, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
}

BH_TEST(apex_start_stop_and_delayed_start)
{
	delayed_start_and_stop();
	start_and_stop_errors();
}

BH_TEST(apex_periodic_releases_on_plan)
{
	RETURN_CODE_TYPE rc;
	PROCESS_STATUS_TYPE st;
	struct apex_process_counters c;

	/* First release: the next partition period start (grid: 1 ms from time 0 here, no cyclic
	 * plan). Then every 2 ms from there, whatever the process's own timing. */
	SYSTEM_TIME_TYPE t = apexutil_now();
	START(per, &rc);
	GET_PROCESS_STATUS(per, &st, &rc);
	SYSTEM_TIME_TYPE r0 = st.DEADLINE_TIME - 1 * MS;
	SYSTEM_TIME_TYPE planned = (t + PARTITION_PERIOD - 1) / PARTITION_PERIOD * PARTITION_PERIOD;
	/* The kernel read the clock a little after t: a grid point may have passed between. */
	BH_EXPECT(r0 == planned || r0 == planned + PARTITION_PERIOD);
	planned = r0 == planned + PARTITION_PERIOD ? r0 : planned;
	WAIT_EVENT(ev_per_done, PER_N * PER_PERIOD + 5 * MS, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(per_n, PER_N);

	SYSTEM_TIME_TYPE lo = 0, hi = 0;
	for (int k = 0; k < PER_N; k++) {
		SYSTEM_TIME_TYPE late = per_act[k] - (planned + k * PER_PERIOD);

		if (k == 0 || late < lo)
			lo = late;
		if (k == 0 || late > hi)
			hi = late;
	}
	bh_printf("BHSTAT periodic_lateness_min_ns %lld\n", lo);
	bh_printf("BHSTAT periodic_lateness_max_ns %lld\n", hi);
	BH_EXPECT(lo >= 0);
	BH_EXPECT(hi <= WAKE_LATE_MAX_NS);
	BH_EXPECT_EQ(per_wait_rc, NO_ERROR);
	BH_EXPECT_EQ(per_rc[0], INVALID_MODE);
	BH_EXPECT_EQ(per_rc[1], INVALID_MODE);
	BH_EXPECT_EQ(per_rc[2], INVALID_MODE);
	BH_EXPECT_EQ(per_rc[3], NO_ERROR);
	apex_get_process_counters(per, &c, &rc);
	BH_EXPECT_EQ(c.deadline_misses, 0);
	BH_EXPECT_EQ(c.activations, PER_N);
	PERIODIC_WAIT(&rc); /* the driver is aperiodic */
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

BH_TEST(apex_timed_wait_accuracy)
{
	static const SYSTEM_TIME_TYPE delays[] = { 1 * MS, 2500 * US, 333 * US, 17 * US, 1 };
	RETURN_CODE_TYPE rc;
	SYSTEM_TIME_TYPE worst = 0;

	for (unsigned i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
		SYSTEM_TIME_TYPE t0 = apexutil_now();

		TIMED_WAIT(delays[i], &rc);
		SYSTEM_TIME_TYPE late = apexutil_now() - (t0 + delays[i]);

		BH_EXPECT_EQ(rc, NO_ERROR);
		BH_EXPECT(late >= 0);
		if (late > worst)
			worst = late;
	}
	bh_printf("BHSTAT timed_wait_lateness_max_ns %lld\n", worst);
	BH_EXPECT(worst <= WAKE_LATE_MAX_NS);
	TIMED_WAIT(INF, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	TIMED_WAIT(-7, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
}

/* A semaphore of 2: taken twice, then NOT_AVAILABLE, TIMED_OUT; signalled back to its maximum. */
static void semaphore_counts_and_timeouts(void)
{
	RETURN_CODE_TYPE rc;
	SEMAPHORE_STATUS_TYPE st;

	/* sem_two: 2 of 2. */
	WAIT_SEMAPHORE(sem_two, 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	WAIT_SEMAPHORE(sem_two, INF, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	WAIT_SEMAPHORE(sem_two, 0, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	WAIT_SEMAPHORE(sem_two, 1 * MS, &rc);
	SYSTEM_TIME_TYPE waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, TIMED_OUT);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);
	SIGNAL_SEMAPHORE(sem_two, &rc);
	SIGNAL_SEMAPHORE(sem_two, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	SIGNAL_SEMAPHORE(sem_two, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	GET_SEMAPHORE_STATUS(sem_two, &st, &rc);
	BH_EXPECT_EQ(st.CURRENT_VALUE, 2);
	BH_EXPECT_EQ(st.MAXIMUM_VALUE, 2);

	/* Blocked without time-out until another process signals, 1 ms later. */
	t0 = apexutil_now();
	START(sg, &rc);
	WAIT_SEMAPHORE(sem_sig, INF, &rc);
	waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);
}

/* Three waiters come in the order 20, 40, 30: one signal wakes one of them, by priority or first come. */
static void semaphore_waiters_by_discipline(void)
{
	RETURN_CODE_TYPE rc;
	SEMAPHORE_STATUS_TYPE st;

	static const struct {
		SEMAPHORE_ID_TYPE *sem;
		const char *want;
	} disc[] = { { &sem_prio, "432" }, { &sem_fifo, "243" } };
	for (unsigned d = 0; d < 2; d++) {
		log_reset();
		wait_kind = ON_SEMAPHORE;
		waiter_sem = *disc[d].sem;
		START(w20, &rc);
		apexutil_sleep(100 * US);
		START(w40, &rc);
		apexutil_sleep(100 * US);
		START(w30, &rc);
		apexutil_sleep(100 * US);
		GET_SEMAPHORE_STATUS(waiter_sem, &st, &rc);
		BH_EXPECT_EQ(st.WAITING_PROCESSES, 3);
		for (int i = 0; i < 3; i++) {
			SIGNAL_SEMAPHORE(waiter_sem, &rc);
			apexutil_sleep(100 * US);
		}
		EXPECT_LOG(disc[d].want);
	}
}

/* The refusals of the semaphore services. */
static void semaphore_bad_parameters(void)
{
	RETURN_CODE_TYPE rc;
	SEMAPHORE_STATUS_TYPE st;
	SEMAPHORE_ID_TYPE id;

	WAIT_SEMAPHORE(0, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	WAIT_SEMAPHORE(sem_two, -3, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SIGNAL_SEMAPHORE(APEX_MAX_SEMAPHORES + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_SEMAPHORE_STATUS(99, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_SEMAPHORE_ID("sem_fifo", &id, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(id, sem_fifo);
	GET_SEMAPHORE_ID("nope", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_SEMAPHORE("late", 0, 1, FIFO, &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

BH_TEST(apex_semaphores)
{
	semaphore_counts_and_timeouts();
	semaphore_waiters_by_discipline();
	semaphore_bad_parameters();
}

BH_TEST(apex_events)
{
	RETURN_CODE_TYPE rc;
	EVENT_STATUS_TYPE st;
	EVENT_ID_TYPE id;

	WAIT_EVENT(ev_test, 0, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	WAIT_EVENT(ev_test, 1 * MS, &rc);
	SYSTEM_TIME_TYPE waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, TIMED_OUT);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);

	/* SET_EVENT releases every waiter. */
	log_reset();
	wait_kind = ON_EVENT;
	START(w40, &rc);
	START(w30, &rc);
	apexutil_sleep(1 * MS);
	GET_EVENT_STATUS(ev_test, &st, &rc);
	BH_EXPECT_EQ(st.EVENT_STATE, DOWN);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 2);
	SET_EVENT(ev_test, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("43");
	GET_EVENT_STATUS(ev_test, &st, &rc);
	BH_EXPECT_EQ(st.EVENT_STATE, UP);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 0);
	WAIT_EVENT(ev_test, INF, &rc); /* up: returns at once */
	BH_EXPECT_EQ(rc, NO_ERROR);
	RESET_EVENT(ev_test, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	GET_EVENT_STATUS(ev_test, &st, &rc);
	BH_EXPECT_EQ(st.EVENT_STATE, DOWN);

	SET_EVENT(0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RESET_EVENT(99, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	WAIT_EVENT(99, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	WAIT_EVENT(ev_test, -4, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_EVENT_STATUS(99, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_EVENT_ID("ev_test", &id, &rc);
	BH_EXPECT_EQ(id, ev_test);
	GET_EVENT_ID("nope", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_EVENT("late", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

/* A FIFO buffer of two messages: full, empty, time-outs, a sender waiting for room. */
static void buffer_fifo_full_and_empty(void)
{
	RETURN_CODE_TYPE rc;
	BUFFER_STATUS_TYPE st;
	APEX_BYTE m1[8] = "one", m2[8] = "two", m3[8] = "x", in[16];
	MESSAGE_SIZE_TYPE len = -1;

	SEND_BUFFER(buf_fifo, m1, 4, 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	SEND_BUFFER(buf_fifo, m2, 4, INF, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	SEND_BUFFER(buf_fifo, m3, 2, 0, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	SEND_BUFFER(buf_fifo, m3, 2, 1 * MS, &rc);
	SYSTEM_TIME_TYPE waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, TIMED_OUT);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);
	GET_BUFFER_STATUS(buf_fifo, &st, &rc);
	BH_EXPECT_EQ(st.NB_MESSAGE, 2);
	BH_EXPECT_EQ(st.MAX_NB_MESSAGE, 2);
	BH_EXPECT_EQ(st.MAX_MESSAGE_SIZE, 8);
	/* bs blocks sending to the full buffer; a receive makes room and takes its message in. */
	log_reset();
	START(bs, &rc);
	apexutil_sleep(1 * MS);
	GET_BUFFER_STATUS(buf_fifo, &st, &rc);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 1);
	RECEIVE_BUFFER(buf_fifo, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(len, 4);
	BH_EXPECT(apexutil_streq((const char *)in, "one"));
	apexutil_sleep(1 * MS);
	EXPECT_LOG("S");
	BH_EXPECT_EQ(bs_rc, NO_ERROR);
	RECEIVE_BUFFER(buf_fifo, INF, in, &len, &rc);
	BH_EXPECT(apexutil_streq((const char *)in, "two"));
	RECEIVE_BUFFER(buf_fifo, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT(len == 2 && in[0] == 'S');
	RECEIVE_BUFFER(buf_fifo, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	BH_EXPECT_EQ(len, 0);
	t0 = apexutil_now();
	RECEIVE_BUFFER(buf_fifo, 1 * MS, in, &len, &rc);
	waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, TIMED_OUT);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);
}

/* Receivers waiting on a PRIORITY buffer get the messages by priority. */
static void buffer_receivers_served_by_priority(void)
{
	RETURN_CODE_TYPE rc;
	BUFFER_STATUS_TYPE st;

	/* Receivers come in the order 20, 40, 30 and are served by priority; each message goes
	 * straight to the receiver (here 'a' to 4, 'b' to 3, 'c' to 2). */
	log_reset();
	wait_kind = ON_BUFFER;
	START(w20, &rc);
	apexutil_sleep(100 * US);
	START(w40, &rc);
	apexutil_sleep(100 * US);
	START(w30, &rc);
	apexutil_sleep(100 * US);
	GET_BUFFER_STATUS(buf_prio, &st, &rc);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 3);
	for (char c = 'a'; c <= 'c'; c++) {
		APEX_BYTE m[1] = { (APEX_BYTE)c };

		SEND_BUFFER(buf_prio, m, 1, 0, &rc);
		BH_EXPECT_EQ(rc, NO_ERROR);
	}
	apexutil_sleep(1 * MS);
	EXPECT_LOG("4a3b2c");
	GET_BUFFER_STATUS(buf_prio, &st, &rc);
	BH_EXPECT_EQ(st.NB_MESSAGE, 0);
}

/* Every INVALID_PARAM, INVALID_CONFIG and INVALID_MODE of the buffer services. */
static void buffer_bad_parameters(void)
{
	RETURN_CODE_TYPE rc;
	BUFFER_STATUS_TYPE st;
	BUFFER_ID_TYPE id;
	APEX_BYTE m1[8] = "one", in[16];
	MESSAGE_SIZE_TYPE len = -1;

	SEND_BUFFER(buf_fifo, m1, 0, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SEND_BUFFER(buf_fifo, m1, 9, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SEND_BUFFER(buf_fifo, m1, 4, -2, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SEND_BUFFER(0, m1, 4, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RECEIVE_BUFFER(99, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_BUFFER_STATUS(99, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_BUFFER_ID("buf_prio", &id, &rc);
	BH_EXPECT_EQ(id, buf_prio);
	GET_BUFFER_ID("nope", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_BUFFER("late", 8, 2, FIFO, &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

BH_TEST(apex_buffers)
{
	buffer_fifo_full_and_empty();
	buffer_receivers_served_by_priority();
	buffer_bad_parameters();
}

/* Readers wait for a display, which gives each of them the message; it stays until cleared. */
static void blackboard_display_read_clear(void)
{
	RETURN_CODE_TYPE rc;
	BLACKBOARD_STATUS_TYPE st;
	APEX_BYTE m[16] = "mode 3", in[16];
	MESSAGE_SIZE_TYPE len = -1;

	READ_BLACKBOARD(board, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	BH_EXPECT_EQ(len, 0);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	READ_BLACKBOARD(board, 1 * MS, in, &len, &rc);
	SYSTEM_TIME_TYPE waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, TIMED_OUT);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);
	/* Two readers wait; one display gives both the message. */
	log_reset();
	wait_kind = ON_BLACKBOARD;
	START(w40, &rc);
	START(w30, &rc);
	apexutil_sleep(1 * MS);
	GET_BLACKBOARD_STATUS(board, &st, &rc);
	BH_EXPECT_EQ(st.EMPTY_INDICATOR, EMPTY);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 2);
	BH_EXPECT_EQ(st.MAX_MESSAGE_SIZE, 16);
	DISPLAY_BLACKBOARD(board, m, 7, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(1 * MS);
	EXPECT_LOG("4m3m");
	/* It stays until cleared; a read takes a copy. */
	READ_BLACKBOARD(board, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(len, 7);
	BH_EXPECT(apexutil_streq((const char *)in, "mode 3"));
	GET_BLACKBOARD_STATUS(board, &st, &rc);
	BH_EXPECT_EQ(st.EMPTY_INDICATOR, OCCUPIED);
	CLEAR_BLACKBOARD(board, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	READ_BLACKBOARD(board, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
}

/* The refusals of the blackboard services. */
static void blackboard_bad_parameters(void)
{
	RETURN_CODE_TYPE rc;
	BLACKBOARD_STATUS_TYPE st;
	BLACKBOARD_ID_TYPE id;
	APEX_BYTE m[16] = "mode 3", in[16];
	MESSAGE_SIZE_TYPE len = -1;

	DISPLAY_BLACKBOARD(board, m, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DISPLAY_BLACKBOARD(board, m, 17, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	DISPLAY_BLACKBOARD(0, m, 4, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	READ_BLACKBOARD(99, 0, in, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	READ_BLACKBOARD(board, -6, in, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	CLEAR_BLACKBOARD(99, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_BLACKBOARD_STATUS(0, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_BLACKBOARD_ID("board", &id, &rc);
	BH_EXPECT_EQ(id, board);
	GET_BLACKBOARD_ID("nope", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_BLACKBOARD("late", 8, &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

BH_TEST(apex_blackboards)
{
	blackboard_display_read_clear();
	blackboard_bad_parameters();
}

/* An application's own interrupt handler may call the services that do not block: the
 * switch they cause happens when the interrupt path ends. */
static RETURN_CODE_TYPE irq_set_rc = NOT_AVAILABLE, irq_wait_rc = NO_ERROR;

static void on_bh_timer(unsigned intid)
{
	(void)intid;
	WAIT_SEMAPHORE(sem_zero, 1 * MS, &irq_wait_rc); /* would block: refused */
	SET_EVENT(ev_test, &irq_set_rc);
}

BH_TEST(apex_services_from_an_interrupt_handler)
{
	RETURN_CODE_TYPE rc;

	RESET_EVENT(ev_test, &rc);
	BH_EXPECT_EQ(bh_irq_set_handler(BH_VIRQ_TIMER, on_bh_timer), BH_OK);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	BH_EXPECT_EQ(bh_set_timer(BH_CLOCK_HW, (unsigned long long)(t0 + 1 * MS), 0), BH_OK);
	WAIT_EVENT(ev_test, 5 * MS, &rc);
	SYSTEM_TIME_TYPE waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(irq_set_rc, NO_ERROR);
	BH_EXPECT_EQ(irq_wait_rc, INVALID_MODE);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);
	RESET_EVENT(ev_test, &rc);
}

BH_TEST(apex_sampling_ports)
{
	RETURN_CODE_TYPE rc;
	SAMPLING_PORT_STATUS_TYPE st;
	SAMPLING_PORT_ID_TYPE id;
	APEX_BYTE out[16] = "attitude 42", in[16] = { 0 };
	MESSAGE_SIZE_TYPE len = -1;
	VALIDITY_TYPE v = INVALID;

	WRITE_SAMPLING_MESSAGE(s_out, out, 12, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	READ_SAMPLING_MESSAGE(s_in, in, &len, &v, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(len, 12);
	BH_EXPECT_EQ(v, VALID);
	BH_EXPECT(apexutil_streq((const char *)in, "attitude 42"));
	/* Older than its 2 ms refresh period: still read, no longer valid. */
	apexutil_sleep(3 * MS);
	READ_SAMPLING_MESSAGE(s_in, in, &len, &v, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(v, INVALID);
	GET_SAMPLING_PORT_STATUS(s_in, &st, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(st.REFRESH_PERIOD, 2 * MS);
	BH_EXPECT_EQ(st.MAX_MESSAGE_SIZE, 16);
	BH_EXPECT_EQ(st.PORT_DIRECTION, DESTINATION);
	BH_EXPECT_EQ(st.LAST_MSG_VALIDITY, INVALID);

	WRITE_SAMPLING_MESSAGE(s_out, out, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	WRITE_SAMPLING_MESSAGE(s_out, out, 17, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	WRITE_SAMPLING_MESSAGE(s_in, out, 4, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	READ_SAMPLING_MESSAGE(s_out, in, &len, &v, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	WRITE_SAMPLING_MESSAGE(99, out, 4, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	READ_SAMPLING_MESSAGE(cmd_out, in, &len, &v, &rc); /* a queuing port */
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_SAMPLING_PORT_STATUS(0, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_SAMPLING_PORT_ID("s_in", &id, &rc);
	BH_EXPECT_EQ(id, s_in);
	GET_SAMPLING_PORT_ID("cmd_out", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_SAMPLING_PORT("s_out", 16, SOURCE, 2 * MS, &id, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	CREATE_SAMPLING_PORT("nowhere", 16, SOURCE, 2 * MS, &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	/* A message address outside the partition's memory: the hypervisor refuses it. */
	WRITE_SAMPLING_MESSAGE(s_out, (MESSAGE_ADDR_TYPE)BAD_ADDRESS, 4, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	READ_SAMPLING_MESSAGE(s_in, (MESSAGE_ADDR_TYPE)BAD_ADDRESS, &len, &v, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
}

BH_TEST(apex_queuing_receive_blocks_while_lower_priority_runs)
{
	RETURN_CODE_TYPE rc;
	QUEUING_PORT_STATUS_TYPE st;
	struct peer_answer a;
	MESSAGE_SIZE_TYPE len = -1;

	RECEIVE_QUEUING_MESSAGE(rsp_in, 0, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	BH_EXPECT_EQ(len, 0);
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	RECEIVE_QUEUING_MESSAGE(rsp_in, 1 * MS, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	SYSTEM_TIME_TYPE waited = apexutil_now() - t0;
	BH_EXPECT_EQ(rc, TIMED_OUT);
	BH_EXPECT(waited >= 1 * MS && waited <= 1 * MS + WAKE_LATE_MAX_NS);

	/* rx (70) blocks in the receive; spin (10) runs meanwhile; the peer answers 2 ms after
	 * the command and rx runs with the message. */
	stop_spin = 0;
	spins = 0;
	rx_rc = NOT_AVAILABLE;
	START(spin, &rc);
	START(rx, &rc);
	apexutil_sleep(500 * US);
	BH_EXPECT_EQ(apexutil_state_of(rx), WAITING);
	GET_QUEUING_PORT_STATUS(rsp_in, &st, &rc);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 1);
	unsigned long spins_before = spins;
	struct peer_cmd c = { PEER_ECHO, 7, 2 * MS };
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&c, sizeof(c), 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(4 * MS);
	BH_EXPECT_EQ(rx_rc, NO_ERROR);
	BH_EXPECT_EQ(rx_len, 100);
	BH_EXPECT_EQ(rx_msg.seq, 7);
	BH_EXPECT(rx_spins > spins_before);
	SYSTEM_TIME_TYPE sent = (SYSTEM_TIME_TYPE)((unsigned long long)rx_msg.sent_hi << 32 |
						    rx_msg.sent_lo);
	bh_printf("BHSTAT port_send_to_process_running_ns %lld\n", rx_at - sent);
	BH_EXPECT(rx_at > sent && rx_at - sent <= WAKE_LATE_MAX_NS);
	BH_EXPECT_EQ(apexutil_state_of(rx), DORMANT);
	stop_spin = 1;
	BH_EXPECT(wait_dormant(spin));
}

/* The receiver's buffer is posted with the hypervisor while it waits (docs/apex.md, Sampling
 * and queuing ports). A time-out and a STOP withdraw the post: the next message is queued for
 * the next receive, not written into the buffer of a receive that ended. */
BH_TEST(apex_posted_receive_withdrawn_by_time_out_and_stop)
{
	RETURN_CODE_TYPE rc;
	QUEUING_PORT_STATUS_TYPE st;
	struct peer_answer a;
	MESSAGE_SIZE_TYPE len = -1;
	struct peer_cmd c = { PEER_ECHO, 21, 0 };

	a.seq = 0xdead;
	RECEIVE_QUEUING_MESSAGE(rsp_in, 500 * US, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, TIMED_OUT);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&c, sizeof(c), 0, &rc);
	apexutil_sleep(1 * MS); /* the peer answers */
	BH_EXPECT_EQ(a.seq, 0xdead);
	GET_QUEUING_PORT_STATUS(rsp_in, &st, &rc);
	BH_EXPECT_EQ(st.NB_MESSAGE, 1);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 0);
	RECEIVE_QUEUING_MESSAGE(rsp_in, 0, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(a.seq, 21);

	/* rx waits with its buffer posted; stopped, it takes nothing. */
	rx_msg.seq = 0xdead;
	rx_rc = NOT_AVAILABLE;
	START(rx, &rc);
	apexutil_sleep(500 * US);
	BH_EXPECT_EQ(apexutil_state_of(rx), WAITING);
	STOP(rx, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	c.seq = 22;
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&c, sizeof(c), 0, &rc);
	apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(rx_msg.seq, 0xdead);
	BH_EXPECT_EQ(rx_rc, NOT_AVAILABLE);
	GET_QUEUING_PORT_STATUS(rsp_in, &st, &rc);
	BH_EXPECT_EQ(st.NB_MESSAGE, 1);
	RECEIVE_QUEUING_MESSAGE(rsp_in, 0, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(a.seq, 22);
	/* And a receive after them is served by a post again. */
	c.seq = 23;
	c.delay_ns = 1 * MS;
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&c, sizeof(c), 0, &rc);
	RECEIVE_QUEUING_MESSAGE(rsp_in, 10 * MS, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(len, 100);
	BH_EXPECT_EQ(a.seq, 23);
}

/* rsp_in is a PRIORITY port: the posted buffer is always its first waiter's. w40 waits with
 * its buffer posted; rx (70) comes ahead of it, or is raised ahead of it by SET_PRIORITY:
 * w40's post is withdrawn then, and the next message is rx's. */
static void echo_seq(unsigned seq)
{
	RETURN_CODE_TYPE rc;
	struct peer_cmd c = { PEER_ECHO, seq, 0 };

	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&c, sizeof(c), 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(1 * MS); /* the peer answers, the receiver runs */
}

BH_TEST(apex_posted_receive_follows_the_port_priority)
{
	RETURN_CODE_TYPE rc;

	PROCESS_ID_TYPE rl = w40;

	wait_kind = ON_PORT;
	for (int raise = 0; raise <= 1; raise++) {
		rx_msg.seq = rl_msg.seq = 0xdead;
		START(rl, &rc);
		apexutil_sleep(300 * US);
		BH_EXPECT_EQ(apexutil_state_of(rl), WAITING); /* posted */
		START(rx, &rc);
		if (raise)
			SET_PRIORITY(rx, 30, &rc); /* it waits behind rl */
		apexutil_sleep(300 * US);
		BH_EXPECT_EQ(apexutil_state_of(rx), WAITING);
		if (raise)
			SET_PRIORITY(rx, 70, &rc); /* now ahead of rl */
		echo_seq(40u + 2u * (unsigned)raise);
		BH_EXPECT_EQ(rx_msg.seq, 40u + 2u * (unsigned)raise);
		BH_EXPECT_EQ(rl_msg.seq, 0xdead);
		BH_EXPECT_EQ(apexutil_state_of(rl), WAITING);
		echo_seq(41u + 2u * (unsigned)raise);
		BH_EXPECT_EQ(rl_msg.seq, 41u + 2u * (unsigned)raise);
		BH_EXPECT_EQ(rl_rc, NO_ERROR);
		BH_EXPECT_EQ(apexutil_state_of(rl), DORMANT);
		BH_EXPECT_EQ(apexutil_state_of(rx), DORMANT);
	}
	wait_kind = ON_SEMAPHORE;
}

/* A send to the full to_peer queue waits until the peer makes room. */
static void queuing_send_waits_for_room(void)
{
	RETURN_CODE_TYPE rc;
	QUEUING_PORT_STATUS_TYPE st;
	LOCK_LEVEL_TYPE lv;
	struct peer_answer a;
	MESSAGE_SIZE_TYPE len;

	/* The peer takes a 5 ms job; two more fill the 2-message queue behind it. */
	struct peer_cmd slow = { PEER_SLOW, 1, 5 * MS }, quick = { PEER_SLOW, 2, 0 };
	struct peer_cmd echo = { PEER_ECHO, 3, 0 };
	SYSTEM_TIME_TYPE t0 = apexutil_now();
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&slow, sizeof(slow), 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(200 * US); /* the peer took it */
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&quick, sizeof(quick), 0, &rc);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&quick, sizeof(quick), 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	GET_QUEUING_PORT_STATUS(cmd_out, &st, &rc);
	BH_EXPECT_EQ(st.NB_MESSAGE, 2);
	BH_EXPECT_EQ(st.MAX_NB_MESSAGE, 2);
	BH_EXPECT_EQ(st.MAX_MESSAGE_SIZE, 32);
	BH_EXPECT_EQ(st.PORT_DIRECTION, SOURCE);
	BH_EXPECT_EQ(st.WAITING_PROCESSES, 0);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), 0, &rc);
	BH_EXPECT_EQ(rc, NOT_AVAILABLE);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), 1 * MS, &rc);
	BH_EXPECT_EQ(rc, TIMED_OUT);
	LOCK_PREEMPTION(&lv, &rc);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), 1 * MS, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	UNLOCK_PREEMPTION(&lv, &rc);
	/* Blocked until the peer, back from its 5 ms job, makes room. */
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), INF, &rc);
	SYSTEM_TIME_TYPE sent = apexutil_now();
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT(sent >= t0 + 5 * MS && sent <= t0 + 5 * MS + 300 * US);
	RECEIVE_QUEUING_MESSAGE(rsp_in, 10 * MS, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(a.seq, 3);
}

/* Every INVALID_PARAM, INVALID_CONFIG and INVALID_MODE of the queuing services. */
static void queuing_bad_parameters(void)
{
	RETURN_CODE_TYPE rc;
	QUEUING_PORT_STATUS_TYPE st;
	QUEUING_PORT_ID_TYPE id;
	struct peer_answer a;
	MESSAGE_SIZE_TYPE len;
	struct peer_cmd echo = { PEER_ECHO, 3, 0 };

	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, 0, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, 33, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), -9, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SEND_QUEUING_MESSAGE(rsp_in, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	SEND_QUEUING_MESSAGE(s_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RECEIVE_QUEUING_MESSAGE(cmd_out, 0, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	RECEIVE_QUEUING_MESSAGE(99, 0, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RECEIVE_QUEUING_MESSAGE(rsp_in, -2, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_QUEUING_PORT_STATUS(99, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_QUEUING_PORT_ID("rsp_in", &id, &rc);
	BH_EXPECT_EQ(id, rsp_in);
	GET_QUEUING_PORT_ID("s_in", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_QUEUING_PORT("rsp_in", 100, 4, DESTINATION, FIFO, &id, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	CREATE_QUEUING_PORT("nowhere", 100, 4, DESTINATION, FIFO, &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

/* Message addresses outside the partition's memory: nothing sent, nothing lost. */
static void queuing_bad_message_addresses(void)
{
	RETURN_CODE_TYPE rc;
	struct peer_answer a;
	MESSAGE_SIZE_TYPE len;
	struct peer_cmd echo = { PEER_ECHO, 4, 0 };

	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)BAD_ADDRESS, sizeof(echo), 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&echo, sizeof(echo), 0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	apexutil_sleep(1 * MS); /* the peer answers */
	RECEIVE_QUEUING_MESSAGE(rsp_in, 0, (MESSAGE_ADDR_TYPE)BAD_ADDRESS, &len, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	RECEIVE_QUEUING_MESSAGE(rsp_in, 0, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR); /* the answer stayed queued */
	BH_EXPECT_EQ(a.seq, 4);
}

BH_TEST(apex_queuing_send_blocks_on_a_full_queue)
{
	queuing_send_waits_for_room();
	queuing_bad_parameters();
	queuing_bad_message_addresses();
}

BH_TEST(apex_deadline_miss_detected)
{
	RETURN_CODE_TYPE rc;
	struct apex_process_counters c;
	struct apex_counters all0, all1;

	apex_get_counters(&all0);
	/* dm: capacity 1 ms, works 2 ms. */
	SYSTEM_TIME_TYPE t = apexutil_now();
	START(dm, &rc);
	apexutil_sleep(3 * MS);
	apex_get_process_counters(dm, &c, &rc);
	BH_EXPECT_EQ(c.deadline_misses, 1);
	BH_EXPECT(c.last_missed_deadline >= t + 1 * MS &&
		  c.last_missed_deadline <= t + 1 * MS + 10 * US);
	/* pm: periodic, capacity 500 us, overruns its first activation only. */
	START(pm, &rc);
	apexutil_sleep(6 * MS);
	apex_get_process_counters(pm, &c, &rc);
	BH_EXPECT_EQ(c.deadline_misses, 1);
	BH_EXPECT_EQ(apexutil_state_of(pm), DORMANT);
	/* dr: capacity 1 ms, works 1.4 ms but REPLENISHes half way. */
	START(dr, &rc);
	apexutil_sleep(3 * MS);
	apex_get_process_counters(dr, &c, &rc);
	BH_EXPECT_EQ(dr_rc, NO_ERROR);
	BH_EXPECT_EQ(c.deadline_misses, 0);
	apex_get_counters(&all1);
	BH_EXPECT_EQ(all1.deadline_misses - all0.deadline_misses, 2);
	/* The driver has no deadline: REPLENISH keeps it infinite. */
	REPLENISH(5 * MS, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	PROCESS_STATUS_TYPE st;
	GET_PROCESS_STATUS(driver, &st, &rc);
	BH_EXPECT_EQ(st.DEADLINE_TIME, INF);
	REPLENISH(-3, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	apex_get_process_counters(99, &c, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
}

BH_TEST(apex_stack_overflow_detected)
{
	RETURN_CODE_TYPE rc;
	struct apex_process_counters c;

	START(so, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT_EQ(apexutil_state_of(so), DORMANT);
	BH_EXPECT_EQ(so_survived, 0);
	apex_get_process_counters(so, &c, &rc);
	BH_EXPECT_EQ(c.stack_overflows, 1);
}

/* Without an error handler, every process-level error is the partition's: Bulkhead's health
 * monitor gets it (partition_error here, action ignore, so the partition goes on). */
BH_TEST(apex_errors_without_handler_go_to_health_monitor)
{
	RETURN_CODE_TYPE rc;
	ERROR_STATUS_TYPE e;
	struct apex_counters c0, c1;
	unsigned long long pe0 = hm_count(HM_PARTITION_ERROR);

	apex_get_counters(&c0);
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)"no handler", 10, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), pe0 + 1);
	RAISE_APPLICATION_ERROR(DEADLINE_MISSED, (MESSAGE_ADDR_TYPE)"x", 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	/* An undefined instruction in a process: stopped, partition_error, the rest goes on. */
	so_illegal = 1;
	so_survived = 0;
	START(so, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT_EQ(apexutil_state_of(so), DORMANT);
	BH_EXPECT_EQ(so_survived, 0);
	BH_EXPECT_EQ(hm_count(HM_PARTITION_ERROR), pe0 + 2);
	apex_get_counters(&c1);
	BH_EXPECT_EQ(c1.errors_to_hm - c0.errors_to_hm, 2);
	BH_EXPECT_EQ(c1.errors_handled, 0);
	GET_ERROR_STATUS(&e, &rc); /* only the error handler may */
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	CREATE_ERROR_HANDLER(rec_once, 4096, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	REPORT_APPLICATION_MESSAGE((MESSAGE_ADDR_TYPE)"from the driver", 15, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	REPORT_APPLICATION_MESSAGE((MESSAGE_ADDR_TYPE)"x", MAX_ERROR_MESSAGE_SIZE + 1, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
}

BH_TEST(apex_idle_costs_no_cpu)
{
	unsigned long long e0 = 0, e1 = 0;
	struct apex_counters c0, c1;

	/* Nothing ready for 10 ms: the vCPU waits in BH_HC_IDLE and the background partition
	 * has the core; the execution clock of this vCPU hardly moves. */
	apex_get_counters(&c0);
	bh_get_exec_time(&e0);
	apexutil_sleep(10 * MS);
	bh_get_exec_time(&e1);
	apex_get_counters(&c1);
	bh_printf("BHSTAT exec_ns_during_10ms_idle %llu\n", e1 - e0);
	BH_EXPECT(e1 - e0 < 50 * US);
	BH_EXPECT(c1.idle_waits > c0.idle_waits);
}

BH_TEST(apex_ids_and_status)
{
	RETURN_CODE_TYPE rc;
	PROCESS_ID_TYPE id = 0;
	PROCESS_STATUS_TYPE st;
	PARTITION_STATUS_TYPE ps;
	PROCESS_ATTRIBUTE_TYPE a = { 0 };

	GET_MY_ID(&id, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(id, driver);
	GET_PROCESS_ID("driver", &id, &rc);
	BH_EXPECT_EQ(id, driver);
	GET_PROCESS_ID("nobody", &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_CONFIG);
	GET_PROCESS_STATUS(driver, &st, &rc);
	BH_EXPECT_EQ(st.PROCESS_STATE, RUNNING);
	BH_EXPECT_EQ(st.CURRENT_PRIORITY, 100);
	BH_EXPECT_EQ(st.DEADLINE_TIME, INF);
	BH_EXPECT(apexutil_streq(st.ATTRIBUTES.NAME, "driver"));
	GET_PROCESS_STATUS(per, &st, &rc);
	BH_EXPECT_EQ(st.ATTRIBUTES.PERIOD, PER_PERIOD);
	BH_EXPECT_EQ(st.ATTRIBUTES.TIME_CAPACITY, 1 * MS);
	BH_EXPECT_EQ(st.ATTRIBUTES.DEADLINE, HARD);
	BH_EXPECT_EQ(st.PROCESS_STATE, DORMANT);
	GET_PROCESS_STATUS(0, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	GET_PROCESS_STATUS(APEX_MAX_PROCESSES + 1, &st, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);

	GET_PARTITION_STATUS(&ps, &rc);
	BH_EXPECT_EQ(ps.OPERATING_MODE, NORMAL);
	BH_EXPECT_EQ(ps.START_CONDITION, NORMAL_START);
	BH_EXPECT_EQ(ps.IDENTIFIER, 0);
	BH_EXPECT_EQ(ps.PERIOD, PARTITION_PERIOD);
	BH_EXPECT_EQ(ps.LOCK_LEVEL, 0);
	SET_PARTITION_MODE(NORMAL, &rc);
	BH_EXPECT_EQ(rc, NO_ACTION);
	SET_PARTITION_MODE((OPERATING_MODE_TYPE)7, &rc);
	BH_EXPECT_EQ(rc, INVALID_PARAM);
	a.PERIOD = INF;
	a.TIME_CAPACITY = INF;
	a.ENTRY_POINT = rec_once;
	a.STACK_SIZE = 4096;
	a.BASE_PRIORITY = 5;
	a.NAME[0] = 'z';
	CREATE_PROCESS(&a, &id, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	apex_set_partition_period(2 * MS, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
}

BH_TEST(apex_switch_costs)
{
	RETURN_CODE_TYPE rc;
	struct apex_counters c0, c1;

	/* y1, y2 (80): each yields PINGPONG_N times: one switch per yield. */
	apex_get_counters(&c0);
	START(y1, &rc);
	START(y2, &rc);
	apexutil_sleep(5 * MS); /* one wake-up of the driver, not a poll inside the measurement */
	BH_EXPECT_EQ(apexutil_state_of(y1), DORMANT);
	BH_EXPECT_EQ(apexutil_state_of(y2), DORMANT);
	apex_get_counters(&c1);
	unsigned long long yield_ns = bh_ticks_to_ns(costs.yield_t1 - costs.yield_t0) / (2 * PINGPONG_N);
	BH_EXPECT(c1.context_switches - c0.context_switches >= 2 * PINGPONG_N);

	/* sa (80) signals, sb (81) waits: each signal runs sb at once, each wait returns to sa. */
	START(sb, &rc);
	START(sa, &rc);
	apexutil_sleep(5 * MS);
	BH_EXPECT_EQ(apexutil_state_of(sa), DORMANT);
	BH_EXPECT_EQ(apexutil_state_of(sb), DORMANT);
	unsigned long long sig_ns = bh_ticks_to_ns(costs.sum_sig) / PINGPONG_N;
	unsigned long long block_ns = bh_ticks_to_ns(costs.sum_block) / PINGPONG_N;
	bh_printf("BHSTAT yield_switch_ns %llu\n", yield_ns);
	bh_printf("BHSTAT block_to_next_running_ns %llu\n", block_ns);
	bh_printf("BHSTAT signal_to_waiter_running_ns %llu\n", sig_ns);
	BH_EXPECT(yield_ns > 0 && yield_ns < 1000);
	BH_EXPECT(sig_ns > 0 && sig_ns < 1000);
	BH_EXPECT(block_ns > 0 && block_ns < 1000);
}

/* --- Initialization ------------------------------------------------------------------------- */

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
			    SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity,
			    STACK_SIZE_TYPE stack, char tag)
{
	PROCESS_ID_TYPE id = apexutil_make(name, entry, prio, period, capacity, stack, HARD);

	BH_EXPECT(id != 0);
	tag_of[id] = tag;
	return id;
}

/* What COLD_START allows and refuses. */
static void init_mode_rules(void)
{
	RETURN_CODE_TYPE rc;
	PARTITION_STATUS_TYPE ps;
	PROCESS_ID_TYPE id;
	LOCK_LEVEL_TYPE lv;
	int ok = 1;
	char detail[128] = "";

	GET_PARTITION_STATUS(&ps, &rc);
	CHECK(rc == NO_ERROR && ps.OPERATING_MODE == COLD_START);
	CHECK(ps.START_CONDITION == NORMAL_START && ps.IDENTIFIER == 0);
	CHECK(ps.PERIOD == INF && ps.NUM_ASSIGNED_CORES == 1);
	GET_MY_ID(&id, &rc);
	CHECK(rc == INVALID_MODE);
	LOCK_PREEMPTION(&lv, &rc);
	CHECK(rc == NO_ACTION);
	UNLOCK_PREEMPTION(&lv, &rc);
	CHECK(rc == NO_ACTION);
	TIMED_WAIT(1 * MS, &rc);
	CHECK(rc == INVALID_MODE);
	PERIODIC_WAIT(&rc);
	CHECK(rc == INVALID_MODE);
	SUSPEND_SELF(1 * MS, &rc);
	CHECK(rc == INVALID_MODE);
	REPLENISH(1 * MS, &rc);
	CHECK(rc == NO_ACTION);
	SET_PARTITION_MODE(WARM_START, &rc); /* not from COLD_START */
	CHECK(rc == INVALID_MODE);
	SET_PARTITION_MODE((OPERATING_MODE_TYPE)42, &rc);
	CHECK(rc == INVALID_PARAM);
	apex_set_partition_period(0, &rc);
	CHECK(rc == INVALID_PARAM);
	apex_set_partition_period(PARTITION_PERIOD, &rc);
	CHECK(rc == NO_ERROR);
	bh_test_report("apex_init_mode_rules", ok, detail);
}

/* CREATE_PROCESS: each attribute out of range. */
static void create_process_checks(void)
{
	RETURN_CODE_TYPE rc;
	PROCESS_ID_TYPE id;
	int ok = 1;
	char detail[128] = "";
	PROCESS_ATTRIBUTE_TYPE good = { INF, INF, rec_once, 4096, 5, SOFT, "probe" }, a;
	static const struct {
		int field;
		long long value;
		RETURN_CODE_TYPE want;
	} bad[] = {
		{ 0, 0, INVALID_PARAM },                  /* PERIOD 0 */
		{ 0, -5, INVALID_PARAM },                 /* PERIOD negative */
		{ 0, 1500 * US, INVALID_CONFIG },         /* not a multiple of the partition's */
		{ 1, 0, INVALID_PARAM },                  /* TIME_CAPACITY 0 */
		{ 1, -3, INVALID_PARAM },
		{ 2, 0, INVALID_PARAM },                  /* no ENTRY_POINT */
		{ 3, APEX_MIN_STACK_SIZE - 16, INVALID_PARAM },
		{ 3, APEX_STACK_POOL_SIZE, INVALID_PARAM },
		{ 4, MIN_PRIORITY_VALUE - 1, INVALID_PARAM },
		{ 4, MAX_PRIORITY_VALUE + 1, INVALID_PARAM },
		{ 5, 2, INVALID_PARAM },                  /* DEADLINE neither SOFT nor HARD */
		{ 6, 0, INVALID_PARAM },                  /* empty NAME */
		{ 7, 3 * MS, INVALID_PARAM },             /* periodic, capacity above the period */
		{ 8, 2 * MS, INVALID_PARAM },             /* periodic, no capacity */
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = good;
		switch (bad[i].field) {
		case 0: a.PERIOD = bad[i].value; a.TIME_CAPACITY = 1 * MS; break;
		case 1: a.TIME_CAPACITY = bad[i].value; break;
		case 2: a.ENTRY_POINT = 0; break;
		case 3: a.STACK_SIZE = (STACK_SIZE_TYPE)bad[i].value; break;
		case 4: a.BASE_PRIORITY = (PRIORITY_TYPE)bad[i].value; break;
		case 5: a.DEADLINE = (DEADLINE_TYPE)bad[i].value; break;
		case 6: a.NAME[0] = 0; break;
		case 7: a.PERIOD = 2 * MS; a.TIME_CAPACITY = bad[i].value; break;
		case 8: a.PERIOD = bad[i].value; a.TIME_CAPACITY = INF; break;
		}
		CREATE_PROCESS(&a, &id, &rc);
		if (ok && rc != bad[i].want) {
			ok = 0;
			bh_snprintf(detail, sizeof(detail), "case %u: %d, expected %d", i, (int)rc,
				    (int)bad[i].want);
		}
	}
	CREATE_PROCESS(0, &id, &rc);
	if (ok && rc != INVALID_PARAM) {
		ok = 0;
		bh_snprintf(detail, sizeof(detail), "null attributes: %d", (int)rc);
	}
	bh_test_report("apex_create_process_checks", ok, detail);
}

/* Initialization-only checks: what the modes allow, and every CREATE_PROCESS error. */
static void init_checks(void)
{
	init_mode_rules();
	create_process_checks();
}

/* One verdict built by several functions: the first failed condition is kept. */
struct verdict {
	int ok;
	char detail[128];
};

#define VCHECK(v, cond)                                                                  \
	do {                                                                             \
		if ((v)->ok && !(cond)) {                                                \
			(v)->ok = 0;                                                     \
			bh_snprintf((v)->detail, sizeof((v)->detail), "line %d: %s", __LINE__, \
				    #cond);                                              \
		}                                                                        \
	} while (0)

/* The resources exist already (NO_ACTION with their ids); every bad parameter and a pool that
 * cannot hold the object. */
static void recreate_and_bad_create_checks(struct verdict *v)
{
	RETURN_CODE_TYPE rc;
	SEMAPHORE_ID_TYPE sid;
	EVENT_ID_TYPE eid;
	BUFFER_ID_TYPE bid;
	BLACKBOARD_ID_TYPE bbid;

	CREATE_SEMAPHORE("sem_zero", 0, 1, FIFO, &sid, &rc);
	VCHECK(v, rc == NO_ACTION && sid == sem_zero);
	CREATE_SEMAPHORE("bad", 2, 1, FIFO, &sid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_SEMAPHORE("bad", 0, 0, FIFO, &sid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_SEMAPHORE("bad", -1, 1, FIFO, &sid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_SEMAPHORE("bad", 0, MAX_SEMAPHORE_VALUE + 1, FIFO, &sid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_SEMAPHORE("bad", 0, 1, (QUEUING_DISCIPLINE_TYPE)7, &sid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_EVENT("ev_test", &eid, &rc);
	VCHECK(v, rc == NO_ACTION && eid == ev_test);
	CREATE_EVENT("", &eid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_BUFFER("buf_fifo", 8, 2, FIFO, &bid, &rc);
	VCHECK(v, rc == NO_ACTION && bid == buf_fifo);
	CREATE_BUFFER("bad", 0, 2, FIFO, &bid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_BUFFER("bad", 8, 0, FIFO, &bid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_BUFFER("bad", 8, MAX_NUMBER_OF_MESSAGES + 1, FIFO, &bid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_BUFFER("bad", 8, 2, (QUEUING_DISCIPLINE_TYPE)3, &bid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_BUFFER("huge", 4096, MAX_NUMBER_OF_MESSAGES, FIFO, &bid, &rc); /* pool */
	VCHECK(v, rc == INVALID_CONFIG);
	CREATE_BLACKBOARD("board", 16, &bbid, &rc);
	VCHECK(v, rc == NO_ACTION && bbid == board);
	CREATE_BLACKBOARD("bad", 0, &bbid, &rc);
	VCHECK(v, rc == INVALID_PARAM);
	CREATE_BLACKBOARD("huge", APEX_MESSAGE_POOL_SIZE, &bbid, &rc);
	VCHECK(v, rc == INVALID_CONFIG);
}

/* The initialization is no process: whatever would wait is refused. */
static void initialization_cannot_wait_checks(struct verdict *v)
{
	RETURN_CODE_TYPE rc;
	APEX_BYTE buf[16], m[8] = "m", big[100];
	MESSAGE_SIZE_TYPE len = -1;

	SEND_BUFFER(buf_fifo, m, 1, 0, &rc);
	SEND_BUFFER(buf_fifo, m, 1, 0, &rc);
	SEND_BUFFER(buf_fifo, m, 1, 1 * MS, &rc); /* full */
	VCHECK(v, rc == INVALID_MODE);
	RECEIVE_BUFFER(buf_fifo, 0, buf, &len, &rc);
	RECEIVE_BUFFER(buf_fifo, 0, buf, &len, &rc);
	RECEIVE_BUFFER(buf_fifo, 1 * MS, buf, &len, &rc); /* empty */
	VCHECK(v, rc == INVALID_MODE && len == 0);
	READ_BLACKBOARD(board, 1 * MS, buf, &len, &rc);
	VCHECK(v, rc == INVALID_MODE);
	WAIT_EVENT(ev_test, 1 * MS, &rc);
	VCHECK(v, rc == INVALID_MODE);
	WAIT_SEMAPHORE(sem_zero, INF, &rc);
	VCHECK(v, rc == INVALID_MODE);
	RECEIVE_QUEUING_MESSAGE(rsp_in, 1 * MS, big, &len, &rc);
	VCHECK(v, rc == INVALID_MODE);
}

/* Ports: only as the system description has them. */
static void opened_port_checks(struct verdict *v)
{
	RETURN_CODE_TYPE rc;
	APEX_INTEGER pid;
	APEX_BYTE buf[16];
	MESSAGE_SIZE_TYPE len = -1;
	VALIDITY_TYPE valid = VALID;

	READ_SAMPLING_MESSAGE(s_in, buf, &len, &valid, &rc); /* never written */
	VCHECK(v, rc == NO_ACTION && len == 0 && valid == INVALID);
	CREATE_SAMPLING_PORT("s_out", 8, SOURCE, 2 * MS, &pid, &rc);
	VCHECK(v, rc == NO_ACTION);
	CREATE_SAMPLING_PORT("nowhere", 16, SOURCE, 2 * MS, &pid, &rc);
	VCHECK(v, rc == INVALID_CONFIG);
	CREATE_QUEUING_PORT("cmd_in", 32, 2, DESTINATION, FIFO, &pid, &rc); /* the peer's */
	VCHECK(v, rc == INVALID_CONFIG);
}

static void init_resource_checks(void)
{
	struct verdict v = { 1, "" };
	PROCESS_ATTRIBUTE_TYPE dup = { INF, INF, rec_once, 4096, 5, SOFT, "pa" };
	PROCESS_ID_TYPE pid0 = 0;
	RETURN_CODE_TYPE rc;

	recreate_and_bad_create_checks(&v);
	CREATE_PROCESS(&dup, &pid0, &rc);
	VCHECK(&v, rc == NO_ACTION && pid0 == pa);
	initialization_cannot_wait_checks(&v);
	opened_port_checks(&v);
	bh_test_report("apex_init_resource_checks", v.ok, v.detail);
}

static void init_port_create_checks(void)
{
	RETURN_CODE_TYPE rc;
	APEX_INTEGER pid;
	int ok = 1;
	char detail[128] = "";

	/* Before the ports exist: every mismatch with the description is INVALID_CONFIG. */
	CREATE_SAMPLING_PORT("s_in", 8, DESTINATION, 2 * MS, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_SAMPLING_PORT("s_in", 16, SOURCE, 2 * MS, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_SAMPLING_PORT("s_in", 16, DESTINATION, 3 * MS, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_SAMPLING_PORT("s_in", 16, (PORT_DIRECTION_TYPE)5, 2 * MS, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_SAMPLING_PORT("s_in", 0, DESTINATION, 2 * MS, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_SAMPLING_PORT("rsp_in", 100, DESTINATION, 2 * MS, &pid, &rc); /* queuing */
	CHECK(rc == INVALID_CONFIG);
	CREATE_QUEUING_PORT("rsp_in", 100, 3, DESTINATION, FIFO, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_QUEUING_PORT("rsp_in", 100, 4, DESTINATION, (QUEUING_DISCIPLINE_TYPE)5, &pid,
			    &rc);
	CHECK(rc == INVALID_CONFIG);
	CREATE_QUEUING_PORT("rsp_in", 100, 0, DESTINATION, FIFO, &pid, &rc);
	CHECK(rc == INVALID_CONFIG);
	bh_test_report("apex_init_port_create_checks", ok, detail);
}

static void driver_body(void);

static void create_everything(void)
{
	RETURN_CODE_TYPE rc;
	const STACK_SIZE_TYPE S = 4096;

	driver = make("driver", driver_body, 100, INF, INF, 16384, 'D');
	pa = make("pa", rec_once, 10, INF, INF, S, 'a');
	pb = make("pb", rec_once, 20, INF, INF, S, 'b');
	pc = make("pc", rec_once, 30, INF, INF, S, 'c');
	pl = make("pl", preempt_low, 10, INF, INF, S, 'L');
	ph = make("ph", rec_once, 30, INF, INF, S, 'H');
	spin = make("spin", spin_body, 10, INF, INF, S, 's');
	fa = make("fa", rec_yield, 20, INF, INF, S, 'a');
	fb = make("fb", rec_yield, 20, INF, INF, S, 'b');
	fc = make("fc", rec_yield, 20, INF, INF, S, 'c');
	lk = make("lk", lock_body, 10, INF, INF, S, 'k');
	ss = make("ss", suspend_self_body, 50, INF, INF, S, 's');
	sw = make("sw", waiter_body, 50, INF, INF, S, 'w');
	ds = make("ds", delayed_body, 40, INF, 10 * MS, S, 'd');
	per = make("per", periodic_body, 60, PER_PERIOD, 1 * MS, S, 'p');
	sg = make("sg", signaller_body, 50, INF, INF, S, 'g');
	w20 = make("w20", waiter_body, 20, INF, INF, S, '2');
	w40 = make("w40", waiter_body, 40, INF, INF, S, '4');
	w30 = make("w30", waiter_body, 30, INF, INF, S, '3');
	rx = make("rx", receiver_body, 70, INF, INF, S, 'r');
	dm = make("dm", overrun_body, 60, INF, 1 * MS, S, 'm');
	pm = make("pm", periodic_overrun_body, 60, 2 * MS, 500 * US, S, 'M');
	dr = make("dr", replenish_body, 60, INF, 1 * MS, S, 'R');
	so = make("so", overflow_body, 60, INF, INF, 2048, 'o');
	y1 = make("y1", yield_body, 80, INF, INF, S, '1');
	y2 = make("y2", yield_body, 80, INF, INF, S, '2');
	sa = make("sa", pp_low_body, 80, INF, INF, S, 'A');
	sb = make("sb", pp_high_body, 81, INF, INF, S, 'B');
	early = make("early", early_body, 110, INF, INF, S, 'e');
	bs = make("bs", buffer_sender_body, 50, INF, INF, S, 'b');
	held = make("held", rec_once, 105, INF, INF, S, 'h');

	CREATE_SEMAPHORE("sem_zero", 0, 1, FIFO, &sem_zero, &rc);
	CREATE_SEMAPHORE("sem_two", 2, 2, FIFO, &sem_two, &rc);
	CREATE_SEMAPHORE("sem_prio", 0, 3, PRIORITY, &sem_prio, &rc);
	CREATE_SEMAPHORE("sem_fifo", 0, 3, FIFO, &sem_fifo, &rc);
	CREATE_SEMAPHORE("sem_sig", 0, 1, FIFO, &sem_sig, &rc);
	CREATE_SEMAPHORE("sem_pp", 0, 1, FIFO, &costs.sem, &rc);
	CREATE_EVENT("ev_test", &ev_test, &rc);
	CREATE_EVENT("ev_per_done", &ev_per_done, &rc);
	CREATE_BUFFER("buf_fifo", 8, 2, FIFO, &buf_fifo, &rc);
	CREATE_BUFFER("buf_prio", 16, 4, PRIORITY, &buf_prio, &rc);
	CREATE_BLACKBOARD("board", 16, &board, &rc);
	init_port_create_checks();
	CREATE_SAMPLING_PORT("s_out", 16, SOURCE, 2 * MS, &s_out, &rc);
	CREATE_SAMPLING_PORT("s_in", 16, DESTINATION, 2 * MS, &s_in, &rc);
	CREATE_QUEUING_PORT("cmd_out", 32, 2, SOURCE, FIFO, &cmd_out, &rc);
	CREATE_QUEUING_PORT("rsp_in", 100, 4, DESTINATION, PRIORITY, &rsp_in, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
}

/* The tables fill up: INVALID_CONFIG once APEX_MAX_* objects exist, and a stack the pool
 * cannot hold any more. (APEX_MAX_PORTS cannot be reached with the ports this system has.) */
static void fill_tables(void)
{
	RETURN_CODE_TYPE rc = NO_ERROR;
	PROCESS_ID_TYPE id;
	SEMAPHORE_ID_TYPE sid;
	EVENT_ID_TYPE eid;
	struct apex_counters c;
	int ok = 1, n = 0;
	char detail[128] = "";
	char name[8] = "fill00";

	apex_get_counters(&c);
	PROCESS_ATTRIBUTE_TYPE a = { INF, INF, rec_once, 0, 5, SOFT, "huge" };
	a.STACK_SIZE = (STACK_SIZE_TYPE)(APEX_STACK_POOL_SIZE - c.stack_pool_used);
	CREATE_PROCESS(&a, &id, &rc);
	CHECK(rc == INVALID_CONFIG);
	a.STACK_SIZE = APEX_MIN_STACK_SIZE;
	for (rc = NO_ERROR; rc == NO_ERROR && n < 2 * APEX_MAX_PROCESSES;) {
		name[4] = (char)('0' + n / 10);
		name[5] = (char)('0' + n % 10);
		for (unsigned i = 0; i < 8; i++)
			a.NAME[i] = name[i];
		CREATE_PROCESS(&a, &id, &rc);
		n++;
	}
	CHECK(rc == INVALID_CONFIG && id == APEX_MAX_PROCESSES);
	CREATE_PROCESS(&a, &id, &rc); /* the name exists: that is checked after the count */
	CHECK(rc == INVALID_CONFIG);
	for (n = 0, rc = NO_ERROR; rc == NO_ERROR && n < 2 * APEX_MAX_SEMAPHORES; n++) {
		name[4] = (char)('0' + n / 10);
		name[5] = (char)('0' + n % 10);
		CREATE_SEMAPHORE(name, 0, 1, FIFO, &sid, &rc);
	}
	CHECK(rc == INVALID_CONFIG && sid == APEX_MAX_SEMAPHORES);
	for (n = 0, rc = NO_ERROR; rc == NO_ERROR && n < 2 * APEX_MAX_EVENTS; n++) {
		name[4] = (char)('0' + n / 10);
		name[5] = (char)('0' + n % 10);
		CREATE_EVENT(name, &eid, &rc);
	}
	CHECK(rc == INVALID_CONFIG && eid == APEX_MAX_EVENTS);
	BUFFER_ID_TYPE bid = 0;
	for (n = 0, rc = NO_ERROR; rc == NO_ERROR && n < 2 * APEX_MAX_BUFFERS; n++) {
		name[4] = (char)('0' + n / 10);
		name[5] = (char)('0' + n % 10);
		CREATE_BUFFER(name, 8, 2, FIFO, &bid, &rc);
	}
	CHECK(rc == INVALID_CONFIG && bid == APEX_MAX_BUFFERS);
	BLACKBOARD_ID_TYPE bbid = 0;
	for (n = 0, rc = NO_ERROR; rc == NO_ERROR && n < 2 * APEX_MAX_BLACKBOARDS; n++) {
		name[4] = (char)('0' + n / 10);
		name[5] = (char)('0' + n % 10);
		CREATE_BLACKBOARD(name, 8, &bbid, &rc);
	}
	CHECK(rc == INVALID_CONFIG && bbid == APEX_MAX_BLACKBOARDS);
	bh_test_report("apex_tables_fill_up", ok, detail);
}

static void driver_body(void)
{
	RETURN_CODE_TYPE rc;

	bh_test_run_all();
	bh_puts("apextest: warm restart");
	SET_PARTITION_MODE(WARM_START, &rc);
	bh_printf("apextest: SET_PARTITION_MODE(WARM_START) returned %d\n", (int)rc);
}

/* Second incarnation: WARM_START, nothing left of the first (the same names create again). */
static void after_warm_restart(void)
{
	RETURN_CODE_TYPE rc;
	PARTITION_STATUS_TYPE ps;
	PROCESS_ID_TYPE id = 0;
	SEMAPHORE_ID_TYPE sid = 0;
	QUEUING_PORT_ID_TYPE qid = 0;
	int ok = 1;
	char detail[128] = "";

	GET_PARTITION_STATUS(&ps, &rc);
	CHECK(ps.OPERATING_MODE == WARM_START && ps.START_CONDITION == PARTITION_RESTART);
	PROCESS_ATTRIBUTE_TYPE a = { INF, INF, rec_once, 4096, 5, SOFT, "driver" };
	CREATE_PROCESS(&a, &id, &rc);
	CHECK(rc == NO_ERROR && id == 1);
	CREATE_SEMAPHORE("sem_zero", 0, 1, FIFO, &sid, &rc);
	CHECK(rc == NO_ERROR && sid == 1);
	CREATE_QUEUING_PORT("rsp_in", 100, 4, DESTINATION, FIFO, &qid, &rc);
	CHECK(rc == NO_ERROR && qid == 1);
	bh_test_report("apex_warm_restart_starts_afresh", ok, detail);
	/* Only now, with NORMAL-mode checks done, may the tables be filled. */
	fill_tables();
	bh_test_summary();
	bh_puts("apextest: cold restart");
	SET_PARTITION_MODE(COLD_START, &rc); /* the image is reloaded: the counts start afresh */
	bh_printf("apextest: SET_PARTITION_MODE(COLD_START) returned %d\n", (int)rc);
}

/* Third incarnation: COLD_START after a restart, then IDLE. */
static void after_cold_restart(void)
{
	RETURN_CODE_TYPE rc;
	PARTITION_STATUS_TYPE ps;
	int ok = 1;
	char detail[128] = "";

	GET_PARTITION_STATUS(&ps, &rc);
	CHECK(ps.OPERATING_MODE == COLD_START && ps.START_CONDITION == PARTITION_RESTART);
	CHECK(driver == 0); /* the image's data was reloaded */
	bh_test_report("apex_cold_restart_reloads", ok, detail);
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc); /* halts the partition */
	bh_printf("apextest: SET_PARTITION_MODE(IDLE) returned %d\n", (int)rc);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	if (boot_kind == BH_BOOT_WARM_RESTART) {
		after_warm_restart();
		return 0;
	}
	if (boot_kind == BH_BOOT_COLD_RESTART) {
		after_cold_restart();
		return 0;
	}
	init_checks();
	create_everything();
	init_resource_checks();
	START(driver, &rc);
	START(held, &rc);
	SUSPEND(held, &rc); /* started and suspended during initialization */
	BH_EXPECT_EQ(rc, NO_ERROR);
	DELAYED_START(early, 1 * MS, &rc);
	BH_EXPECT_EQ(apexutil_state_of(early), WAITING);
	init_end = apexutil_now();
	SET_PARTITION_MODE(NORMAL, &rc);
	bh_printf("apextest: SET_PARTITION_MODE(NORMAL) returned %d\n", (int)rc);
	return 0;
}
