/* qstorm: a queuing channel's lock kept busy from several cores while one vCPU of its source,
 * on a core it shares with latvictim (fixed priority), aims a send just before each of the
 * victim's leads (tests/system/test_chanwait.py; docs/performance.md, "Waits for a lock other
 * cores hold"). Every send and receive copies a 4 KiB message to or from an odd address under
 * the channel's lock (ports.c), the longest hold a port call has.
 *
 * A partition's role comes from its port: the source (q_out) runs on 3 vCPUs: vCPU 0 shares
 * the victim's core and spins or aims, by window; vCPUs 1 and 2, on dedicated cores, send back
 * to back (storm) or sleep. The destination (q_in), on a dedicated core, receives back to back
 * (storm) or sleeps. The windows are hostile's (partitions/tests/hostile/attacks.h), so
 * latvictim's line of window w gives its lateness while window w ran.
 *
 * While a vCPU spins or calls, it keeps its emulator turns short (../hostile/turns.h). At the
 * end vCPU 0 prints one line per window:
 *   qstorm: window W <aim|spin> <storm|idle> aimed N longest T sends S1 S2
 * and the destination one:
 *   qstorm: window W received R */
#include "bhtest.h"
#include "../hostile/attacks.h"
#include "../hostile/turns.h"

#define SIZE 4096u
#define AIM_SPREAD 16ull
#define SENDERS 3u

typedef unsigned long long u64;

enum { SPIN, AIM };
enum { IDLE, STORM };

static const unsigned char windows[ATTACK_COUNT][2] = {
	{ SPIN, IDLE }, { AIM, IDLE },  { SPIN, STORM }, { AIM, STORM },
	{ SPIN, IDLE }, { AIM, STORM }, { AIM, IDLE },   { AIM, STORM },
	{ SPIN, STORM }, { AIM, STORM }, { SPIN, IDLE },  { SPIN, IDLE },
};

static unsigned char bufs[SENDERS][SIZE + 16] __attribute__((aligned(16)));
static volatile u64 sends[SENDERS][ATTACK_COUNT], received[ATTACK_COUNT];
static volatile u64 aimed[ATTACK_COUNT], longest[ATTACK_COUNT];
static int desc = -1;

static u64 window_end(int w)
{
	return ATTACK_T0 + ((u64)w + 1) * ATTACK_WINDOW;
}

/* The first instant the victim is due at or after t. */
static u64 next_due(u64 t)
{
	u64 base = ATTACK_T0 + VICTIM_SLOT_OFFSET;
	u64 k = t <= base ? 0 : (t - base + VICTIM_SLOT_PERIOD - 1) / VICTIM_SLOT_PERIOD;
	return base + k * VICTIM_SLOT_PERIOD;
}

/* vCPU 0: one send AIM_SPREAD-spread ticks before each lead, timed. */
static void aim_window(int w, u64 end)
{
	for (u64 k = 0;; k++) {
		u64 d = next_due(now() + HYP_FP_LEAD_TICKS + 200);
		if (d + 1000 >= end)
			break;
		spin_until(d - HYP_FP_LEAD_TICKS - 1 - k % AIM_SPREAD);
		u64 t0 = now();
		bh_queuing_send(desc, bufs[0] + 1, SIZE);
		u64 dt = now() - t0;
		aimed[w]++;
		if (dt > longest[w])
			longest[w] = dt;
	}
	spin_until(end);
}

/* Back to back until end, or asleep. */
static void others_window(unsigned vcpu, int w, int sender)
{
	u64 end = window_end(w) - 4000;
	static unsigned char rbuf[SIZE + 16] __attribute__((aligned(16)));
	unsigned length;

	if (windows[w][1] == IDLE) {
		bh_sleep_ns((long long)((end - now()) * 16));
	} else {
		for (u64 t; (t = now()) < end;) {
			keep_turns_short(t);
			if (sender) {
				if (bh_queuing_send(desc, bufs[vcpu] + 1, SIZE) == BH_OK)
					sends[vcpu][w]++;
			} else if (bh_queuing_receive(desc, rbuf + 1, SIZE, &length) > 0) {
				received[w]++;
			}
		}
		/* The queue left empty for the next window: an aimed send into a full queue copies
		 * nothing (BH_NOT_AVAILABLE) and measures no hold. */
		for (unsigned i = 0; !sender && i < 16; i++)
			if (bh_queuing_receive(desc, rbuf + 1, SIZE, &length) <= 0)
				break;
	}
	u64 t = now();
	if (t < window_end(w))
		bh_sleep_ns((long long)((window_end(w) - t) * 16));
}

static void put_window_line(int w)
{
	bh_printf("qstorm: window %d %s %s aimed %llu longest %llu sends %llu %llu\n", w,
		  windows[w][0] == AIM ? "aim" : "spin", windows[w][1] == STORM ? "storm" : "idle",
		  aimed[w], longest[w], sends[1][w], sends[2][w]);
}

static void run(unsigned vcpu)
{
	int sender = desc >= 0;
	if (!sender) {
		bh_queuing_port_create("q_in", SIZE, BH_DESTINATION_PORT, 8, &desc);
		if (desc < 0) {
			bh_printf("qstorm: no port\n");
			return;
		}
	}
	u64 t = now();
	if (t < ATTACK_T0)
		bh_sleep_ns((long long)((ATTACK_T0 - t) * 16));
	for (int w = 0; w < ATTACK_COUNT; w++) {
		if (sender && vcpu == 0) {
			if (windows[w][0] == AIM)
				aim_window(w, window_end(w) - 2000);
			spin_until(window_end(w));
		} else {
			others_window(vcpu, w, sender);
		}
	}
	turns_off();
	if (sender && vcpu == 0) {
		spin_until(now() + 20000); /* the others' last counts are in */
		for (int w = 0; w < ATTACK_COUNT; w++)
			put_window_line(w);
		bh_printf("qstorm: source done\n");
	} else if (!sender) {
		for (int w = 0; w < ATTACK_COUNT; w++)
			bh_printf("qstorm: window %d received %llu\n", w, received[w]);
		bh_printf("qstorm: destination done\n");
	}
	for (;;)
		bh_sleep_ns(1000000000ll);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	bh_queuing_port_create("q_out", SIZE, BH_SOURCE_PORT, 8, &desc);
	for (unsigned b = 0; b < SENDERS; b++)
		for (unsigned i = 0; i < SIZE + 16; i++)
			bufs[b][i] = (unsigned char)(i + b);
	if (desc >= 0)
		for (unsigned v = 1; v < SENDERS; v++)
			bh_vcpu_start(v);
	run(vcpu);
	return 0;
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	run(vcpu);
}
