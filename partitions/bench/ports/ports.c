/* Benchmarks of ports (bench/ports.yaml), path lengths under -icount shift=0, by partition id:
 *   0 sender (core 1, fixed priority 1, system): measures and reports everything;
 *   1 near   (core 1, priority 10): receives from the sender on the same core;
 *   2 far    (core 2, dedicated): receives and reads from the sender across cores.
 * Figures, each for 20, 40, 60, 80 and 100-byte messages, minimum over ROUNDS:
 *   port_send_<n>B      bh_queuing_send() as the guest sees it (stamp to stamp, the stamp's
 *                       16 reads removed), into an empty queue whose destination is notified
 *                       (the sender's own loop-back port, so BH_VIRQ_PORT goes to a vCPU on
 *                       the same core: the list register is written on the way out);
 *   port_send_queued_100B the same send when the destination has been notified already and
 *                       not received since: no interrupt, the copy alone;
 *   port_receive_<n>B   bh_queuing_receive() of that message;
 *   port_delivery_<n>B  the sender's send to `near` holding the data: send, BH_VIRQ_PORT,
 *                       the switch to the woken higher-priority receiver, its return from
 *                       the idle hypercall and its receive (M5150's "message delivery");
 *   port_delivery_cross_core_<n>B, sampling_latency_cross_core_<n>B: the same to `far`,
 *                       waiting in the idle hypercall on its own core, for a queuing send and
 *                       a sampling write (to the read that returns it);
 *   port_delivery_wait_<n>B, port_delivery_wait_cross_core_<n>B: the send to a receiver
 *                       blocked in bh_queuing_receive_wait, `near_wait` (3, core 1, priority
 *                       11) and `far_wait` (4, dedicated core 3), to its call's return.
 * Receivers store their stamp (the instruction time right after the receive) in the shared
 * region "stamps"; the sender decodes its own and subtracts. */
#include "bench.h"

#define SENDER 0u
#define NEAR 1u
#define NEAR_WAIT 3u
#define FAR_WAIT 4u
#define ROUNDS 20u
#define SIZES 5u
#define MAX_MSG 100u
#define STAMPS ((volatile unsigned long long *)0x50000000ul) /* [0]: receiver's t1, [1]: seq */


static int port(const char *name, int sampling, unsigned dir, unsigned long long param)
{
	int d = -1;

	if (sampling)
		bh_sampling_port_create(name, MAX_MSG, dir, param, &d);
	else
		bh_queuing_port_create(name, MAX_MSG, dir, (unsigned)param, &d);
	if (d < 0)
		bh_printf("BENCH-ERROR cannot open port %s\n", name);
	return d;
}

/* --- receivers -------------------------------------------------------------------------- */

/* Stamps the instruction time right after the data is in, for the sender. */
static void stamp_now(void)
{
	struct bench_reads s;

	BENCH_READ16(s);
	STAMPS[0] = bench_stamp_decode(&s);
}

/* Blocks in the idle hypercall with IRQs masked; after the data is in, the stamp, then the
 * port interrupt is taken (so the next idle blocks) and, across cores, the sender acked.
 * A one-byte queuing message 'S' or 'Q' switches `far` between reading its sampling port
 * (each new sample starts with a new byte) and receiving from its queue. */
_Noreturn static void receiver(int near)
{
	int in = port("in", 0, BH_DESTINATION_PORT, 4);
	int s_in = near ? -1 : port("s_in", 1, BH_DESTINATION_PORT, 1000000000);
	int ack = near ? -1 : port("ack", 0, BH_SOURCE_PORT, 4);
	unsigned char buf[MAX_MSG] __attribute__((aligned(128))); /* in one page: never split */
	int sampling = 0;
	unsigned char last = 0;

	if (ack >= 0)
		bh_queuing_send(ack, buf, 1); /* ready: the sender waits for this before it starts */
	for (;;) {
		bh_idle();
		long n = sampling ? bh_sampling_read(s_in, buf, sizeof(buf), 0, 0) : 0;
		if (n > 0 && buf[0] != last) {
			stamp_now();
			last = buf[0];
		} else if ((n = bh_queuing_receive(in, buf, sizeof(buf), 0)) > 1) {
			stamp_now();
		} else if (n == 1) {
			sampling = buf[0] == 'S';
		}
		if (n > 0 && ack >= 0)
			bh_queuing_send(ack, buf, 1);
		bh_irq_poll();
	}
}

