/* The boot checker: the configuration tables `bulkhead build` emits for one description, linked
 * with core/ and the fake architecture, run through the hypervisor's boot path on the host.
 * Exit 0 when every core got through its first scheduling decision; 1 with the panic text when
 * the hypervisor rejected the tables. tests/tool/test_boot_accepted.py runs it for descriptions
 * the tool accepts: what the tool accepts, the hypervisor must run.
 *
 * Physical memory: the fake architecture's RAM is 8 MiB at a fixed address, too small for real
 * descriptions, so partition memory comes from ram.c (the tables' RAM range, reserved lazily). */
#include <stdio.h>
#include "arch/fake.h"
#include "bootcheck.h"
#include "main.h"
#include "partition.h"
#include "percpu.h"

/* Time enough for the first cyclic major frame to start (main.c starts it 1 ms after boot). */
#define AFTER_EPOCH_TICKS (2 * 62500u)

static const char *const exits[] = { "returned", "entered a guest", "idled", "powered off" };

static int fail(const char *stage)
{
	fprintf(stderr, "bootcheck: %s: hypervisor %s\n%.*s\n", stage, exits[fake.exit],
		(int)fake.uart_len, fake.uart);
	return 1;
}

/* One core's way into its guest (bh_enter_core): requests, the first decision, the vCPU reset.
 * A core leaves by entering a guest or idling; powering off means a panic. */
static bool enter_core(unsigned core)
{
	fake.core = core;
	FAKE_RUN(bh_enter_core(core));
	return fake.exit == FAKE_RESUMED || fake.exit == FAKE_IDLED;
}

static int enter_cores(unsigned cores)
{
	for (unsigned c = 0; c < cores; c++) {
		if (!enter_core(c)) {
			char stage[32];
			snprintf(stage, sizeof(stage), "core %u entry", c);
			return fail(stage);
		}
	}
	return 0;
}

int main(void)
{
	fake_reset();
	if (!bootcheck_ram_map(&bh_system_config))
		return 2;
	FAKE_RUN(bh_boot_primary());
	if (fake.exit != FAKE_NONE)
		return fail("primary boot");
	fake.counter += AFTER_EPOCH_TICKS;
	if (enter_cores(bh_system_config.core_count))
		return 1;
	printf("%.*s", (int)fake.uart_len, fake.uart);
	return 0;
}
