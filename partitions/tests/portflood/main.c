/* portflood: a queuing port flooded by its sender must not disturb other partitions' timing
 * or other ports (tests/system/configs/ports_flood.yaml), by partition id:
 *   0 timed:   core 1, priority 10: a 1 ms virtual-timer activation, lateness measured as
 *              the ticker partition does, and at each activation one ping to `echo` over
 *              another channel, whose pong must be back by the next one. Then "drain".
 *   1 flooder: core 1, priority 1: sends (queuing) and writes (sampling) to sink in a loop,
 *              never waiting, so timed always preempts a flooder in or between port calls.
 *   2 sink:    core 2: leaves the flood unread while timed measures (its port interrupt must
 *              come once, not per message), then drains it as fast as it can beside the
 *              flooder, checking the sequence, and tells the flooder to stop.
 *   3 echo:    core 3: answers pings, blocked in bh_port_wait() in between.
 * Under -icount every core shares one virtual clock, so while timed measures only core 1 is
 * busy; the loops of the drain phase execute YIELD so that two busy cores both progress. */
#include "bhtest.h"

#define TIMED 0u
#define FLOODER 1u
#define SINK 2u
#define TICK_NS 1000000ll
#define TICKS 50u
#define DRAIN_MESSAGES 500u
#define LATENESS_SPREAD_MAX_NS 1000ll /* see tests/system/test_ports.py */
#define CNTV_CTL_ENABLE 1ul

static unsigned long long bit(int desc) { return 1ull << desc; }
static void yield(void) { __asm__ volatile("yield" ::: "memory"); }

static int port(const char *name, int sampling, unsigned size, unsigned dir, unsigned long long p)
{
	int d = -1;

	if (sampling)
		bh_sampling_port_create(name, size, dir, p, &d);
	else
		bh_queuing_port_create(name, size, dir, (unsigned)p, &d);
	if (d < 0)
		bh_printf("portflood: cannot open %s\n", name);
	return d;
}

/* A one-byte sampling message on `signal`, from any writer: written once, never cleared. */
static int signalled(int signal)
{
	char c;

	return bh_sampling_read(signal, &c, 1, 0, 0) > 0;
}

static volatile unsigned port_irqs;

static void count_irq(unsigned intid)
{
	(void)intid;
	port_irqs++;
}

/* --- timed ------------------------------------------------------------------------------ */

static volatile unsigned ticks;
static long long deadline, late_min, late_max;

static void vtimer_arm(long long at)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_ns_to_ticks((unsigned long long)at)), "r"(CNTV_CTL_ENABLE)
			 : "memory");
}

static void on_tick(unsigned intid)
{
	long long late = (long long)bh_now_ns() - deadline;

	(void)intid;
	if (ticks == 0 || late < late_min)
		late_min = late;
	if (ticks == 0 || late > late_max)
		late_max = late;
	ticks = ticks + 1;
	deadline += TICK_NS;
	vtimer_arm(deadline);
}

/* One ping per activation; returns how many pongs came back by the next activation. */
static unsigned ping_each_tick(int ping, int pong)
{
	unsigned seen = 0, pongs = 0;
	unsigned long long sent = 0, got;

	while (ticks < TICKS) {
		bh_idle();
		if (ticks == seen)
			continue; /* a pong or another interrupt */
		seen = ticks;
		while (bh_queuing_receive(pong, &got, sizeof(got), 0) == sizeof(got))
			pongs += got == sent;
		sent++;
		bh_queuing_send(ping, &sent, sizeof(sent));
	}
	return pongs;
}

_Noreturn static void timed(void)
{
	int ping = port("ping", 0, 8, BH_SOURCE_PORT, 4);
	int pong = port("pong", 0, 8, BH_DESTINATION_PORT, 4);
	int drain = port("drain", 1, 1, BH_SOURCE_PORT, 1000000000);
	char detail[96];

	bh_irq_set_handler(BH_VIRQ_VTIMER, on_tick);
	deadline = (long long)bh_now_ns() + TICK_NS;
	vtimer_arm(deadline);
	bh_irq_enable();
	unsigned pongs = ping_each_tick(ping, pong);
	bh_irq_disable();
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	bh_sampling_write(drain, "d", 1);
	bh_printf("BHSTAT lateness_min_ns %lld\nBHSTAT lateness_max_ns %lld\nBHSTAT pongs %u\n",
		  late_min, late_max, pongs);
	bh_snprintf(detail, sizeof(detail), "lateness %lld..%lld ns", late_min, late_max);
	bh_test_report("flood_timing_kept", late_max - late_min <= LATENESS_SPREAD_MAX_NS, detail);
	bh_snprintf(detail, sizeof(detail), "%u of %u pongs in time", pongs, TICKS - 1);
	bh_test_report("flood_other_ports_work", pongs == TICKS - 1, detail);
	bh_test_summary();
	bh_halt_self();
}

