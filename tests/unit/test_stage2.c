#include "config_tables.h"
#include "stage2.h"
#include "unit.h"

#define VALID 1ul
#define TABLE 2ul
#define XN (1ul << 54)
#define S2AP_W (1ul << 7)
#define ADDR 0x0000fffffffff000ul

static uint64_t *child(uint64_t *t, unsigned i)
{
	return (uint64_t *)(uintptr_t)(t[i] & ADDR);
}

TEST(stage2_uses_2mib_blocks_when_aligned)
{
	uint64_t *root = stage2_new_root();
	stage2_map(root, 0x40000000, 0x42000000, 4ul << 20, BH_AREA_READ | BH_AREA_WRITE);
	EXPECT_EQ(root[1] & 3, VALID | TABLE);
	uint64_t *l2 = child(root, 1);
	EXPECT_EQ(l2[0] & 3, VALID);
	EXPECT_EQ(l2[0] & ADDR, 0x42000000);
	EXPECT_EQ(l2[1] & ADDR, 0x42200000);
	EXPECT(l2[0] & XN);
	EXPECT(l2[0] & S2AP_W);
	EXPECT_EQ(l2[2], 0);
}

TEST(stage2_falls_back_to_pages)
{
	uint64_t *root = stage2_new_root();
	stage2_map(root, 0x0a000000, 0x0a000000, 0x1000, BH_AREA_READ | BH_AREA_DEVICE);
	uint64_t *l3 = child(child(root, 0), 0x0a000000 >> 21);
	EXPECT_EQ(l3[0] & 3, VALID | TABLE);
	EXPECT_EQ(l3[0] & ADDR, 0x0a000000);
	EXPECT(!(l3[0] & S2AP_W));
	EXPECT(l3[0] & XN);
	EXPECT_EQ(l3[1], 0);
}

TEST(stage2_mixes_blocks_and_pages_for_unaligned_ends)
{
	uint64_t *root = stage2_new_root();
	stage2_map(root, 0x40000000, 0x43000000, (2ul << 20) + 0x2000,
		   BH_AREA_READ | BH_AREA_EXEC);
	uint64_t *l2 = child(root, 1);
	EXPECT_EQ(l2[0] & 3, VALID);
	EXPECT(!(l2[0] & XN));
	uint64_t *l3 = child(l2, 1);
	EXPECT_EQ(l3[0] & ADDR, 0x43200000);
	EXPECT_EQ(l3[1] & ADDR, 0x43201000);
	EXPECT_EQ(l3[2], 0);
}
