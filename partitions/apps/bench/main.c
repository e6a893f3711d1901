/* Benchmark partition: measures hypervisor paths in instructions under `-icount shift=0`
 * (one instruction = 1 ns of virtual time) and prints `BENCH <name> <value> <unit>` lines
 * that bench/run.py collects. Run alone on its core so no other core advances the clock. */
#include "bulkhead/bulkhead.h"

#define ROUNDS 1000u
/* A second area that cold restart does not reload: the fault timestamp survives it. */
#define SCRATCH ((volatile unsigned long long *)0x40400000ul)
#define UNMAPPED ((volatile unsigned long *)0x7ff00000ul)

static unsigned long long now_ns(void)
{
	return bh_now_ns();
}

/* Per-iteration cost of `hvc` over the same loop with `nop`, in ns (= instructions). */
static unsigned long long hvc_loop(unsigned long fn, int real)
{
	unsigned long n = ROUNDS;
	unsigned long long t0 = now_ns();

	if (real)
		__asm__ volatile("1: mov x0, %[fn]\n hvc #0\n subs %[n], %[n], #1\n b.ne 1b"
				 : [n] "+r"(n)
				 : [fn] "r"(fn)
				 : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
				   "x11", "x12", "x13", "x14", "x15", "x16", "x17", "cc", "memory");
	else
		__asm__ volatile("1: mov x0, %[fn]\n nop\n subs %[n], %[n], #1\n b.ne 1b"
				 : [n] "+r"(n)
				 : [fn] "r"(fn)
				 : "x0", "cc", "memory");
	return now_ns() - t0;
}

static void report(const char *name, unsigned long long value, const char *unit)
{
	bh_printf("BENCH %s %llu %s\n", name, value, unit);
}

static void bench_hypercall(void)
{
	unsigned long long with = hvc_loop(BH_HC_GET_IDS, 1), without = hvc_loop(BH_HC_GET_IDS, 0);

	report("hypercall_roundtrip", (with - without + ROUNDS / 2) / ROUNDS + 1, "cycles");
	with = hvc_loop(BH_HC(0x7f), 1);
	report("hypercall_unknown_roundtrip", (with - without + ROUNDS / 2) / ROUNDS + 1,
	       "cycles");
}

/* A trapped system register read with the `ignore` action: trap, decode, health-monitor
 * log line on the console, skip, return. */
static void bench_trap_ignore(void)
{
	unsigned long long t0 = now_ns();
	unsigned long v;

	__asm__ volatile("mrs %0, pmcr_el0" : "=r"(v));
	(void)v;
	report("trap_sysreg_to_hm_ignore", now_ns() - t0, "cycles");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned long long entered = now_ns();

	(void)vcpu;
	(void)restarts;
	if (boot_kind == BH_BOOT_COLD) {
		bench_hypercall();
		bench_trap_ignore();
		*SCRATCH = now_ns();
		*UNMAPPED = 1; /* memory_violation -> cold_restart */
	}
	report("stage2_violation_to_restarted_entry", entered - *SCRATCH, "cycles");
	bh_printf("BENCH-DONE\n");
	bh_halt_system();
	return 0;
}
