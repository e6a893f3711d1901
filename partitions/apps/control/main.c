/* control: a periodic control loop, the demo's critical partition.
 *
 * Every 100 ms it advances a simulated plant (a heater whose temperature follows the
 * setpoint as a first-order lag, time constant 1 s) in integer milli-degrees. The
 * setpoint alternates every 5 s until someone sets it. Once a second it prints the state and
 * how late its wake-ups came against their planned deadlines since the previous print: what
 * another partition misbehaving must not disturb. Under QEMU without -icount the counter is
 * the host's clock, so a lateness of milliseconds is QEMU's host thread being descheduled
 * (a loaded host), not the hypervisor: the line says so. The hypervisor's own part is
 * measured under -icount (tests/system/test_lateness.py, docs/performance.md).
 *
 * When the description gives it the ports, it also publishes the plant every cycle on the
 * sampling port `temperature` ("setpoint 60.0 C, value 42.1 C") and takes commands on the
 * queuing port `control_cmd` ("setpoint 55" in degrees, or "auto"), answering each on
 * `control_reply`: what Linux's `bhport` reads and sends in the default system.
 */
#include "bulkhead/bulkhead.h"

#define PERIOD_NS        100000000ull  /* 100 ms */
#define PRINT_EVERY      10            /* cycles: once a second */
#define SETPOINT_EVERY   50            /* cycles: every 5 s */
#define SETPOINT_LOW_MC  40000         /* milli-degrees Celsius */
#define SETPOINT_HIGH_MC 60000
#define AMBIENT_MC       20000
#define LAG_DIVISOR      10            /* tau / period: first-order step = error / 10 */

#define SETPOINT_MAX_MC  100000

struct plant {
	long setpoint_mc;
	long value_mc;
	int manual; /* the setpoint was commanded: stop alternating */
};

/* Ports, or -1 when the description gives none. */
static int temperature_port = -1, cmd_port = -1, reply_port = -1;

static void plant_step(struct plant *p, unsigned long cycle)
{
	if (!p->manual && cycle % SETPOINT_EVERY == 0)
		p->setpoint_mc = (cycle / SETPOINT_EVERY) % 2 ? SETPOINT_LOW_MC : SETPOINT_HIGH_MC;
	p->value_mc += (p->setpoint_mc - p->value_mc) / LAG_DIVISOR;
}

/* Prints a non-negative milli-unit value as <int>.<one decimal>. */
/* Above this, a late wake-up cannot be the hypervisor's (its longest path is microseconds,
 * docs/performance.md): it is the host not running QEMU. */
#define HOST_LATE_US 1000ul

static void print_state(unsigned long cycle, const struct plant *p, unsigned long late_us)
{
	bh_printf("cycle %lu: setpoint %ld.%ld C, value %ld.%ld C, late max %lu us%s\n", cycle,
		  p->setpoint_mc / 1000, (p->setpoint_mc % 1000) / 100, p->value_mc / 1000,
		  (p->value_mc % 1000) / 100, late_us,
		  late_us > HOST_LATE_US ? " (QEMU's host scheduling, not the hypervisor: "
					   "run with -icount to see the hypervisor's part)" : "");
}

static void open_ports(void)
{
	if (bh_sampling_port_create("temperature", 64, BH_SOURCE_PORT, 1000000000ull,
				    &temperature_port) < 0)
		temperature_port = -1;
	if (bh_queuing_port_create("control_cmd", 32, BH_DESTINATION_PORT, 4, &cmd_port) < 0 ||
	    bh_queuing_port_create("control_reply", 64, BH_SOURCE_PORT, 4, &reply_port) < 0)
		cmd_port = reply_port = -1;
}

static void publish(const struct plant *p)
{
	char msg[64];
	int len = bh_snprintf(msg, sizeof(msg), "setpoint %ld.%ld C, value %ld.%ld C",
			      p->setpoint_mc / 1000, (p->setpoint_mc % 1000) / 100,
			      p->value_mc / 1000, (p->value_mc % 1000) / 100);

	if (temperature_port >= 0)
		bh_sampling_write(temperature_port, msg, (unsigned)len);
}

/* "setpoint N" (whole degrees, 0..100) or "auto"; anything else is refused. */
static void command(struct plant *p, const char *cmd)
{
	char reply[64];
	long deg = 0;
	int len, ok = 1;

	const char *d = bh_after_prefix(cmd, "setpoint ");

	if (bh_after_prefix(cmd, "auto") && !*bh_after_prefix(cmd, "auto")) {
		p->manual = 0;
		len = bh_snprintf(reply, sizeof(reply), "ok: setpoint alternates again");
	} else if (d) {
		const char *digits = d;
		for (; *d >= '0' && *d <= '9' && deg <= SETPOINT_MAX_MC; d++)
			deg = deg * 10 + (*d - '0');
		ok = d != digits && *d == 0 && deg * 1000 <= SETPOINT_MAX_MC;
		if (ok) {
			p->setpoint_mc = deg * 1000;
			p->manual = 1;
		}
		len = ok ? bh_snprintf(reply, sizeof(reply), "ok: setpoint %ld C", deg)
			 : bh_snprintf(reply, sizeof(reply), "refused: setpoint is 0 to 100");
	} else {
		len = bh_snprintf(reply, sizeof(reply), "refused: try 'setpoint N' or 'auto'");
	}
	bh_printf("command \"%s\": %s\n", cmd, reply);
	bh_queuing_send(reply_port, reply, (unsigned)len);
}

static void take_commands(struct plant *p)
{
	char cmd[33];
	long n;

	while (cmd_port >= 0 && (n = bh_queuing_receive(cmd_port, cmd, sizeof(cmd) - 1, 0)) >= 0) {
		cmd[n] = 0;
		command(p, cmd);
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	struct plant p = { SETPOINT_HIGH_MC, AMBIENT_MC, 0 };
	unsigned long long deadline = bh_now_ns();
	unsigned long late_max_ns = 0;

	bh_printf("control: started on vCPU %u (boot %u, restart #%u), period 100 ms\n", vcpu,
		  boot_kind, restarts);
	open_ports();
	for (unsigned long cycle = 1;; cycle++) {
		/* Absolute deadlines: a late wake-up does not shift later periods. */
		deadline += PERIOD_NS;
		bh_sleep_until_ns(deadline);
		unsigned long long now = bh_now_ns();

		/* Against the plan (the deadline), not the previous wake-up. */
		if (now > deadline && now - deadline > late_max_ns)
			late_max_ns = now - deadline;
		take_commands(&p);
		plant_step(&p, cycle);
		publish(&p);
		if (cycle % PRINT_EVERY == 0) {
			print_state(cycle, &p, late_max_ns / 1000);
			late_max_ns = 0;
		}
	}
	return 0;
}
