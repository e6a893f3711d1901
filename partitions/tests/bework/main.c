/* bework: best-effort vCPUs that check their own state survives migration between cores
 * (tests/system/test_best_effort.py).
 *
 * Every vCPU (all best-effort, up to MAX_WORKERS) works in rounds until WORK_END: it fills x19-x28
 * and v0-v31 with values of its own, spins, and counts the registers that changed (be_spin);
 * it asks the hypervisor which physical core it is on (BH_HC_GET_IDS x3); every IDLE_EVERY
 * rounds it idles until its virtual timer fires. Its virtual timer runs all along: each
 * interrupt is counted and arms the next, VT_PERIOD later, so an interrupt lost, doubled or
 * early across a migration shows in the counts. At the end vCPU 0 reports:
 *
 *   BESTAT vcpu <n> rounds <r> cores <mask> armed <a> fired <f> early <e> bad <b> idles <i>
 *   BHTEST be_registers_kept      no register of any vCPU changed, in any round
 *   BHTEST be_vtimer_interrupts   each vCPU's timer fired exactly as often as it was armed,
 *                                 never before its deadline
 *   BHTEST be_migrated            each vCPU ran on at least `min_cores` cores (a test parameter,
 *                                 bh_test_param; default 2)
 *   BHTEST be_progress            each vCPU did at least MIN_ROUNDS rounds and idled
 */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"

#define MAX_WORKERS 8u
#define WORK_END 5100000ull   /* counter ticks since power-on: 81.6 ms, past latvictim's end */
#define SPIN_ITERS 10000ul    /* about 20 us of spinning per round */
#define VT_PERIOD 9375ull     /* 150 us */
#define IDLE_EVERY 16u
#define MIN_ROUNDS 100u
#define CPACR_FPEN (3ul << 20)
#define CNTV_ENABLE 1ul

unsigned long be_spin(unsigned long seed, unsigned long iterations);

struct worker {
	volatile unsigned long rounds, cores, armed, fired, early, bad, idles;
	volatile unsigned long long deadline;
	volatile unsigned stopping, done;
};

static struct worker workers[MAX_WORKERS];
static unsigned worker_count = 1;

static void fp_enable(void)
{
	__asm__ volatile("msr cpacr_el1, %0\n isb" : : "r"(CPACR_FPEN));
}

static void vtimer_arm(struct worker *w)
{
	unsigned long long at = bh_counter() + VT_PERIOD;

	w->deadline = at;
	w->armed++;
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(at), "r"(CNTV_ENABLE) : "memory");
}

static void vtimer_off(void)
{
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
}

/* With IRQs masked (a handler): count this expiry and arm the next, unless stopping. */
static void vtimer_handler(unsigned intid)
{
	struct worker *w = &workers[bh_vcpu_self()];

	(void)intid;
	w->fired++;
	if (bh_counter() < w->deadline)
		w->early++;
	if (w->stopping)
		vtimer_off();
	else
		vtimer_arm(w);
}

static void note_core(struct worker *w)
{
	struct bh_hc_result r = bh_hvc(BH_HC_GET_IDS, 0, 0, 0, 0, 0);

	if (r.x0 == BH_OK && r.x3 < 64)
		w->cores |= 1ul << r.x3;
}

/* Until the timer has fired once more: the vCPU waits in BH_HC_IDLE, its core goes to others,
 * and whichever core is free when the timer expires takes it. */
static void idle_until_fired(struct worker *w)
{
	unsigned long fired = w->fired;
	unsigned long flags = bh_irq_save();

	while (w->fired == fired) {
		bh_idle();
		bh_irq_poll();
	}
	bh_irq_restore(flags);
	w->idles++;
}

static unsigned long seed_of(unsigned vcpu, unsigned long round)
{
	return (vcpu + 1ul) * 0x0123456789abcdeful ^ round * 0xfedcba9876543210ul;
}

static void work(unsigned vcpu)
{
	struct worker *w = &workers[vcpu];

	fp_enable();
	vtimer_arm(w);
	bh_irq_enable();
	while (bh_counter() < WORK_END) {
		w->bad += be_spin(seed_of(vcpu, w->rounds), SPIN_ITERS);
		note_core(w);
		if (w->rounds % IDLE_EVERY == IDLE_EVERY - 1)
			idle_until_fired(w);
		w->rounds++;
	}
	w->stopping = 1;
	while (w->fired != w->armed) /* the last one armed, within VT_PERIOD */
		idle_until_fired(w);
	bh_irq_disable();
	w->done = 1;
}

static unsigned popcount(unsigned long x)
{
	unsigned n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

static void report(void)
{
	int kept = 1, timers = 1, migrated = 1, progress = 1;
	unsigned long long min_cores = bh_test_param("min_cores");

	if (!min_cores)
		min_cores = 2;
	for (unsigned v = 0; v < worker_count; v++) {
		const struct worker *w = &workers[v];
		bh_printf("BESTAT vcpu %u rounds %lu cores 0x%lx armed %lu fired %lu early %lu bad %lu "
			  "idles %lu\n", v, w->rounds, w->cores, w->armed, w->fired, w->early, w->bad,
			  w->idles);
		kept &= w->bad == 0;
		timers &= w->armed == w->fired && !w->early && w->armed > 1;
		migrated &= popcount(w->cores) >= min_cores;
		progress &= w->rounds >= MIN_ROUNDS && w->idles > 0;
	}
	bh_test_report("be_registers_kept", kept, kept ? "" : "a register changed across a switch");
	bh_test_report("be_vtimer_interrupts", timers, timers ? "" : "timer interrupts lost or early");
	bh_test_report("be_migrated", migrated, migrated ? "" : "a vCPU stayed on one core");
	bh_test_report("be_progress", progress, progress ? "" : "a vCPU made too little progress");
	bh_test_summary();
}

static int all_done(void)
{
	for (unsigned v = 0; v < worker_count; v++)
		if (!workers[v].done)
			return 0;
	return 1;
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind;
	(void)restarts;
	if (vcpu < MAX_WORKERS)
		work(vcpu);
	for (;;)
		bh_idle();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)boot_kind;
	(void)restarts;
	bh_irq_set_handler(BH_VIRQ_VTIMER, vtimer_handler);
	while (worker_count < MAX_WORKERS && bh_vcpu_start(worker_count) == BH_OK)
		worker_count++; /* every vCPU the description gives it */
	work(vcpu);
	while (!all_done()) /* waits for other cores: YIELD lets QEMU's round robin run them */
		__asm__ volatile("yield");
	report();
	bh_puts("BEWORK-DONE");
	for (;;)
		bh_idle();
}
