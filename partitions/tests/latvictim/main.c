/* latvictim: measures its own lateness against the plan while the hostile neighbour
 * (partitions/tests/hostile) attacks, one attack per time window (hostile/attacks.h).
 *
 * - On a cyclic core (BH_HC_PLAN_STATUS answers) it has a slot every VICTIM_SLOT_PERIOD from
 *   VICTIM_SLOT_OFFSET in the major frame, right after a slot of the neighbour (back to back,
 *   no gaps; tests/system/configs/lat_cyclic.yaml). It spins reading the counter; a jump in the
 *   counter is a resumption, and its lateness is the resumption minus the planned start of the
 *   slot (frame start from the hypervisor + the slot's offset from the description).
 * - Otherwise (fixed-priority or EDF core, where it outranks the neighbour), or when the
 *   description gives it a port `timer_mode` with a refresh period (bh_test_param: in a system
 *   with cyclic plans on other cores), it sleeps on its virtual timer until absolute deadlines
 *   VICTIM_SLOT_PERIOD apart and takes the wake-up minus the deadline.
 * - When the description gives it a sampling port `phase` (tests/system/configs/stressng_lat.yaml),
 *   its neighbour is a Linux partition that names what it does there (`bhport write phase quiet`,
 *   then `cpu`, `timers`, ...: at most PHASE_NAME_MAX letters, the last one `done`). Its windows are
 *   those phases instead of hostile's attacks: each sample counts in the phase last written before
 *   its slot start or wake-up, a phase's line is printed when the next one begins, and it measures
 *   until `done`. Every phase of the neighbour is thus compared with its quiet one, in one system.
 * For each window it prints
 *   BHLATE <mode> <attack or phase> max <ticks> min <ticks> n <samples> at <tick>
 * in counter ticks (16 ns), then BHLATE-DONE; `at` is the planned instant of the worst sample
 * (counter ticks since power-on), which finds it again in an instruction profile
 * (bench/profile.py --at: under -icount the run is deterministic). Lateness includes the victim's own constant
 * path to its first counter read. */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"
#include "../hostile/attacks.h"

#define GAP_TICKS 16ull             /* a longer jump between two reads: it was switched out */
#define CNTV_ENABLE 1ul
#define PHASE_PORT "phase"
#define PHASE_NAME_MAX 15u

struct window_stat {
	unsigned long long max, min, n;
	unsigned long long worst_at; /* the planned instant of the sample max came from */
};

static struct window_stat stats[ATTACK_COUNT];

/* Phase mode: the port, the phase in progress (its name as written, "" before the first) and
 * where its samples go (stats[0]: attack windows are not used then). */
static long phase_port = -1;
static char phase[PHASE_NAME_MAX + 1];
static int phases_done; /* the neighbour wrote `done` */

static const char *mode = "timer";

