/* beattack: a hostile best-effort vCPU. It shares a core's idle time with latvictim (which
 * measures its lateness against the plan, window by window, hostile/attacks.h) and in each
 * window floods the hypervisor with one kind of call, so that one of them is in progress when
 * the core's be_until comes. What that costs the victim beyond BE_LEAD_TICKS shows in its
 * lateness; tests/system/test_best_effort.py compares it with the victim alone.
 *
 * Window (attacks.h index): what it floods with.
 *   0 quiet              nothing (it sleeps)
 *   1 port_write_odd     BH_HC_SAMPLING_WRITE of BIG bytes from an odd address
 *   2 port_write_aligned BH_HC_SAMPLING_WRITE of BIG bytes from an aligned address
 *   3 port_read_odd      BH_HC_SAMPLING_READ of BIG bytes to an odd address
 *   4 queue_send_odd     BH_HC_QUEUING_SEND of BIG bytes from an odd address, and a receive
 *                        of it to an odd address (so the queue never fills)
 *   5 console_max_write  BH_HC_CONSOLE_WRITE of 256 printable bytes
 *   6..11                the same as 1 (more samples of the worst case found so far)
 * At the end it prints, for each window, the longest round it timed (the hypervisor path plus a
 * few instructions of its own; a round that spans a switch-out is not one path):
 *   BEROUND <window> longest <ticks> ticks
 * then BEATTACK-DONE. */
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define BIG 4096u

static unsigned char out_buf[BIG + 16] __attribute__((aligned(16)));
static unsigned char in_buf[BIG + 16] __attribute__((aligned(16)));
static char letters[BH_CONSOLE_MAX_WRITE];
static int big_out, big_in, q_out, q_in;
static unsigned long long longest[ATTACK_COUNT];

static void one_round(int window)
{
	switch (window) {
	case 0:
		break;
	case 2:
		bh_sampling_write(big_out, out_buf, BIG);
		break;
	case 3:
		bh_sampling_read(big_in, in_buf + 1, BIG, 0, 0);
		break;
	case 4:
		bh_queuing_send(q_out, out_buf + 1, BIG);
		bh_queuing_receive(q_in, in_buf + 1, BIG, 0);
		break;
	case 5:
		bh_console_write(letters, sizeof(letters));
		break;
	default:
		bh_sampling_write(big_out, out_buf + 1, BIG);
		break;
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	for (unsigned i = 0; i < sizeof(letters); i++)
		letters[i] = (char)('a' + i % 26);
	for (unsigned i = 0; i < sizeof(out_buf); i++)
		out_buf[i] = (unsigned char)i;
	big_out = (int)bh_port_open("big_out");
	big_in = (int)bh_port_open("big_in");
	q_out = (int)bh_port_open("q_out");
	q_in = (int)bh_port_open("q_in");
	if (big_out < 0 || big_in < 0 || q_out < 0 || q_in < 0) {
		bh_printf("beattack: ports %d %d %d %d\n", big_out, big_in, q_out, q_in);
		for (;;)
			bh_idle();
	}
	bh_sampling_write(big_out, out_buf, BIG); /* something to read in window 3 */
	bh_sleep_until_ns(bh_ticks_to_ns(ATTACK_T0));
	for (int w = 0; w < ATTACK_COUNT; w++) {
		unsigned long long end = ATTACK_T0 + ((unsigned long long)w + 1) * ATTACK_WINDOW;
		if (w == 0) {
			bh_sleep_until_ns(bh_ticks_to_ns(end));
			continue;
		}
		while (bh_counter() < end) {
			unsigned long long t0 = bh_counter();
			one_round(w);
			unsigned long long d = bh_counter() - t0;
			if (d > longest[w] && d < 2000) /* longer: switched out meanwhile */
				longest[w] = d;
		}
	}
	for (int w = 0; w < ATTACK_COUNT; w++)
		bh_printf("BEROUND %d longest %llu ticks\n", w, longest[w]);
	bh_puts("BEATTACK-DONE");
	for (;;)
		bh_idle();
}
