/* samplestress: sampling channels under more stress than samplecheck (test_sampling_stress.py,
 * without -icount). A partition's role comes from the ports it has:
 *   w_a, w_b      sources of channels a and b: each vCPU writes them back to back, messages of
 *                 the channel's max_message_size, each message filled with one byte derived from
 *                 its writer (partition, vCPU, incarnation, number);
 *   r_a, r_a2, r_b destinations (r_a and r_a2 two ports of one partition on channel a): each
 *                 vCPU reads each in turn and checks every message is whole and of the full
 *                 length, and never older than the last it read from the same writer on the
 *                 same channel (through either port). A partition may have both kinds.
 *   chaos         (a system partition) cold-restarts the partitions whose ids are bits of
 *                 p_victims, in turn, every p_chaos ns, p_count times, then says so.
 * p_sleep (ns) / p_every: a vCPU sleeps that long every p_every rounds (idle time for
 * best-effort vCPUs). A reader vCPU reports once it has seen CHANGES different messages
 * (BHSTAT line and verdict "<partition id>_<vcpu>_done") and goes on. Torn or stale messages
 * are printed as they are found ("samplestress: TORN" / "STALE"). */
#include "bhtest.h"

#define MAXV    4u
#define MAXP    8u
#define CHANGES 3000u /* unless p_changes says otherwise */
#define READS   8000000u

typedef unsigned long long u64;

struct header {
	unsigned part, vcpu, inc, number;
};

static const char *const wnames[2] = { "w_a", "w_b" };
static const char *const rnames[3] = { "r_a", "r_a2", "r_b" };
static const unsigned rchan[3] = { 0, 0, 1 };
static unsigned sizes[2]; /* each channel's max_message_size: every message has it */

static unsigned char fill_of(struct header h)
{
	return (unsigned char)(h.number * 7u + h.vcpu * 101u + h.inc * 13u + h.part * 29u + 1u);
}

static unsigned char wbuf[MAXV][4096] __attribute__((aligned(16)));
static unsigned char rbuf[MAXV][4096 + 64] __attribute__((aligned(16)));
static u64 last[MAXV][2][MAXP * MAXV];
static unsigned me, incarnation;

static void write_one(int desc, unsigned c, unsigned vcpu, unsigned number)
{
	struct header h = { me, vcpu, incarnation, number };
	unsigned char *b = wbuf[vcpu];
	unsigned char fill = fill_of(h);

	for (unsigned i = 0; i < sizes[c]; i++)
		b[i] = fill;
	__builtin_memcpy(b, &h, sizeof(h));
	long rc = bh_sampling_write(desc, b, sizes[c]);
	if (rc != BH_OK && rc != BH_INVALID_PARAM) /* that: the port closed by a restart */
		bh_printf("samplestress: write %u of vcpu %u on %s: %ld\n", number, vcpu, wnames[c], rc);
}

struct counts {
	unsigned reads, torn, stale, changes, empty, closed;
	struct header prev;
};

static void read_one(int desc, unsigned r, unsigned vcpu, struct counts *k)
{
	unsigned c = rchan[r], flags = 0, size = 0;
	unsigned char *b = rbuf[vcpu] + 1; /* an odd address, as the slowest copies */
	long n = bh_sampling_read(desc, b, sizes[c], &flags, &size);

	k->reads++;
	if (n == BH_NO_ACTION && k->prev.part == ~0u) { /* nothing written yet */
		k->empty++;
		return;
	}
	if (n == BH_INVALID_PARAM) { /* the port closed: its partition is restarting */
		k->closed++;
		return;
	}
	struct header h;
	__builtin_memcpy(&h, b, sizeof(h));
	unsigned bad = n != (long)sizes[c] || size != sizes[c] || h.part >= MAXP || h.vcpu >= MAXV;
	unsigned char fill = fill_of(h);
	for (unsigned i = sizeof(h); !bad && i < sizes[c]; i++)
		bad = b[i] != fill ? i : 0;
	if (bad) {
		if (k->torn++ < 5)
			bh_printf("samplestress: TORN reader %u.%u on %s: rc %ld size %u, writer %u.%u inc %u "
				  "number %u, at %u\n", me, vcpu, rnames[r], n, size, h.part, h.vcpu, h.inc,
				  h.number, bad);
		return;
	}
	u64 *l = &last[vcpu][c][h.part * MAXV + h.vcpu], v = (u64)h.inc << 32 | h.number;
	if (v < *l) {
		if (k->stale++ < 5)
			bh_printf("samplestress: STALE reader %u.%u on %s: writer %u.%u inc %u number %u after "
				  "inc %u number %u\n", me, vcpu, rnames[r], h.part, h.vcpu, h.inc, h.number,
				  (unsigned)(*l >> 32), (unsigned)*l);
	}
	*l = v > *l ? v : *l;
	if (h.part != k->prev.part || h.vcpu != k->prev.vcpu || h.inc != k->prev.inc ||
	    h.number != k->prev.number)
		k->changes++;
	k->prev = h;
}

