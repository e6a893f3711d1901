/* nameprobe: looks up its last port and its last shared-memory region by name
 * (BH_HC_PORT_INFO, BH_HC_SHM_INFO), when every name of them shares a long prefix
 * (tests/system/configs/names_alone.yaml, tests/system/test_names.py). Alone on a dedicated
 * core, a call's time is its path; it prints the longest of each, in counter ticks. */
#include "bhtest.h"

#define CALLS 100u

static unsigned long long time_port_info(const char *name)
{
	struct bh_port_info info;
	unsigned long long longest = 0;

	for (unsigned n = 0; n < CALLS; n++) {
		unsigned long long t0 = bh_counter();
		long rc = bh_port_info(name, &info);
		unsigned long long d = bh_counter() - t0;
		if (rc != BH_OK)
			bh_printf("nameprobe: port %s: %ld\n", name, rc);
		if (d > longest)
			longest = d;
	}
	return longest;
}

static unsigned long long time_shm_info(const char *name)
{
	struct bh_shm_info info;
	unsigned long long longest = 0;

	for (unsigned n = 0; n < CALLS; n++) {
		unsigned long long t0 = bh_counter();
		long rc = bh_shm_info(name, &info);
		unsigned long long d = bh_counter() - t0;
		if (rc < 0)
			bh_printf("nameprobe: region %s: %ld\n", name, rc);
		if (d > longest)
			longest = d;
	}
	return longest;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu, (void)boot_kind, (void)restarts;
	bh_printf("BHSTAT name_port_first_ticks %llu\n", time_port_info("p_aaaaaaaaaaaaaaaaaaaaaaaaaa00"));
	bh_printf("BHSTAT name_port_last_ticks %llu\n", time_port_info("p_aaaaaaaaaaaaaaaaaaaaaaaaaa63"));
	bh_printf("BHSTAT name_shm_first_ticks %llu\n", time_shm_info("r_aaaaaaaaaaaaaaaaaaaaaaaaaa00"));
	bh_printf("BHSTAT name_shm_last_ticks %llu\n", time_shm_info("r_aaaaaaaaaaaaaaaaaaaaaaaaaa63"));
	bh_test_report("nameprobe_done", 1, "");
	for (;;)
		bh_idle();
}
