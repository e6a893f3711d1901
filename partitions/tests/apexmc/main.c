/* apexmc: libapex on two vCPUs, ARINC 653 multicore (tests/system/test_apex.py,
 * tests/system/configs/apex_mc.yaml: vCPU 0 on core 1, vCPU 1 on core 2, under -icount).
 *
 * main is the initialization on core 0 (vCPU 0): it checks the affinity services' return
 * codes, binds processes to core 1 and enters NORMAL, which starts vCPU 1. The driver (core 0,
 * priority 100) runs the BH_TEST bodies in order and halts the partition (IDLE) at the end.
 * Every process checks, each time it runs, that GET_MY_PROCESSOR_CORE_ID is its affinity;
 * any mismatch is counted and fails apexmc_never_on_another_core.
 *
 * Loops that wait for the other core execute YIELD: under -icount QEMU runs all cores on one
 * thread, and a loop without it could keep the other core from ever running.
 */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE
#define S 4096
#define WAKE_N 20
/* Bounds under -icount (ns = instructions), measured: docs/apex.md, "Multicore". */
#define CROSS_WAKE_MAX_NS (5 * US)
#define TIMER_LATE_MAX_NS (5 * US)

static PROCESS_ID_TYPE driver, spin0, spin1, waiter1, lo1, gate1, fa1, fb1, lk1, hp1, tw1, ds1;
static PROCESS_ID_TYPE ping0, pong1, raiser1, mutex0, mutex1, restart1, faulter1, late1;
static SEMAPHORE_ID_TYPE sem, s_ping, s_pong, s_mutex;

/* --- Where processes run ------------------------------------------------------------------------ */

/* Per core, each written by its own core's processes only, IRQs masked. */
static volatile unsigned wrong_core[2], core_checks[2];

/* Counts a run of the caller on a core other than its affinity. */
static void check_core(PROCESSOR_CORE_ID_TYPE want)
{
	PROCESSOR_CORE_ID_TYPE core = -1;
	RETURN_CODE_TYPE rc;
	unsigned long f = bh_irq_save();
	unsigned v = bh_vcpu_self() & 1;

	GET_MY_PROCESSOR_CORE_ID(&core, &rc);
	if (rc != NO_ERROR || core != want || core != (PROCESSOR_CORE_ID_TYPE)bh_vcpu_self())
		wrong_core[v]++;
	core_checks[v]++;
	bh_irq_restore(f);
}

static void relax(void)
{
	__asm__ volatile("yield" : : : "memory");
}

/* A log of what core 1's processes do, in order (core 1 only writes it). */
static char log1[32];
static volatile unsigned log1n;

static void note1(char c)
{
	if (log1n < sizeof(log1) - 1)
		log1[log1n++] = c;
	log1[log1n] = 0;
}

static void log1_reset(void)
{
	log1n = 0;
	log1[0] = 0;
}

#define EXPECT_LOG1(want)                                                                \
	do {                                                                             \
		if (!apexutil_streq(log1, want)) {                                       \
			char what_[80];                                                  \
			bh_snprintf(what_, sizeof(what_), "log '%s', expected '%s'", log1, \
				    want);                                               \
			bh_test_fail(__FILE__, __LINE__, what_);                         \
		}                                                                        \
	} while (0)

/* --- Process bodies ------------------------------------------------------------------------ */

static volatile unsigned long count0, count1;
static volatile int spinning;

/* The highest-priority process of its core while it runs: counts until told to stop. */
static void spin0_body(void)
{
	while (spinning) {
		check_core(0);
		count0++;
		relax();
	}
}

static void spin1_body(void)
{
	while (spinning) {
		check_core(1);
		count1++;
		relax();
	}
}

static volatile unsigned long long t_signal, t_woken;

/* Core 1, above spin1: takes the semaphore WAKE_N times, stamping when it runs. */
static void waiter1_body(void)
{
	RETURN_CODE_TYPE rc;

	for (int i = 0; i < WAKE_N; i++) {
		WAIT_SEMAPHORE(sem, INF, &rc);
		t_woken = bh_counter();
		check_core(1);
	}
}

static volatile int released, gate_open;

static void lo1_body(void)
{
	check_core(1);
	note1('L');
	while (!released)
		relax();
	check_core(1);
	note1('l');
}

static void gate1_body(void)
{
	check_core(1);
	note1('G');
	while (!gate_open)
		relax();
	note1('g');
}