static void chaos(void)
{
	u64 period = bh_test_param("p_chaos"), victims = bh_test_param("p_victims");
	u64 count = bh_test_param("p_count");
	unsigned done = 0;

	for (unsigned id = 0; done < count; id = (id + 1) % MAXP) {
		if (!(victims >> id & 1))
			continue;
		bh_sleep_ns(period);
		long rc = bh_partition_ctl(BH_PARTITION_RESTART, id, BH_RESET_COLD);
		if (rc != BH_OK)
			bh_printf("samplestress: chaos restart of %u: %ld\n", id, rc);
		done++;
	}
	bh_printf("samplestress: chaos done, %u restarts\n", done);
	bh_test_report("chaos_done", 1, "");
}

static void run(unsigned vcpu)
{
	int w[2], rd[3];
	unsigned readers = 0, writers = 0, number = 0, round = 0, reported = 0;
	u64 sleep = bh_test_param("p_sleep"), every = bh_test_param("p_every");
	u64 changes = bh_test_param("p_changes") ? bh_test_param("p_changes") : CHANGES;
	struct counts k = { .prev = { ~0u, ~0u, ~0u, ~0u } };

	if (bh_test_param("p_chaos")) {
		if (vcpu == 0)
			chaos();
		for (;;)
			bh_idle();
	}
	for (unsigned r = 0; r < 3; r++) {
		struct bh_port_info info = { 0 };
		if (bh_port_info(rnames[r], &info) == BH_OK)
			sizes[rchan[r]] = info.max_message_size;
	}
	for (unsigned c = 0; c < 2; c++) {
		struct bh_port_info info = { 0 };
		if (bh_port_info(wnames[c], &info) == BH_OK)
			sizes[c] = info.max_message_size;
		long d = bh_port_open(wnames[c]);
		w[c] = d >= 0 ? (int)d : -1;
		writers += d >= 0;
	}
	for (unsigned r = 0; r < 3; r++) {
		long d = bh_port_open(rnames[r]);
		rd[r] = d >= 0 ? (int)d : -1;
		readers += d >= 0;
	}
	for (;;) {
		for (unsigned c = 0; c < 2; c++)
			if (w[c] >= 0)
				write_one(w[c], c, vcpu, number);
		number++;
		for (unsigned r = 0; r < 3; r++)
			if (rd[r] >= 0)
				read_one(rd[r], r, vcpu, &k);
		if (readers && !reported && (k.changes >= changes || k.reads >= READS)) {
			reported = 1;
			bh_printf("BHSTAT samplestress reader %u.%u: reads %u torn %u stale %u changes %u "
				  "empty %u closed %u inc %u\n", me, vcpu, k.reads, k.torn, k.stale, k.changes,
				  k.empty, k.closed, incarnation);
			char name[16] = "p0_v0_done";
			name[1] = (char)('0' + me);
			name[4] = (char)('0' + vcpu);
			bh_test_report(name, k.torn == 0 && k.stale == 0 && k.changes >= changes, "");
		}
		if (!readers && !writers) {
			bh_puts("samplestress: no ports");
			for (;;)
				bh_idle();
		}
		if (every && ++round % every == 0)
			bh_sleep_ns(sleep);
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind;
	me = bh_partition_id();
	incarnation = restarts;
	for (unsigned v = 1; v < MAXV; v++)
		bh_vcpu_start(v);
	run(vcpu);
	return 0;
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	run(vcpu);
}
