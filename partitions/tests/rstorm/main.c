/* rstorm: restart storms (tests/system/configs/campaign_restart.yaml, test_campaign.py), by id:
 *   0 storm:  vCPU 0 (core 1) and vCPU 1 (core 2). Every boot checks that its fresh memory is
 *             fresh (.bss zero, vCPU 1's receive buffer untouched for a while although the
 *             peer keeps sending: a receive wait surviving the restart would write it), that
 *             nothing else of the last incarnation survived (ports, vCPU 1, its timer), that
 *             the restart count is the one it expects, then opens its ports, arms a periodic
 *             BH_HC_SET_TIMER, starts vCPU 1 (by BH_HC_VCPU_CTL or PSCI CPU_ON; it blocks in
 *             BH_HC_QUEUING_RECEIVE_WAIT), sends,
 *             and cold-restarts itself at a pseudo-random moment, `count` times (the refresh
 *             period of its port `count`, in ns). Counters survive in memory outside its image.
 *   1 peer:   core 3, system partition: sends to the storm and receives from it all along,
 *             measures its own 1 ms timer against the plan (deadlines at PEER_AT_NS in each
 *             major frame, while the other cores idle), and tells chaos when it is done.
 *   2 chaos:  core 0, system partition: suspends, resumes, halts and cold-restarts the storm at
 *             pseudo-random moments, and checks its status after each (restarts only grow,
 *             by exactly the restarts it made plus the storm's own); ends the run once the
 *             peer is done. */
#include "bhtest.h"

typedef unsigned long long u64;

#define STORM 0u
#define PEER 1u
#define CHAOS 2u
#define RAM_BASE 0x40000000ul
#define PERSIST (RAM_BASE + 0x300000ul) /* outside the image: survives a cold restart */
#define PERSIST_MAGIC 0x5253544f524d3031ull
#define FRESH_WORDS (64 * 1024 / 8)
#define WATCH_NS 200000ull  /* how long a fresh boot watches vCPU 1's buffer */
#define PERIOD_NS 1000000ll
#define PEER_LATE_MAX_NS 2000ll
#define PEER_AT_NS 900000ll /* in the 1 ms major frame; the others run in its first 500 us */
#define CNTV_CTL_ENABLE 1ul

struct persist {
	u64 magic, boots, bss_dirty, rx_dirty, count_wrong, inherited, sent, last_restarts, skips;
	u64 start_failed;
};

static volatile u64 fresh[FRESH_WORDS]; /* must read zero after every cold restart */
static volatile unsigned char rxbuf[64]; /* vCPU 1's receive-wait buffer */
static volatile unsigned stop_vcpu1;

static struct persist *persist(void) { return (struct persist *)PERSIST; }
static void relax(void) { __asm__ volatile("yield" ::: "memory"); }

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
		relax();
}

/* --- storm ------------------------------------------------------------------------------- */

static int bss_is_zero(void)
{
	for (unsigned i = 0; i < FRESH_WORDS; i++)
		if (fresh[i])
			return 0;
	return 1;
}

/* Nobody may write vCPU 1's buffer before vCPU 1 runs again (the peer keeps sending). */
static int rx_untouched_for(u64 ns)
{
	u64 end = bh_now_ns() + ns;

	while (bh_now_ns() < end) {
		for (unsigned i = 0; i < sizeof(rxbuf); i++)
			if (rxbuf[i])
				return 0;
		relax();
	}
	return 1;
}

static void storm_report(const struct persist *p, unsigned restarts)
{
	char d[128];

	bh_printf("BHSTAT storm_restarts %u\nBHSTAT storm_sent %llu\nBHSTAT storm_restart_skips %llu\n",
		  restarts, p->sent, p->skips);
	bh_snprintf(d, sizeof(d), "%llu of %llu boots found .bss dirty", p->bss_dirty, p->boots);
	bh_test_report("storm_fresh_bss_zero", p->bss_dirty == 0, d);
	bh_snprintf(d, sizeof(d), "%llu boots saw a message land in fresh memory", p->rx_dirty);
	bh_test_report("storm_no_message_into_fresh_memory", p->rx_dirty == 0, d);
	bh_printf("BHSTAT storm_inherited %llu\n", p->inherited);
	bh_snprintf(d, sizeof(d), "%llu of %llu boots inherited an open port, a doorbell, a running "
		    "vCPU or a timer", p->inherited, p->boots);
	bh_test_report("storm_nothing_inherited", p->inherited == 0, d);
	bh_snprintf(d, sizeof(d), "%llu of %llu boots could not start vCPU 1", p->start_failed,
		    p->boots);
	bh_test_report("storm_vcpu1_started", p->start_failed == 0, d);
	bh_snprintf(d, sizeof(d), "%llu boots with an unexpected restart count", p->count_wrong);
	bh_test_report("storm_restart_count_consistent", p->count_wrong == 0, d);
	bh_test_summary();
}