/* Phase names, NUL-padded to the whole buffer. */
static int same_name(const char *a, const char *b)
{
	for (unsigned i = 0; i <= PHASE_NAME_MAX; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static const char done_name[PHASE_NAME_MAX + 1] = "done";

static void print_window(const char *name, const struct window_stat *w)
{
	bh_printf("BHLATE %s %s max %llu min %llu n %llu at %llu\n", mode, name, w->max, w->min,
		  w->n, w->worst_at);
}

/* Reads the neighbour's phase; when it names another one, the ended phase's line is printed
 * (in this partition's own slot) and its samples start again from none. */
static void read_phase(void)
{
	char text[PHASE_NAME_MAX + 1] = "";
	long n = bh_sampling_read((int)phase_port, text, PHASE_NAME_MAX, 0, 0);

	if (n <= 0 || same_name(text, phase))
		return;
	if (phase[0] && stats[0].n)
		print_window(phase, &stats[0]);
	stats[0] = (struct window_stat){ 0 };
	for (unsigned i = 0; i <= PHASE_NAME_MAX; i++)
		phase[i] = text[i];
	phases_done = same_name(phase, done_name);
}

/* The window a sample due at `planned` belongs to (-1: none): in phase mode the phase last
 * written, read after the sample's counter value so that the read costs it nothing. */
static int window_of(unsigned long long planned)
{
	if (phase_port < 0)
		return attack_at(planned);
	read_phase();
	return phase[0] && !phases_done ? 0 : -1;
}

/* Whether to go on measuring at counter value t. */
static int measuring(unsigned long long t)
{
	return phase_port < 0 ? t < ATTACK_END : !phases_done;
}

static void record(unsigned long long planned, unsigned long long t)
{
	int a = window_of(planned);

	if (a < 0 || t < planned)
		return;
	struct window_stat *w = &stats[a];
	unsigned long long late = t - planned;
	if (!w->n || late > w->max) {
		w->max = late;
		w->worst_at = planned;
	}
	if (!w->n || late < w->min)
		w->min = late;
	w->n++;
}

/* The planned start of the victim slot that holds t, given the frame start f0 (any frame
 * start: the plan repeats every major frame, which is a multiple of the slot period). */
static unsigned long long planned_slot_start(unsigned long long f0, unsigned long long t)
{
	unsigned long long k = (t - f0 - VICTIM_SLOT_OFFSET) / VICTIM_SLOT_PERIOD;
	return f0 + VICTIM_SLOT_OFFSET + k * VICTIM_SLOT_PERIOD;
}

static void measure_cyclic(unsigned long long f0)
{
	unsigned long long prev = bh_counter(), t;

	while (measuring(prev)) {
		t = bh_counter();
		/* Only a gap across a planned slot start is a slot start; a shorter one (the
		 * hypervisor taking an interrupt inside the slot) is not what is measured here. */
		if (t - prev > GAP_TICKS) {
			unsigned long long planned = planned_slot_start(f0, t);
			if (prev < planned)
				record(planned, t);
		}
		prev = t;
	}
}

/* Armed again before every wait: an interrupt of an earlier deadline that arrives after
 * this one was armed (the default handler disables the timer) must not leave it unarmed. */
static void sleep_until_tick(unsigned long long at)
{
	while (bh_counter() < at) {
		__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
				 : : "r"(at), "r"(CNTV_ENABLE) : "memory");
		bh_idle();
		bh_irq_poll();
	}
}

/* The base of its due instants: ATTACK_T0, or on an EDF core the one its neighbour publishes
 * (attacks.h), waited for until shortly before the attacks start. */
static unsigned long long due_base(void)
{
	long port = bh_port_open(EDF_PHASE_PORT);
	unsigned long long base = 0;

	if (port < 0)
		return ATTACK_T0;
	while (bh_sampling_read((int)port, &base, sizeof(base), 0, 0) != sizeof(base)) {
		if (bh_counter() + VICTIM_SLOT_PERIOD > ATTACK_T0) {
			bh_puts("latvictim: no edf_phase from the neighbour");
			return ATTACK_T0;
		}
		sleep_until_tick(bh_counter() + VICTIM_SLOT_OFFSET);
	}
	bh_printf("latvictim: due from %llu (edf_phase)\n", base);
	return base;
}

static void measure_timer(void)
{
	unsigned long long at = due_base() + VICTIM_SLOT_OFFSET;

	for (; measuring(at); at += VICTIM_SLOT_PERIOD) {
		sleep_until_tick(at);
		record(at, bh_counter());
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long f0_ns;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	phase_port = bh_port_open(PHASE_PORT);
	if (!bh_test_param("timer_mode") && bh_plan_frame_start(&f0_ns) == BH_OK) {
		mode = "cyclic";
		measure_cyclic(bh_ns_to_ticks(f0_ns));
	} else {
		measure_timer();
	}
	for (int a = 0; phase_port < 0 && a < ATTACK_COUNT; a++)
		print_window(attack_names[a], &stats[a]);
	bh_puts("BHLATE-DONE");
	for (;;)
		bh_idle();
}
