/* shmbench: the /init of bench/linux_shm.yaml (bench/linux_shm.py), under -icount shift=0: Linux
 * user space against the real-time partition shmpeer (partitions/bench/shmpeer) through the
 * shared region `bulk` and its doorbell, with libbhport (docs/ports.md, "From Linux"): the
 * doorbell is a call through the trapped hypercall page, the answer an edge on the event GPIO's
 * doorbell line, read from a line request kept open (GPIO v2 uAPI) so nothing is lost between
 * rounds; after each edge bhp_port_ready() takes the doorbell, which re-arms it.
 *
 * One instruction is one nanosecond of virtual time, on every core together: Linux's
 * CLOCK_MONOTONIC and the stamps (16 counter reads, as lbench) count both partitions'
 * instructions. Both sides read the same counter (CNTVOFF_EL2 = 0), so the peer's stamps compare
 * with Linux's. The region's layout is partitions/bench/shmpeer/shmbench.h.
 *
 * Output, one line each, on the console (count, total ns, min ns, max ns):
 *   SHMBENCH roundtrip N total min max   Linux rings, the peer rings back, Linux has the edge
 *                                        and has taken the doorbell (CLOCK_MONOTONIC, per round)
 *   SHMBENCH to_peer N total min max     Linux's stamp before its doorbell call to the peer's
 *                                        stamp when its idle hypercall returned, Linux spinning
 *                                        (with YIELD) meanwhile instead of blocking
 *   SHMBENCH to_peer_blocked ...         the same with Linux blocking in read() at once: -icount
 *                                        runs the cores in turns, and Linux's core runs its way
 *                                        to sleep before the peer's core runs
 *   SHMBENCH to_linux N total min max    (Linux blocking) the peer's stamp before its doorbell
 *                                        call to Linux's stamp when read() returned the edge
 *   SHMBENCH write N total min max       BLOCK bytes into the region (aligned 8-byte stores)
 *   SHMBENCH handover N total min max    the same plus the doorbell, the peer's checksum and
 *                                        its answer back in Linux (checksum checked)
 *   SHMBENCH peer_sum N total min max    the peer's checksum of the block alone (its stamps)
 *   SHMBENCH-INFO block BYTES            the block size of the last three
 *   BENCH-DONE, then init powers the machine off. SHMBENCH-ERROR <why> on any failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/gpio.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bhport.h"
#include "shmbench.h"
#include "stamp.h" /* exact instruction times, as every benchmark program takes them */

#define WARMUP 20u
#define PINGS 1000u           /* timed with CLOCK_MONOTONIC */
#define STAMPED 500u          /* one-way legs, with stamps on both sides */
#define BLOCK SHM_DATA_MAX    /* 64 KiB */
#define BLOCKS 20u

/* --- output --------------------------------------------------------------------------------- */

/* What went wrong and the value that shows it (a Bulkhead error is named). */
_Noreturn static void fail(const char *what, long value)
{
	printf("SHMBENCH-ERROR %s: %ld%s%s\n", what, value, value < 0 ? " " : "",
	       value < 0 ? bhp_error_name(value) : "");
	fflush(stdout);
	exit(1);
}

