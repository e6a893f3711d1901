/* control: the demo's critical partition, an ARINC 653 APEX application (docs/apex.md).
 *
 * A simulated plant, a heater whose temperature follows the setpoint as a first-order lag
 * (time constant 1 s), in integer milli-degrees, run by five processes:
 *
 * - sensor (periodic, 10 ms): samples the plant into the blackboard
 *   `measurement`, and measures how late its releases come against their planned times;
 * - controller (periodic, 100 ms): advances the plant from the latest
 *   measurement, alternates the setpoint every 5 s until someone sets it, publishes the plant on
 *   the sampling port `temperature` ("setpoint 60.0 C, value 42.1 C"), and once a second prints
 *   the state with the sensor's worst lateness since the previous print;
 * - command (aperiodic): blocked on the queuing port `control_cmd` at no CPU cost, takes
 *   "setpoint N" (whole degrees) or "auto" and answers each on `control_reply`;
 * - supervisor (periodic, 5 s): prints each process's activations, deadline misses and worst
 *   response (release to PERIODIC_WAIT; 0 for the aperiodic command) and the
 *   partition's error counts: what a user looks at to see the application is healthy;
 * - the error handler: lets a process that missed its deadline go on (each periodic process's
 *   deadline is its next release; the supervisor shows the count), and prints and starts
 *   afresh a process that an error stopped.
 *
 * Under QEMU without -icount the counter is the host's clock, so a lateness of milliseconds is
 * QEMU's host thread being descheduled, not the hypervisor: the line says so. The hypervisor's
 * own part is measured under -icount (tests/system/test_lateness.py, docs/performance.md).
 */
#include "apex/apex.h"
#include "bulkhead/bulkhead.h"

#define MS                 1000000ll      /* nanoseconds */
#define PARTITION_PERIOD   (10 * MS)      /* its window recurs every 10 ms (configs/demo.yaml) */
#define SENSOR_PERIOD      (10 * MS)
#define CONTROLLER_PERIOD  (100 * MS)
#define SUPERVISOR_PERIOD  (5000 * MS)
#define PRINT_EVERY        10             /* controller cycles: once a second */
#define SETPOINT_EVERY     50             /* controller cycles: every 5 s */
#define SETPOINT_LOW_MC    40000          /* milli-degrees Celsius */
#define SETPOINT_HIGH_MC   60000
#define SETPOINT_MAX_MC    100000
#define AMBIENT_MC         20000
#define LAG_DIVISOR        10             /* tau / controller period */
#define STACK              4096
/* Above this, a late release cannot be the hypervisor's (its longest path is microseconds,
 * docs/performance.md): it is the host not running QEMU. */
#define HOST_LATE_US       1000ul

struct plant {
	long setpoint_mc;
	long value_mc;
	int manual; /* the setpoint was commanded: stop alternating */
};

/* The plant, shared by the controller and the command process: both change it only while
 * holding `plant_lock`. The sensor reads the value without it (one aligned word). */
static struct plant plant = { SETPOINT_HIGH_MC, AMBIENT_MC, 0 };
static SEMAPHORE_ID_TYPE plant_lock;
static BLACKBOARD_ID_TYPE measurement;
static SAMPLING_PORT_ID_TYPE temperature_port;
static QUEUING_PORT_ID_TYPE cmd_port, reply_port;
static volatile unsigned long sensor_late_max_ns; /* since the controller's last print */

static void fail_if(RETURN_CODE_TYPE rc, const char *what)
{
	if (rc != NO_ERROR) {
		bh_printf("control: %s failed (return code %d)\n", what, (int)rc);
		RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE)what, 0, &rc);
	}
}

static SYSTEM_TIME_TYPE now(void)
{
	SYSTEM_TIME_TYPE t;
	RETURN_CODE_TYPE rc;

	GET_TIME(&t, &rc);
	return t;
}

/* ---- processes ---- */

static void sensor(void)
{
	RETURN_CODE_TYPE rc;
	SYSTEM_TIME_TYPE planned = now(); /* the first release: this one */

	for (;;) {
		SYSTEM_TIME_TYPE late = now() - planned;
		if (late > 0 && (unsigned long)late > sensor_late_max_ns)
			sensor_late_max_ns = (unsigned long)late;
		long sample = plant.value_mc;
		DISPLAY_BLACKBOARD(measurement, (MESSAGE_ADDR_TYPE)&sample, sizeof(sample), &rc);
		planned += SENSOR_PERIOD;
		PERIODIC_WAIT(&rc);
	}
}

