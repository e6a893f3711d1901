/* psciodd: a firmware image for QEMU's virt machine with two CPUs that makes the PSCI calls a
 * careless or hostile guest may -- CPU_ON of itself, of a CPU that is on, of affinities that do
 * not exist, AFFINITY_INFO at other levels, unknown functions -- by HVC, the conduit of QEMU's
 * -bios, and prints every answer, so that QEMU's own PSCI and a Bulkhead board partition with two
 * vCPUs print the same lines (tests/system/test_emuatk.py). */
#define PROBE_NAME "psciodd"
#include "fwprobe.h"

#define PSCI_VERSION 0x84000000ul
#define PSCI_CPU_OFF 0x84000002ul
#define PSCI_CPU_ON 0xc4000003ul
#define PSCI_AFFINITY_INFO 0xc4000004ul
#define PSCI_AFFINITY_INFO32 0x84000004ul
#define PSCI_MIGRATE_INFO_TYPE 0x84000006ul
#define PSCI_FEATURES 0x8400000aul

#define FLAGS 0x40300000ul /* RAM: the MMU is off, every access is a device access */
#define SECONDARY_UP (FLAGS + 0)
#define SECONDARY_ARG (FLAGS + 8)
#define SECONDARY_GO (FLAGS + 16)

void secondary_entry(void);

static long hvc(unsigned long fn, unsigned long a1, unsigned long a2, unsigned long a3)
{
	register unsigned long x0 __asm__("x0") = fn;
	register unsigned long x1 __asm__("x1") = a1;
	register unsigned long x2 __asm__("x2") = a2;
	register unsigned long x3 __asm__("x3") = a3;
	__asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
	return (long)x0;
}

static uint64_t ld64(unsigned long a) { return *(volatile uint64_t *)a; }
static void st64(unsigned long a, uint64_t v) { *(volatile uint64_t *)a = v; }

void secondary(uint64_t context)
{
	st64(SECONDARY_ARG, context);
	st64(SECONDARY_UP, 1);
	while (!ld64(SECONDARY_GO))
		;
	hvc(PSCI_CPU_OFF, 0, 0, 0);
	st64(SECONDARY_UP, 0xdead); /* CPU_OFF returned: it must not */
	for (;;)
		__asm__ volatile("wfi");
}

static void wait_up(void)
{
	for (unsigned long n = 0; n < 100000000ul && !ld64(SECONDARY_UP); n++)
		;
}

int main(void)
{
	st64(SECONDARY_UP, 0);
	st64(SECONDARY_GO, 0);
	puts_("psciodd: start\n");
	show("version", (uint32_t)hvc(PSCI_VERSION, 0, 0, 0));
	show("features cpu_on", (uint32_t)hvc(PSCI_FEATURES, PSCI_CPU_ON, 0, 0));
	show("features affinity_info", (uint32_t)hvc(PSCI_FEATURES, PSCI_AFFINITY_INFO, 0, 0));
	show("features an unknown function", (uint32_t)hvc(PSCI_FEATURES, 0x8400001ful, 0, 0));
	show("an unknown function", (uint32_t)hvc(0x8400001ful, 0, 0, 0));
	show("migrate_info_type", (uint32_t)hvc(PSCI_MIGRATE_INFO_TYPE, 0, 0, 0));
	show("affinity_info cpu 1", (uint32_t)hvc(PSCI_AFFINITY_INFO, 1, 0, 0));
	show("affinity_info cpu 1 (smc32 id)", (uint32_t)hvc(PSCI_AFFINITY_INFO32, 1, 0, 0));
	show("affinity_info cpu 2 (none)", (uint32_t)hvc(PSCI_AFFINITY_INFO, 2, 0, 0));
	show("affinity_info aff1 1 (none)", (uint32_t)hvc(PSCI_AFFINITY_INFO, 0x100, 0, 0));
	show("cpu_on itself", (uint32_t)hvc(PSCI_CPU_ON, 0, (unsigned long)secondary_entry, 0));
	show("cpu_on cpu 2 (none)", (uint32_t)hvc(PSCI_CPU_ON, 2, (unsigned long)secondary_entry, 0));
	show("cpu_on aff1 1 (none)", (uint32_t)hvc(PSCI_CPU_ON, 0x100, (unsigned long)secondary_entry, 0));
	show("cpu_on cpu 1", (uint32_t)hvc(PSCI_CPU_ON, 1, (unsigned long)secondary_entry, 0x1234abcdul));
	wait_up();
	show("cpu 1 up", (uint32_t)ld64(SECONDARY_UP));
	show("cpu 1 context id", (uint32_t)ld64(SECONDARY_ARG));
	show("cpu_on cpu 1 again", (uint32_t)hvc(PSCI_CPU_ON, 1, (unsigned long)secondary_entry, 0));
	show("affinity_info cpu 1 on", (uint32_t)hvc(PSCI_AFFINITY_INFO, 1, 0, 0));
	st64(SECONDARY_UP, 0);
	st64(SECONDARY_GO, 1);
	long off = 0;
	for (unsigned long n = 0; n < 100000000ul && (off = hvc(PSCI_AFFINITY_INFO, 1, 0, 0)) != 1; n++)
		;
	show("affinity_info cpu 1 after its cpu_off", (uint32_t)off);
	show("cpu 1 did not return from cpu_off", ld64(SECONDARY_UP) != 0xdead);
	st64(SECONDARY_GO, 0);
	show("cpu_on cpu 1 once more", (uint32_t)hvc(PSCI_CPU_ON, 1, (unsigned long)secondary_entry, 7));
	wait_up();
	show("cpu 1 context id", (uint32_t)ld64(SECONDARY_ARG));
	puts_("psciodd: done\n");
	return 0;
}
