/* Stage-2 tables: each partition's guest-physical space, built once at boot from its areas,
 * with the largest block each area's alignment allows (1 GiB, 2 MiB, else 4 KiB pages) up to the
 * platform's limit (bh_system_cfg.stage2_block_max). Anything not described is unmapped, so
 * hypervisor memory and others' memory fault. The tables come from a pool in the generated
 * configuration, which the tool sized by counting with this same algorithm
 * (tools/src/bulkhead/stage2.py: change both together). */
#include "arch.h"
#include "console.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "stage2.h"

/* Tables live in hypervisor memory, which EL2 maps one to one. */
static uint64_t table_pa(const uint64_t *t) { return (uint64_t)(uintptr_t)t; }
static uint64_t *table_at(uint64_t pa) { return (uint64_t *)(uintptr_t)pa; }

/* The tool accepts guest addresses below 2^BH_IPA_BITS (it reads config_tables.h): stage 2 must map
 * exactly that space, no less. */
_Static_assert(STAGE2_IPA_LIMIT == 1ul << BH_IPA_BITS, "stage 2 maps another guest address width "
	       "than BH_IPA_BITS of config_tables.h, which the tool checks descriptions against");

#define DESC_VALID (1ul << 0)
#define DESC_TABLE (1ul << 1) /* at levels 1-2; also set in level-3 page descriptors */
#define DESC_S2AP_R (1ul << 6)
#define DESC_S2AP_W (1ul << 7)
#define DESC_SH_INNER (3ul << 8)
#define DESC_AF (1ul << 10)
#define DESC_XN (1ul << 54)
#define MEMATTR_NORMAL_WB (0xful << 2)
#define MEMATTR_DEVICE_NGNRE (0x1ul << 2)
#define ADDR_MASK 0x0000fffffffff000ul

static struct {
	uint64_t (*tables)[512];
	unsigned size; /* tables in the pool */
	unsigned used;
} pool;
static uint64_t block_max; /* the largest block map_one may write (stage2_init) */

static uint64_t *table_alloc(void)
{
	/* The tool counts the pages this system needs exactly, so this means tables built by
	 * another tool version or a hypervisor change the tool does not mirror. */
	if (pool.used == pool.size)
		bh_panic("stage-2 table pool exhausted (%u pages): the pool `bulkhead build` sized "
			 "for this system must never run out; rebuild the image with the tool matching "
			 "this hypervisor", pool.size);
	return pool.tables[pool.used++];
}

static unsigned level_shift(unsigned level)
{
	return 39 - 9 * level; /* level 1: 30, level 2: 21, level 3: 12 */
}

uint64_t stage2_leaf_attrs(uint32_t flags)
{
	uint64_t d = DESC_VALID | DESC_AF;

	d |= flags & BH_AREA_DEVICE ? MEMATTR_DEVICE_NGNRE : MEMATTR_NORMAL_WB | DESC_SH_INNER;
	if (flags & BH_AREA_READ)
		d |= DESC_S2AP_R;
	if (flags & BH_AREA_WRITE)
		d |= DESC_S2AP_W;
	if (!(flags & BH_AREA_EXEC) || (flags & BH_AREA_DEVICE))
		d |= DESC_XN;
	return d;
}

static uint64_t *next_table(uint64_t *table, unsigned index)
{
	if (!(table[index] & DESC_VALID))
		table[index] = table_pa(table_alloc()) | DESC_VALID | DESC_TABLE;
	BH_CHECK(table[index] & DESC_TABLE); /* the tool rejects overlapping areas */
	return table_at(table[index] & ADDR_MASK);
}

static void map_one(uint64_t *root, uint64_t ipa, uint64_t pa, unsigned level, uint64_t attrs)
{
	uint64_t *table = root;

	for (unsigned l = 1; l < level; l++)
		table = next_table(table, (unsigned)(ipa >> level_shift(l)) & 511);
	unsigned index = (unsigned)(ipa >> level_shift(level)) & 511;
	BH_CHECK(!(table[index] & DESC_VALID));
	table[index] = pa | attrs | (level == 3 ? DESC_TABLE : 0);
}

