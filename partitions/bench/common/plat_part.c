/* Partition backend of the benchmark programs: they run as Bulkhead partitions. */
#include "bench.h"

const char bench_platform[] = "partition";

int bench_init(void)
{
	return bench_check_counter();	/* the hypervisor has set everything else up */
}

/* The same wait as bare metal: on a dedicated core the guest's WFI sleeps in hardware; on a
 * shared core it traps and waits like the idle hypercall. */
void bench_wait(void)
{
	__asm__ volatile("dsb sy\n\twfi" : : : "memory");
}

_Noreturn void bench_exit(void)
{
	bh_halt_system();	/* BH_PERM_ERROR in a normal partition: then stop just this one */
	bh_halt_self();
}

long bench_plan_frame_start(unsigned long long *frame_start_ns)
{
	register unsigned long x0 __asm__("x0") = BH_HC_PLAN_STATUS;
	register unsigned long x1 __asm__("x1") = 0;
	register unsigned long x2 __asm__("x2") = 0;
	register unsigned long x3 __asm__("x3") = 0;
	register unsigned long x4 __asm__("x4") = 0;
	register unsigned long x5 __asm__("x5") = 0;

	__asm__ volatile("hvc #0"
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5)
			 :
			 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
			   "x16", "x17", "cc", "memory");
	if ((long)x0 >= 0)
		*frame_start_ns = x4;
	return (long)x0;
}

unsigned bench_partition_id(void)
{
	unsigned id = 0;

	bh_get_ids(&id, 0);
	return id;
}
