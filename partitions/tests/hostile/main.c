/* hostile: a neighbour that attacks the hypervisor's timing. Each window of attacks.h runs one
 * attack back to back until the window ends; then the next. Everything it does is contained
 * by its health actions (ignore), so it goes on; what it costs others is what latvictim
 * measures. Interrupts stay masked throughout. */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "attacks.h"

#define OUTSIDE_IPA 0x80000000ul /* no area of this partition is there */
#define CNTV_ENABLE 1ul

static char newlines[BH_CONSOLE_MAX_WRITE];
static char letters[BH_CONSOLE_MAX_WRITE];

static void vtimer_pending(int on)
{
	/* Compare value 0 with the timer enabled: its condition always holds, so its interrupt
	 * stays pending (never taken: DAIF masked) and every WFI returns at once. */
	__asm__ volatile("msr cntv_cval_el0, xzr\n\tmsr cntv_ctl_el0, %0\n\tisb"
			 : : "r"(on ? CNTV_ENABLE : 0ul) : "memory");
}

static void one_round(enum attack a)
{
	unsigned long v;
	struct bh_partition_status st;

	switch (a) {
	case ATTACK_QUIET:
	case ATTACK_COUNT:
		break;
	case ATTACK_SPIN_MASKED:
		for (int i = 0; i < 64; i++)
			__asm__ volatile("" ::: "memory");
		break;
	case ATTACK_CONSOLE_NL:
		bh_console_write(newlines, sizeof(newlines));
		break;
	case ATTACK_CONSOLE_MAX:
		bh_console_write(letters, sizeof(letters));
		break;
	case ATTACK_HM_RAISE:
		bh_raise_event(0x4057113);
		break;
	case ATTACK_STAGE2:
		v = *(volatile unsigned long *)OUTSIDE_IPA;
		(void)v;
		break;
	case ATTACK_PMU:
		__asm__ volatile("mrs %0, pmcr_el0" : "=r"(v) : : "memory");
		break;
	case ATTACK_DEBUG:
		__asm__ volatile("mrs %0, dbgbvr0_el1" : "=r"(v) : : "memory");
		break;
	case ATTACK_SMC:
		__asm__ volatile("mov x0, #0\n\tsmc #0" : : : "x0", "x1", "x2", "x3", "memory");
		break;
	case ATTACK_WFI:
		__asm__ volatile("wfi" ::: "memory");
		break;
	case ATTACK_WFE:
		__asm__ volatile("wfe" ::: "memory");
		break;
	case ATTACK_HYPERCALLS:
		bh_partition_status(bh_partition_id(), &st);
		break;
	}
}

/* The longest single round of each attack, in counter ticks: the hypervisor path it takes
 * (plus a few instructions of its own), for the lateness bound in docs/performance.md. */
static unsigned long long longest[ATTACK_COUNT];

static void timed_round(enum attack a)
{
	unsigned long long t0 = bh_counter();

	one_round(a);
	unsigned long long d = bh_counter() - t0;
	/* Switched out meanwhile (the round spans another vCPU's time): not one path. */
	if (d > longest[a] && d < ATTACK_WINDOW / 50)
		longest[a] = d;
}

/* Aimed attacks. Where a flood's calls fall against the victim's due instants depends on code
 * layout (everything is deterministic under -icount), so a flood alone finds its worst case
 * by chance. The console attacks therefore also aim one write at each due instant: it starts
 * AIM_FIRST + k % AIM_SPREAD ticks (k: the due instant's number) before the hypervisor must
 * act for the victim (its decision: a lead before the due instant on a cyclic or fixed-priority
 * core, at it on an EDF core), so the victim waits for nearly all of it. The flood stops
 * AIM_GUARD ticks before, longer than a round of it; the newline write first empties its ring
 * (flushing in its own time), where the write that queues the most lines finds room for all of
 * them. */
#define AIM_FIRST  1ull
#define AIM_SPREAD 16ull
#define AIM_GUARD  2500ull /* 40 us */
/* A best-effort hostile (test parameter be_aim, tests/system/configs/be_hostile.yaml) has the
 * core only until BE_LEAD_TICKS (hypervisor/include/sched.h) before the decision for the
 * victim, its be_until: it aims there. */
