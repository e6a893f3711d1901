/* PSCI calls from EL2 to the firmware (QEMU's built-in PSCI, SMC conduit). */
#include "arch/aarch64.h"

#define PSCI_CPU_ON_64 0xC4000003ul
#define PSCI_SYSTEM_OFF 0x84000008ul

static int64_t smc3(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;
	register uint64_t x3 __asm__("x3") = a3;

	__asm__ volatile("smc #0"
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
			 :
			 : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
			   "x15", "x16", "x17", "memory");
	return (int64_t)x0;
}

int64_t psci_cpu_on(uint64_t affinity, uint64_t entry, uint64_t context)
{
	return smc3(PSCI_CPU_ON_64, affinity, entry, context);
}

void psci_system_off(void)
{
	smc3(PSCI_SYSTEM_OFF, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}
