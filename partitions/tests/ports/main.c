/* ports: sampling and queuing ports and shared memory, by partition id
 * (tests/system/configs/ports.yaml):
 *   0 alpha: runs the tests; system partition, core 1 (fixed priority 5);
 *   1 beta:  echo server on alpha's core (priority 10, so a message preempts alpha);
 *   2 gamma: echo server on its own core; alpha's peer in shared region "shared";
 *   4 delta: echo server blocked in bh_queuing_receive_wait, on alpha's core (priority 20);
 *   5 epsilon: the same on its own core.
 * The echo servers block in bh_port_wait() (BH_HC_IDLE until BH_VIRQ_PORT/DOORBELL) and
 * never poll. Replies: 'E' + every byte of the request plus one; 'S' + the sample read from
 * "fan"; on a doorbell of "shared", 'D' + the first 8 bytes of the region (gamma also writes
 * them, plus one, at offset 64 and rings back). The waiting servers take at most WAIT_BUF bytes
 * and reply 'W', the bytes they got, the message's length, then those bytes plus one. */
#include "bhtest.h"

#define ALPHA 0u
#define MEM_END      0x40400000ul           /* end of the partition's RAM */
#define SHARED_ALPHA ((volatile unsigned char *)0x50000000ul)
#define SHARED_GAMMA ((volatile unsigned char *)0x60000000ul)
#define SHARED_BETA  ((volatile unsigned char *)0x50000000ul)
#define REPLY_AT     64u
#define LOOP_REFRESH_NS 1000000ull          /* s_loop's refresh_period */
#define FAN_REFRESH_NS  100000000ull
#define WAIT_NS         20000000ull         /* an echo arrives within this, or fails */
#define CNTV_CTL_ENABLE 1ul
#define WAIT_BUF        48u
#define DELTA 4u
#define EPSILON 5u

static unsigned long long bit(int desc) { return 1ull << desc; }

/* --- alpha: the tests ------------------------------------------------------------------- */

/* Alpha's ports, opened by ports_open (descriptors, -1 until open). */
static int s_out = -1, s_in = -1, fan_out = -1, q_out = -1, q_in = -1;
static int to_beta = -1, from_beta = -1, to_gamma = -1, from_gamma = -1;
static int to_delta = -1, from_delta = -1, to_epsilon = -1, from_epsilon = -1;
static volatile unsigned port_irqs, doorbell_irqs;

static void count_irq(unsigned intid)
{
	if (intid == BH_VIRQ_PORT)
		port_irqs++;
	else
		doorbell_irqs++;
}

static long create_raw(unsigned long fn, const char *name, unsigned long len, unsigned long size,
		       unsigned long dir, unsigned long param)
{
	return bh_hypercall(fn, (unsigned long)name, len, size, dir, param);
}

/* Arms the virtual timer so that an idle ends by the deadline even if nothing arrives. */
static void vtimer_at(unsigned long long ns)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_ns_to_ticks(ns)), "r"(CNTV_CTL_ENABLE) : "memory");
}

/* bh_port_wait with a timeout: returns 1 once a port in mask is ready (or, with
 * want_doorbell, a doorbell rang), 0 at the deadline. */
