/* portintruder: a partition that is no endpoint of any channel and maps only one shared
 * region, read-only, tries to use what it was not given (tests/system/configs/ports.yaml).
 * Every hypercall must refuse; every access to a region outside its map, or against its
 * rights, is a stage-2 violation (configured `ignore`: logged, skipped). */
#include "bhtest.h"

#define QUIET      ((volatile unsigned *)0x50000000ul) /* "quiet", mapped read-only */
#define SECRET_PA  0x44000000ul /* "secret", gamma's alone (phys given in the description) */
#define SHARED_ID  0u           /* "shared": alpha, beta and gamma */

BH_TEST(intruder_cannot_open_ports_of_others)
{
	int d = -1;
	struct bh_port_info info;
	unsigned long long ready = 1, rung = 1;

	BH_EXPECT_EQ(bh_queuing_port_create("to_beta", 64, BH_SOURCE_PORT, 4, &d), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_queuing_port_create("from_alpha", 64, BH_DESTINATION_PORT, 4, &d),
		     BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_sampling_port_create("fan_in", 16, BH_DESTINATION_PORT, 100000000, &d),
		     BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_port_info("s_out", &info), BH_INVALID_CONFIG);
	static volatile unsigned long long st;
	static char buf[16];
	for (int desc = 0; desc < 4; desc++) {
		BH_EXPECT_EQ(bh_queuing_send(desc, "x", 1), BH_INVALID_PARAM);
		BH_EXPECT_EQ(bh_sampling_write(desc, "x", 1), BH_INVALID_PARAM);
		/* No post on a port it does not have (alpha's, beta's: descriptors 0..3). */
		BH_EXPECT_EQ(bh_queuing_receive_post(desc, buf, sizeof(buf), &st, 0),
			     BH_INVALID_PARAM);
		BH_EXPECT_EQ(bh_queuing_receive_cancel(desc), BH_INVALID_PARAM);
	}
	BH_EXPECT_EQ(bh_port_ready(&ready, &rung), BH_OK);
	BH_EXPECT_EQ(ready, 0);
	BH_EXPECT_EQ(d, -1);
}

BH_TEST(intruder_cannot_use_regions_it_does_not_map)
{
	struct bh_shm_info info;

	BH_EXPECT_EQ(bh_shm_info("secret", &info), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_shm_info("shared", &info), BH_INVALID_CONFIG);
	BH_EXPECT_EQ(bh_shm_doorbell(SHARED_ID), BH_PERM_ERROR);
	long quiet = bh_shm_info("quiet", &info);
	BH_EXPECT(quiet >= 0);
	BH_EXPECT_EQ(info.rights, BH_SHM_READ);
	BH_EXPECT_EQ(bh_shm_doorbell((unsigned)quiet), BH_NOT_AVAILABLE);
	/* Hypercall buffers in memory it does not map, or may not write, are refused too. */
	BH_EXPECT_EQ(bh_console_write((const void *)SECRET_PA, 8), BH_INVALID_PARAM);
	BH_EXPECT_EQ(bh_shm_info("quiet", (struct bh_shm_info *)QUIET), BH_INVALID_PARAM);
}

BH_TEST(intruder_stage2_stops_writes)
{
	unsigned before = *QUIET;

	bh_write32((unsigned long)QUIET, 0xbad);  /* read-only mapping: memory_violation */
	BH_EXPECT_EQ(*QUIET, before);
	bh_write32(SECRET_PA, 0xbad);             /* not mapped at all: memory_violation */
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	bh_test_run_all();
	bh_halt_self();
}
