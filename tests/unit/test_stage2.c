#include <string.h>
#include "arch/fake.h"
#include "config_tables.h"
#include "fixture.h"
#include "partition.h"
#include "stage2.h"
#include "unit.h"

#define VALID 1ul
#define TABLE 2ul
#define XN (1ul << 54)
#define S2AP_W (1ul << 7)
#define ADDR 0x0000fffffffff000ul

#define PAGE 0x1000ul
#define BLOCK_2M (2ul << 20)
#define BLOCK_1G (1ul << 30)
#define RW (BH_AREA_READ | BH_AREA_WRITE)

static uint64_t tables[16][512] __attribute__((aligned(4096)));

/* A fresh pool of 16 tables and a root in it; blocks up to largest_block. */
static uint64_t *new_space(uint64_t largest_block)
{
	stage2_init(tables, 16, largest_block);
	return stage2_new_root();
}

/* The table entry i points to; an empty table when it is no table, so a test fails, not crashes. */
static uint64_t *child(uint64_t *t, unsigned i)
{
	static uint64_t none[512];
	if ((t[i] & 3) != (VALID | TABLE))
		return memset(none, 0, sizeof(none));
	return (uint64_t *)(uintptr_t)(t[i] & ADDR);
}

static unsigned count_valid(const uint64_t *t)
{
	unsigned n = 0;
	for (unsigned i = 0; i < 512; i++)
		n += t[i] & VALID;
	return n;
}

TEST(stage2_uses_2mib_blocks_when_aligned)
{
	uint64_t *root = new_space(BLOCK_1G);
	stage2_map(root, 0x40000000, 0x42000000, 4ul << 20, RW);
	EXPECT_EQ(root[1] & 3, VALID | TABLE);
	uint64_t *l2 = child(root, 1);
	EXPECT_EQ(l2[0] & 3, VALID);
	EXPECT_EQ(l2[0] & ADDR, 0x42000000);
	EXPECT_EQ(l2[1] & ADDR, 0x42200000);
	EXPECT(l2[0] & XN);
	EXPECT(l2[0] & S2AP_W);
	EXPECT_EQ(l2[2], 0);
	EXPECT_EQ(stage2_pages_used(), 2);
}

TEST(stage2_uses_a_1gib_block_when_the_limit_allows)
{
	uint64_t *root = new_space(BLOCK_1G);
	stage2_map(root, 0x40000000, 0x40000000, BLOCK_1G, RW);
	EXPECT_EQ(root[1] & 3, VALID);
	EXPECT_EQ(root[1] & ADDR, 0x40000000);
	EXPECT_EQ(stage2_pages_used(), 1);
}

TEST(stage2_2mib_limit_splits_a_1gib_area_into_2mib_blocks)
{
	uint64_t *root = new_space(BLOCK_2M);
	stage2_map(root, 0x40000000, 0x40000000, BLOCK_1G, RW);
	EXPECT_EQ(root[1] & 3, VALID | TABLE);
	uint64_t *l2 = child(root, 1);
	EXPECT_EQ(count_valid(l2), 512);
	EXPECT_EQ(l2[0] & 3, VALID);
	EXPECT_EQ(l2[511] & 3, VALID);
	EXPECT_EQ(l2[511] & ADDR, 0x40000000 + BLOCK_1G - BLOCK_2M);
	EXPECT_EQ(stage2_pages_used(), 2);
}

TEST(stage2_4kib_limit_maps_only_pages)
{
	uint64_t *root = new_space(PAGE);
	stage2_map(root, 0x40000000, 0x42000000, 4ul << 20, RW);
	uint64_t *l2 = child(root, 1);
	for (unsigned i = 0; i < 2; i++) {
		EXPECT_EQ(l2[i] & 3, VALID | TABLE);
		uint64_t *l3 = child(l2, i);
		EXPECT_EQ(count_valid(l3), 512);
		EXPECT_EQ(l3[0] & 3, VALID | TABLE); /* a page descriptor */
		EXPECT_EQ(l3[0] & ADDR, 0x42000000 + i * BLOCK_2M);
		EXPECT_EQ(l3[511] & ADDR, 0x42000000 + i * BLOCK_2M + 511 * PAGE);
		EXPECT(l3[0] & S2AP_W);
	}
	EXPECT_EQ(l2[2], 0);
	EXPECT_EQ(stage2_pages_used(), 4); /* root, one level 2, two level 3 */
}

TEST(stage2_4kib_limit_maps_a_1gib_area_with_pages)
{
	static uint64_t big[1 + 1 + 512][512] __attribute__((aligned(4096)));
	stage2_init(big, 514, PAGE);
	uint64_t *root = stage2_new_root();
	stage2_map(root, 0x40000000, 0x40000000, BLOCK_1G, RW);
	uint64_t *l2 = child(root, 1);
	EXPECT_EQ(l2[0] & 3, VALID | TABLE);
	EXPECT_EQ(l2[511] & 3, VALID | TABLE);
	EXPECT_EQ(child(l2, 511)[511] & ADDR, 0x40000000 + BLOCK_1G - PAGE);
	EXPECT_EQ(stage2_pages_used(), 514);
}