static int wait_for(unsigned long long mask, int want_doorbell, unsigned long long *rung)
{
	unsigned long long deadline = bh_now_ns() + WAIT_NS, ready = 0, got = 0;

	vtimer_at(deadline);
	for (;;) {
		unsigned long long r = 0;
		bh_irq_poll(); /* count the interrupts that announced what is ready */
		bh_port_ready(&ready, &r);
		got |= r;
		if ((ready & mask) || (want_doorbell && got))
			break;
		if (bh_now_ns() >= deadline)
			break;
		bh_idle();
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	if (rung)
		*rung = got;
	return (ready & mask) || (want_doorbell && got);
}

BH_TEST(port_info_before_open)
{
	struct bh_port_info info;

	BH_EXPECT_EQ(bh_port_info("q_in", &info), BH_OK);
	BH_EXPECT_EQ(info.kind, BH_QUEUING_PORT);
	BH_EXPECT_EQ(info.direction, BH_DESTINATION_PORT);
	BH_EXPECT_EQ(info.max_message_size, 16);
	BH_EXPECT_EQ(info.max_messages, 4);
	BH_EXPECT_EQ(info.descriptor, -1);
	BH_EXPECT_EQ(bh_port_info("s_out", &info), BH_OK);
	BH_EXPECT_EQ(info.kind, BH_SAMPLING_PORT);
	BH_EXPECT_EQ(info.refresh_ns, LOOP_REFRESH_NS);
	BH_EXPECT_EQ(bh_port_info("nosuch", &info), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_port_info("from_alpha", &info), BH_INVALID_CONFIG); /* beta's port */
	BH_EXPECT_EQ(bh_port_info("q_in", (struct bh_port_info *)MEM_END), BH_INVALID_PARAM);
}

BH_TEST(create_checks_every_parameter)
{
	int d = -1;

	BH_EXPECT_EQ(bh_queuing_port_create("nosuch", 16, BH_DESTINATION_PORT, 4, &d),
		     BH_INVALID_CONFIG);
	/* A port of another partition's channel end: alpha is not an endpoint of it. */
	BH_EXPECT_EQ(bh_queuing_port_create("from_alpha", 64, BH_DESTINATION_PORT, 4, &d),
		     BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_sampling_port_create("q_in", 16, BH_DESTINATION_PORT, 4, &d),
		     BH_INVALID_CONFIG); /* kind */
	BH_EXPECT_EQ(bh_queuing_port_create("q_in", 16, BH_SOURCE_PORT, 4, &d),
		     BH_INVALID_CONFIG); /* direction */
	BH_EXPECT_EQ(bh_queuing_port_create("q_in", 17, BH_DESTINATION_PORT, 4, &d),
		     BH_INVALID_CONFIG); /* size */
	BH_EXPECT_EQ(bh_queuing_port_create("q_in", 16, BH_DESTINATION_PORT, 5, &d),
		     BH_INVALID_CONFIG); /* depth */
	BH_EXPECT_EQ(bh_sampling_port_create("s_in", 32, BH_DESTINATION_PORT, 999999, &d),
		     BH_INVALID_CONFIG); /* refresh */
	BH_EXPECT_EQ(bh_queuing_port_create("q_in", 16, 7, 4, &d), BH_INVALID_PARAM);
	BH_EXPECT_EQ(create_raw(BH_HC_QUEUING_PORT_CREATE, "q_in", 0, 16, 1, 4), BH_INVALID_PARAM);
	BH_EXPECT_EQ(create_raw(BH_HC_QUEUING_PORT_CREATE, "q_in", BH_PORT_NAME_MAX + 1, 16, 1, 4),
		     BH_INVALID_PARAM);
	BH_EXPECT_EQ(create_raw(BH_HC_QUEUING_PORT_CREATE, (const char *)MEM_END - 2, 4, 16, 1, 4),
		     BH_INVALID_PARAM);
	BH_EXPECT_EQ(create_raw(BH_HC_QUEUING_PORT_CREATE, "q_in", 3, 16, 1, 4), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(d, -1);
}

BH_TEST(create_opens_once_then_no_action)
{
	int again = -1;

	BH_EXPECT(bh_sampling_port_create("s_out", 32, BH_SOURCE_PORT, LOOP_REFRESH_NS, &s_out) >= 0);
	BH_EXPECT(bh_sampling_port_create("s_in", 32, BH_DESTINATION_PORT, LOOP_REFRESH_NS, &s_in) >= 0);
	BH_EXPECT(bh_sampling_port_create("fan_out", 16, BH_SOURCE_PORT, FAN_REFRESH_NS, &fan_out) >= 0);
	BH_EXPECT(bh_queuing_port_create("q_out", 16, BH_SOURCE_PORT, 4, &q_out) >= 0);
	BH_EXPECT(bh_queuing_port_create("q_in", 16, BH_DESTINATION_PORT, 4, &q_in) >= 0);
	BH_EXPECT(bh_queuing_port_create("to_beta", 64, BH_SOURCE_PORT, 4, &to_beta) >= 0);
	BH_EXPECT(bh_queuing_port_create("from_beta", 64, BH_DESTINATION_PORT, 4, &from_beta) >= 0);
	BH_EXPECT(bh_queuing_port_create("to_gamma", 64, BH_SOURCE_PORT, 4, &to_gamma) >= 0);
	BH_EXPECT(bh_queuing_port_create("from_gamma", 64, BH_DESTINATION_PORT, 4, &from_gamma) >= 0);
	BH_EXPECT(bh_queuing_port_create("to_delta", 64, BH_SOURCE_PORT, 4, &to_delta) >= 0);
	BH_EXPECT(bh_queuing_port_create("from_delta", 64, BH_DESTINATION_PORT, 4, &from_delta) >= 0);
	BH_EXPECT(bh_queuing_port_create("to_epsilon", 64, BH_SOURCE_PORT, 4, &to_epsilon) >= 0);
	BH_EXPECT(bh_queuing_port_create("from_epsilon", 64, BH_DESTINATION_PORT, 4,
					 &from_epsilon) >= 0);
	BH_EXPECT_EQ(bh_queuing_port_create("q_in", 16, BH_DESTINATION_PORT, 4, &again), BH_NO_ACTION);
	BH_EXPECT_EQ(again, q_in);
	struct bh_port_info info;
	BH_EXPECT_EQ(bh_port_info("q_in", &info), BH_OK);
	BH_EXPECT_EQ(info.descriptor, q_in);
}

BH_TEST(descriptors_are_checked)
{
	char buf[16] = "x";

	BH_EXPECT_EQ(bh_sampling_write(64, buf, 1), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_sampling_write(-1, buf, 1), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_sampling_write(q_out, buf, 1), BH_INVALID_PARAM); /* a queuing port */
	BH_EXPECT_EQ(bh_queuing_send(s_out, buf, 1), BH_INVALID_PARAM);    /* a sampling port */
	BH_EXPECT_EQ(bh_sampling_write(s_in, buf, 1), BH_INVALID_MODE);   /* a destination */
	BH_EXPECT_EQ(bh_sampling_read(s_out, buf, 16, 0, 0), BH_INVALID_MODE);
	BH_EXPECT_EQ(bh_queuing_send(q_in, buf, 1), BH_INVALID_MODE);
	BH_EXPECT_EQ(bh_queuing_receive(q_out, buf, 16, 0), BH_INVALID_MODE);
	struct bh_port_status st;
	BH_EXPECT_EQ(bh_port_status(63, &st), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_port_status(q_in, (struct bh_port_status *)MEM_END), BH_INVALID_PARAM);
}

BH_TEST(sampling_overwrites_and_reads_without_consuming)
{
	char msg[32], got[32];
	unsigned flags = 0, length = 0;

	BH_EXPECT_EQ(bh_sampling_read(s_in, got, sizeof(got), &flags, &length), BH_NO_ACTION);
	BH_EXPECT_EQ(bh_sampling_write(s_out, msg, 0), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_sampling_write(s_out, msg, 33), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_sampling_write(s_out, (const void *)(MEM_END - 8), 16), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_sampling_read(s_in, got, 4, 0, 0), BH_NO_ACTION); /* still never written */
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (char)('a' + i % 26);
	BH_EXPECT_EQ(bh_sampling_write(s_out, msg, 20), BH_OK);
	msg[0] = 'Z';
	BH_EXPECT_EQ(bh_sampling_write(s_out, msg, 10), BH_OK); /* overwrites */
	BH_EXPECT_EQ(bh_sampling_read(s_in, got, sizeof(got), &flags, &length), 10);
	BH_EXPECT_EQ(length, 10);
	BH_EXPECT_EQ(flags, BH_MSG_VALID);
	BH_EXPECT(got[0] == 'Z' && got[9] == 'j');
	got[0] = 0;
	BH_EXPECT_EQ(bh_sampling_read(s_in, got, 4, &flags, &length), 4); /* min(length, buffer) */
	BH_EXPECT_EQ(length, 10);
	BH_EXPECT(got[0] == 'Z' && got[3] == 'd');
	BH_EXPECT_EQ(bh_sampling_read(s_in, (void *)(MEM_END - 2), 4, 0, 0), BH_INVALID_PARAM);
	struct bh_port_status st;
	BH_EXPECT_EQ(bh_port_status(s_in, &st), BH_OK);
	BH_EXPECT_EQ(st.last_size, 10);
	BH_EXPECT_EQ(st.messages, 1);
	BH_EXPECT(st.timestamp_ns > 0 && st.timestamp_ns <= bh_now_ns());
}

/* Under -icount the counter advances exactly with instructions: the message is valid up to
 * its refresh period after the write and not a counter tick later. */
BH_TEST(sampling_validity_expires_after_refresh_period)
{
	char got[32];
	unsigned flags = 7;
	struct bh_port_status st;

	BH_EXPECT_EQ(bh_sampling_write(s_out, "fresh", 5), BH_OK);
	BH_EXPECT_EQ(bh_port_status(s_out, &st), BH_OK);
	BH_EXPECT_EQ(st.flags, BH_MSG_VALID);
	while (bh_now_ns() < st.timestamp_ns + LOOP_REFRESH_NS - 2000)
		;
	BH_EXPECT_EQ(bh_sampling_read(s_in, got, sizeof(got), &flags, 0), 5);
	BH_EXPECT_EQ(flags, BH_MSG_VALID);
	while (bh_now_ns() <= st.timestamp_ns + LOOP_REFRESH_NS + 100)
		;
	BH_EXPECT_EQ(bh_sampling_read(s_in, got, sizeof(got), &flags, 0), 5); /* data stays */
	BH_EXPECT_EQ(flags, 0);
	BH_EXPECT_EQ(bh_port_status(s_in, &st), BH_OK);
	BH_EXPECT_EQ(st.flags, 0);
}

BH_TEST(queuing_is_fifo_and_never_blocks)
{
	char msg[16] = "m0", got[16];
	unsigned length = 0;

	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), 0), BH_NOT_AVAILABLE);
	BH_EXPECT_EQ(bh_queuing_send(q_out, msg, 0), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_queuing_send(q_out, msg, 17), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_queuing_send(q_out, (const void *)(MEM_END - 4), 8), BH_INVALID_PARAM);
	for (char i = 0; i < 4; i++) {
		msg[1] = (char)('0' + i);
		BH_EXPECT_EQ(bh_queuing_send(q_out, msg, 2 + (unsigned)i), BH_OK);
	}
	BH_EXPECT_EQ(bh_queuing_send(q_out, msg, 2), BH_NOT_AVAILABLE); /* full */
	struct bh_port_status st;
	BH_EXPECT_EQ(bh_port_status(q_in, &st), BH_OK);
	BH_EXPECT_EQ(st.messages, 4);
	BH_EXPECT_EQ(st.last_size, 2);
	/* A bad buffer leaves the message in the queue. */
	BH_EXPECT_EQ(bh_queuing_receive(q_in, (void *)(MEM_END - 1), 16, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), &length), 2);
	BH_EXPECT(got[1] == '0' && length == 2);
	/* Truncated: one byte of three, and the message is gone all the same. */
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, 1, &length), 1);
	BH_EXPECT_EQ(length, 3);
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), &length), 4);
	BH_EXPECT(got[1] == '2');
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), &length), 5);
	BH_EXPECT(got[1] == '3');
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), &length), BH_NOT_AVAILABLE);
}