/* Blocks in the receive wait; the stamp as soon as it returns with a message, then, across
 * cores, the ack. */
_Noreturn static void waiting_receiver(int near)
{
	int in = port("in", 0, BH_DESTINATION_PORT, 4);
	int ack = near ? -1 : port("ack", 0, BH_SOURCE_PORT, 4);
	unsigned char buf[MAX_MSG] __attribute__((aligned(128))); /* in one page: never split */

	if (ack >= 0)
		bh_queuing_send(ack, buf, 1);
	for (;;) {
		if (bh_queuing_receive_wait(in, buf, sizeof(buf), 0) <= 0) {
			bh_irq_poll(); /* what woke it instead (IRQs stay masked otherwise) */
			continue;
		}
		stamp_now();
		if (ack >= 0)
			bh_queuing_send(ack, buf, 1);
	}
}

/* --- sender ------------------------------------------------------------------------------- */

struct ports {
	int self_out, self_in, to_near, to_far, s_out, ack_in, to_near_wait, to_far_wait, ackw_in;
};

static unsigned long long min_of(unsigned long long a, unsigned long long b) { return a < b ? a : b; }

static void report_size(const char *what, unsigned size, unsigned long long value)
{
	char name[64];

	bh_snprintf(name, sizeof(name), "%s_%uB", what, size);
	bench_report(name, value, "cycles");
}

static unsigned long long between(const struct bench_reads *a, const struct bench_reads *b)
{
	return bench_stamp_decode(b) - bench_stamp_decode(a) - BENCH_STAMP_READS;
}

/* A send that notifies (the queue was empty and its reader had received since the last
 * notification), one that finds the reader already notified, and a receive. */
static void send_and_receive(const struct ports *p, unsigned size, unsigned char *msg)
{
	unsigned long long send = ~0ull, queued = ~0ull, receive = ~0ull;
	unsigned char buf[MAX_MSG] __attribute__((aligned(128))); /* in one page: never split */

	for (unsigned r = 0; r < ROUNDS; r++) {
		struct bench_reads a, b, c, d, e, f;
		BENCH_READ16(a);
		bh_queuing_send(p->self_out, msg, size);
		BENCH_READ16(b);
		BENCH_READ16(c);
		bh_queuing_send(p->self_out, msg, size);
		BENCH_READ16(d);
		bh_irq_poll();
		BENCH_READ16(e);
		bh_queuing_receive(p->self_in, buf, size, 0);
		BENCH_READ16(f);
		bh_queuing_receive(p->self_in, buf, size, 0);
		send = min_of(send, between(&a, &b));
		queued = min_of(queued, between(&c, &d));
		receive = min_of(receive, between(&e, &f));
	}
	report_size("port_send", size, send);
	report_size("port_receive", size, receive);
	if (size == MAX_MSG)
		report_size("port_send_queued", size, queued);
}

/* A near receiver preempts the sender inside its send, so its stamp is there on return. */
static void delivery_near(int to, const char *what, unsigned size, unsigned char *msg)
{
	unsigned long long best = ~0ull;

	for (unsigned r = 0; r < ROUNDS; r++) {
		struct bench_reads a;
		BENCH_READ16(a);
		bh_queuing_send(to, msg, size);
		best = min_of(best, STAMPS[0] - bench_stamp_decode(&a) - BENCH_STAMP_READS);
	}
	report_size(what, size, best);
}

