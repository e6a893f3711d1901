/* monitor: the system partition of the demo. It reports the hypervisor's uptime every 2 s and
 * takes commands typed on the console (Ctrl-A three times gives it the focus):
 *   status              every partition's state, restarts, execution time, health events
 *   restart|halt|suspend|resume ID
 * It looks for input every 100 ms. */
#include "bulkhead/bulkhead.h"

#define POLL_NS 100000000ull
#define REPORT_EVERY 20u /* polls: 2 s */
#define LINE_MAX 48
#define PARTITIONS_MAX 16u

static const char *const state_names[] = { "running", "halted", "suspended" };

static void status(void)
{
	struct bh_partition_status st;

	for (unsigned id = 0; id < PARTITIONS_MAX; id++) {
		if (bh_partition_status(id, &st) < 0)
			break; /* past the last partition */
		bh_printf("  partition %u: %s, %u restarts, %llu ms run, %llu health events\n", id,
			  st.state < 3 ? state_names[st.state] : "?", st.restarts,
			  st.exec_ns / 1000000ull, st.hm_events);
	}
}

static void control(unsigned op, const char *arg)
{
	unsigned id = 0;
	const char *d = arg;

	for (; *d >= '0' && *d <= '9' && id < 1000; d++)
		id = id * 10 + (unsigned)(*d - '0');
	if (d == arg || *d) {
		bh_printf("monitor: which partition? give its id (see 'status')\n");
		return;
	}
	long rc = bh_partition_ctl(op, id, BH_RESET_COLD);
	bh_printf("monitor: %s\n", rc == BH_OK ? "done" : rc == BH_NO_ACTION ? "nothing to do"
						  : "refused (no such partition)");
}

static void command(const char *line)
{
	static const struct { const char *name; unsigned op; } ops[] = {
		{ "restart ", BH_PARTITION_RESTART }, { "halt ", BH_PARTITION_HALT },
		{ "suspend ", BH_PARTITION_SUSPEND }, { "resume ", BH_PARTITION_RESUME },
	};

	bh_printf("> %s\n", line);
	if (bh_after_prefix(line, "status") && !*bh_after_prefix(line, "status")) {
		status();
		return;
	}
	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (bh_after_prefix(line, ops[i].name)) {
			control(ops[i].op, bh_after_prefix(line, ops[i].name));
			return;
		}
	if (*line)
		bh_printf("monitor: commands: status, restart|halt|suspend|resume ID\n");
}

/* BH_VIRQ_CONSOLE: input arrived. The loop below reads it at its next poll; without a
 * handler the library would report the interrupt as unexpected. */
static void on_console(unsigned intid)
{
	(void)intid;
}

/* Gather typed bytes into a line; run it at Enter. */
static void take_input(char *line, unsigned *len)
{
	char buf[64];
	long n = bh_console_read(buf, sizeof(buf));

	for (long i = 0; i < n; i++) {
		char c = buf[i];
		if (c == '\r' || c == '\n') {
			line[*len] = 0;
			command(line);
			*len = 0;
		} else if ((c == 0x7f || c == '\b') && *len) {
			(*len)--;
		} else if (c >= 0x20 && c < 0x7f && *len < LINE_MAX - 1) {
			line[(*len)++] = c;
		}
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long deadline = bh_now_ns();
	char line[LINE_MAX];
	unsigned len = 0;

	(void)vcpu;
	bh_irq_set_handler(BH_VIRQ_CONSOLE, on_console);
	bh_printf("monitor: started (boot %u, restart #%u); type 'status' when it has the "
		  "console\n", boot_kind, restarts);
	for (unsigned poll = 1;; poll++) {
		deadline += POLL_NS;
		bh_sleep_until_ns(deadline);
		take_input(line, &len);
		if (poll % REPORT_EVERY)
			continue;

		unsigned long long ns;
		if (bh_get_time(&ns) < 0)
			continue;
		unsigned long long ms = ns / 1000000ull;
		bh_printf("uptime %llu.%03llu s: system ok\n", ms / 1000, ms % 1000);
	}
	return 0;
}
