/* qstarve: a queuing channel's source keeps the channel's lock taken from three dedicated cores
 * (TIME_NEVER there, so their port calls wait for it in the ticket queue), while its peer, the
 * destination, polls with plain (non-blocking) receives from a cyclic core, whose timer is always
 * set: its calls take the lock only when it is free (ports.c lock_for_call,
 * arch_spin_lock_before) and give up at the core's timer. Once the three senders are in the
 * ticket queue, each one back in it before the next owner lets go, the lock is never free, and
 * the destination's receive is made again at every timer without ever being served
 * (tests/system/test_chanstarve.py).
 *
 * The role comes from the port: the source (q_out, 3 vCPUs) sends 4 KiB messages from an odd
 * address back to back during [STORM_T0, STORM_END), as qstorm's storm does; the destination
 * (q_in, 1 vCPU) times each receive, alone before the storm and then inside it, and prints
 *   qstarve: alone calls N longest T
 *   qstarve: storm calls N longest T
 *   qstarve: received R0 R1 R2 errors E
 *   qstarve: destination done
 * Each message carries its sender and that sender's count of messages sent before it; the
 * destination wants each sender's in order, none missing or twice (a call given up and made
 * again must take one message, or none), and after the storm empties the queue: R0..R2 are
 * then the sends each sender counted (its BH_OK answers). */
#include "bhtest.h"
#include "../hostile/turns.h"

#define SIZE 4096u
#define SENDERS 3u
#define SRC_TURN 256ull  /* the senders' deadline: emulator turns stay fair, each long enough
                            * for a sender back from its hold to take its next ticket */
#define STORM_T0 1250000ull  /* 20 ms: every partition is up */
#define STORM_END 1875000ull /* 30 ms */

typedef unsigned long long u64;

static unsigned char bufs[SENDERS][SIZE + 16] __attribute__((aligned(16)));
static unsigned char rbuf[SIZE + 16] __attribute__((aligned(16)));
static volatile u64 sends[SENDERS];
static u64 received[SENDERS], errors;

/* A message's tag, at its first bytes (an odd address: byte by byte). */
static void put_tag(unsigned char *m, unsigned vcpu, u64 seq)
{
	m[0] = (unsigned char)vcpu;
	for (unsigned i = 0; i < 8; i++)
		m[1 + i] = (unsigned char)(seq >> (8 * i));
}

static void check_tag(const unsigned char *m, unsigned length)
{
	u64 seq = 0;
	unsigned vcpu = m[0];

	for (unsigned i = 0; i < 8; i++)
		seq |= (u64)m[1 + i] << (8 * i);
	if (length != SIZE || vcpu >= SENDERS || seq != received[vcpu])
		errors++;
	else
		received[vcpu]++;
}

static int desc = -1;

static void sleep_until(u64 t)
{
	u64 n = now();
	if (n < t)
		bh_sleep_ns((t - n) * 16);
}

/* The senders arm a masked deadline SRC_TURN ahead (qstorm's 16 ticks: its senders' turns end
 * before they are back in the queue): each sender, back from its hold, takes its next ticket in
 * the same emulator turn, so the queue is never empty when the owner lets go. The destination's
 * core keeps running meanwhile (its window starts on time). */
static void source(unsigned vcpu)
{
	sleep_until(STORM_T0);
	for (u64 t; (t = now()) < STORM_END;) {
		turn_ends_at(t + SRC_TURN);
		put_tag(bufs[vcpu] + 1, vcpu, sends[vcpu]);
		if (bh_queuing_send(desc, bufs[vcpu] + 1, SIZE) == BH_OK)
			sends[vcpu]++;
	}
	turns_off();
	if (vcpu == 0) {
		spin_until(now() + 20000);
		bh_printf("qstarve: source sends %llu %llu %llu\n", sends[0], sends[1], sends[2]);
	}
}

/* Plain receives from `from` until `until`, each timed; the longest and the count. */
static void receives(const char *what, u64 from, u64 until)
{
	u64 calls = 0, longest = 0;
	unsigned length;

	spin_until(from);
	u64 start = now();
	for (u64 t0; (t0 = now()) < until;) {
		keep_turns_short(t0);
		if (bh_queuing_receive(desc, rbuf + 1, SIZE, &length) >= 0)
			check_tag(rbuf + 1, length);
		u64 dt = now() - t0;
		calls++;
		if (dt > longest)
			longest = dt;
	}
	turns_off();
	bh_printf("qstarve: %s from %llu to %llu\n", what, start, now());
	bh_printf("qstarve: %s calls %llu longest %llu\n", what, calls, longest);
}

static void destination(void)
{
	receives("alone", STORM_T0 - 250000, STORM_T0 - 62500);  /* 16 to 19 ms */
	receives("storm", STORM_T0 + 62500, STORM_END - 62500);  /* 21 to 29 ms */
	spin_until(STORM_END + 6250);                            /* the senders have stopped */
	unsigned length;
	while (bh_queuing_receive(desc, rbuf + 1, SIZE, &length) >= 0)
		check_tag(rbuf + 1, length);
	bh_printf("qstarve: received %llu %llu %llu errors %llu\n", received[0], received[1],
		  received[2], errors);
	bh_printf("qstarve: destination done\n");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	bh_queuing_port_create("q_out", SIZE, BH_SOURCE_PORT, 8, &desc);
	if (desc >= 0) {
		for (unsigned b = 0; b < SENDERS; b++)
			for (unsigned i = 0; i < SIZE + 16; i++)
				bufs[b][i] = (unsigned char)(i + b);
		for (unsigned v = 1; v < SENDERS; v++)
			bh_vcpu_start(v);
		source(vcpu);
	} else {
		bh_queuing_port_create("q_in", SIZE, BH_DESTINATION_PORT, 8, &desc);
		if (desc < 0) {
			bh_printf("qstarve: no port\n");
			return 0;
		}
		destination();
	}
	for (;;)
		bh_sleep_ns(1000000000ll);
	return 0;
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	source(vcpu);
	for (;;)
		bh_sleep_ns(1000000000ll);
}