static void print_state(unsigned long cycle, const struct plant *p, unsigned long late_us)
{
	bh_printf("cycle %lu: setpoint %ld.%ld C, value %ld.%ld C, sensor late max %lu us%s\n", cycle,
		  p->setpoint_mc / 1000, (p->setpoint_mc % 1000) / 100, p->value_mc / 1000,
		  (p->value_mc % 1000) / 100, late_us,
		  late_us > HOST_LATE_US ? " (QEMU's host scheduling, not the hypervisor: "
					   "run with -icount to see the hypervisor's part)" : "");
}

static void publish(const struct plant *p)
{
	char msg[64];
	RETURN_CODE_TYPE rc;
	int len = bh_snprintf(msg, sizeof(msg), "setpoint %ld.%ld C, value %ld.%ld C",
			      p->setpoint_mc / 1000, (p->setpoint_mc % 1000) / 100,
			      p->value_mc / 1000, (p->value_mc % 1000) / 100);

	WRITE_SAMPLING_MESSAGE(temperature_port, (MESSAGE_ADDR_TYPE)msg, len, &rc);
}

static void plant_step(struct plant *p, unsigned long cycle, long measured_mc)
{
	if (!p->manual && cycle % SETPOINT_EVERY == 0)
		p->setpoint_mc = (cycle / SETPOINT_EVERY) % 2 ? SETPOINT_LOW_MC : SETPOINT_HIGH_MC;
	p->value_mc = measured_mc + (p->setpoint_mc - measured_mc) / LAG_DIVISOR;
}

static void controller(void)
{
	RETURN_CODE_TYPE rc;

	for (unsigned long cycle = 1;; cycle++) {
		long measured = plant.value_mc;
		MESSAGE_SIZE_TYPE len;
		READ_BLACKBOARD(measurement, 0, (MESSAGE_ADDR_TYPE)&measured, &len, &rc);
		WAIT_SEMAPHORE(plant_lock, INFINITE_TIME_VALUE, &rc);
		plant_step(&plant, cycle, measured);
		struct plant copy = plant;
		SIGNAL_SEMAPHORE(plant_lock, &rc);
		publish(&copy);
		if (cycle % PRINT_EVERY == 0) {
			print_state(cycle, &copy, sensor_late_max_ns / 1000);
			sensor_late_max_ns = 0;
		}
		PERIODIC_WAIT(&rc);
	}
}

/* "setpoint N" (whole degrees, 0..100) or "auto"; the answer, in reply. */
static int command_answer(const char *cmd, char *reply, unsigned size)
{
	const char *d = bh_after_prefix(cmd, "setpoint ");
	long deg = 0;

	if (bh_after_prefix(cmd, "auto") && !*bh_after_prefix(cmd, "auto")) {
		plant.manual = 0;
		return bh_snprintf(reply, size, "ok: setpoint alternates again");
	}
	if (!d)
		return bh_snprintf(reply, size, "refused: try 'setpoint N' or 'auto'");
	const char *digits = d;
	for (; *d >= '0' && *d <= '9' && deg <= SETPOINT_MAX_MC; d++)
		deg = deg * 10 + (*d - '0');
	if (d == digits || *d || deg * 1000 > SETPOINT_MAX_MC)
		return bh_snprintf(reply, size, "refused: setpoint is 0 to 100");
	plant.setpoint_mc = deg * 1000;
	plant.manual = 1;
	return bh_snprintf(reply, size, "ok: setpoint %ld C", deg);
}

static void command(void)
{
	char cmd[33], reply[64];
	MESSAGE_SIZE_TYPE n;
	RETURN_CODE_TYPE rc;

	for (;;) {
		RECEIVE_QUEUING_MESSAGE(cmd_port, INFINITE_TIME_VALUE, (MESSAGE_ADDR_TYPE)cmd, &n, &rc);
		if (rc != NO_ERROR)
			continue;
		cmd[n < 32 ? n : 32] = 0;
		WAIT_SEMAPHORE(plant_lock, INFINITE_TIME_VALUE, &rc);
		int len = command_answer(cmd, reply, sizeof(reply));
		SIGNAL_SEMAPHORE(plant_lock, &rc);
		bh_printf("command \"%s\": %s\n", cmd, reply);
		SEND_QUEUING_MESSAGE(reply_port, (MESSAGE_ADDR_TYPE)reply, len, 0, &rc);
	}
}

