/* Stage-1 translation for a partition that wants memory protection inside itself (libapex
 * turns it on for its stack guards). The map is the identity, so every address a partition
 * hands the hypervisor is still its IPA, and stage 2 stays the only isolation between
 * partitions: this keeps a partition's own parts from each other, and its accesses outside
 * what stage 2 maps for it faulting at EL1, in the partition.
 *
 * What is mapped: the partition's areas as `bulkhead build` writes them into bh_memory_map
 * (each widened to whole 2 MiB blocks); without that table, every GiB but the first 2 MiB (a
 * NULL pointer faults at EL1 all the same). The image's first segment (code, read-only data)
 * is read-only and executable; everything else read-write and never executable. A page of the
 * image can be taken out of the map (bh_mmu_unmap_page): any access to it then faults at EL1,
 * in the partition, before it touches what lies beyond. 4 KiB granule, 39-bit addresses (T0SZ
 * 25, lookup from level 1): 2 MiB blocks (1 GiB ones without the table), 4 KiB pages over the
 * image. Everything is Normal write-back memory: a device area of the partition stays Device,
 * as stage 2 makes it so whatever stage 1 says. */
#include "bulkhead/bulkhead.h"

#define PAGE_SHIFT 12
#define BLOCK2_SHIFT 21 /* 2 MiB */
#define BLOCK1_SHIFT 30 /* 1 GiB */
#define ENTRIES 512u
#define IMAGE_TABLES 4u /* level-3 tables: an image of up to 8 MiB from a 2 MiB boundary */

#define DESC_BLOCK 1ul
#define DESC_TABLE 3ul /* a table (levels 1 and 2) or a page (level 3) */
#define SH_INNER (3ul << 8)
#define AF (1ul << 10)
#define AP_READ_ONLY (2ul << 6)
#define PXN (1ul << 53)
#define UXN (1ul << 54)
/* MAIR_EL1 attribute 0 (index 0 in every descriptor): Normal, inner and outer write-back,
 * read- and write-allocate. */
#define MAIR_NORMAL_WB 0xfful
#define DATA (SH_INNER | AF | PXN | UXN)
#define CODE (SH_INNER | AF | AP_READ_ONLY | UXN)

/* TCR_EL1: T0SZ 25, walks inner and outer write-back cacheable and inner shareable, 4 KiB
 * granule, no TTBR1 walks (EPD1), 40-bit intermediate physical addresses. */
#define TCR_VALUE (25ul | 1ul << 8 | 1ul << 10 | 3ul << 12 | 1ul << 23 | 2ul << 32)
#define SCTLR_M (1ul << 0)
#define SCTLR_A (1ul << 1) /* alignment faults, as on the Device memory of the MMU off */
#define SCTLR_C (1ul << 2)
#define SCTLR_I (1ul << 12)

extern char __part_start[], __part_data[], __part_end[];

static unsigned long level1[ENTRIES] __attribute__((aligned(4096)));
static unsigned long level2[ENTRIES] __attribute__((aligned(4096)));
/* The level-2 tables of the other GiBs that hold an area (guest addresses end below 4 GiB). */
#define MORE_LEVEL2 3u
static unsigned long level2_more[MORE_LEVEL2][ENTRIES] __attribute__((aligned(4096)));

/* Written by `bulkhead build` (in .data, a loaded segment with file contents, as apex_config). */
struct bh_memory_map bh_memory_map __attribute__((section(".data.bh_memory_map"), used)) = {
	.magic = BH_MEMORY_MAP_MAGIC,
};
static unsigned long level3[IMAGE_TABLES][ENTRIES] __attribute__((aligned(4096)));

static unsigned long image_base(void)
{
	return (unsigned long)__part_start & ~((1ul << BLOCK2_SHIFT) - 1);
}

static unsigned long image_tables(void)
{
	unsigned long span = (unsigned long)__part_end - image_base();

	return (span + (1ul << BLOCK2_SHIFT) - 1) >> BLOCK2_SHIFT;
}