BH_TEST(readiness_bitmap)
{
	unsigned long long ready = 0, rung = 0;
	char got[32];

	BH_EXPECT_EQ(bh_port_ready(&ready, &rung), BH_OK);
	BH_EXPECT(!(ready & (bit(q_in) | bit(s_in) | bit(from_beta) | bit(from_gamma))));
	BH_EXPECT(ready & bit(q_out) && ready & bit(s_out) && ready & bit(to_beta));
	bh_queuing_send(q_out, "r", 1);
	bh_sampling_write(s_out, "r", 1);
	BH_EXPECT_EQ(bh_port_ready(&ready, 0), BH_OK);
	BH_EXPECT(ready & bit(q_in) && ready & bit(s_in));
	bh_sampling_read(s_in, got, sizeof(got), 0, 0);
	bh_queuing_receive(q_in, got, sizeof(got), 0);
	BH_EXPECT_EQ(bh_port_ready(&ready, 0), BH_OK);
	BH_EXPECT(!(ready & (bit(q_in) | bit(s_in))));
	for (int i = 0; i < 4; i++)
		bh_queuing_send(q_out, "f", 1);
	BH_EXPECT_EQ(bh_port_ready(&ready, 0), BH_OK);
	BH_EXPECT(!(ready & bit(q_out)));  /* full */
	while (bh_queuing_receive(q_in, got, sizeof(got), 0) >= 0)
		;
}