#define HYP_BE_LEAD_TICKS 400ull

static unsigned long long due_base; /* the frame start on a cyclic core, else ATTACK_T0 */
static unsigned long long lead;     /* how long before a due instant the core decides for it */

static int aimed(enum attack a)
{
	return a == ATTACK_CONSOLE_NL || a == ATTACK_CONSOLE_MAX;
}

/* The instant to start the aimed write for the first due instant after t + AIM_GUARD. */
static unsigned long long next_aim(unsigned long long t)
{
	unsigned long long first = due_base + VICTIM_SLOT_OFFSET, k = 0;

	if (t + AIM_GUARD + lead + AIM_FIRST + AIM_SPREAD > first)
		k = (t + AIM_GUARD + lead + AIM_FIRST + AIM_SPREAD - first) / VICTIM_SLOT_PERIOD + 1;
	return first + k * VICTIM_SLOT_PERIOD - lead - AIM_FIRST - k % AIM_SPREAD;
}

static void aimed_round(enum attack a, unsigned long long aim)
{
	if (a == ATTACK_CONSOLE_NL)
		while (bh_console_flush() > 0 && bh_counter() < aim)
			;
	while (bh_counter() < aim)
		;
	one_round(a);
}

static void attack_window(enum attack a)
{
	unsigned long long end = ATTACK_T0 + ((unsigned long long)a + 1) * ATTACK_WINDOW;
	unsigned long long aim = next_aim(bh_counter());

	if (a == ATTACK_QUIET) {
		bh_sleep_until_ns(bh_ticks_to_ns(end));
		return;
	}
	vtimer_pending(a == ATTACK_WFI);
	while (bh_counter() < end) {
		if (aimed(a) && bh_counter() + AIM_GUARD >= aim) {
			aimed_round(a, aim);
			aim = next_aim(bh_counter());
		} else {
			timed_round(a);
		}
	}
	vtimer_pending(0);
}

/* A counter value where one of its periods started: where it resumes after a gap longer than
 * any interrupt or victim run (its budget used up, until its next period gives it more). */
#define THROTTLE_GAP_TICKS 1562ull /* 25 us; a period leaves it 50 us without budget */

static unsigned long long learn_period_start(void)
{
	unsigned long long prev = bh_counter(), t;

	for (;;) {
		t = bh_counter();
		if (t - prev > THROTTLE_GAP_TICKS)
			return t;
		prev = t;
	}
}

/* The base of the victim's due instants on an EDF core (attacks.h), published to it; 0 with
 * no such channel. */
static unsigned long long edf_due_base(void)
{
	long port = bh_port_open(EDF_PHASE_PORT);

	if (port < 0)
		return 0;
	unsigned long long base = due_base_from_release(learn_period_start());
	if (bh_sampling_write((int)port, &base, sizeof(base)) != BH_OK)
		bh_puts("hostile: edf_phase not written");
	return base;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	for (unsigned i = 0; i < sizeof(newlines); i++) {
		newlines[i] = '\n';
		letters[i] = (char)('a' + i % 26);
	}
	unsigned long long f0_ns;
	if (bh_plan_frame_start(&f0_ns) == BH_OK) { /* a cyclic core: aim at the victim's slots */
		due_base = bh_ns_to_ticks(f0_ns);
		lead = HYP_SLOT_LEAD_TICKS;
	} else {
		due_base = edf_due_base();
		if (!due_base) { /* fixed priority: its wake-ups are led as slots are */
			due_base = ATTACK_T0;
			lead = HYP_FP_LEAD_TICKS;
		}
	}
	if (bh_test_param("be_aim"))
		lead += HYP_BE_LEAD_TICKS;
	bh_puts("hostile: waiting for the first window");
	bh_sleep_until_ns(bh_ticks_to_ns(ATTACK_T0));
	for (int a = 0; a < ATTACK_COUNT; a++)
		attack_window((enum attack)a);
	for (int a = 0; a < ATTACK_COUNT; a++)
		bh_printf("BHROUND %s longest %llu ticks\n", attack_names[a], longest[a]);
	bh_puts("hostile: done");
	for (;;)
		bh_idle();
}
