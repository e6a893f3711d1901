/* samplecheck: sampling reads stay whole while the source writes without pause, on real parallel
 * cores (tests/system/configs/sample_race.yaml, without -icount). The partition with port s_out
 * writes 4 KiB messages back to back from each of its vCPUs, each message filled with one byte
 * derived from its writer and number; the one with s_in reads with each of its vCPUs, each on a
 * core of its own, and checks that every message is whole (no byte of another write) and never
 * older than the last it read from the same writer. Each reader reads until it has seen CHANGES
 * different messages and prints its counts. */
#include "bhtest.h"

#define SIZE     4096u
#define CHANGES  5000u     /* each reader reads until it has seen this many messages */
#define READS    4000000u  /* or this many reads: the writers hardly ran */
#define VCPUS    2u

struct header {
	unsigned writer, number;
};

static unsigned char fill_of(struct header h)
{
	return (unsigned char)(h.number * 7u + h.writer * 101u + 1u);
}

static unsigned long long wbuf[VCPUS][SIZE / 8];
static unsigned char rbuf[VCPUS][SIZE] __attribute__((aligned(16)));

static void write_forever(int port, unsigned vcpu)
{
	unsigned long long *b = wbuf[vcpu];

	for (unsigned n = 0;; n++) {
		struct header h = { vcpu, n };
		unsigned long long fill = fill_of(h) * 0x0101010101010101ull;
		for (unsigned i = 0; i < SIZE / 8; i++)
			b[i] = fill;
		__builtin_memcpy(b, &h, sizeof(h));
		long rc = bh_sampling_write(port, b, SIZE);
		if (rc != BH_OK) {
			bh_printf("samplecheck: write %u of vcpu %u: %ld\n", n, vcpu, rc);
			return;
		}
	}
}

/* The first byte after the header that is not the message's fill, or SIZE. */
static unsigned torn_at(const unsigned char *b)
{
	struct header h;

	__builtin_memcpy(&h, b, sizeof(h));
	unsigned char fill = fill_of(h);
	for (unsigned i = sizeof(h); i < SIZE; i++)
		if (b[i] != fill)
			return i;
	return SIZE;
}

static void read_and_check(int port, unsigned vcpu)
{
	unsigned char *b = rbuf[vcpu];
	unsigned last[VCPUS] = { 0 }, torn = 0, stale = 0, changes = 0, empty = 0, shortfall = 0;
	struct header prev = { ~0u, ~0u };

	unsigned r = 0;
	for (; r < READS && changes < CHANGES; r++) {
		unsigned flags = 0, size = 0;
		long n = bh_sampling_read(port, b, SIZE, &flags, &size);
		if (n != (long)SIZE || size != SIZE) {
			/* Nothing written yet, or (once a message was read: the channel never empties)
			 * a read that failed or came short, which the race must never cause. */
			if (prev.writer == ~0u)
				empty++;
			else if (shortfall++ < 3)
				bh_printf("samplecheck: reader %u: read returned %ld, length %u\n", vcpu, n, size);
			continue;
		}
		struct header h;
		__builtin_memcpy(&h, b, sizeof(h));
		if (h.writer >= VCPUS || torn_at(b) != SIZE) {
			if (torn++ < 3)
				bh_printf("samplecheck: reader %u: message %u of writer %u torn at byte %u\n",
					  vcpu, h.number, h.writer, torn_at(b));
			continue;
		}
		if (h.number < last[h.writer])
			stale++;
		last[h.writer] = h.number;
		if (h.writer != prev.writer || h.number != prev.number)
			changes++;
		prev = h;
	}
	bh_printf("BHSTAT samplecheck reader %u: reads %u torn %u stale %u changes %u empty %u short %u\n",
		  vcpu, r, torn, stale, changes, empty, shortfall);
	bh_test_report(vcpu ? "reader_1_done" : "reader_0_done", torn == 0 && stale == 0 && shortfall == 0,
		       "");
}

static void run(unsigned vcpu)
{
	long out = bh_port_open("s_out"), in = bh_port_open("s_in");

	if (out >= 0)
		write_forever((int)out, vcpu);
	else if (in >= 0)
		read_and_check((int)in, vcpu);
	else
		bh_puts("samplecheck: no port s_out or s_in");
	for (;;)
		bh_idle();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	for (unsigned v = 1; v < VCPUS; v++)
		bh_vcpu_start(v);
	run(vcpu);
	return 0;
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind, (void)restarts;
	run(vcpu);
}