/* One request to an echo server and its reply, through interrupts. */
static void echo_round_trip(int to, int from, unsigned char seed)
{
	unsigned char req[40], rep[64];
	unsigned length = 0;

	for (unsigned i = 0; i < sizeof(req); i++)
		req[i] = (unsigned char)(seed + i);
	BH_EXPECT_EQ(bh_queuing_send(to, req, sizeof(req)), BH_OK);
	BH_EXPECT(wait_for(bit(from), 0, 0));
	BH_EXPECT_EQ(bh_queuing_receive(from, rep, sizeof(rep), &length), 1 + sizeof(req));
	BH_EXPECT(rep[0] == 'E');
	for (unsigned i = 0; i < sizeof(req); i++)
		if (rep[1 + i] != (unsigned char)(req[i] + 1))
			BH_EXPECT(rep[1 + i] == (unsigned char)(req[i] + 1));
}

BH_TEST(same_core_echo_through_port_interrupts)
{
	unsigned before = port_irqs;

	for (unsigned char k = 0; k < 20; k++)
		echo_round_trip(to_beta, from_beta, k);
	BH_EXPECT(port_irqs > before);
}

BH_TEST(cross_core_echo_through_port_interrupts)
{
	unsigned before = port_irqs;

	for (unsigned char k = 0; k < 20; k++)
		echo_round_trip(to_gamma, from_gamma, (unsigned char)(100 + k));
	BH_EXPECT(port_irqs > before);
}