TEST(stage2_falls_back_to_pages)
{
	uint64_t *root = new_space(BLOCK_1G);
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
	uint64_t *root = new_space(BLOCK_1G);
	stage2_map(root, 0x40000000, 0x43000000, BLOCK_2M + 0x2000, BH_AREA_READ | BH_AREA_EXEC);
	uint64_t *l2 = child(root, 1);
	EXPECT_EQ(l2[0] & 3, VALID);
	EXPECT(!(l2[0] & XN));
	uint64_t *l3 = child(l2, 1);
	EXPECT_EQ(l3[0] & ADDR, 0x43200000);
	EXPECT_EQ(l3[1] & ADDR, 0x43201000);
	EXPECT_EQ(l3[2], 0);
}

TEST(stage2_pool_exhaustion_panics)
{
	stage2_init(tables, 3, PAGE);
	uint64_t *root = stage2_new_root();
	FAKE_RUN(stage2_map(root, 0x40000000, 0x40000000, 4ul << 20, RW)); /* needs 4 tables */
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
	EXPECT(strstr(fake.uart, "stage-2 table pool exhausted (3 pages)") != NULL);
	EXPECT(strstr(fake.uart, "must never run out") != NULL);
}

TEST(stage2_boot_uses_the_configured_pool_exactly)
{
	partition_init_all(&bh_system_config); /* the fixture's tables, as a tool would emit them */
	EXPECT_EQ(stage2_pages_used(), FIXTURE_STAGE2_PAGES);
	EXPECT(strstr(fake.uart, "partition alpha: 5 stage-2 table pages (pool: 5 of 8 used)"));
	EXPECT(strstr(fake.uart, "partition beta: 3 stage-2 table pages (pool: 8 of 8 used)"));
	/* alpha's RAM (1 MiB at a 2 MiB-aligned address) is in pages under the 4 KiB limit */
	uint64_t *l2 = child((uint64_t *)(uintptr_t)partitions[0].stage2_root, 1);
	EXPECT_EQ(l2[0] & 3, VALID | TABLE);
}

/* An emulated flash bank's backed part (arch/aarch64/vflash.c): unmapped while the bank is in a
 * command mode, mapped again in read-array mode, with its addresses and rights unchanged, one
 * step per 2 MiB (a block, or the table of its pages, not each page). */
TEST(stage2_set_present_toggles_level_2_entries_only)
{
	uint64_t *root = new_space(BLOCK_1G);
	stage2_map(root, 0x0, 0x50000000, BLOCK_2M + 0x2000, BH_AREA_READ | BH_AREA_EXEC);
	stage2_map(root, 0x40000000, 0x48000000, BLOCK_2M, RW);
	uint64_t *l2 = child(root, 0), *l3 = child(l2, 1), block = l2[0], table = l2[1], page = l3[1];
	unsigned used = stage2_pages_used();

	EXPECT_EQ(stage2_set_present(root, 0x0, 4 * BLOCK_2M, false), 2); /* never mapped: stays 0 */
	EXPECT_EQ(l2[0], block & ~VALID);
	EXPECT_EQ(l2[1], table & ~VALID); /* the table above the pages: its 512 pages at once */
	EXPECT_EQ(l3[1], page);           /* the pages themselves untouched */
	EXPECT_EQ(l2[2], 0);
	EXPECT_EQ(l2[3], 0);
	EXPECT_EQ(child(root, 1)[0] & VALID, VALID); /* other memory untouched */
	EXPECT_EQ(stage2_set_present(root, 0x0, 4 * BLOCK_2M, true), 2);
	EXPECT_EQ(l2[0], block);
	EXPECT_EQ(l2[1], table);
	EXPECT_EQ(l2[2], 0);
	EXPECT_EQ(stage2_pages_used(), used); /* no table allocated */
}

TEST(stage2_set_present_refuses_unaligned_ranges)
{
	uint64_t *root = new_space(BLOCK_1G);
	stage2_map(root, 0x0, 0x50000000, 0x2000, BH_AREA_READ);
	FAKE_RUN(stage2_set_present(root, 0x0, 0x2000, false)); /* not whole 2 MiB entries */
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
}

TEST(stage2_set_present_refuses_ranges_without_tables)
{
	uint64_t *root = new_space(BLOCK_1G);
	stage2_map(root, 0x0, 0x50000000, 0x2000, BH_AREA_READ);
	FAKE_RUN(stage2_set_present(root, 0x80000000, BLOCK_2M, false)); /* nothing in that 1 GiB */
	EXPECT_EQ(fake.exit, FAKE_SYSTEM_OFF);
}
