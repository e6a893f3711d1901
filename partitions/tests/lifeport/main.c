/* lifeport: an old incarnation must not open a port for the new one
 * (tests/system/configs/lifeatk_ports.yaml, tests/system/test_lifeatk.py), by id:
 *   0 stale: vCPU 0 (core 1) and vCPU 1 (core 2). vCPU 1 opens its ports over and over; vCPU 0
 *            warm-restarts the partition at a pseudo-random moment, `COUNT` times. A restart
 *            closes the partition's ports at the instant it is requested, but vCPU 1 is still
 *            in its create call on core 2 until its core takes the stop: each boot checks that
 *            neither port is open (BH_HC_PORT_INFO's descriptor is -1) before it opens one.
 *            Counters survive in memory outside the image. vCPU 1 also posts a receive
 *            buffer and its status word (BH_HC_QUEUING_RECEIVE_POST) outside the image, over
 *            and over, into one of two slots by the parity of the incarnation: a restart
 *            withdraws the posts, so the slot the ended incarnation posted into must never be
 *            written again. vCPU 0 sets a canary in it at boot, opens the port, takes one
 *            message of the peer's through the queue (a post left over would have taken it)
 *            and checks the canary, then again one boot later, before vCPU 1 posts there.
 *   1 peer:  core 3, system partition: sends to the stale partition's queue all along, and ends
 *            the run when it reports done. */
#include "bhtest.h"

typedef unsigned long long u64;

#define COUNT 300u
#define PERSIST 0x40300000ul /* outside the image: survives the restarts */
#define MAGIC 0x4c49464550525431ull

struct post_slot {
	u64 msg, status;
};

struct persist {
	u64 magic, boots, inherited_queue, inherited_sampling, vcpu1_failed;
	u64 stale_post_written, posts_filled; /* posts_filled: vCPU 1's alone */
	struct post_slot slot[2];
};

#define CANARY 0x5354414c45504f53ull

static struct persist *persist(void) { return (struct persist *)PERSIST; }

static u64 mix(u64 x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static void spin_ns(u64 ns)
{
	u64 end = bh_now_ns() + ns;

	while (bh_now_ns() < end)
		__asm__ volatile("yield" ::: "memory");
}

static int is_open(const char *name)
{
	struct bh_port_info info;

	return bh_port_info(name, &info) == BH_OK && info.descriptor != -1;
}

static void report(const struct persist *p, unsigned restarts)
{
	char d[128];

	bh_printf("BHSTAT lifeport_restarts %u\nBHSTAT lifeport_boots %llu\n", restarts, p->boots);
	bh_snprintf(d, sizeof(d), "%llu of %llu boots found the queuing port open", p->inherited_queue,
		    p->boots);
	bh_test_report("lifeport_queue_closed_at_boot", p->inherited_queue == 0, d);
	bh_snprintf(d, sizeof(d), "%llu of %llu boots found the sampling port open",
		    p->inherited_sampling, p->boots);
	bh_test_report("lifeport_sampling_closed_at_boot", p->inherited_sampling == 0, d);
	bh_printf("BHSTAT lifeport_posts_filled %llu\n", p->posts_filled);
	bh_snprintf(d, sizeof(d), "%llu of %llu boots found the slot an ended incarnation posted "
		    "into written after its restart (%llu posts filled)", p->stale_post_written,
		    p->boots, p->posts_filled);
	bh_test_report("lifeport_post_withdrawn_at_restart",
		       p->stale_post_written == 0 && p->posts_filled > 0, d);
	bh_snprintf(d, sizeof(d), "%llu boots could not start vCPU 1", p->vcpu1_failed);
	bh_test_report("lifeport_vcpu1_started", p->vcpu1_failed == 0, d);
	bh_test_summary();
}

_Noreturn static void stale(unsigned boot_kind, unsigned restarts)
{
	struct persist *p = persist();

	int first = boot_kind == BH_BOOT_COLD || p->magic != MAGIC;

	if (first)
		*p = (struct persist){ .magic = MAGIC };
	else
		p->boots++;
	p->inherited_queue += is_open("in");
	p->inherited_sampling += is_open("sin");
	/* This incarnation posts into slot[restarts & 1]: the canary set there one boot ago, when
	 * the incarnation before posted there last, must be intact. The other slot is the ended
	 * incarnation's: a canary now, which the next message must not reach. */
	struct post_slot *mine = &p->slot[restarts & 1], *old = &p->slot[(restarts + 1) & 1];
	if (!first && restarts >= 2)
		p->stale_post_written += mine->msg != CANARY || mine->status != CANARY;
	old->msg = old->status = CANARY;
	int q = -1;
	u64 m, end = bh_now_ns() + 1000000;
	bh_queuing_port_create("in", 8, BH_DESTINATION_PORT, 4, &q);
	while (bh_queuing_receive(q, &m, sizeof(m), 0) >= 0)
		;
	while (bh_queuing_receive(q, &m, sizeof(m), 0) < 0 && bh_now_ns() < end)
		;
	if (!first)
		p->stale_post_written += old->msg != CANARY || old->status != CANARY;
	if (restarts >= COUNT) {
		report(p, restarts);
		bh_sampling_write(bh_port_open("done_out"), "d", 1);
		bh_halt_self();
	}
	p->vcpu1_failed += bh_vcpu_start(1) != BH_OK;
	spin_ns(20000 + mix(restarts) % 100000);
	bh_reset_self(BH_RESET_WARM);
	bh_halt_self();
}

/* vCPU 1: opens both ports as fast as it can until the restart stops it. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	int d, q = -1;
	struct persist *p = persist();
	struct post_slot *mine = &p->slot[restarts & 1];

	(void)vcpu, (void)boot_kind;
	for (;;) {
		bh_queuing_port_create("in", 8, BH_DESTINATION_PORT, 4, &q);
		bh_sampling_port_create("sin", 8, BH_DESTINATION_PORT, 1000000, &d);
		/* Posted again and again: refused while one is posted, filled by the peer's sends. */
		u64 before = mine->status;
		long r = bh_queuing_receive_post(q, &mine->msg, 8, &mine->status, 0);
		if (r >= 0 || (before & BH_POST_DONE && r == BH_NOT_AVAILABLE))
			p->posts_filled++;
	}
}

_Noreturn static void peer(void)
{
	int to = bh_port_open("to_stale"), done = bh_port_open("done_in");
	u64 seq = 0;
	char c;

	while (bh_sampling_read(done, &c, 1, 0, 0) != 1) {
		bh_queuing_send(to, &seq, sizeof(seq));
		seq++;
		spin_ns(5000);
	}
	bh_halt_system();
	bh_halt_self();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	if (bh_partition_id() == 1)
		peer();
	stale(boot_kind, restarts);
}