/* Waits in the idle hypercall for a far receiver's ack, which comes after its stamp. */
static void wait_ack(int ack_in)
{
	unsigned char c;

	while (bh_queuing_receive(ack_in, &c, 1, 0) != 1) {
		bh_idle();
		bh_irq_poll();
	}
}

static void delivery_far_wait(const struct ports *p, unsigned size, unsigned char *msg)
{
	unsigned long long best = ~0ull;

	for (unsigned r = 0; r < ROUNDS; r++) {
		struct bench_reads a;
		BENCH_READ16(a);
		bh_queuing_send(p->to_far_wait, msg, size);
		wait_ack(p->ackw_in);
		best = min_of(best, STAMPS[0] - bench_stamp_decode(&a) - BENCH_STAMP_READS);
	}
	report_size("port_delivery_wait_cross_core", size, best);
}

static void delivery_far(const struct ports *p, unsigned size, unsigned char *msg, int sampling)
{
	unsigned long long best = ~0ull;

	if (sampling) {
		bh_queuing_send(p->to_far, "S", 1);
		wait_ack(p->ack_in);
	}
	for (unsigned r = 0; r < ROUNDS; r++) {
		struct bench_reads a;
		msg[0] = (unsigned char)(size + r); /* a new sample every round */
		BENCH_READ16(a);
		if (sampling)
			bh_sampling_write(p->s_out, msg, size);
		else
			bh_queuing_send(p->to_far, msg, size);
		wait_ack(p->ack_in);
		best = min_of(best, STAMPS[0] - bench_stamp_decode(&a) - BENCH_STAMP_READS);
	}
	if (sampling) {
		bh_queuing_send(p->to_far, "Q", 1);
		wait_ack(p->ack_in);
	}
	report_size(sampling ? "sampling_latency_cross_core" : "port_delivery_cross_core", size, best);
}

_Noreturn static void sender(void)
{
	struct ports p = {
		.self_out = port("self_out", 0, BH_SOURCE_PORT, 4),
		.self_in = port("self_in", 0, BH_DESTINATION_PORT, 4),
		.to_near = port("to_near", 0, BH_SOURCE_PORT, 4),
		.to_far = port("to_far", 0, BH_SOURCE_PORT, 4),
		.s_out = port("s_out", 1, BH_SOURCE_PORT, 1000000000),
		.ack_in = port("ack_in", 0, BH_DESTINATION_PORT, 4),
		.to_near_wait = port("to_near_wait", 0, BH_SOURCE_PORT, 4),
		.to_far_wait = port("to_far_wait", 0, BH_SOURCE_PORT, 4),
		.ackw_in = port("ackw_in", 0, BH_DESTINATION_PORT, 4),
	};
	unsigned char msg[MAX_MSG] __attribute__((aligned(128))); /* in one page: never split */

	for (unsigned i = 0; i < MAX_MSG; i++)
		msg[i] = (unsigned char)i;
	wait_ack(p.ack_in); /* under -icount the far cores may not even have started yet */
	wait_ack(p.ackw_in);
	for (unsigned s = 1; s <= SIZES; s++) {
		unsigned size = s * MAX_MSG / SIZES;
		send_and_receive(&p, size, msg);
		delivery_near(p.to_near, "port_delivery", size, msg);
		delivery_near(p.to_near_wait, "port_delivery_wait", size, msg);
		delivery_far_wait(&p, size, msg);
		delivery_far(&p, size, msg, 0);
		delivery_far(&p, size, msg, 1);
	}
	bh_printf("BENCH-DONE\n");
	bench_exit();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned id = bench_partition_id();

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (bench_init())
		bench_exit();
	if (id == SENDER)
		sender();
	if (id == NEAR_WAIT || id == FAR_WAIT)
		waiting_receiver(id == NEAR_WAIT);
	receiver(id == NEAR);
}