/* The level-2 table of GiB g, made (empty) at its first use: the image's, or another. */
static unsigned long *level2_of(unsigned long g, unsigned long image_gib, unsigned *more)
{
	unsigned long *t;

	if (g == image_gib)
		return level2;
	if ((level1[g] & 3) == DESC_TABLE)
		return (unsigned long *)(level1[g] & ~0xffful);
	if (*more == MORE_LEVEL2)
		return 0;
	t = level2_more[(*more)++];
	for (unsigned i = 0; i < ENTRIES; i++)
		t[i] = 0;
	level1[g] = (unsigned long)t | DESC_TABLE;
	return t;
}

/* The description's areas, each widened to whole 2 MiB blocks; anything else stays out. 0, or
 * -1 if the table declares none (or an area beyond what the tables can hold): then the map
 * is every GiB but the first 2 MiB. */
static int map_areas(unsigned long gib)
{
	const struct bh_memory_map *m = &bh_memory_map;
	unsigned more = 0;

	if (m->magic != BH_MEMORY_MAP_MAGIC || m->count == 0 || m->count > BH_MEMORY_MAP_MAX)
		return -1;
	for (unsigned long i = 0; i < ENTRIES; i++)
		level1[i] = level2[i] = 0;
	for (unsigned a = 0; a < m->count; a++) {
		unsigned long b = m->areas[a].base & ~((1ul << BLOCK2_SHIFT) - 1);
		unsigned long end = m->areas[a].base + m->areas[a].size;

		for (; b < end; b += 1ul << BLOCK2_SHIFT) {
			unsigned long *t = (b >> BLOCK1_SHIFT) < ENTRIES
						   ? level2_of(b >> BLOCK1_SHIFT, gib, &more) : 0;

			if (!t)
				return -1;
			t[(b >> BLOCK2_SHIFT) % ENTRIES] = b | DATA | DESC_BLOCK;
		}
	}
	return 0;
}

int bh_mmu_build(void)
{
	unsigned long base = image_base(), gib = base >> BLOCK1_SHIFT, n = image_tables();

	if (n > IMAGE_TABLES || (((unsigned long)__part_end - 1) >> BLOCK1_SHIFT) != gib ||
	    gib >= ENTRIES) {
		bh_puts("mmu: the image spans more than 8 MiB from its 2 MiB boundary or crosses a 1 GiB "
			"one: the MMU stays off");
		return -1;
	}
	if (map_areas(gib) != 0) {
		for (unsigned long i = 0; i < ENTRIES; i++) {
			level1[i] = i << BLOCK1_SHIFT | DATA | DESC_BLOCK;
			level2[i] = gib << BLOCK1_SHIFT | i << BLOCK2_SHIFT | DATA | DESC_BLOCK;
		}
		/* The first 2 MiB stay out of the map (unless the image lies there): a NULL pointer,
		 * or one a small offset from it, then faults at EL1 in the partition, the error of
		 * the context that used it, where stage 2 alone would make it the hypervisor's
		 * fault, taken after a service that used it on a process's behalf, with IRQs
		 * masked, has gone on. */
		if (base >= 1ul << BLOCK2_SHIFT) {
			unsigned more = 0;
			unsigned long *low = gib ? level2_of(0, gib, &more) : level2;

			for (unsigned long i = 1; gib && i < ENTRIES; i++)
				low[i] = i << BLOCK2_SHIFT | DATA | DESC_BLOCK;
			low[0] = 0;
		}
	}
	level1[gib] = (unsigned long)level2 | DESC_TABLE;
	for (unsigned long t = 0; t < n; t++) {
		unsigned long block = base + (t << BLOCK2_SHIFT);
		for (unsigned long i = 0; i < ENTRIES; i++) {
			unsigned long va = block + (i << PAGE_SHIFT);
			level3[t][i] = va | (va < (unsigned long)__part_data ? CODE : DATA) | DESC_TABLE;
		}
		level2[(block >> BLOCK2_SHIFT) % ENTRIES] = (unsigned long)level3[t] | DESC_TABLE;
	}
	__asm__ volatile("dsb ishst" : : : "memory");
	return 0;
}