/* Both readers of the fan-out channel see the sample and echo it back. */
BH_TEST(sampling_fan_out_to_two_partitions)
{
	unsigned char rep[64];

	BH_EXPECT_EQ(bh_sampling_write(fan_out, "sample-1", 8), BH_OK);
	BH_EXPECT(wait_for(bit(from_beta), 0, 0));
	BH_EXPECT_EQ(bh_queuing_receive(from_beta, rep, sizeof(rep), 0), 9);
	BH_EXPECT(rep[0] == 'S' && rep[8] == '1');
	BH_EXPECT(wait_for(bit(from_gamma), 0, 0));
	BH_EXPECT_EQ(bh_queuing_receive(from_gamma, rep, sizeof(rep), 0), 9);
	BH_EXPECT(rep[0] == 'S' && rep[1] == 's');
}

BH_TEST(shared_memory_with_doorbells)
{
	struct bh_shm_info info;
	unsigned long long rung = 0;
	unsigned char rep[64];
	long id = bh_shm_info("shared", &info);

	BH_EXPECT(id >= 0);
	BH_EXPECT_EQ(info.guest_address, (unsigned long)SHARED_ALPHA);
	BH_EXPECT_EQ(info.size, 4096);
	BH_EXPECT_EQ(info.rights, BH_SHM_READ | BH_SHM_WRITE);
	BH_EXPECT_EQ(info.doorbell, 1);
	BH_EXPECT_EQ(bh_shm_info("secret", &info), BH_INVALID_CONFIG); /* gamma's alone */
	BH_EXPECT_EQ(bh_shm_info("shared", (struct bh_shm_info *)MEM_END), BH_INVALID_PARAM);
	for (unsigned i = 0; i < 8; i++)
		SHARED_ALPHA[i] = (unsigned char)(0x30 + i);
	BH_EXPECT_EQ(bh_shm_doorbell((unsigned)id), BH_OK);
	/* Gamma answers in the region and rings back; beta (read-only) reports what it read. */
	BH_EXPECT(wait_for(0, 1, &rung));
	BH_EXPECT(rung & (1ull << id));
	BH_EXPECT(SHARED_ALPHA[REPLY_AT] == 0x31 && SHARED_ALPHA[REPLY_AT + 7] == 0x38);
	BH_EXPECT(wait_for(bit(from_beta), 0, 0));
	BH_EXPECT_EQ(bh_queuing_receive(from_beta, rep, sizeof(rep), 0), 9);
	BH_EXPECT(rep[0] == 'D' && rep[1] == 0x30 && rep[8] == 0x37);
	BH_EXPECT(doorbell_irqs > 0);
}

BH_TEST(doorbell_rules)
{
	struct bh_shm_info info;
	long quiet = bh_shm_info("quiet", &info);

	BH_EXPECT(quiet >= 0);
	BH_EXPECT_EQ(info.rights, BH_SHM_READ);
	BH_EXPECT_EQ(bh_shm_doorbell((unsigned)quiet), BH_NOT_AVAILABLE); /* no doorbell */
	BH_EXPECT_EQ(bh_shm_doorbell(63), BH_PERM_ERROR);
	BH_EXPECT_EQ(bh_shm_doorbell(1000), BH_PERM_ERROR);
}

/* A request of n bytes to a waiting server and its 'W' reply, checked; `at_once`: the
 * server preempted alpha inside the send, so the reply is there when the send returns. */
static void wait_round_trip(int to, int from, unsigned n, unsigned char seed, int at_once)
{
	unsigned char req[64], rep[64];
	unsigned got = n < WAIT_BUF ? n : WAIT_BUF;

	for (unsigned i = 0; i < n; i++)
		req[i] = (unsigned char)(seed + i);
	BH_EXPECT_EQ(bh_queuing_send(to, req, n), BH_OK);
	if (!at_once)
		BH_EXPECT(wait_for(bit(from), 0, 0));
	BH_EXPECT_EQ(bh_queuing_receive(from, rep, sizeof(rep), 0), 3 + got);
	BH_EXPECT(rep[0] == 'W' && rep[1] == got && rep[2] == n);
	for (unsigned i = 0; i < got; i++)
		if (rep[3 + i] != (unsigned char)(req[i] + 1))
			BH_EXPECT(rep[3 + i] == (unsigned char)(req[i] + 1));
}

