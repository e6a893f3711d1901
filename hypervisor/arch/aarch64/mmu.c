/* The hypervisor's own stage 1 (EL2), identity mapped and W^X: a guest-controlled write that
 * lands in hypervisor memory must never become code execution at EL2.
 *
 *   first GiB (devices)            1 GiB block, device nGnRE, read-write, execute-never
 *   hypervisor text (hyp.ld)       4 KiB pages, normal write-back, read-only, executable
 *   hypervisor rodata, tables and
 *   packed partition images        4 KiB pages / 2 MiB blocks, read-only, execute-never
 *   all other RAM (data, bss,
 *   stacks, partitions' memory)    2 MiB / 1 GiB blocks, read-write, execute-never
 *
 * The GiB that holds the image is split into 2 MiB blocks by one level-2 table; only the 2 MiB
 * blocks where the rights change inside (at most one per boundary: text start, text end,
 * rodata end) need a level-3 table. All tables are static: no allocation. SCTLR_EL2.WXN makes
 * every writable page execute-never in hardware as well. */
#include "arch/aarch64.h"
#include "arch/asm_offsets.h"
#include "arch/sysreg.h"
#include "console.h"
#include "panic.h"

#define DESC_BLOCK (1ul << 0)
#define DESC_TABLE (3ul << 0) /* also a level-3 page */
#define DESC_ATTR(i) ((uint64_t)(i) << 2)
#define DESC_AP_RW (1ul << 6) /* AP[1] is RES1 in the EL2 regime */
#define DESC_AP_RO (3ul << 6)
#define DESC_SH_INNER (3ul << 8)
#define DESC_AF (1ul << 10)
#define DESC_XN (1ul << 54)
#define DESC_ADDR_MASK 0x0000fffffffff000ul

#define MAIR_DEVICE_NGNRE 0x04ul
#define MAIR_NORMAL_WB 0xfful
#define ATTR_DEVICE 0
#define ATTR_NORMAL 1

#define TCR_T0SZ(n) ((uint64_t)(n))
#define TCR_IRGN0_WBWA (1ul << 8)
#define TCR_ORGN0_WBWA (1ul << 10)
#define TCR_SH0_INNER (3ul << 12)
#define TCR_PS_40BIT (2ul << 16)
#define TCR_EL2_RES1 ((1ul << 31) | (1ul << 23))

#define SZ_4K (1ul << 12)
#define SZ_2M (1ul << 21)
#define SZ_1G (1ul << 30)
#define EL2_VA_GIB 4u     /* T0SZ 32: the first GiB is devices, RAM above */
#define EL2_L3_TABLES 3u  /* one per boundary that need not be 2 MiB aligned */

#define NORMAL (DESC_ATTR(ATTR_NORMAL) | DESC_SH_INNER | DESC_AF)
#define RIGHTS_TEXT (NORMAL | DESC_AP_RO)
#define RIGHTS_RODATA (NORMAL | DESC_AP_RO | DESC_XN)
#define RIGHTS_RAM (NORMAL | DESC_AP_RW | DESC_XN)
#define RIGHTS_DEVICE (DESC_ATTR(ATTR_DEVICE) | DESC_AF | DESC_AP_RW | DESC_XN)

extern char _image_start[], _text_end[], _rodata_end[], _image_end[]; /* hyp.ld */

static uint64_t el2_l1[512] __attribute__((aligned(4096)));
static uint64_t el2_l2[512] __attribute__((aligned(4096)));
static uint64_t el2_l3[EL2_L3_TABLES][512] __attribute__((aligned(4096)));

static uint64_t addr(const char *symbol)
{
	return (uint64_t)(uintptr_t)symbol;
}

/* Rights of the 4 KiB page at pa (hyp.ld aligns every boundary to a page). */
static uint64_t page_rights(uint64_t pa)
{
	if (pa >= addr(_image_start) && pa < addr(_text_end))
		return RIGHTS_TEXT;
	if (pa >= addr(_text_end) && pa < addr(_rodata_end))
		return RIGHTS_RODATA;
	return RIGHTS_RAM;
}

