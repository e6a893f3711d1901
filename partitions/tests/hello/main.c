/* hello: every vCPU greets and reports; checks multi-vCPU start-up and the entry
 * arguments. vCPU 0 starts the others, then halts the partition after 20 ms; other vCPUs
 * park. */
#include "bhtest.h"

static unsigned greet(unsigned vcpu, unsigned boot_kind)
{
	unsigned part = 0, id_vcpu = 0;
	long rc = bh_get_ids(&part, &id_vcpu);

	if (rc < 0)
		bh_printf("hello: get_ids failed: %ld\n", rc);
	else if (id_vcpu != vcpu)
		bh_printf("hello: entry says vcpu %u, get_ids says %u\n", vcpu, id_vcpu);
	bh_printf("hello from partition %u vcpu %u boot %u\n", part, vcpu, boot_kind);
	return part;
}

/* Only vCPU 0 runs at boot. The first id the hypervisor rejects as invalid is the first
 * the partition does not have. */
static void start_secondaries(void)
{
	for (unsigned v = 1; v < BH_PART_MAX_VCPUS; v++) {
		long rc = bh_vcpu_start(v);

		if (rc == BH_INVALID_PARAM)
			return;
		if (rc != BH_OK && rc != BH_NO_ACTION) {
			bh_printf("hello: vcpu_start(%u) failed: %ld\n", v, rc);
			return;
		}
	}
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	char name[32];

	(void)restarts;
	unsigned part = greet(vcpu, boot_kind);

	start_secondaries();

	bh_sleep_ms(20);
	bh_snprintf(name, sizeof(name), "hello_p%u", part);
	bh_test_report(name, 1, "");
	return 0;
}

void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	char name[32];

	(void)restarts;
	unsigned part = greet(vcpu, boot_kind);

	bh_snprintf(name, sizeof(name), "hello_p%u_v%u", part, vcpu);
	bh_test_report(name, 1, "");
	for (;;)
		__asm__ volatile("wfi");
}