BH_TEST(receive_wait_same_core_takes_the_message_inside_the_send)
{
	for (unsigned char k = 0; k < 10; k++)
		wait_round_trip(to_delta, from_delta, 1 + k * 4u, k, 1);
	wait_round_trip(to_delta, from_delta, 60, 7, 1); /* truncated to its 48 bytes */
}

BH_TEST(receive_wait_across_cores)
{
	for (unsigned char k = 0; k < 10; k++)
		wait_round_trip(to_epsilon, from_epsilon, 1 + k * 5u, (unsigned char)(50 + k), 0);
	wait_round_trip(to_epsilon, from_epsilon, 64, 9, 0);
}

BH_TEST(receive_wait_takes_a_queued_message_at_once)
{
	char got[16];
	unsigned length = 0;

	BH_EXPECT_EQ(bh_queuing_send(q_out, "queued", 6), BH_OK);
	BH_EXPECT_EQ(bh_queuing_receive_wait(q_in, got, sizeof(got), &length), 6);
	BH_EXPECT(length == 6 && got[0] == 'q' && got[5] == 'd');
}

/* An empty queue and the virtual timer armed: the wait ends with the interrupt, not before. */
BH_TEST(receive_wait_ends_with_an_interrupt)
{
	char got[16];
	unsigned long long deadline = bh_now_ns() + 2000000;

	bh_irq_poll(); /* nothing pending from the tests before */
	vtimer_at(deadline);
	BH_EXPECT_EQ(bh_queuing_receive_wait(q_in, got, sizeof(got), 0), BH_NOT_AVAILABLE);
	BH_EXPECT(bh_now_ns() >= deadline);
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	bh_irq_poll();
}

BH_TEST(receive_wait_checks_its_arguments)
{
	char got[16];

	BH_EXPECT_EQ(bh_queuing_receive_wait(q_out, got, sizeof(got), 0), BH_INVALID_MODE);
	BH_EXPECT_EQ(bh_queuing_receive_wait(s_in, got, sizeof(got), 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_wait(63, got, sizeof(got), 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_wait(q_in, (void *)(MEM_END - 4), 16, 0), BH_INVALID_PARAM);
}

/* --- posted receive buffers (BH_HC_QUEUING_RECEIVE_POST) ------------------------------------ */

#define QUIET_RO ((void *)0x50001000ul) /* "quiet": alpha's read-only mapping */
static volatile unsigned long long post_st;
static unsigned long long st_pair[2]; /* for a misaligned status word */

static void fill(char *b, unsigned n, char v)
{
	for (unsigned i = 0; i < n; i++)
		b[i] = v;
}

BH_TEST(post_then_send_fills_the_buffer_and_raises_the_port_interrupt)
{
	char buf[16], got[16];
	struct bh_port_status ps;

	fill(buf, sizeof(buf), (char)0xAA);
	bh_irq_poll();
	unsigned irqs = port_irqs;
	post_st = 77;
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf), &post_st, 0), BH_NOT_AVAILABLE);
	BH_EXPECT_EQ(post_st, 0); /* posted: the hypervisor cleared it */
	BH_EXPECT_EQ(bh_queuing_send(q_out, "posted", 6), BH_OK);
	BH_EXPECT(post_st & BH_POST_DONE);
	BH_EXPECT_EQ(BH_POST_BYTES(post_st), 6);
	BH_EXPECT_EQ(BH_POST_LENGTH(post_st), 6);
	BH_EXPECT(buf[0] == 'p' && buf[5] == 'd' && buf[6] == (char)0xAA);
	BH_EXPECT_EQ(bh_port_status(q_in, &ps), BH_OK);
	BH_EXPECT_EQ(ps.messages, 0); /* no queue slot */
	bh_irq_poll();
	BH_EXPECT_EQ(port_irqs, irqs + 1);
	/* The post is gone: nothing to cancel, and the next message is queued. */
	BH_EXPECT_EQ(bh_queuing_receive_cancel(q_in), BH_NO_ACTION);
	unsigned long long done = post_st;
	BH_EXPECT_EQ(bh_queuing_send(q_out, "next", 4), BH_OK);
	BH_EXPECT_EQ(post_st, done);
	BH_EXPECT(buf[0] == 'p');
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), 0), 4);
	BH_EXPECT(got[0] == 'n' && got[3] == 't');
	bh_irq_poll();
}