/* A failed system call. */
_Noreturn static void die(const char *what)
{
	printf("SHMBENCH-ERROR %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

struct stat_ns {
	unsigned n;
	unsigned long long total, min, max;
};

static void add(struct stat_ns *s, unsigned long long ns)
{
	if (!s->n || ns < s->min)
		s->min = ns;
	if (ns > s->max)
		s->max = ns;
	s->total += ns;
	s->n++;
}

static void report(const char *name, const struct stat_ns *s)
{
	printf("SHMBENCH %s %u %llu %llu %llu\n", name, s->n, s->total, s->min, s->max);
	fflush(stdout);
}

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* --- the region, the doorbell and its GPIO line ------------------------------------------------ */

static struct bhp_region bulk;
static volatile uint64_t *hdr;
static int line_fd = -1;
static uint64_t seq;

/* A line request for rising edges on the event GPIO's "bulkhead-doorbell" line, kept open. */
static int doorbell_line(void)
{
	glob_t chips;
	int fd = -1;

	if (glob("/dev/gpiochip*", 0, NULL, &chips) != 0)
		return -1;
	for (size_t c = 0; c < chips.gl_pathc && fd < 0; c++) {
		int chip = open(chips.gl_pathv[c], O_RDONLY);
		struct gpiochip_info info;
		if (chip < 0)
			continue;
		for (unsigned i = 0; ioctl(chip, GPIO_GET_CHIPINFO_IOCTL, &info) == 0 &&
				     i < info.lines && fd < 0; i++) {
			struct gpio_v2_line_info line = { .offset = i };
			if (ioctl(chip, GPIO_V2_GET_LINEINFO_IOCTL, &line) != 0 ||
			    strcmp(line.name, "bulkhead-doorbell") != 0)
				continue;
			struct gpio_v2_line_request req = { .offsets = { i }, .num_lines = 1 };
			req.config.flags = GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_EDGE_RISING;
			strcpy(req.consumer, "shmbench");
			if (ioctl(chip, GPIO_V2_GET_LINE_IOCTL, &req) == 0)
				fd = req.fd;
		}
		close(chip);
	}
	globfree(&chips);
	return fd;
}

/* Blocks in read() until the doorbell line's next edge. */
static void wait_edge(void)
{
	struct gpio_v2_line_event event;

	if (read(line_fd, &event, sizeof(event)) != (ssize_t)sizeof(event))
		die("read doorbell line");
}

/* Takes the doorbells (which re-arms them) and checks that bulk's rang. */
static void take_doorbell(void)
{
	unsigned long long rung = 0;
	long rc = bhp_port_ready(NULL, &rung);

	if (rc != BH_OK || !(rung & (1ull << bulk.id)))
		fail("edge without the doorbell of bulk", rc);
}

static void wait_answer(void)
{
	wait_edge();
	take_doorbell();
}

static void ring(void)
{
	long rc = bhp_shm_doorbell(bulk.id);

	if (rc != BH_OK)
		fail("bhp_shm_doorbell", rc);
}

static void request(uint64_t cmd, uint64_t len)
{
	hdr[SHM_CMD] = cmd;
	hdr[SHM_LEN] = len;
	hdr[SHM_SEQ] = ++seq;
	__asm__ volatile("dsb st" ::: "memory"); /* the request (and data) before the doorbell */
}

static void check_ack(void)
{
	if (hdr[SHM_ACK] != seq)
		fail("the peer answered another request", (long)hdr[SHM_ACK]);
}

static void ping(void)
{
	request(SHM_PING, 0);
	ring();
	wait_answer();
	check_ack();
}

/* --- the benchmarks ------------------------------------------------------------------------- */

static void roundtrips(void)
{
	struct stat_ns rt = { 0 };

	for (unsigned i = 0; i < WARMUP; i++)
		ping();
	unsigned long long t = now_ns();
	for (unsigned i = 0; i < PINGS; i++) {
		ping();
		unsigned long long next = now_ns();
		add(&rt, next - t);
		t = next;
	}
	report("roundtrip", &rt);
}

/* Waits, spinning, until the peer has answered: YIELD lets -icount run the peer's core at once
 * (qemu-virt-notes.md), so nothing of Linux's runs between the doorbell and the peer's wake-up. */
static void spin_for_ack(void)
{
	for (unsigned long n = 0; hdr[SHM_ACK] != seq; n++) {
		if (n == 100000000ul)
			fail("no answer from the peer, spins", (long)n);
		__asm__ volatile("yield" ::: "memory");
	}
}

/* STAMPED pings with stamps on both sides. spin: Linux spins after ringing (spin_for_ack), then
 * takes the edge; else it blocks in read() at once, as in a round trip. The peer stores its
 * stamps after ringing back, so they are read after one more ping. */
static void one_way(int spin, struct stat_ns *to_peer, struct stat_ns *to_linux)
{
	static unsigned long long rang[STAMPED], woke[STAMPED];
	uint64_t first = seq + 1;

	if (first + STAMPED > SHM_STAMP_SLOTS)
		fail("too many requests for the stamp table", (long)first);
	for (unsigned i = 0; i < STAMPED; i++) {
		struct bench_reads a, b;
		request(SHM_PING_STAMP, 0);
		BENCH_READ16(a);
		ring();
		if (spin)
			spin_for_ack();
		wait_edge();
		BENCH_READ16(b);
		take_doorbell();
		check_ack();
		rang[i] = bench_stamp_decode(&a);
		woke[i] = bench_stamp_decode(&b);
	}
	ping();
	volatile uint64_t *slots = &hdr[SHM_STAMP_OFFSET / 8];
	for (unsigned i = 0; i < STAMPED; i++) {
		uint64_t peer_woke = slots[2 * (first + i)], peer_rang = slots[2 * (first + i) + 1];
		if (peer_woke <= rang[i] || peer_rang < peer_woke || woke[i] <= peer_rang)
			fail("stamps out of order in round", (long)i);
		add(to_peer, peer_woke - rang[i]);
		add(to_linux, woke[i] - peer_rang);
	}
}

static void one_way_legs(void)
{
	struct stat_ns to_peer = { 0 }, awake = { 0 }, to_peer_blocked = { 0 }, to_linux = { 0 };

	one_way(1, &to_peer, &awake);
	one_way(0, &to_peer_blocked, &to_linux);
	report("to_peer", &to_peer);
	report("to_peer_blocked", &to_peer_blocked);
	report("to_linux", &to_linux);
}

/* Aligned 8-byte stores only: Linux maps the region from /dev/mem as device memory. */
static void copy_block(volatile uint64_t *dst, const unsigned long long *src, size_t words)
{
	for (size_t i = 0; i < words; i += 8) {
		dst[i] = src[i];
		dst[i + 1] = src[i + 1];
		dst[i + 2] = src[i + 2];
		dst[i + 3] = src[i + 3];
		dst[i + 4] = src[i + 4];
		dst[i + 5] = src[i + 5];
		dst[i + 6] = src[i + 6];
		dst[i + 7] = src[i + 7];
	}
}

static void fill(unsigned long long *w, size_t words, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < words; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

static void throughput(void)
{
	static unsigned long long src[BLOCK / 8];
	volatile uint64_t *data = &hdr[SHM_DATA_OFFSET / 8];
	struct stat_ns write = { 0 }, handover = { 0 }, peer = { 0 };

	for (unsigned i = 0; i < BLOCKS; i++) {
		fill(src, BLOCK / 8, i);
		unsigned long long expected = shm_checksum(src, BLOCK / 8);
		unsigned long long t0 = now_ns();
		copy_block(data, src, BLOCK / 8);
		unsigned long long t1 = now_ns();
		request(SHM_SUM, BLOCK);
		ring();
		wait_answer();
		unsigned long long t2 = now_ns();
		check_ack();
		if (hdr[SHM_SUM_RESULT] != expected)
			fail("the peer's checksum differs in block", (long)i);
		add(&write, t1 - t0);
		add(&handover, t2 - t0);
		add(&peer, hdr[SHM_SUM_NS]);
	}
	printf("SHMBENCH-INFO block %u\n", BLOCK);
	report("write", &write);
	report("handover", &handover);
	report("peer_sum", &peer);
}

/* --- set-up --------------------------------------------------------------------------------- */

static void setup(void)
{
	cpu_set_t one;

	if (mkdir("/dev", 0755) && errno != EEXIST)
		die("mkdir /dev");
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) && errno != EBUSY)
		die("mount devtmpfs");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity");
	/* Seed the kernel's RNG first (as lbench does): until then every system call pays for a
	 * ChaCha20 block (its random stack offset). */
	char seed[16];
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		die("getrandom");
	if (bhp_open())
		die("bhp_open");
	long rc = bhp_shm_open("bulk", &bulk);
	if (rc < 0)
		fail("bhp_shm_open bulk", rc);
	if (bulk.info.size < SHM_SIZE || !(bulk.info.rights & BH_SHM_WRITE) || !bulk.info.doorbell)
		fail("region bulk: too small, read-only or without doorbell", (long)bulk.info.size);
	hdr = (volatile uint64_t *)bulk.mem;
	line_fd = doorbell_line();
	if (line_fd < 0)
		die("no bulkhead-doorbell GPIO line");
	/* The peer started long before Linux; wait for it all the same (idle costs nothing). */
	struct timespec ms = { 0, 1000000 };
	for (unsigned i = 0; hdr[SHM_PEER_READY] != SHM_READY_MAGIC; i++) {
		if (i == 5000)
			fail("the peer is not ready, ms", (long)i);
		nanosleep(&ms, NULL);
	}
	bhp_port_ready(NULL, NULL); /* take any stale doorbell: armed */
	struct timespec settle = { 0, 200000000 };
	nanosleep(&settle, NULL); /* let what the boot left behind settle, as lbench */
}

int main(void)
{
	setup();
	roundtrips();
	one_way_legs();
	throughput();
	printf("BENCH-DONE\n");
	fflush(stdout);
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
