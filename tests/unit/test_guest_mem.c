#include <string.h>
#include "arch/fake.h"
#include "config_tables.h"
#include "fixture.h"
#include "guest_mem.h"
#include "partition.h"
#include "unit.h"

TEST(ipa_inside_an_area_translates)
{
	uint64_t pa = 0;
	fixture_boot();
	EXPECT(guest_ipa_to_phys(&partitions[0], ALPHA_RAM_IPA + 0x10, 16, BH_AREA_READ, &pa));
	EXPECT_EQ(pa, ALPHA_RAM_PHYS + 0x10);
	EXPECT(guest_ipa_to_phys(&partitions[0], ALPHA_RAM_IPA + ALPHA_RAM_SIZE - 8, 8,
				 BH_AREA_WRITE, &pa));
}

TEST(ipa_ranges_outside_or_straddling_are_rejected)
{
	uint64_t pa;
	struct partition *p;
	fixture_boot();
	p = &partitions[0];
	EXPECT(!guest_ipa_to_phys(p, ALPHA_RAM_IPA - 8, 16, BH_AREA_READ, &pa));
	EXPECT(!guest_ipa_to_phys(p, ALPHA_RAM_IPA + ALPHA_RAM_SIZE - 8, 16, BH_AREA_READ, &pa));
	EXPECT(!guest_ipa_to_phys(p, ALPHA_RAM_IPA, ALPHA_RAM_SIZE + 1, BH_AREA_READ, &pa));
	EXPECT(!guest_ipa_to_phys(p, ~0ul - 4, 16, BH_AREA_READ, &pa));
	EXPECT(!guest_ipa_to_phys(p, ALPHA_RAM_IPA + 8, ~0ul, BH_AREA_READ, &pa));
	EXPECT(!guest_ipa_to_phys(p, 0, 1, BH_AREA_READ, &pa));
}

TEST(device_areas_are_never_guest_buffers)
{
	uint64_t pa;
	fixture_boot();
	EXPECT(!guest_ipa_to_phys(&partitions[0], ALPHA_DEV_IPA, 4, BH_AREA_READ, &pa));
}

TEST(guest_copy_checks_everything_before_copying)
{
	char out[8] = "unset";
	fixture_boot();
	memcpy(&fake_ram[ALPHA_RAM_SIZE - 4], "abcd", 4);
	EXPECT(!guest_copy_from(&partitions[0].vcpus[0], out, ALPHA_RAM_IPA + ALPHA_RAM_SIZE - 4,
				8));
	EXPECT(strcmp(out, "unset") == 0);
	EXPECT(guest_copy_from(&partitions[0].vcpus[0], out, ALPHA_RAM_IPA + ALPHA_RAM_SIZE - 4,
			       4));
	EXPECT(memcmp(out, "abcd", 4) == 0);
	fake.guest_mmu_fault = true;
	EXPECT(!guest_readable(&partitions[0].vcpus[0], ALPHA_RAM_IPA, 4));
}

TEST(guest_copy_of_a_wrapping_length_copies_nothing)
{
	char out[8] = "unset";
	fixture_boot();
	/* The offset in the page plus the length wraps to less than a page: still refused whole. */
	EXPECT(!guest_copy_from(&partitions[0].vcpus[0], out, ALPHA_RAM_IPA + 1, ~0ul));
	EXPECT(!guest_copy_to(&partitions[0].vcpus[0], ALPHA_RAM_IPA + 0xfff, out, ~0ul - 0xffe));
	EXPECT(strcmp(out, "unset") == 0);
}