static volatile unsigned timer_hits; /* BH_VIRQ_TIMER taken before this boot armed one */
static void count_timer(unsigned intid) { (void)intid; timer_hits = timer_hits + 1; }

/* The boot checks: fresh memory, the restart count against what the storm and chaos did, and
 * nothing inherited from the previous incarnation (leaks): no port open, no doorbell, vCPU 1
 * not running, and its 100 us BH_HC_SET_TIMER no longer firing (watched for 200 us). */
static void check_boot(struct persist *p, unsigned boot_kind, unsigned restarts)
{
	unsigned long long ports = 0, rung = 0;
	unsigned vcpu1 = BH_VCPU_STATE_HALTED;

	if (boot_kind == BH_BOOT_COLD || p->magic != PERSIST_MAGIC)
		*p = (struct persist){ .magic = PERSIST_MAGIC };
	else
		p->boots++;
	/* One more than the last boot's, or more where chaos halted restarts under way (they count
	 * too): test_campaign.py bounds these skips by the halts chaos made. Checked first, as a
	 * restart may end this boot at any point. */
	p->count_wrong += p->boots ? restarts <= p->last_restarts : restarts != 0;
	p->skips += p->boots && restarts > p->last_restarts ? restarts - p->last_restarts - 1 : 0;
	p->last_restarts = restarts;
	bh_irq_set_handler(BH_VIRQ_TIMER, count_timer);
	bh_port_ready(&ports, &rung);
	bh_vcpu_status(1, &vcpu1, 0);
	p->bss_dirty += !bss_is_zero();
	p->rx_dirty += !rx_untouched_for(WATCH_NS);
	bh_irq_poll();
	p->inherited += ports || rung || vcpu1 != BH_VCPU_STATE_HALTED || timer_hits;
}

/* vCPU 1 starts by Bulkhead's call or by PSCI CPU_ON (HVC), every other boot: a restart must
 * find it stopped either way. */
static long start_vcpu1(unsigned restarts)
{
	extern char _start[];

	if (restarts % 2)
		return bh_hvc(BH_PSCI_CPU_ON, 1, (unsigned long)_start, 0, 0, 0).x0;
	return bh_vcpu_start(1);
}

_Noreturn static void storm(unsigned boot_kind, unsigned restarts)
{
	struct persist *p = persist();
	u64 count = bh_test_param("count");

	check_boot(p, boot_kind, restarts);
	if (restarts >= count) {
		int done = bh_port_open("done_out");
		storm_report(p, restarts);
		bh_sampling_write(done, "d", 1);
		bh_halt_self();
	}
	int out = bh_port_open("out");
	for (unsigned i = 0; i < FRESH_WORDS; i += 512)
		fresh[i] = i + 1; /* dirty the memory the next boot must find clean */
	bh_set_timer(BH_CLOCK_HW, bh_now_ns() + 100000, 100000);
	p->start_failed += start_vcpu1(restarts) != 0; /* PSCI_SUCCESS and BH_OK are 0 */
	u64 r = mix(restarts), until = bh_now_ns() + r % 500000;
	while (bh_now_ns() < until) {
		u64 msg = restarts;
		p->sent += bh_queuing_send(out, &msg, sizeof(msg)) == BH_OK;
		spin_ns(10000);
	}
	bh_reset_self(BH_RESET_COLD);
	bh_halt_self();
}

/* vCPU 1: waits for messages until the restart stops it. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	int in = bh_port_open("in");
	unsigned length;

	(void)vcpu, (void)boot_kind, (void)restarts;
	while (!stop_vcpu1) {
		if (bh_queuing_receive_wait(in, (void *)rxbuf, sizeof(rxbuf), &length) < 0)
			bh_irq_poll();
	}
	for (;;)
		__asm__ volatile("wfi");
}

/* --- peer ---------------------------------------------------------------------------------- */

static volatile unsigned ticks, missed;
static long long deadline, late_max;

static void vtimer_arm(long long at)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_ns_to_ticks((u64)at)), "r"(CNTV_CTL_ENABLE) : "memory");
}

static void on_tick(unsigned intid)
{
	long long now = (long long)bh_now_ns(), late = now - deadline;

	(void)intid;
	if (late > late_max)
		late_max = late;
	ticks = ticks + 1;
	for (deadline += PERIOD_NS; deadline <= now; deadline += PERIOD_NS)
		missed = missed + 1;
	vtimer_arm(deadline);
}