/* Whether one of the image's rights boundaries lies strictly inside [base, base + size). */
static bool splits(uint64_t base, uint64_t size)
{
	const uint64_t bounds[] = {addr(_image_start), addr(_text_end), addr(_rodata_end)};

	for (unsigned i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
		if (bounds[i] > base && bounds[i] < base + size)
			return true;
	return false;
}

static uint64_t l3_table_for(uint64_t base)
{
	static unsigned used;

	if (used == EL2_L3_TABLES)
		bh_panic("EL2 map: more than %u 2 MiB blocks need pages; check hyp.ld", EL2_L3_TABLES);
	uint64_t *l3 = el2_l3[used++];
	for (unsigned i = 0; i < 512; i++) {
		uint64_t pa = base + i * SZ_4K;
		l3[i] = pa | DESC_TABLE | page_rights(pa);
	}
	return (uint64_t)(uintptr_t)l3 | DESC_TABLE;
}

static uint64_t l2_table_for(uint64_t base)
{
	for (unsigned i = 0; i < 512; i++) {
		uint64_t pa = base + i * SZ_2M;
		el2_l2[i] = splits(pa, SZ_2M) ? l3_table_for(pa) : pa | DESC_BLOCK | page_rights(pa);
	}
	return (uint64_t)(uintptr_t)el2_l2 | DESC_TABLE;
}

void aarch64_mmu_init(void)
{
	uint64_t image_gib = addr(_image_start) >> 30; /* hyp.ld: the image is inside one GiB */

	el2_l1[0] = DESC_BLOCK | RIGHTS_DEVICE;
	for (uint64_t gib = 1; gib < EL2_VA_GIB; gib++)
		el2_l1[gib] = gib == image_gib ? l2_table_for(gib << 30)
					       : gib << 30 | DESC_BLOCK | RIGHTS_RAM;
}

void aarch64_mmu_enable_this_core(void)
{
	uint64_t tcr = TCR_T0SZ(32) | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER |
		       TCR_PS_40BIT | TCR_EL2_RES1;
	uint64_t mair = MAIR_DEVICE_NGNRE << (8 * ATTR_DEVICE) | MAIR_NORMAL_WB << (8 * ATTR_NORMAL);

	aarch64_mmu_enable((uint64_t)el2_l1, tcr, mair);
}

/* The self-check: the hardware's own answer (AT) for reads and writes, and the leaf descriptor
 * of the live tables (TTBR0_EL2) with SCTLR_EL2.WXN for execution, since PAR_EL1 does not
 * report execute rights. A map that is not W^X stops the boot: fail closed. */
#define PAR_F (1ul << 0)
#define PAR_FST(par) (((par) >> 1) & 0x3f)
#define FST_PERMISSION(fst) (((fst) & 0x3c) == 0x0c)
#define SCTLR_WXN (1ul << 19)

struct map_probe {
	const char *what;
	uint64_t va;
	bool writable, executable;
};

static uint64_t at_s1e2(uint64_t va, bool write)
{
	if (write)
		__asm__ volatile("at s1e2w, %0\n isb" : : "r"(va) : "memory");
	else
		__asm__ volatile("at s1e2r, %0\n isb" : : "r"(va) : "memory");
	return read_par_el1();
}

/* The leaf descriptor that maps va in the live tables (0 if none). */
static uint64_t live_leaf(uint64_t va)
{
	const uint64_t *table = (const uint64_t *)(uintptr_t)(read_ttbr0_el2() & DESC_ADDR_MASK);

	for (unsigned shift = 30; shift >= 12; shift -= 9) {
		uint64_t d = table[(va >> shift) & 511];
		if (shift == 12 || (d & 3) != DESC_TABLE)
			return (d & 1) ? d : 0;
		table = (const uint64_t *)(uintptr_t)(d & DESC_ADDR_MASK);
	}
	return 0;
}

static void check_probe(const struct map_probe *p, bool wxn)
{
	uint64_t read = at_s1e2(p->va, false), write = at_s1e2(p->va, true);
	bool writable = !(write & PAR_F);
	bool executable = !(live_leaf(p->va) & DESC_XN) && !(wxn && writable);

	if (read & PAR_F)
		bh_panic("EL2 map: %s at 0x%lx is not readable (PAR_EL1 0x%lx)", p->what, p->va, read);
	if (writable != p->writable || (!writable && !FST_PERMISSION(PAR_FST(write))))
		bh_panic("EL2 map: %s at 0x%lx is %swritable (PAR_EL1 0x%lx)", p->what, p->va,
			 writable ? "" : "not ", write);
	if (executable != p->executable)
		bh_panic("EL2 map: %s at 0x%lx is %sexecutable", p->what, p->va,
			 executable ? "" : "not ");
}

void aarch64_mmu_check(bool report)
{
	uint64_t local = 0;
	const struct map_probe probes[] = {
		{"text start", addr(_image_start), false, true},
		{"text (this function)", (uint64_t)(uintptr_t)aarch64_mmu_check, false, true},
		{"text end", addr(_text_end) - 1, false, true},
		{"rodata (tables, images)", addr(_text_end), false, false},
		{"rodata end", addr(_rodata_end) - 1, false, false},
		{"data/bss (EL2 tables)", (uint64_t)(uintptr_t)el2_l1, true, false},
		{"stack", (uint64_t)(uintptr_t)&local, true, false},
		{"RAM after the image", addr(_image_end), true, false},
		{"RAM below the image", addr(_image_start) - SZ_4K, true, false},
	};
	bool wxn = read_sctlr_el2() & SCTLR_WXN;

	if (!wxn)
		bh_panic("EL2 map: SCTLR_EL2.WXN is clear");
	for (unsigned i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		check_probe(&probes[i], wxn);
	if (report)
		bh_log("EL2 map W^X checked: text 0x%lx-0x%lx r-x, rodata 0x%lx-0x%lx r--, data and "
		       "other RAM rw-, WXN on", addr(_image_start), addr(_text_end), addr(_text_end),
		       addr(_rodata_end));
}
