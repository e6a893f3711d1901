/* lifehalt: a halt is final for the incarnation it ends
 * (tests/system/configs/lifeatk_halt.yaml, tests/system/test_lifeatk.py), by id:
 *   0 hostile: vCPU 0 (core 1) restarts its own partition as soon as it boots, warm, in turn by
 *              BH_HC_RESET_SELF, PSCI SYSTEM_RESET and a partition_error event whose action is
 *              warm_restart. A request it makes while another core halts it reaches the
 *              hypervisor after the halt: it must not bring the partition back.
 *   1 warden:  core 0, system partition: halts the hostile partition at pseudo-random moments,
 *              checks a while later that it is still halted, then restarts it, `ROUNDS` times;
 *              then suspends it and checks that it stays suspended until it resumes it,
 *              `ROUNDS` times; then ends the run. */
#include "bhtest.h"

typedef unsigned long long u64;

#define ROUNDS 300u
#define WATCH_NS 300000ull
#define HOSTILE 0u

static u64 mix(u64 x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static void spin_ns(u64 ns)
{
	u64 end = bh_now_ns() + ns;

	while (bh_now_ns() < end)
		__asm__ volatile("yield" ::: "memory");
}

_Noreturn static void hostile(unsigned restarts)
{
	switch (restarts % 3) {
	case 0:
		bh_reset_self(BH_RESET_WARM);
		break;
	case 1:
		bh_hvc(BH_PSCI_SYSTEM_RESET, 0, 0, 0, 0, 0);
		break;
	default:
		bh_raise_event(0x11fe);
		break;
	}
	for (;;)
		__asm__ volatile("wfi");
}

/* Still in `state` a while after the halt or suspend? Any request of the incarnation it
 * stopped has long reached the hypervisor by then. */
static int stays(unsigned state)
{
	struct bh_partition_status st;
	u64 end = bh_now_ns() + WATCH_NS;

	while (bh_now_ns() < end)
		if (bh_partition_status(HOSTILE, &st) != BH_OK || st.state != state)
			return 0;
	return 1;
}

_Noreturn static void warden(void)
{
	unsigned undone = 0, unsuspended = 0, bad_rc = 0;
	char d[128];

	for (unsigned r = 0; r < ROUNDS; r++) {
		spin_ns(20000 + mix(r) % 200000);
		bad_rc += bh_partition_ctl(BH_PARTITION_HALT, HOSTILE, 0) != BH_OK;
		undone += !stays(BH_PARTITION_STATE_HALTED);
		bad_rc += bh_partition_ctl(BH_PARTITION_RESTART, HOSTILE, BH_RESET_WARM) != BH_OK;
	}
	/* A suspend too: a restart the partition asked for meanwhile may happen, but it leaves the
	 * partition suspended, until the warden resumes it. */
	for (unsigned r = 0; r < ROUNDS; r++) {
		spin_ns(20000 + mix(~r) % 200000);
		long rc = bh_partition_ctl(BH_PARTITION_SUSPEND, HOSTILE, 0);
		if (rc == BH_NO_ACTION) /* restarting: suspend it once the restart is over */
			continue;
		bad_rc += rc != BH_OK;
		unsuspended += !stays(BH_PARTITION_STATE_SUSPENDED);
		bad_rc += bh_partition_ctl(BH_PARTITION_RESUME, HOSTILE, 0) != BH_OK;
	}
	bh_printf("BHSTAT lifehalt_undone %u\nBHSTAT lifehalt_unsuspended %u\n", undone, unsuspended);
	bh_snprintf(d, sizeof(d), "%u of %u halts undone by the halted incarnation", undone, ROUNDS);
	bh_test_report("lifehalt_halt_is_final", undone == 0, d);
	bh_snprintf(d, sizeof(d), "%u suspends undone by the suspended incarnation", unsuspended);
	bh_test_report("lifehalt_suspend_holds", unsuspended == 0, d);
	bh_snprintf(d, sizeof(d), "%u calls did not answer BH_OK", bad_rc);
	bh_test_report("lifehalt_calls_answered", bad_rc == 0, d);
	bh_test_summary();
	bh_halt_system();
	bh_halt_self();
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind;
	if (bh_partition_id() == 1)
		warden();
	hostile(restarts);
}