BH_TEST(post_truncates_to_its_buffer_and_reports_the_length)
{
	char buf[16];

	fill(buf, sizeof(buf), (char)0xAA);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, 4, &post_st, 0), BH_NOT_AVAILABLE);
	BH_EXPECT_EQ(bh_queuing_send(q_out, "0123456789", 10), BH_OK);
	BH_EXPECT_EQ(BH_POST_BYTES(post_st), 4);
	BH_EXPECT_EQ(BH_POST_LENGTH(post_st), 10);
	BH_EXPECT(buf[0] == '0' && buf[3] == '3' && buf[4] == (char)0xAA);
	bh_irq_poll();
}

BH_TEST(post_takes_a_queued_message_at_once)
{
	char buf[16];
	unsigned length = 0;

	BH_EXPECT_EQ(bh_queuing_send(q_out, "abc", 3), BH_OK);
	post_st = 55;
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf), &post_st, &length), 3);
	BH_EXPECT(length == 3 && buf[0] == 'a' && buf[2] == 'c');
	BH_EXPECT_EQ(post_st, 55); /* a plain receive: the status word is not used */
	BH_EXPECT_EQ(bh_queuing_receive_cancel(q_in), BH_NO_ACTION);
	bh_irq_poll();
}

BH_TEST(post_cancelled_is_never_written)
{
	char buf[16], got[16];

	fill(buf, sizeof(buf), (char)0xAA);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf), &post_st, 0), BH_NOT_AVAILABLE);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(q_in), BH_OK);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(q_in), BH_NO_ACTION);
	BH_EXPECT_EQ(bh_queuing_send(q_out, "zz", 2), BH_OK);
	BH_EXPECT_EQ(post_st, 0);
	BH_EXPECT(buf[0] == (char)0xAA);
	BH_EXPECT_EQ(bh_queuing_receive(q_in, got, sizeof(got), 0), 2);
	BH_EXPECT(got[0] == 'z');
	bh_irq_poll();
}

/* Every refusal leaves nothing posted: the message after it is queued, the buffers untouched. */
BH_TEST(post_checks_its_arguments_and_allows_one_post_per_port)
{
	char buf[16], got[16];
	volatile unsigned long long *misaligned =
		(volatile unsigned long long *)(void *)((char *)st_pair + 4);

	fill(buf, sizeof(buf), (char)0xAA);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_out, buf, sizeof(buf), &post_st, 0), BH_INVALID_MODE);
	BH_EXPECT_EQ(bh_queuing_receive_post(s_in, buf, sizeof(buf), &post_st, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_post(63, buf, sizeof(buf), &post_st, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf), misaligned, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf),
					     (volatile unsigned long long *)MEM_END, 0),
		     BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf),
					     (volatile unsigned long long *)QUIET_RO, 0),
		     BH_INVALID_PARAM); /* read-only */
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, (void *)(MEM_END - 4), 16, &post_st, 0),
		     BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, QUIET_RO, 16, &post_st, 0), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(q_in), BH_NO_ACTION);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(q_out), BH_INVALID_MODE);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(s_in), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(63), BH_INVALID_PARAM);
	/* One post per port; no receive wait beside it. */
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, buf, sizeof(buf), &post_st, 0), BH_NOT_AVAILABLE);
	BH_EXPECT_EQ(bh_queuing_receive_post(q_in, got, sizeof(got), &post_st, 0), BH_OP_NOT_ALLOWED);
	BH_EXPECT_EQ(bh_queuing_receive_wait(q_in, got, sizeof(got), 0), BH_OP_NOT_ALLOWED);
	/* A sender whose buffer is not its memory is refused; the post stays for the next. */
	BH_EXPECT_EQ(bh_queuing_send(q_out, (void *)(MEM_END - 4), 8), BH_INVALID_PARAM);
	BH_EXPECT_EQ(post_st, 0);
	BH_EXPECT_EQ(bh_queuing_send(q_out, "ok", 2), BH_OK);
	BH_EXPECT_EQ(BH_POST_BYTES(post_st), 2);
	BH_EXPECT(buf[0] == 'o' && buf[1] == 'k' && buf[2] == (char)0xAA);
	bh_irq_poll();
}

/* epsilon (its own core, in a receive wait) answers into alpha's posted buffer: alpha idles
 * until the port interrupt, the answer is there with no receive call. */
