/* restart: checks what each kind of restart does to memory.
 *
 *   boot 1 (BOOT_COLD):          fresh image; change both variables, then fault.
 *   boot 2 (BOOT_COLD_RESTART):  the health monitor reloaded the image, so the variables
 *                                are back to their initial values; change data_var and
 *                                ask for a warm reset.
 *   boot 3 (BOOT_WARM_RESTART):  memory was kept, so data_var still holds that change.
 * Expects the partition_error action "cold restart" and to be a system partition.
 */
#include "bhtest.h"

#define FAULT_IPA 0x7ff00000ul   /* not mapped for this partition */

/* volatile: every check must read memory as the restart left it. */
static volatile int data_var = 1234;
static volatile int bss_var;

static void report_values(const char *name, int ok)
{
	char detail[96];

	bh_snprintf(detail, sizeof(detail), "data_var=%d bss_var=%d", data_var, bss_var);
	bh_test_report(name, ok, detail);
}

static void first_boot(void)
{
	report_values("restart_first_boot", data_var == 1234 && bss_var == 0);
	data_var = 99;
	bss_var = 77;
	bh_printf("restart: faulting at 0x%08lx\n", FAULT_IPA);
	bh_write32(FAULT_IPA, 1);
	bh_printf("restart: the fault did not restart me\n");
}

static void cold_restart(unsigned restarts)
{
	report_values("restart_cold_reloaded", data_var == 1234 && bss_var == 0 && restarts == 1);
	data_var = 555;
	long rc = bh_reset_self(BH_RESET_WARM);

	bh_printf("restart: reset_self(WARM) returned %ld\n", rc);
}

static void warm_restart(unsigned restarts)
{
	char detail[96];

	bh_snprintf(detail, sizeof(detail), "data_var=%d restarts=%u", data_var, restarts);
	bh_test_report("restart_warm_kept_memory", data_var == 555 && restarts == 2, detail);
	bh_test_summary();
	long rc = bh_halt_system();

	bh_printf("restart: halt_system returned %ld\n", rc);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	bh_printf("restart: boot kind %u, restart #%u\n", boot_kind, restarts);
	if (boot_kind == BH_BOOT_COLD)
		first_boot();
	else if (boot_kind == BH_BOOT_COLD_RESTART)
		cold_restart(restarts);
	else if (boot_kind == BH_BOOT_WARM_RESTART)
		warm_restart(restarts);
	else
		bh_test_report("restart_boot_kind_known", 0, "unexpected boot kind");
	return 0;
}