static void print_process(PROCESS_ID_TYPE id)
{
	PROCESS_STATUS_TYPE st;
	struct apex_process_counters c;
	RETURN_CODE_TYPE rc;

	GET_PROCESS_STATUS(id, &st, &rc);
	apex_get_process_counters(id, &c, &rc);
	bh_printf("  %s: %llu activations, %llu deadline misses, %llu stack overflows, worst response "
		  "%lld us\n", st.ATTRIBUTES.NAME, c.activations, c.deadline_misses, c.stack_overflows,
		  c.worst_response / 1000);
}

static PROCESS_ID_TYPE process_count;

static void supervisor(void)
{
	RETURN_CODE_TYPE rc;
	struct apex_counters c;

	for (;;) {
		PERIODIC_WAIT(&rc);
		apex_get_counters(&c);
		bh_printf("supervisor: %llu context switches, %llu errors handled, %llu to the health "
			  "monitor\n", c.context_switches, c.errors_handled, c.errors_to_hm);
		for (PROCESS_ID_TYPE id = 1; id <= process_count; id++)
			print_process(id);
	}
}

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	for (GET_ERROR_STATUS(&e, &rc); rc == NO_ERROR; GET_ERROR_STATUS(&e, &rc)) {
		if (e.ERROR_CODE == DEADLINE_MISSED)
			continue; /* the process goes on; the supervisor shows the count */
		bh_printf("error handler: process %d, error %d at %p: started again\n",
			  (int)e.FAILED_PROCESS_ID, (int)e.ERROR_CODE, (void *)e.FAILED_ADDRESS);
		START(e.FAILED_PROCESS_ID, &rc); /* it was stopped: run it afresh */
	}
}

/* ---- initialization ---- */

static void start_process(SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity, void (*entry)(void),
			  PRIORITY_TYPE priority, const char *name)
{
	PROCESS_ATTRIBUTE_TYPE a = { period, capacity, entry, STACK, priority, SOFT, "" };
	PROCESS_ID_TYPE id;
	RETURN_CODE_TYPE rc;

	bh_snprintf(a.NAME, sizeof(a.NAME), "%s", name);
	CREATE_PROCESS(&a, &id, &rc);
	fail_if(rc, name);
	START(id, &rc);
	fail_if(rc, name);
	process_count = id;
}

static void create_resources(void)
{
	RETURN_CODE_TYPE rc;

	CREATE_SEMAPHORE("plant_lock", 1, 1, PRIORITY, &plant_lock, &rc);
	fail_if(rc, "plant_lock");
	CREATE_BLACKBOARD("measurement", sizeof(long), &measurement, &rc);
	fail_if(rc, "measurement");
	CREATE_SAMPLING_PORT("temperature", 64, SOURCE, 1000 * MS, &temperature_port, &rc);
	fail_if(rc, "temperature");
	CREATE_QUEUING_PORT("control_cmd", 32, 4, DESTINATION, FIFO, &cmd_port, &rc);
	fail_if(rc, "control_cmd");
	CREATE_QUEUING_PORT("control_reply", 64, 4, SOURCE, FIFO, &reply_port, &rc);
	fail_if(rc, "control_reply");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	apex_init(boot_kind, restarts);
	bh_printf("control: started on vCPU %u (boot %u, restart #%u), APEX processes: sensor 10 ms, "
		  "controller 100 ms, command, supervisor 5 s, error handler\n", vcpu, boot_kind, restarts);
	apex_set_partition_period(PARTITION_PERIOD, &rc);
	CREATE_ERROR_HANDLER(error_handler, STACK, &rc);
	fail_if(rc, "error handler");
	create_resources();
	/* Deadlines one period after each release: a miss is a real overrun (or, without
	 * -icount, the host not running QEMU), counted and shown by the supervisor. */
	start_process(SENSOR_PERIOD, SENSOR_PERIOD, sensor, 40, "sensor");
	start_process(CONTROLLER_PERIOD, CONTROLLER_PERIOD, controller, 30, "controller");
	start_process(INFINITE_TIME_VALUE, INFINITE_TIME_VALUE, command, 20, "command");
	start_process(SUPERVISOR_PERIOD, SUPERVISOR_PERIOD, supervisor, 10, "supervisor");
	SET_PARTITION_MODE(NORMAL, &rc); /* does not return */
	return 0;
}
