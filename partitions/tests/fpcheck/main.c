/* FP/SIMD registers survive vCPU switches: two of these share a core, each fills v0-v31 with a
 * pattern of its own, lets the other run, and checks its pattern is still there. */
#include "bhtest.h"
#include "bulkhead/bulkhead.h"

#define ROUNDS 20u
#define CPACR_FPEN (3ul << 20)

static void fp_enable(void)
{
	__asm__ volatile("msr cpacr_el1, %0\n isb" : : "r"(CPACR_FPEN));
}

static void fp_fill(unsigned long pattern)
{
	__asm__ volatile(".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,"
			 "24,25,26,27,28,29,30,31\n"
			 "dup v\\n\\().2d, %0\n"
			 ".endr" : : "r"(pattern) : "memory");
}

/* Number of registers v0-v31 whose both halves still hold the pattern. */
static unsigned long fp_count_intact(unsigned long pattern)
{
	unsigned long intact = 0, lo, hi;

	__asm__ volatile(".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,"
			 "24,25,26,27,28,29,30,31\n"
			 "umov %1, v\\n\\().d[0]\n"
			 "umov %2, v\\n\\().d[1]\n"
			 "cmp %1, %3\n"
			 "ccmp %2, %3, #0, eq\n"
			 "cinc %0, %0, eq\n"
			 ".endr"
			 : "+r"(intact), "=&r"(lo), "=&r"(hi)
			 : "r"(pattern)
			 : "cc");
	return intact;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	unsigned id = 0;
	unsigned long worst = 32;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_get_ids(&id, 0);
	unsigned long pattern = 0x0101010101010101ul * (id + 1);
	fp_enable();
	for (unsigned round = 0; round < ROUNDS; round++) {
		fp_fill(pattern);
		bh_sleep_ms(1); /* the other partition runs and fills its own pattern */
		unsigned long intact = fp_count_intact(pattern);
		if (intact < worst)
			worst = intact;
	}
	bh_test_report(id ? "fp_kept_p1" : "fp_kept_p0", worst == 32,
		       worst == 32 ? "" : "FP/SIMD registers changed across a switch");
	bh_test_summary();
	return 0;
}