static void equal_body(char first, char second)
{
	RETURN_CODE_TYPE rc;

	check_core(1);
	note1(first);
	TIMED_WAIT(0, &rc); /* behind the other of its priority */
	check_core(1);
	note1(second);
}

static void fa1_body(void)
{
	equal_body('a', 'A');
}

static void fb1_body(void)
{
	equal_body('b', 'B');
}

static volatile int unlock_now;
static volatile LOCK_LEVEL_TYPE lk1_level;

static void lk1_body(void)
{
	LOCK_LEVEL_TYPE level = 0;
	RETURN_CODE_TYPE rc;

	LOCK_PREEMPTION(&level, &rc);
	lk1_level = level;
	note1('k');
	while (!unlock_now)
		relax();
	note1('u');
	UNLOCK_PREEMPTION(&level, &rc);
	check_core(1);
	note1('x');
}

static void hp1_body(void)
{
	check_core(1);
	note1('h');
}

static volatile SYSTEM_TIME_TYPE tw_late, ds_late, ds_planned;

/* Core 1's own virtual timer: a 1 ms wait. */
static void tw1_body(void)
{
	RETURN_CODE_TYPE rc;
	SYSTEM_TIME_TYPE due = apexutil_now() + 1 * MS;

	TIMED_WAIT(1 * MS, &rc);
	tw_late = apexutil_now() - due;
	check_core(1);
}

/* Started by core 0 with a delay: the release timer core 0 armed in core 1's list. */
static void ds1_body(void)
{
	ds_late = apexutil_now() - ds_planned;
	check_core(1);
}

#define PING_N 500
static volatile int pings, pongs;
static volatile unsigned long long ping_t0, ping_t1;

/* Core 0 and core 1 hand a token back and forth through two semaphores: every hand-over is a
 * cross-core wake-up of a process that blocked, and the lock is taken from both sides. */
static void ping0_body(void)
{
	RETURN_CODE_TYPE rc;

	ping_t0 = bh_counter();
	for (int i = 0; i < PING_N; i++) {
		SIGNAL_SEMAPHORE(s_ping, &rc);
		WAIT_SEMAPHORE(s_pong, INF, &rc);
		if (rc == NO_ERROR)
			pings++;
	}
	ping_t1 = bh_counter();
	check_core(0);
}

static void pong1_body(void)
{
	RETURN_CODE_TYPE rc;

	for (int i = 0; i < PING_N; i++) {
		WAIT_SEMAPHORE(s_ping, INF, &rc);
		if (rc == NO_ERROR)
			pongs++;
		SIGNAL_SEMAPHORE(s_pong, &rc);
	}
	check_core(1);
}

static volatile RETURN_CODE_TYPE raise_rc = -1;

static void raiser1_body(void)
{
	RETURN_CODE_TYPE rc;

	check_core(1);
	RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE) "core 1", 6, &rc);
	raise_rc = rc;
}

/* An undefined instruction on core 1: its ILLEGAL_REQUEST, taken on core 1's kernel stack. */
static void faulter1_body(void)
{
	check_core(1);
	__asm__ volatile("udf #0");
}

/* Overruns its 200 us capacity on core 1: a DEADLINE_MISSED from core 1's timer. */
static void late1_body(void)
{
	SYSTEM_TIME_TYPE t0 = apexutil_now();

	check_core(1);
	while (apexutil_now() - t0 < 1 * MS)
		relax();
}

static volatile PROCESS_ID_TYPE handled_pid;
static volatile ERROR_CODE_TYPE handled_code = -1;
static volatile PROCESSOR_CORE_ID_TYPE handler_core = -1;
static volatile int handled;

static void handler_body(void)
{
	ERROR_STATUS_TYPE e;
	PROCESSOR_CORE_ID_TYPE core = -1;
	RETURN_CODE_TYPE rc;

	GET_MY_PROCESSOR_CORE_ID(&core, &rc);
	handler_core = core;
	for (GET_ERROR_STATUS(&e, &rc); rc == NO_ERROR; GET_ERROR_STATUS(&e, &rc)) {
		handled_pid = e.FAILED_PROCESS_ID;
		handled_code = e.ERROR_CODE;
		handled++;
	}
}

#define MUTEX_N 300
static volatile unsigned long shared_count;

/* Both cores increment one counter under a binary semaphore, slowly (read, wait, write): a
 * lost update would show in the total. */