/* --- flooder ------------------------------------------------------------------------------ */

_Noreturn static void flooder(void)
{
	int out = port("flood_out", 0, 8, BH_SOURCE_PORT, 8);
	int noise = port("noise_out", 1, 8, BH_SOURCE_PORT, 1000000);
	int stop = port("stop", 1, 1, BH_DESTINATION_PORT, 1000000000);
	unsigned long long seq = 0;
	unsigned full = 0;
	char detail[96];

	for (unsigned i = 0;; i++) {
		long rc = bh_queuing_send(out, &seq, sizeof(seq));
		seq += rc == BH_OK;
		full += rc == BH_NOT_AVAILABLE;
		bh_sampling_write(noise, &seq, sizeof(seq));
		yield();
		if (i % 64 == 0 && signalled(stop))
			break;
	}
	bh_printf("BHSTAT flooder_sent %llu\nBHSTAT flooder_full %u\n", seq, full);
	bh_snprintf(detail, sizeof(detail), "%llu sent, %u refused (queue full)", seq, full);
	bh_test_report("flood_sender_never_blocked", seq > DRAIN_MESSAGES && full > 1000, detail);
	bh_test_summary();
	bh_halt_self();
}

/* --- sink --------------------------------------------------------------------------------- */

/* Takes the flood until DRAIN_MESSAGES arrived; counts gaps in the sequence. */
static unsigned drain_flood(int in, unsigned *calls)
{
	unsigned long long expected = 0, msg;
	unsigned received = 0, gaps = 0;

	while (received < DRAIN_MESSAGES) {
		++*calls;
		if (bh_queuing_receive(in, &msg, sizeof(msg), 0) == sizeof(msg)) {
			gaps += msg != expected;
			expected = msg + 1;
			received++;
		}
		bh_irq_poll(); /* count the port interrupts as they come */
		yield();
	}
	return gaps;
}

_Noreturn static void sink(void)
{
	int in = port("flood_in", 0, 8, BH_DESTINATION_PORT, 8);
	int drain = port("drain_in", 1, 1, BH_DESTINATION_PORT, 1000000000);
	int stop = port("stop_out", 1, 1, BH_SOURCE_PORT, 1000000000);
	unsigned calls = 0;
	char detail[96];

	port("noise_in", 1, 8, BH_DESTINATION_PORT, 1000000); /* opened, never read */
	bh_irq_set_handler(BH_VIRQ_PORT, count_irq);
	while (!signalled(drain))
		bh_port_wait(bit(drain), 0, 0); /* the flood port is ready all along: not waited for */
	bh_irq_poll();
	unsigned unread_irqs = port_irqs;
	port_irqs = 0;
	unsigned gaps = drain_flood(in, &calls);
	bh_sampling_write(stop, "s", 1);
	bh_printf("BHSTAT sink_irqs_unread %u\nBHSTAT sink_calls %u\nBHSTAT sink_irqs_draining %u\n",
		  unread_irqs, calls, port_irqs);
	/* While unread: one for the flood, one for the noise, one for "drain". */
	bh_snprintf(detail, sizeof(detail), "%u port interrupts while the flood was unread",
		    unread_irqs);
	bh_test_report("flood_unread_interrupts_once", unread_irqs <= 3, detail);
	bh_snprintf(detail, sizeof(detail), "%u received, %u out of sequence", DRAIN_MESSAGES, gaps);
	bh_test_report("flood_fifo_intact", gaps == 0, detail);
	bh_snprintf(detail, sizeof(detail), "%u interrupts for %u receive calls", port_irqs, calls);
	bh_test_report("flood_notifications_bounded", port_irqs <= calls + 1, detail);
	bh_test_summary();
	bh_halt_self();
}

/* --- echo --------------------------------------------------------------------------------- */

_Noreturn static void echo(void)
{
	int ping = port("ping_in", 0, 8, BH_DESTINATION_PORT, 4);
	int pong = port("pong_out", 0, 8, BH_SOURCE_PORT, 4);
	unsigned long long msg;

	for (;;) {
		bh_port_wait(bit(ping), 0, 0);
		while (bh_queuing_receive(ping, &msg, sizeof(msg), 0) == sizeof(msg))
			bh_queuing_send(pong, &msg, sizeof(msg));
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned id = bh_partition_id();

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (id == TIMED)
		timed();
	if (id == FLOODER)
		flooder();
	if (id == SINK)
		sink();
	echo();
}
