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

/* Many areas, in guest address order with gaps (as the tool emits them): each is found by its
 * search, a gap or a range running into the next area is not, nor a device or a read-only area
 * for writing. A partition's buffers were found by a scan of all its areas. */
TEST(a_buffer_is_found_among_many_areas_by_search)
{
	static struct bh_area_cfg many[9];
	uint64_t pa;
	fixture_boot();
	const struct bh_area_cfg *saved = partitions[0].cfg->areas;
	uint32_t saved_count = partitions[0].cfg->area_count;
	for (unsigned i = 0; i < 9; i++)
		many[i] = (struct bh_area_cfg){ .phys = 0x42000000 + i * 0x2000ul,
						.ipa = 0x50000000 + i * 0x4000ul, .size = 0x2000,
						.flags = BH_AREA_READ | BH_AREA_WRITE };
	many[3].flags = BH_AREA_READ;
	many[5].flags |= BH_AREA_DEVICE;
	fixture_partitions[0].areas = many;
	fixture_partitions[0].area_count = 9;
	for (unsigned i = 0; i < 9; i++) {
		bool usable = i != 5;
		EXPECT_EQ(guest_ipa_to_phys(&partitions[0], many[i].ipa, 8, BH_AREA_READ, &pa), usable);
		EXPECT(!usable || pa == many[i].phys);
		EXPECT_EQ(guest_ipa_to_phys(&partitions[0], many[i].ipa + 0x1ff8, 8, BH_AREA_READ, &pa),
			  usable);
		EXPECT(!usable || pa == many[i].phys + 0x1ff8);
		EXPECT(!guest_ipa_to_phys(&partitions[0], many[i].ipa + 0x1ff8, 16, BH_AREA_READ, &pa));
		EXPECT(!guest_ipa_to_phys(&partitions[0], many[i].ipa + 0x2000, 8, BH_AREA_READ, &pa));
	}
	EXPECT(!guest_ipa_to_phys(&partitions[0], many[3].ipa, 8, BH_AREA_WRITE, &pa));
	EXPECT(guest_ipa_to_phys(&partitions[0], many[4].ipa, 8, BH_AREA_WRITE, &pa));
	EXPECT(!guest_ipa_to_phys(&partitions[0], 0x50000000 - 8, 8, BH_AREA_READ, &pa));
	EXPECT(!guest_ipa_to_phys(&partitions[0], 0x10000000, 8, BH_AREA_READ, &pa));
	fixture_partitions[0].areas = saved;
	fixture_partitions[0].area_count = saved_count;
}
