/* Benchmark `partition_switch`: the cost of a partition context switch on a cyclic core.
 *
 * bench/switch.yaml runs two copies of this image on core 0: partition 0 (A) in the slot
 * [0, 500us) and partition 1 (B, a system partition) in [500us, 1ms) of a 1 ms major frame,
 * back to back, with every other core idle. Both spin reading the counter; two consecutive
 * reads further apart than GAP_TICKS mean the partition was preempted and has just resumed.
 * Its planned resume instant is its slot start, k major frames after the frame start that
 * BH_HC_PLAN_STATUS returned.
 *
 * Slot start latency (the planned instant -> the resumed partition's first instruction):
 *   tick:  16 * R - planned, R the counter value of the first read after resuming, so a
 *          multiple of 16 (the counter resolution), as a plain counter read sees it;
 *   exact: the instruction time of that read, recovered by a stamp (bench.h) right after it.
 * A partition resumes where it was preempted, anywhere in the 5-instruction loop, so it
 * executes 1 to 5 instructions up to and including the read. The padding before each spin
 * shifts the loop's phase by one instruction per frame, so over every 5 frames the partition
 * is preempted once just before the read: then the read is its first instruction, and
 * min(exact) - 1 (the read itself) is the latency.
 *
 * Lead (the outgoing partition's slot end - its last instruction): the hypervisor may stop a
 * partition before its slot ends (a cyclic core decides ahead of the boundary). The last read
 * before the gap, 16 * L, against the end of the partition's previous slot (the planned
 * resume - 500 us); its minimum is exact when the preempting timer fires on a tick boundary,
 * as a timer deadline does, and the read happened to be the last instruction (the padding
 * makes sure some frame has that phase). Lead + latency = the core time one switch costs.
 *
 * B reports the A -> B latency and its own (B -> A) lead, A the B -> A latency and the A -> B
 * lead; bench/run.py adds A's lead to B's latency.
 */
#include "bench.h"

#define FRAME_NS   1000000ull   /* bench/switch.yaml: major frame */
#define SLOT_B_NS  500000ull    /* start of B's slot; A's starts at 0 */
#define SLOT_NS    500000ull    /* length of either slot */
#define RESUMES    100u         /* frames measured */
#define GAP_TICKS  100          /* > 1.6 us between two reads: preempted */
#define LOOP_LEN   5            /* instructions per spin iteration */
#define READ_TO_STAMP 5         /* loop read -> first stamp read: sub, mov, cmp, b.ls, mrs */
#define READ_COST  1            /* the read instruction itself */

struct resume {
	unsigned long long read;       /* the loop read that saw the gap */
	unsigned long long last;       /* the read before it, the last one before the preemption */
	struct bench_reads s;          /* the stamp right after it */
};

/* Spins until preempted; pad (0..LOOP_LEN-1) extra instructions before the loop shift its
 * phase. One asm block, so the distance from the loop read to the stamp is fixed. */
static void spin_until_resumed(struct resume *out, unsigned long pad)
{
	unsigned long long cur, prev, d;
	struct bench_reads s;

	__asm__ volatile(
		"adr	x9, 3f\n\t"
		"sub	x9, x9, %[pad], lsl #2\n\t"
		"br	x9\n\t"
		"nop\n\tnop\n\tnop\n\tnop\n"
		"3:\n\t"
		"mrs	%[prev], cntvct_el0\n"
		"1:\n\t"
		"mrs	%[cur], cntvct_el0\n\t"
		"sub	%[d], %[cur], %[prev]\n\t"
		"mov	%[prev], %[cur]\n\t"
		"cmp	%[d], #" BENCH_STR(GAP_TICKS) "\n\t"
		"b.ls	1b\n\t"
		"mrs %[s0], cntvct_el0\n\tmrs %[s1], cntvct_el0\n\t"
		"mrs %[s2], cntvct_el0\n\tmrs %[s3], cntvct_el0\n\t"
		"mrs %[s4], cntvct_el0\n\tmrs %[s5], cntvct_el0\n\t"
		"mrs %[s6], cntvct_el0\n\tmrs %[s7], cntvct_el0\n\t"
		"mrs %[s8], cntvct_el0\n\tmrs %[s9], cntvct_el0\n\t"
		"mrs %[s10], cntvct_el0\n\tmrs %[s11], cntvct_el0\n\t"
		"mrs %[s12], cntvct_el0\n\tmrs %[s13], cntvct_el0\n\t"
		"mrs %[s14], cntvct_el0\n\tmrs %[s15], cntvct_el0"
		: [cur] "=&r"(cur), [prev] "=&r"(prev), [d] "=&r"(d),
		  [s0] "=&r"(s.r[0]), [s1] "=&r"(s.r[1]), [s2] "=&r"(s.r[2]), [s3] "=&r"(s.r[3]),
		  [s4] "=&r"(s.r[4]), [s5] "=&r"(s.r[5]), [s6] "=&r"(s.r[6]), [s7] "=&r"(s.r[7]),
		  [s8] "=&r"(s.r[8]), [s9] "=&r"(s.r[9]), [s10] "=&r"(s.r[10]),
		  [s11] "=&r"(s.r[11]), [s12] "=&r"(s.r[12]), [s13] "=&r"(s.r[13]),
		  [s14] "=&r"(s.r[14]), [s15] "=&r"(s.r[15])
		: [pad] "r"(pad)
		: "x9", "cc", "memory");
	out->read = cur;
	out->last = cur - d;
	out->s = s;
}