/* Lines of the writable segment that the caches may hold from before the MMU was on (the
 * image was written with caches off) are dropped first, so a cached read never hides what
 * memory holds. */
static void invalidate_writable(void)
{
	unsigned long ctr, line;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	line = 4ul << ((ctr >> 16) & 15);
	for (unsigned long a = (unsigned long)__part_data & ~(line - 1); a < (unsigned long)__part_end;
	     a += line)
		__asm__ volatile("dc ivac, %0" : : "r"(a) : "memory");
	__asm__ volatile("dsb sy" : : : "memory");
}

void bh_mmu_on(void)
{
	unsigned long sctlr;

	invalidate_writable();
	__asm__ volatile("msr mair_el1, %0\n\tmsr tcr_el1, %1\n\tmsr ttbr0_el1, %2\n\tisb\n\t"
			 "tlbi vmalle1\n\tdsb nsh\n\tisb"
			 : : "r"(MAIR_NORMAL_WB), "r"(TCR_VALUE), "r"(level1) : "memory");
	__asm__ volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
	sctlr |= SCTLR_M | SCTLR_A | SCTLR_C | SCTLR_I;
	__asm__ volatile("msr sctlr_el1, %0\n\tisb" : : "r"(sctlr) : "memory");
}

int bh_mmu_unmap_page(const void *page)
{
	unsigned long va = (unsigned long)page, off = va - image_base();

	if ((va & ((1ul << PAGE_SHIFT) - 1)) || va < (unsigned long)__part_data ||
	    va >= (unsigned long)__part_end)
		return -1;
	level3[off >> BLOCK2_SHIFT][(off >> PAGE_SHIFT) % ENTRIES] = 0;
	/* Every vCPU of the partition: the inner shareable domain. */
	__asm__ volatile("dsb ishst\n\ttlbi vaae1is, %0\n\tdsb ish\n\tisb"
			 : : "r"(va >> PAGE_SHIFT) : "memory");
	return 0;
}

void bh_mmu_unmap_pages(const void *page, unsigned long bytes)
{
	for (unsigned long off = 0; off < bytes; off += 1ul << PAGE_SHIFT)
		bh_mmu_unmap_page((const char *)page + off);
}

void bh_mmu_check_access(const void *buf, unsigned long len, int write)
{
	unsigned long start = (unsigned long)buf, end = start + len, par;

	if (end < start)
		end = ~0ul;
	for (unsigned long a = start; a < end; a = (a & ~((1ul << PAGE_SHIFT) - 1)) + (1ul << PAGE_SHIFT)) {
		if (write)
			__asm__ volatile("at s1e1w, %1\n\tisb\n\tmrs %0, par_el1" : "=r"(par) : "r"(a));
		else
			__asm__ volatile("at s1e1r, %1\n\tisb\n\tmrs %0, par_el1" : "=r"(par) : "r"(a));
		if (!(par & 1))
			continue;
		if (write) /* faults: nothing is written */
			*(volatile char *)a = 0;
		else
			(void)*(volatile const char *)a;
		return;
	}
}

int bh_mmu_page_mapped(const void *addr)
{
	unsigned long par;

	__asm__ volatile("at s1e1r, %1\n\tisb\n\tmrs %0, par_el1" : "=r"(par) : "r"(addr) : "memory");
	return !(par & 1);
}

extern char bh_stacks_end[];

/* Two guard pages at the bottom of each of the first n vCPUs' own stacks (crt0.S: the
 * initialization's and the idle loops'), so that an overflow of one faults there instead of
 * going on into the next vCPU's stack; each keeps 8 KiB. */
void bh_mmu_guard_vcpu_stacks(unsigned n)
{
	for (unsigned i = 0; i < n && i < BH_PART_MAX_VCPUS; i++)
		bh_mmu_unmap_pages(bh_stacks_end - (i + 1) * (unsigned long)BH_PART_STACK_SIZE,
				   2ul << PAGE_SHIFT);
}