_Noreturn static void peer(void)
{
	int to = bh_port_open("to_storm"), from = bh_port_open("from_storm");
	int done = bh_port_open("done_in");
	u64 seq = 0, got = 0, msg;
	char c, d[128];

	unsigned long long frame_start = 0;
	bh_plan_status(0, 0, 0, &frame_start);
	bh_irq_set_handler(BH_VIRQ_VTIMER, on_tick);
	deadline = (long long)frame_start + 2 * PERIOD_NS + PEER_AT_NS;
	vtimer_arm(deadline);
	bh_irq_enable();
	while (bh_sampling_read(done, &c, 1, 0, 0) != 1) {
		seq += bh_queuing_send(to, &seq, sizeof(seq)) == BH_OK;
		while (bh_queuing_receive(from, &msg, sizeof(msg), 0) == sizeof(msg))
			got++;
		spin_ns(5000);
	}
	bh_irq_disable();
	bh_printf("BHSTAT peer_sent %llu\nBHSTAT peer_received %llu\nBHSTAT peer_ticks %u\n"
		  "BHSTAT peer_missed %u\nBHSTAT peer_lateness_max_ns %lld\n", seq, got, ticks,
		  missed, late_max);
	bh_snprintf(d, sizeof(d), "%u activations, %u missed, worst %lld ns late (bound %lld)",
		    ticks, missed, late_max, PEER_LATE_MAX_NS);
	bh_test_report("peer_timing_kept", ticks > 0 && missed == 0 && late_max <= PEER_LATE_MAX_NS, d);
	bh_snprintf(d, sizeof(d), "%llu sent, %llu received", seq, got);
	bh_test_report("peer_traffic_flowed", seq > 0 && got > 0, d);
	bh_test_summary();
	bh_sampling_write(bh_port_open("end_out"), "e", 1); /* chaos ends the run */
	bh_halt_self();
}

/* --- chaos --------------------------------------------------------------------------------- */

/* One pseudo-random action on the storm; checks its status after. Returns 0 on inconsistency. */
static unsigned chaos_halts;

static int chaos_step(u64 r, unsigned *last_restarts)
{
	struct bh_partition_status st;
	unsigned op = (unsigned)(r % 5);

	static const unsigned ops[5] = { BH_PARTITION_SUSPEND, BH_PARTITION_RESUME,
					 BH_PARTITION_RESUME, BH_PARTITION_RESTART, BH_PARTITION_HALT };
	long rc = bh_partition_ctl(ops[op], STORM, BH_RESET_COLD);

	if (bh_partition_status(STORM, &st) != BH_OK)
		return 0;
	/* NO_ACTION: nothing to do in the state it was in (a suspend while it restarts). */
	int ok = (rc == BH_OK || (rc == BH_NO_ACTION && op != 3)) && st.restarts >= *last_restarts &&
		 st.vcpu_count == 2 &&
		 (op != 0 || rc != BH_OK || st.state == BH_PARTITION_STATE_SUSPENDED) &&
		 (op != 4 || st.state == BH_PARTITION_STATE_HALTED);
	if (op == 4) { /* a halt ends its incarnation: the next one must find nothing of it */
		chaos_halts++;
		bh_partition_ctl(BH_PARTITION_RESTART, STORM, BH_RESET_COLD);
	}
	*last_restarts = st.restarts;
	if (op == 0) /* never leave it suspended for long */
		bh_partition_ctl(BH_PARTITION_RESUME, STORM, 0);
	return ok;
}

_Noreturn static void chaos(void)
{
	int done = bh_port_open("chaos_done");
	unsigned last = 0, bad = 0, steps = 0;
	char c, d[96];

	for (u64 r = 1; bh_sampling_read(done, &c, 1, 0, 0) != 1; r++, steps++) {
		bad += !chaos_step(mix(r), &last);
		spin_ns(200000 + mix(~r) % 2000000);
	}
	bh_printf("BHSTAT chaos_steps %u\nBHSTAT chaos_halts %u\n", steps, chaos_halts);
	bh_snprintf(d, sizeof(d), "%u of %u actions left an inconsistent status", bad, steps);
	bh_test_report("chaos_status_consistent", bad == 0, d);
	int peer_end = bh_port_open("peer_end");
	while (bh_sampling_read(peer_end, &c, 1, 0, 0) != 1)
		spin_ns(100000);
	bh_test_summary();
	bh_halt_system();
	bh_halt_self();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned id = bh_partition_id();

	(void)vcpu;
	if (id == PEER)
		peer();
	if (id == CHAOS)
		chaos();
	storm(boot_kind, restarts);
}