BH_TEST(post_filled_from_another_core)
{
	unsigned char req[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, rep[64];
	unsigned long long deadline = bh_now_ns() + WAIT_NS;

	BH_EXPECT_EQ(bh_queuing_receive_post(from_epsilon, rep, sizeof(rep), &post_st, 0),
		     BH_NOT_AVAILABLE);
	BH_EXPECT_EQ(bh_queuing_send(to_epsilon, req, sizeof(req)), BH_OK);
	vtimer_at(deadline);
	while (!(post_st & BH_POST_DONE) && bh_now_ns() < deadline) {
		bh_idle();
		bh_irq_poll();
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	BH_EXPECT(post_st & BH_POST_DONE);
	BH_EXPECT_EQ(BH_POST_BYTES(post_st), 3 + sizeof(req));
	BH_EXPECT(rep[0] == 'W' && rep[1] == sizeof(req) && rep[3] == 2 && rep[10] == 9);
	BH_EXPECT_EQ(bh_queuing_receive_cancel(from_epsilon), BH_NO_ACTION);
	bh_irq_poll();
}

static void alpha_main(void)
{
	bh_irq_set_handler(BH_VIRQ_PORT, count_irq);
	bh_irq_set_handler(BH_VIRQ_DOORBELL, count_irq);
	bh_test_run_all();
}

/* --- beta and gamma: echo servers --------------------------------------------------------- */

static void echo(int to, const unsigned char *req, long n)
{
	unsigned char rep[64];

	rep[0] = 'E';
	for (long i = 0; i < n && i < 63; i++)
		rep[1 + i] = (unsigned char)(req[i] + 1);
	bh_queuing_send(to, rep, (unsigned)(n < 63 ? n : 63) + 1);
}

static void tagged(int to, char tag, const volatile unsigned char *data, unsigned n)
{
	unsigned char rep[16];

	rep[0] = (unsigned char)tag;
	for (unsigned i = 0; i < n; i++)
		rep[1 + i] = data[i];
	bh_queuing_send(to, rep, n + 1);
}

_Noreturn static void echo_server(int is_gamma)
{
	int from = -1, to = -1, fan = -1;
	struct bh_shm_info info;
	long shared = bh_shm_info("shared", &info);
	unsigned char req[64];
	unsigned long long ready, rung;

	bh_queuing_port_create("from_alpha", 64, BH_DESTINATION_PORT, 4, &from);
	bh_queuing_port_create("to_alpha", 64, BH_SOURCE_PORT, 4, &to);
	bh_sampling_port_create("fan_in", 16, BH_DESTINATION_PORT, FAN_REFRESH_NS, &fan);
	for (;;) {
		bh_port_wait(bit(from) | bit(fan), &ready, &rung);
		long n;
		while ((n = bh_queuing_receive(from, req, sizeof(req), 0)) > 0)
			echo(to, req, n);
		if (ready & bit(fan) && (n = bh_sampling_read(fan, req, 15, 0, 0)) > 0)
			tagged(to, 'S', req, (unsigned)n);
		if (shared < 0 || !(rung & (1ull << shared)))
			continue;
		if (!is_gamma) {
			tagged(to, 'D', SHARED_BETA, 8);
			continue;
		}
		for (unsigned i = 0; i < 8; i++)
			SHARED_GAMMA[REPLY_AT + i] = (unsigned char)(SHARED_GAMMA[i] + 1);
		bh_shm_doorbell((unsigned)shared);
	}
}

/* --- delta and epsilon: echo servers that block in the receive wait ------------------------ */

_Noreturn static void waiting_echo_server(void)
{
	int from = -1, to = -1;
	unsigned char req[WAIT_BUF], rep[3 + WAIT_BUF];
	unsigned length = 0;

	bh_queuing_port_create("from_alpha", 64, BH_DESTINATION_PORT, 4, &from);
	bh_queuing_port_create("to_alpha", 64, BH_SOURCE_PORT, 4, &to);
	for (;;) {
		long n = bh_queuing_receive_wait(from, req, sizeof(req), &length);
		if (n < 0) {
			bh_irq_poll(); /* what woke it instead */
			continue;
		}
		rep[0] = 'W';
		rep[1] = (unsigned char)n;
		rep[2] = (unsigned char)length;
		for (long i = 0; i < n; i++)
			rep[3 + i] = (unsigned char)(req[i] + 1);
		bh_queuing_send(to, rep, 3 + (unsigned)n);
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned id = bh_partition_id();

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (id == DELTA || id == EPSILON)
		waiting_echo_server();
	if (id != ALPHA)
		echo_server(id == 2);
	alpha_main();
	bh_halt_self();
}