struct stats {
	unsigned long long tick_min, tick_max, exact_min, exact_max, lead_min;
	unsigned n, bad;
};

static unsigned long long min_u64(unsigned long long a, unsigned long long b)
{
	return a < b ? a : b;
}

static unsigned long long max_u64(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

static void record(struct stats *st, unsigned long long tick, unsigned long long exact,
		   unsigned long long lead)
{
	st->tick_min = st->n ? min_u64(st->tick_min, tick) : tick;
	st->tick_max = st->n ? max_u64(st->tick_max, tick) : tick;
	st->exact_min = st->n ? min_u64(st->exact_min, exact) : exact;
	st->exact_max = st->n ? max_u64(st->exact_max, exact) : exact;
	st->lead_min = st->n ? min_u64(st->lead_min, lead) : lead;
	st->n++;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned role = bench_partition_id();     /* 0 = A, 1 = B */
	unsigned long long slot_start = role ? SLOT_B_NS : 0, frame_start;
	struct stats st = { 0 };
	struct resume r;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (bench_init() || bench_plan_frame_start(&frame_start) < 0) {
		bh_printf("BENCH-ERROR no counter or plan status\n");
		bench_exit();
	}
	for (unsigned k = 0; k < RESUMES; k++) {
		spin_until_resumed(&r, k % LOOP_LEN);
		unsigned long long seen = r.read * BENCH_NS_PER_TICK;
		unsigned long long exact = bench_stamp_decode(&r.s) - READ_TO_STAMP;
		unsigned long long since = seen - frame_start - slot_start;
		unsigned long long planned = frame_start + slot_start + since / FRAME_NS * FRAME_NS;
		unsigned long long own_end = planned - (FRAME_NS - SLOT_NS);
		unsigned long long last = r.last * BENCH_NS_PER_TICK;

		if (exact / BENCH_NS_PER_TICK != r.read || exact < planned || last > own_end) {
			st.bad++;	/* inconsistent: should not happen */
			continue;
		}
		record(&st, seen - planned, exact - planned, own_end - last);
	}
	if (st.bad || !st.n) {
		bh_printf("BENCH-ERROR %u inconsistent stamps of %u resumes\n", st.bad, RESUMES);
		bench_exit();
	}
	bh_printf("BENCH-INFO %s resumes %u: after the slot start tick %llu..%llu exact %llu..%llu; "
		  "own slot end - last read >= %llu\n", role ? "A->B" : "B->A", st.n, st.tick_min,
		  st.tick_max, st.exact_min, st.exact_max, st.lead_min);
	if (role) {
		bench_report("partition_switch", st.tick_min - READ_COST, "cycles");
		bench_report("partition_switch_max", st.tick_max - READ_COST, "cycles");
		bench_report("partition_switch_exact", st.exact_min - READ_COST, "cycles");
		bench_report("partition_switch_back_lead", st.lead_min, "cycles");
		bh_printf("BENCH-DONE\n");
		bench_exit();
	}
	bench_report("partition_switch_back_exact", st.exact_min - READ_COST, "cycles");
	bench_report("partition_switch_lead", st.lead_min, "cycles");
	for (;;)	/* A keeps the slot busy until B halts the system */
		spin_until_resumed(&r, 0);
}
