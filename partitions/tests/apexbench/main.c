/* apexbench: libapex's benchmarks for `make bench` (bench/apex.yaml, bench/apex_periodic.yaml,
 * under -icount shift=0: one instruction is one nanosecond).
 *
 * Without a cyclic plan (bench/apex.yaml, a fixed-priority core shared with apexpeer above it):
 *   apex_yield_switch            TIMED_WAIT(0) between two processes of one priority: from
 *                                one's call to the other running (average of 2 x PINGPONG_N)
 *   apex_block_to_next_running   WAIT_SEMAPHORE blocks the caller, the next process runs
 *   apex_signal_to_waiter_running SIGNAL_SEMAPHORE to the higher-priority waiter running
 *   apex_port_to_process_running_{min,max}  apexpeer's 100-byte queuing send to the APEX
 *                                process blocked in RECEIVE_QUEUING_MESSAGE running
 * Partition id 1 (bench/apex_port_idle.yaml, the same core with apexpeer below this partition):
 *   apex_port_to_idle_process_running_{min,max}  the peer's 100-byte send to the APEX process
 *                                blocked in RECEIVE_QUEUING_MESSAGE, the partition idle
 * With one (bench/apex_periodic.yaml, a cyclic core, other partitions in the other slot
 * and on another core):
 *   apex_periodic_jitter         max - min lateness of PERIODIC_WAIT releases over PER_N periods,
 *                                timed to the instruction (stamps)
 *   apex_periodic_lateness_min   their smallest lateness (release point to the process running)
 * Ends with BENCH-DONE and halts the system.
 */
#include "apex/apex.h"

#include "../apextest/apexutil.h"
#include "../apextest/peer_protocol.h"
#include "../../bench/common/stamp.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE
#define PINGPONG_N 1000
#define PORT_N 20
#define PER_N 10000
#define PER_PERIOD (100 * US)
#define PER_SLOT_OFFSET (20 * US)
#define IDLE_PORT_PARTITION 1 /* bench/apex_port_idle.yaml */

static SEMAPHORE_ID_TYPE sem_done;

static int periodic_system(void)
{
	unsigned long long frame_start;

	return bh_plan_frame_start(&frame_start) >= 0;
}
static QUEUING_PORT_ID_TYPE cmd_out, rsp_in;

static void done(void)
{
	RETURN_CODE_TYPE rc;

	SIGNAL_SEMAPHORE(sem_done, &rc);
}

/* --- Yield, semaphore ping-pong (sb above sa waits, sa signals): apexutil.h ----------------- */

static struct apexutil_costs costs = { .n = PINGPONG_N };

static void yield_body(void)
{
	apexutil_yielder(&costs);
	if (costs.yielders == 2 && costs.yield_t1)
		done(); /* the second yielder ends last */
}

static void pp_low_body(void)
{
	apexutil_signaller(&costs);
	done();
}

static void pp_high_body(void)
{
	apexutil_waiter(&costs);
}

/* --- Port: the peer's send to the blocked receiver running ------------------------------------ */

static volatile int spin_stop;
static SYSTEM_TIME_TYPE port_min = 1ll << 62, port_max;

static void spin_body(void)
{
	while (!spin_stop)
		;
}

/* The receiver's buffer: within one page (a buffer across a page boundary costs the
 * hypervisor a second translation and copy). */
static struct peer_answer a __attribute__((aligned(128)));

static void receiver_body(void)
{
	RETURN_CODE_TYPE rc;
	MESSAGE_SIZE_TYPE len;

	for (unsigned seq = 0; seq < PORT_N; seq++) {
		struct peer_cmd c = { PEER_ECHO, seq, 200 * US };

		SEND_QUEUING_MESSAGE(cmd_out, (MESSAGE_ADDR_TYPE)&c, sizeof(c), INF, &rc);
		RECEIVE_QUEUING_MESSAGE(rsp_in, INF, (MESSAGE_ADDR_TYPE)&a, &len, &rc);
		SYSTEM_TIME_TYPE at = (SYSTEM_TIME_TYPE)bh_now_ns();
		SYSTEM_TIME_TYPE sent = (SYSTEM_TIME_TYPE)((unsigned long long)a.sent_hi << 32 |
							    a.sent_lo);
		if (rc != NO_ERROR || a.seq != seq)
			bh_printf("apexbench: answer %u: rc %d seq %u\n", seq, (int)rc, a.seq);
		if (at - sent < port_min)
			port_min = at - sent;
		if (at - sent > port_max)
			port_max = at - sent;
	}
	spin_stop = 1;
	done();
}

/* --- Periodic releases --------------------------------------------------------------------------- */

/* Two periodic processes: one released at each partition period start (= the start of the
 * partition's slot, where the hypervisor switches the core to it), one DELAYED_START'ed 20 us
 * into the slot (the partition already runs, idle). */
struct periodic_stats {
	SYSTEM_TIME_TYPE first;          /* the first release point (GET_PROCESS_STATUS) */
	SYSTEM_TIME_TYPE late_min, late_max;
};
static struct periodic_stats per_at_start = { 0, 1ll << 62, 0 }, per_in_slot = { 0, 1ll << 62, 0 };

