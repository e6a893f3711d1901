/* Shared helpers of the benchmark programs in partitions/bench/.
 *
 * Everything is measured under QEMU `-icount shift=0`: one guest instruction advances the
 * virtual clock by 1 ns and the counter (CNTVCT_EL0, 62.5 MHz) ticks every 16 ns, so a
 * counter difference is a path length in instructions with a resolution of 16.
 * A stamp (BENCH_READ16 + bench_stamp_decode) removes that quantisation: from 16
 * back-to-back counter reads it recovers the exact instruction time of the first one.
 *
 * A program built from one of these directories runs either as a partition (backend
 * plat_part.c, linked into libbhbench.a) or, for irqlat and cpu, as a bare-metal EL1 program
 * without the hypervisor (backend partitions/bare/bare.c). Both use libbhpart's crt0,
 * vectors and interrupt dispatch, so only the hypervisor differs between the two.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include "bulkhead/bulkhead.h"

/* --- Platform backend ----------------------------------------------------------------- */

/* "partition" or "bare": the suffix of the figures the program prints. */
extern const char bench_platform[];

/* First call of every program: sets the platform up (bare: the GIC distributor and
 * redistributor) and checks the counter frequency; returns 0 or -1 after printing why. */
int bench_init(void);

/* Waits for an interrupt with IRQs in whatever state the caller left them: `wfi`, both in a
 * partition and on bare metal. */
void bench_wait(void);

/* Ends the program after its output: a system partition halts the system, another halts
 * itself; a bare program parks its core (the runner kills QEMU on the DONE line). */
_Noreturn void bench_exit(void);

#define BENCH_STR_(x) #x
#define BENCH_STR(x) BENCH_STR_(x)   /* a macro's value as a string, for inline asm */

/* --- Counter ------------------------------------------------------------------------------ */

#include "stamp.h"

/* Returns 0 if CNTFRQ_EL0 is the 62.5 MHz the stamp decoding assumes, else prints why not. */
int bench_check_counter(void);

/* --- Output ------------------------------------------------------------------------------- */

/* `BENCH <name> <value> <unit>`, collected by bench/run.py. */
void bench_report(const char *name, unsigned long long value, const char *unit);

/* --- Hypercalls the library does not wrap in full ------------------------------------------ */

/* BH_HC_PLAN_STATUS: x4 is the start of the current major frame in ns on the BH_CLOCK_HW
 * time base (counter ticks x 16). Returns BH_OK or the error. */
long bench_plan_frame_start(unsigned long long *frame_start_ns);

/* The calling partition's id (0 if the call fails). */
unsigned bench_partition_id(void);

#endif