/* The coarsest level whose block is within the platform's limit and fits the alignment of both
 * addresses and the size left. */
static unsigned block_level(uint64_t ipa, uint64_t pa, uint64_t size)
{
	for (unsigned level = 1; level < 3; level++) {
		uint64_t block = 1ul << level_shift(level);
		if (block <= block_max && ((ipa | pa) & (block - 1)) == 0 && size >= block)
			return level;
	}
	return 3;
}

void stage2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, uint32_t flags)
{
	uint64_t attrs = stage2_leaf_attrs(flags);

	BH_CHECK(ipa + size <= STAGE2_IPA_LIMIT && ((ipa | pa | size) & 0xfff) == 0);
	while (size) {
		unsigned level = block_level(ipa, pa, size);
		uint64_t block = 1ul << level_shift(level);
		map_one(root, ipa, pa, level, attrs);
		ipa += block;
		pa += block;
		size -= block;
	}
}

/* The level-2 entries of [ipa, ipa + size), 2 MiB each, made invalid or valid again as a whole:
 * one step per 2 MiB whatever maps it (a block, or a table of 512 pages), so a 64 MiB flash bank
 * takes at most 32 steps, not one per page (16384 for a bank mapped in pages). An entry keeps
 * every other bit: a block its address and rights, a table the address of its pages, untouched.
 * An entry never written (zero) stays so. The level-1 entries above must be tables. */
unsigned stage2_set_present(uint64_t *root, uint64_t ipa, uint64_t size, bool present)
{
	const uint64_t block = 1ul << level_shift(2);
	unsigned changed = 0;
	uint64_t end = ipa + size;

	BH_CHECK(end > ipa && end <= STAGE2_IPA_LIMIT && ((ipa | size) & (block - 1)) == 0);
	while (ipa < end) { /* at most size / 2 MiB steps */
		uint64_t l1 = root[(ipa >> level_shift(1)) & 511];
		BH_CHECK((l1 & (DESC_VALID | DESC_TABLE)) == (DESC_VALID | DESC_TABLE));
		uint64_t *d = &table_at(l1 & ADDR_MASK)[(ipa >> level_shift(2)) & 511];
		if (*d) {
			*d = present ? *d | DESC_VALID : *d & ~DESC_VALID;
			changed++;
		}
		ipa += block;
	}
	return changed;
}

uint64_t *stage2_new_root(void)
{
	return table_alloc();
}

void stage2_init(uint64_t (*tables)[512], unsigned count, uint64_t largest_block)
{
	BH_CHECK(largest_block >= STAGE2_PAGE_SIZE);
	memset(tables, 0, count * sizeof(*tables));
	pool.tables = tables;
	pool.size = count;
	pool.used = 0;
	block_max = largest_block;
}

unsigned stage2_pages_used(void)
{
	return pool.used;
}

void arch_stage2_init(const struct bh_system_cfg *sys)
{
	stage2_init(sys->stage2_pool, sys->stage2_pool_pages, sys->stage2_block_max);
}

void arch_stage2_build(struct partition *p)
{
	unsigned used_before = pool.used;
	uint64_t *root = stage2_new_root();

	for (uint32_t i = 0; i < p->cfg->area_count; i++) {
		const struct bh_area_cfg *a = &p->cfg->areas[i];
		stage2_map(root, a->ipa, a->phys, a->size, a->flags);
	}
	p->stage2_root = table_pa(root);
	/* The system tests compare these lines with the tool's count (tests/system/harness.py). */
	bh_log("partition %s: %u stage-2 table pages (pool: %u of %u used)", p->cfg->name,
	       pool.used - used_before, pool.used, pool.size);
}