static void mutex_body(PROCESSOR_CORE_ID_TYPE core)
{
	RETURN_CODE_TYPE rc;

	for (int i = 0; i < MUTEX_N; i++) {
		WAIT_SEMAPHORE(s_mutex, INF, &rc);
		unsigned long v = shared_count;

		for (int k = 0; k < 20; k++)
			relax();
		shared_count = v + 1;
		SIGNAL_SEMAPHORE(s_mutex, &rc);
	}
	check_core(core);
}

static void mutex0_body(void)
{
	mutex_body(0);
}

static void mutex1_body(void)
{
	mutex_body(1);
}

static volatile unsigned long restart1_runs;

static void restart1_body(void)
{
	restart1_runs++;
	for (;;) {
		check_core(1);
		relax();
	}
}

/* --- Tests (the driver, core 0) ------------------------------------------------------------- */

static void settle(SYSTEM_TIME_TYPE d)
{
	apexutil_sleep(d);
}

static int dormant_soon(PROCESS_ID_TYPE id)
{
	for (int i = 0; i < 100 && apexutil_state_of(id) != DORMANT; i++)
		settle(100 * US);
	return apexutil_state_of(id) == DORMANT;
}

BH_TEST(apexmc_affinity_in_normal)
{
	PROCESSOR_CORE_ID_TYPE core = -1;
	PROCESS_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;

	INITIALIZE_PROCESS_CORE_AFFINITY(spin1, 0, &rc);
	BH_EXPECT_EQ(rc, INVALID_MODE);
	GET_MY_PROCESSOR_CORE_ID(&core, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT_EQ(core, 0);
	GET_PROCESS_STATUS(spin1, &st, &rc);
	BH_EXPECT_EQ(st.PROCESSOR_CORE_ID, 1);
	GET_PROCESS_STATUS(spin0, &st, &rc);
	BH_EXPECT_EQ(st.PROCESSOR_CORE_ID, 0);
}

/* Each core's process counts while the other core's highest-priority process spins: both
 * counters advance over one window in which neither core ever idles. */
BH_TEST(apexmc_cores_run_in_parallel)
{
	RETURN_CODE_TYPE rc;

	spinning = 1;
	START(spin1, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	START(spin0, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	settle(200 * US); /* spin0 runs on core 0 meanwhile */
	unsigned long c0 = count0, c1 = count1;
	SYSTEM_TIME_TYPE t0 = apexutil_now();

	/* The driver spins itself now: core 0's highest priority, spin0 below it waits. */
	while (apexutil_now() - t0 < 500 * US)
		relax();
	unsigned long c1_busy = count1 - c1, c0_busy = count0 - c0;

	settle(500 * US); /* now spin0 and spin1 run together */
	unsigned long c0_both = count0 - c0, c1_both = count1 - c1 - c1_busy;

	bh_printf("BHSTAT mc_spin1_while_driver_spins %lu\n", c1_busy);
	bh_printf("BHSTAT mc_spin0_and_spin1 %lu %lu\n", c0_both, c1_both);
	BH_EXPECT(c1_busy > 100);
	BH_EXPECT_EQ(c0_busy, 0);
	BH_EXPECT(c0_both > 100);
	BH_EXPECT(c1_both > 100);
	/* SUSPEND and RESUME of a process that runs on the other core. */
	SUSPEND(spin1, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	settle(100 * US); /* the kick reaches core 1 meanwhile */
	unsigned long suspended_at = count1;

	settle(200 * US);
	BH_EXPECT_EQ(count1, suspended_at);
	BH_EXPECT_EQ(apexutil_state_of(spin1), WAITING);
	RESUME(spin1, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	settle(200 * US);
	BH_EXPECT(count1 != suspended_at);
	/* STOP of a process that runs on the other core: it is left there at once. */
	STOP(spin1, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	settle(100 * US); /* the kick reaches core 1 meanwhile */
	unsigned long frozen = count1;

	settle(200 * US);
	BH_EXPECT_EQ(count1, frozen);
	BH_EXPECT_EQ(apexutil_state_of(spin1), DORMANT);
	spinning = 0;
	BH_EXPECT(dormant_soon(spin0));
}

/* SIGNAL_SEMAPHORE on core 0 readies a waiter bound to core 1 above core 1's spinning
 * process: core 1 is kicked and preempts at once. */
BH_TEST(apexmc_semaphore_wakes_other_core)
{
	unsigned long long lat_min = ~0ull, lat_max = 0;
	RETURN_CODE_TYPE rc;

	spinning = 1;
	START(spin1, &rc);
	START(waiter1, &rc);
	settle(200 * US);
	for (int i = 0; i < WAKE_N; i++) {
		unsigned long before = count1;

		settle(100 * US);
		BH_EXPECT(count1 != before); /* spin1 runs while waiter1 waits */
		t_woken = 0;
		t_signal = bh_counter();
		SIGNAL_SEMAPHORE(sem, &rc);
		BH_EXPECT_EQ(rc, NO_ERROR);
		for (int k = 0; k < 100000 && !t_woken; k++)
			relax();
		BH_EXPECT(t_woken != 0);
		unsigned long long lat = bh_ticks_to_ns(t_woken - t_signal);

		lat_min = lat < lat_min ? lat : lat_min;
		lat_max = lat > lat_max ? lat : lat_max;
	}
	bh_printf("BHSTAT mc_cross_core_wake_min_ns %llu\n", lat_min);
	bh_printf("BHSTAT mc_cross_core_wake_max_ns %llu\n", lat_max);
	BH_EXPECT(lat_max <= CROSS_WAKE_MAX_NS);
	BH_EXPECT(dormant_soon(waiter1));
	spinning = 0;
	BH_EXPECT(dormant_soon(spin1));
}

/* On core 1, started from core 0: gate1 (30) preempts lo1 (10); fa1 and fb1 (20), started in
 * that order while gate1 runs, then run first come, each yielding to the other; lo1 last. */
BH_TEST(apexmc_preemption_and_fifo_per_core)
{
	RETURN_CODE_TYPE rc;

	log1_reset();
	released = gate_open = 0;
	START(lo1, &rc);
	settle(200 * US);
	START(gate1, &rc);
	settle(200 * US);
	START(fa1, &rc);
	START(fb1, &rc);
	settle(200 * US);
	EXPECT_LOG1("LG");
	gate_open = 1;
	settle(500 * US);
	EXPECT_LOG1("LGgabAB");
	released = 1;
	BH_EXPECT(dormant_soon(lo1));
	EXPECT_LOG1("LGgabABl");
}

/* LOCK_PREEMPTION on core 1 holds off core 1's higher priorities only: core 0 goes on, and
 * cannot SUSPEND the holder (the lock would stay behind without its owner). */
BH_TEST(apexmc_lock_preemption_is_per_core)
{
	PARTITION_STATUS_TYPE ps;
	RETURN_CODE_TYPE rc;

	log1_reset();
	unlock_now = 0;
	START(lk1, &rc);
	settle(200 * US);
	BH_EXPECT_EQ(lk1_level, 1);
	START(hp1, &rc); /* above lk1, on its core */
	BH_EXPECT_EQ(rc, NO_ERROR);
	settle(300 * US); /* core 0 runs: the driver is here */
	EXPECT_LOG1("k");
	SUSPEND(lk1, &rc); /* it holds core 1's lock: refused, from another core as from its own */
	BH_EXPECT_EQ(rc, INVALID_MODE);
	settle(100 * US);
	EXPECT_LOG1("k"); /* hp1 still held off */
	GET_PARTITION_STATUS(&ps, &rc);
	BH_EXPECT_EQ(ps.LOCK_LEVEL, 0); /* core 0's level */
	unlock_now = 1;
	BH_EXPECT(dormant_soon(lk1));
	EXPECT_LOG1("kuhx");
}

/* Core 1's timers: its own wait, and a release core 0 arms in its list. */
BH_TEST(apexmc_timers_on_the_other_core)
{
	RETURN_CODE_TYPE rc;

	START(tw1, &rc);
	BH_EXPECT(dormant_soon(tw1));
	ds_planned = apexutil_now() + 1 * MS;
	DELAYED_START(ds1, 1 * MS, &rc);
	BH_EXPECT_EQ(rc, NO_ERROR);
	BH_EXPECT(dormant_soon(ds1));
	bh_printf("BHSTAT mc_timed_wait_late_ns %lld\n", tw_late);
	bh_printf("BHSTAT mc_remote_delayed_start_late_ns %lld\n", ds_late);
	BH_EXPECT(tw_late >= 0 && tw_late <= TIMER_LATE_MAX_NS);
	BH_EXPECT(ds_late >= 0 && ds_late <= TIMER_LATE_MAX_NS);
}

BH_TEST(apexmc_cross_core_ping_pong)
{
	RETURN_CODE_TYPE rc;

	START(pong1, &rc);
	START(ping0, &rc);
	for (int i = 0; i < 1000 && apexutil_state_of(ping0) != DORMANT; i++)
		settle(1 * MS);
	BH_EXPECT(dormant_soon(ping0));
	BH_EXPECT(dormant_soon(pong1));
	BH_EXPECT_EQ(pings, PING_N);
	BH_EXPECT_EQ(pongs, PING_N);
	unsigned long long round_trip = bh_ticks_to_ns(ping_t1 - ping_t0) / PING_N;

	bh_printf("BHSTAT mc_ping_pong_round_trip_ns %llu\n", round_trip);
	/* Two wake-ups of an idle vCPU by the other: a lost kick would wait for the next timer. */
	BH_EXPECT(round_trip <= 2 * CROSS_WAKE_MAX_NS);
}

/* An error on core 1 goes to the error handler, which runs on core 0. */
BH_TEST(apexmc_error_on_core_1_handled_on_core_0)
{
	RETURN_CODE_TYPE rc;

	START(raiser1, &rc);
	BH_EXPECT(dormant_soon(raiser1));
	settle(200 * US);
	BH_EXPECT_EQ(raise_rc, NO_ERROR);
	BH_EXPECT_EQ(handled_pid, raiser1);
	BH_EXPECT_EQ(handled_code, APPLICATION_ERROR);
	BH_EXPECT_EQ(handler_core, 0);
}

/* A fault and a missed deadline of core-1 processes reach the handler on core 0; the faulty
 * process is stopped, the late one goes on. */
BH_TEST(apexmc_errors_of_core_1)
{
	RETURN_CODE_TYPE rc;
	int before = handled;

	START(faulter1, &rc);
	BH_EXPECT(dormant_soon(faulter1));
	settle(200 * US);
	BH_EXPECT_EQ(handled, before + 1);
	BH_EXPECT_EQ(handled_pid, faulter1);
	BH_EXPECT_EQ(handled_code, ILLEGAL_REQUEST);
	START(late1, &rc);
	BH_EXPECT(dormant_soon(late1));
	BH_EXPECT_EQ(handled, before + 2);
	BH_EXPECT_EQ(handled_pid, late1);
	BH_EXPECT_EQ(handled_code, DEADLINE_MISSED);
	BH_EXPECT_EQ(handler_core, 0);
}

BH_TEST(apexmc_semaphore_excludes_across_cores)
{
	RETURN_CODE_TYPE rc;

	shared_count = 0;
	START(mutex1, &rc);
	START(mutex0, &rc);
	for (int i = 0; i < 1000 && (apexutil_state_of(mutex0) != DORMANT ||
				     apexutil_state_of(mutex1) != DORMANT); i++)
		settle(1 * MS);
	BH_EXPECT_EQ(apexutil_state_of(mutex0), DORMANT);
	BH_EXPECT_EQ(apexutil_state_of(mutex1), DORMANT);
	BH_EXPECT_EQ(shared_count, 2 * MUTEX_N);
}

/* STOP of a process running on core 1, then START at once: NO_ACTION until core 1 has left it
 * (its kick), then a fresh start, 50 times. */
BH_TEST(apexmc_stop_and_start_a_running_process)
{
	int refused = 0, started = 0;
	RETURN_CODE_TYPE rc;

	restart1_runs = 0;
	START(restart1, &rc);
	settle(50 * US);
	for (int i = 0; i < 50; i++) {
		unsigned long runs = restart1_runs;

		STOP(restart1, &rc);
		BH_EXPECT_EQ(rc, NO_ERROR);
		for (int k = 0; k < 1000; k++) {
			START(restart1, &rc);
			if (rc == NO_ERROR)
				break;
			BH_EXPECT_EQ(rc, NO_ACTION);
			refused++;
			relax();
		}
		started += rc == NO_ERROR;
		settle(50 * US);
		BH_EXPECT(restart1_runs == runs + 1);
	}
	STOP(restart1, &rc);
	bh_printf("BHSTAT mc_restarts %d refused %d\n", started, refused);
	BH_EXPECT_EQ(started, 50);
}

BH_TEST(apexmc_never_on_another_core)
{
	bh_printf("BHSTAT mc_core_checks %u %u\n", core_checks[0], core_checks[1]);
	BH_EXPECT(core_checks[0] > 1000 && core_checks[1] > 1000);
	BH_EXPECT_EQ(wrong_core[0] + wrong_core[1], 0);
}

static void driver_body(void)
{
	RETURN_CODE_TYPE rc;

	check_core(0);
	bh_test_run_all();
	SET_PARTITION_MODE(IDLE, &rc);
}

/* --- Initialization -------------------------------------------------------------------------- */

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
			    PROCESSOR_CORE_ID_TYPE core)
{
	PROCESS_ID_TYPE id = apexutil_make(name, entry, prio, INF, INF, S, SOFT);
	RETURN_CODE_TYPE rc = NO_ERROR;

	if (core != 0)
		INITIALIZE_PROCESS_CORE_AFFINITY(id, core, &rc);
	if (rc != NO_ERROR)
		bh_printf("apexmc: affinity of %s: %d\n", name, (int)rc);
	return id;
}

/* The affinity services before NORMAL: return codes, the default, the status. */
static void affinity_checks(void)
{
	PARTITION_STATUS_TYPE ps;
	PROCESS_STATUS_TYPE st;
	PROCESSOR_CORE_ID_TYPE core = -1;
	RETURN_CODE_TYPE rc, bad_id, bad_core, negative, ok;
	int good;
	char detail[120];

	GET_PARTITION_STATUS(&ps, &rc);
	INITIALIZE_PROCESS_CORE_AFFINITY(99, 1, &bad_id);
	INITIALIZE_PROCESS_CORE_AFFINITY(spin0, 2, &bad_core);
	INITIALIZE_PROCESS_CORE_AFFINITY(spin0, -1, &negative);
	GET_PROCESS_STATUS(spin0, &st, &rc);
	int default_core = st.PROCESSOR_CORE_ID;

	INITIALIZE_PROCESS_CORE_AFFINITY(spin1, 1, &ok);
	GET_PROCESS_STATUS(spin1, &st, &rc);
	GET_MY_PROCESSOR_CORE_ID(&core, &rc);
	good = ps.NUM_ASSIGNED_CORES == 2 && bad_id == INVALID_PARAM &&
	       bad_core == INVALID_CONFIG && negative == INVALID_CONFIG && default_core == 0 &&
	       ok == NO_ERROR && st.PROCESSOR_CORE_ID == 1 && core == 0 && rc == NO_ERROR;
	bh_snprintf(detail, sizeof(detail),
		    "cores %u, codes %d %d %d %d, default %d, bound %d, init core %d",
		    ps.NUM_ASSIGNED_CORES, bad_id, bad_core, negative, ok, default_core,
		    st.PROCESSOR_CORE_ID, core);
	bh_test_report("apexmc_affinity_services_during_init", good, detail);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	driver = make("driver", driver_body, 100, 0);
	spin0 = make("spin0", spin0_body, 50, 0);
	spin1 = make("spin1", spin1_body, 50, 0); /* bound to core 1 by affinity_checks */
	affinity_checks();
	waiter1 = make("waiter1", waiter1_body, 60, 1);
	lo1 = make("lo1", lo1_body, 10, 1);
	gate1 = make("gate1", gate1_body, 30, 1);
	fa1 = make("fa1", fa1_body, 20, 1);
	fb1 = make("fb1", fb1_body, 20, 1);
	lk1 = make("lk1", lk1_body, 10, 1);
	hp1 = make("hp1", hp1_body, 90, 1);
	tw1 = make("tw1", tw1_body, 40, 1);
	ds1 = make("ds1", ds1_body, 40, 1);
	ping0 = make("ping0", ping0_body, 70, 0);
	pong1 = make("pong1", pong1_body, 70, 1);
	raiser1 = make("raiser1", raiser1_body, 40, 1);
	mutex0 = make("mutex0", mutex0_body, 60, 0);
	mutex1 = make("mutex1", mutex1_body, 60, 1);
	restart1 = make("restart1", restart1_body, 20, 1);
	faulter1 = make("faulter1", faulter1_body, 40, 1);
	late1 = apexutil_make("late1", late1_body, 40, INF, 200 * US, S, SOFT);
	INITIALIZE_PROCESS_CORE_AFFINITY(late1, 1, &rc);
	CREATE_SEMAPHORE("sem", 0, 1, PRIORITY, &sem, &rc);
	CREATE_SEMAPHORE("s_ping", 0, 1, FIFO, &s_ping, &rc);
	CREATE_SEMAPHORE("s_pong", 0, 1, FIFO, &s_pong, &rc);
	CREATE_SEMAPHORE("s_mutex", 1, 1, FIFO, &s_mutex, &rc);
	CREATE_ERROR_HANDLER(handler_body, S, &rc);
	START(driver, &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	bh_printf("apexmc: SET_PARTITION_MODE(NORMAL) returned %d\n", (int)rc);
	return 0;
}