/* Each activation stamps its start to the instruction (partitions/bench/common/stamp.h) and
 * compares it with its release point: the first plus k periods. The first release is
 * START's; the PER_N after it are PERIODIC_WAIT's, which are measured. Each of those is
 * stamped by the instructions right after its PERIODIC_WAIT returns, the same ones every
 * time: with the stamp at the top of one loop over all activations, the compiler reached it
 * by a different branch after the first PERIODIC_WAIT than after the others, which read as
 * 2 instructions of jitter. */
static SYSTEM_TIME_TYPE stamp_now(void)
{
	struct bench_reads r;

	BENCH_READ16(r);
	return (SYSTEM_TIME_TYPE)bench_stamp_decode(&r);
}

static void periodic_run(struct periodic_stats *ps)
{
	RETURN_CODE_TYPE rc;

	for (int k = 1; k <= PER_N; k++) {
		PERIODIC_WAIT(&rc);
		SYSTEM_TIME_TYPE late = stamp_now() - (ps->first + k * PER_PERIOD);

		if (late < ps->late_min)
			ps->late_min = late;
		if (late > ps->late_max)
			ps->late_max = late;
	}
}

static void periodic_at_start_body(void)
{
	periodic_run(&per_at_start);
}

static void periodic_in_slot_body(void)
{
	periodic_run(&per_in_slot);
	done(); /* released last in each period, it ends last */
}

static SYSTEM_TIME_TYPE first_release(PROCESS_ID_TYPE id)
{
	PROCESS_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;

	GET_PROCESS_STATUS(id, &st, &rc);
	return st.DEADLINE_TIME - st.ATTRIBUTES.TIME_CAPACITY;
}

/* --- Driver ------------------------------------------------------------------------------------- */

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
			    SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity)
{
	return apexutil_make(name, entry, prio, period, capacity, 4096, SOFT);
}

static PROCESS_ID_TYPE y1, y2, sa, sb, rx, spin, per, per2;

/* Starts the processes of one benchmark and waits for the end of it. */
static void run(PROCESS_ID_TYPE a, PROCESS_ID_TYPE b)
{
	RETURN_CODE_TYPE rc;

	START(a, &rc);
	if (b)
		START(b, &rc);
	WAIT_SEMAPHORE(sem_done, INF, &rc);
}

static void report(const char *name, unsigned long long value)
{
	bh_printf("BENCH %s %llu cycles\n", name, value);
}

static void driver_body(void)
{
	if (bh_partition_id() == IDLE_PORT_PARTITION) {
		/* The peer is below this partition: it runs, and sends, only while this one idles
		 * (the receiver blocked, nothing else ready). */
		run(rx, 0);
		report("apex_port_to_idle_process_running_min", (unsigned long long)port_min);
		report("apex_port_to_idle_process_running_max", (unsigned long long)port_max);
	} else if (periodic_system()) {
		RETURN_CODE_TYPE rc;

		START(per, &rc);
		DELAYED_START(per2, PER_SLOT_OFFSET, &rc);
		per_at_start.first = first_release(per);
		per_in_slot.first = first_release(per2);
		WAIT_SEMAPHORE(sem_done, INF, &rc);
		report("apex_periodic_lateness_min", (unsigned long long)per_in_slot.late_min);
		report("apex_periodic_jitter",
		       (unsigned long long)(per_in_slot.late_max - per_in_slot.late_min));
		report("apex_periodic_lateness_min_at_slot_start",
		       (unsigned long long)per_at_start.late_min);
		report("apex_periodic_jitter_at_slot_start",
		       (unsigned long long)(per_at_start.late_max - per_at_start.late_min));
	} else {
		run(y1, y2);
		report("apex_yield_switch", bh_ticks_to_ns(costs.yield_t1 - costs.yield_t0) / (2 * PINGPONG_N));
		run(sb, sa);
		report("apex_block_to_next_running", bh_ticks_to_ns(costs.sum_block) / PINGPONG_N);
		report("apex_signal_to_waiter_running", bh_ticks_to_ns(costs.sum_sig) / PINGPONG_N);
		run(spin, rx);
		report("apex_port_to_process_running_min", (unsigned long long)port_min);
		report("apex_port_to_process_running_max", (unsigned long long)port_max);
	}
	bh_printf("BENCH-DONE\n");
	bh_halt_system();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	CREATE_SEMAPHORE("pp", 0, 1, FIFO, &costs.sem, &rc);
	CREATE_SEMAPHORE("done", 0, 1, FIFO, &sem_done, &rc);
	START(make("driver", driver_body, 200, INF, INF), &rc);
	y1 = make("y1", yield_body, 80, INF, INF);
	y2 = make("y2", yield_body, 80, INF, INF);
	sa = make("sa", pp_low_body, 80, INF, INF);
	sb = make("sb", pp_high_body, 81, INF, INF);
	if (periodic_system()) {
		apex_set_partition_period(PER_PERIOD, &rc);
		per = make("per", periodic_at_start_body, 90, PER_PERIOD, PER_PERIOD / 2);
		per2 = make("per2", periodic_in_slot_body, 91, PER_PERIOD, PER_PERIOD / 2);
	} else {
		spin = make("spin", spin_body, 10, INF, INF);
		rx = make("rx", receiver_body, 70, INF, INF);
		CREATE_QUEUING_PORT("cmd_out", 32, 2, SOURCE, FIFO, &cmd_out, &rc);
		CREATE_QUEUING_PORT("rsp_in", 100, 4, DESTINATION, FIFO, &rsp_in, &rc);
	}
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
