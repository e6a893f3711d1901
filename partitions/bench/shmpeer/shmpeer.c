/* shmpeer: the real-time side of the Linux shared-memory benchmark (bench/linux_shm.yaml,
 * bench/linux_shm.py, linux/bench/shmbench.c). Alone on a dedicated core, it blocks in the idle
 * hypercall until Linux rings the doorbell of region `bulk`, does what the region's header asks
 * and rings back:
 *   SHM_PING        nothing (doorbell round trip);
 *   SHM_PING_STAMP  the same, stamping (to the instruction) when it woke from the idle
 *                   hypercall and when it rang back, into slot seq of the stamp table (the
 *                   ring stamp after the ring, so that nothing is added before it);
 *   SHM_SUM         checksums len bytes of the data area (shm_checksum, as Linux computes it)
 *                   and writes the sum, and how long the sum took, into the header.
 * Both sides read the same counter (CNTVOFF_EL2 = 0), so the stamps compare with Linux's.
 * The region's layout is shmbench.h here, which Linux includes too. */
#include "bench.h"
#include "shmbench.h"

#define BULK ((volatile unsigned long long *)0x50000000ul)

static void must(long rc, const char *what)
{
	if (rc < 0) {
		bh_printf("BENCH-ERROR shmpeer: %s failed: %ld\n", what, rc);
		bh_halt_self();
	}
}

/* Takes the doorbells and returns once `bulk`'s rang, without polling: the idle hypercall
 * blocks until BH_VIRQ_DOORBELL is pending. *woke gets the raw stamp taken right after the idle
 * hypercall returned (or on entry, if the doorbell had rung already). */
static void wait_doorbell(unsigned long long bit, struct bench_reads *woke)
{
	unsigned long long rung = 0;

	BENCH_READ16(*woke);
	for (;;) {
		must(bh_port_ready(0, &rung), "port_ready");
		if (rung & bit)
			return;
		bh_idle();
		BENCH_READ16(*woke);
		bh_irq_poll(); /* take the interrupt, so the next idle blocks */
	}
}

static void checksum(volatile unsigned long long *hdr)
{
	const unsigned long long *data = (const unsigned long long *)&BULK[SHM_DATA_OFFSET / 8];
	unsigned long long len = hdr[SHM_LEN];
	struct bench_reads a, b;

	if (len > SHM_DATA_MAX)
		len = 0;
	BENCH_READ16(a);
	unsigned long long sum = shm_checksum(data, len / 8);
	BENCH_READ16(b);
	hdr[SHM_SUM_RESULT] = sum;
	hdr[SHM_SUM_NS] = bench_stamp_decode(&b) - bench_stamp_decode(&a) - BENCH_STAMP_READS;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	volatile unsigned long long *hdr = BULK;
	volatile unsigned long long *stamps = &BULK[SHM_STAMP_OFFSET / 8];
	struct bh_shm_info info;
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;

	if (bench_init() < 0)
		bh_halt_self();
	long region = bh_shm_info("bulk", &info);
	must(region, "shm_info bulk");
	if (info.guest_address != (unsigned long)BULK || info.size < SHM_SIZE) {
		bh_printf("BENCH-ERROR shmpeer: region bulk is not at %p or smaller than %u\n",
			  (void *)BULK, SHM_SIZE);
		bh_halt_self();
	}
	unsigned long long bit = 1ull << region;
	hdr[SHM_PEER_READY] = SHM_READY_MAGIC;
	for (;;) {
		struct bench_reads woke, rang;
		wait_doorbell(bit, &woke);
		__asm__ volatile("dmb ish" ::: "memory"); /* Linux's data before its doorbell */
		unsigned long long cmd = hdr[SHM_CMD], seq = hdr[SHM_SEQ];
		if (cmd == SHM_SUM)
			checksum(hdr);
		hdr[SHM_ACK] = seq;
		__asm__ volatile("dmb ish" ::: "memory"); /* the answer before the doorbell */
		BENCH_READ16(rang);
		must(bh_shm_doorbell((unsigned)region), "doorbell");
		if (cmd == SHM_PING_STAMP && seq < SHM_STAMP_SLOTS) {
			stamps[2 * seq] = bench_stamp_decode(&woke);
			stamps[2 * seq + 1] = bench_stamp_decode(&rang);
		}
	}
}
