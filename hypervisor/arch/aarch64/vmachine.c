/* The emulated machine of unmodified guests: routes trapped MMIO to the device models and
 * emulates the system registers Linux touches that a partition must not reach for real. */
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "arch/vmachine.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "plan.h"

#define GICD_SIZE 0x10000ul
#define GICR_SIZE_PER_VCPU 0x20000ul
#define PAGE_SIZE 0x1000ul

static struct vmachine machines[BH_MAX_PARTITIONS];

struct vmachine *vmachine_of(const struct partition *p)
{
	return p->cfg->vmachine ? &machines[p->cfg->id] : NULL;
}

struct vmachine *vmachine_of_emulated(const struct partition *p)
{
	return &machines[p->cfg->id];
}

void arch_partition_reset(struct partition *p)
{
	if (!p->cfg->vmachine)
		return;
	BH_CHECK(p->cfg->vcpu_count <= VMACHINE_MAX_VCPUS);
	vgic_reset_dist(p);
	vuart_reset(p);
	vgpio_reset(p);
	vflash_reset(p);
	vrtc_reset(p);
}

static bool in(uint64_t ipa, uint64_t base, uint64_t size)
{
	return ipa >= base && ipa - base < size;
}

/* The stolen-time records (SMCCC paravirtualized time, vpsci.c), read-only: record n, at
 * n * BH_PV_TIME_RECORD, is vCPU n's; only its stolen time, at offset 8, is not zero. Computed
 * at each read, so a record is always current; a write is ignored. */
static bool steal_access(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val)
{
	const struct partition *p = v->partition;
	uint64_t index = off / BH_PV_TIME_RECORD, at = off % BH_PV_TIME_RECORD;

	if (write)
		return true;
	*val = 0;
	if (index < p->cfg->vcpu_count && at >= 8 && at + size <= 16) /* the caller masks *val */
		*val = ticks_to_ns(__atomic_load_n(&p->vcpus[index].stolen_ticks, __ATOMIC_RELAXED)) >>
		       (8 * (at - 8));
	return true;
}

/* The device models' bool is MMIO_UNCLAIMED or MMIO_DONE as it stands. */
_Static_assert(MMIO_UNCLAIMED == false && MMIO_DONE == true, "a device model's bool");

static enum mmio_result mmio(struct vcpu *v, uint64_t ipa, unsigned size, bool write,
			     uint64_t *val)
{
	const struct bh_vmachine_cfg *m = v->partition->cfg->vmachine;

	if (in(ipa, m->gicd_ipa, GICD_SIZE))
		return vgic_dist_access(v, ipa - m->gicd_ipa, size, write, val);
	if (in(ipa, m->uart_ipa, PAGE_SIZE)) /* second: a guest's console, one trap a byte */
		return vuart_access(v, ipa - m->uart_ipa, size, write, val);
	if (in(ipa, m->gicr_ipa, GICR_SIZE_PER_VCPU * v->partition->cfg->vcpu_count))
		return vgic_redist_access(v, ipa - m->gicr_ipa, size, write, val);
	if (in(ipa, m->gpio_ipa, PAGE_SIZE))
		return vgpio_access(v, ipa - m->gpio_ipa, size, write, val);
	if (in(ipa, m->call_ipa, PAGE_SIZE))
		return vcall_access(v, ipa - m->call_ipa, size, write, val);
	if (in(ipa, m->steal_ipa, PAGE_SIZE))
		return steal_access(v, ipa - m->steal_ipa, size, write, val);
	if (m->rtc_ipa && in(ipa, m->rtc_ipa, PAGE_SIZE))
		return vrtc_access(v, ipa - m->rtc_ipa, size, write, val);
	if (m->flash_count)
		return vflash_access(v, ipa, size, write, val);
	return false;
}

/* ESR_EL2 ISS of a data abort with a valid syndrome. */
#define DABT_SAS(esr) (1u << (((esr) >> 22) & 3))
#define DABT_SSE (1ul << 21)
#define DABT_SRT(esr) ((unsigned)((esr) >> 16) & 31)
#define DABT_SF (1ul << 15)
#define DABT_WNR (1ul << 6)

static uint64_t size_mask(unsigned size)
{
	return size == 8 ? ~0ul : (1ul << (8 * size)) - 1;
}

/* A device's read into the load's destination, sign- or zero-extended as the load asks (SSE,
 * SF). Decoded again from esr, so that only r and esr live across the device's call. */
static void load_result(struct arch_regs *r, uint64_t esr, uint64_t val)
{
	unsigned size = DABT_SAS(esr), rt = DABT_SRT(esr);
	uint64_t mask = size_mask(size);

	if (rt == 31)
		return;
	val &= mask;
	if ((esr & DABT_SSE) && size < 8 && (val >> (8 * size - 1)))
		val |= ~mask;
	r->x[rt] = esr & DABT_SF ? val : val & 0xffffffffu;
}

enum mmio_result arch_vmachine_mmio(struct vcpu *v, struct arch_regs *r, uint64_t esr,
				    uint64_t ipa)
{
	unsigned size = DABT_SAS(esr), rt = DABT_SRT(esr);
	bool write = esr & DABT_WNR;
	uint64_t val = write && rt < 31 ? r->x[rt] & size_mask(size) : 0;

	if (!v->partition->cfg->vmachine || (ipa & (size - 1)))
		return MMIO_UNCLAIMED;
	enum mmio_result done = mmio(v, ipa, size, write, &val);
	if (!(done & MMIO_DONE)) /* the one value with bit 0 set: a single test */
		return done;
	if (!write)
		load_result(r, esr, val);
	return MMIO_DONE;
}

/* The trap an unmodified guest takes most: a byte to its console, a store of at most a word to
 * UARTDR (offset 0, so aligned whatever its size). */
static bool console_byte(const struct vcpu *v, uint64_t esr, uint64_t ipa)
{
	const struct bh_vmachine_cfg *m = v->partition->cfg->vmachine;

	return m && ipa == m->uart_ipa && DABT_SAS(esr) <= 4;
}

static __attribute__((noipa)) enum mmio_result console_byte_write(struct vcpu *v,
								     struct arch_regs *r,
								     uint64_t esr, uint64_t ipa)
{
	unsigned rt = DABT_SRT(esr);
	enum mmio_result done = vuart_data_write(v->partition, rt < 31 ? r->x[rt] : 0);

	if (done != MMIO_UNCLAIMED)
		return done;
	return arch_vmachine_mmio(v, r, esr, ipa); /* a UART state change: the locked way */
}

enum mmio_result arch_vmachine_mmio_write(struct vcpu *v, struct arch_regs *r, uint64_t esr,
					  uint64_t ipa)
{
	if (console_byte(v, esr, ipa))
		return console_byte_write(v, r, esr, ipa);
	return arch_vmachine_mmio(v, r, esr, ipa);
}

/* System register encodings in ESR_EL2 ISS: Op0 21:20, Op2 19:17, Op1 16:14, CRn 13:10,
 * CRm 4:1, Rt 9:5, direction (1 = read) 0. */
#define ISS_SYSREG(op0, op1, crn, crm, op2) \
	((uint32_t)(op0) << 20 | (uint32_t)(op2) << 17 | (uint32_t)(op1) << 14 | \
	 (uint32_t)(crn) << 10 | (uint32_t)(crm) << 1)
#define ISS_SYSREG_MASK ISS_SYSREG(3, 7, 15, 15, 7)
#define ICC_SGI1R_EL1 ISS_SYSREG(3, 0, 12, 11, 5)
#define MDSCR_EL1 ISS_SYSREG(2, 0, 0, 2, 2)
#define SYSREG_OP0(key) ((key) >> 20 & 3)
#define SYSREG_OP1(key) ((key) >> 14 & 7)
#define SYSREG_CRN(key) ((key) >> 10 & 15)
#define SYSREG_CRM(key) ((key) >> 1 & 15)
#define SYSREG_OP2(key) ((key) >> 17 & 7)

/* The PMU: EL0 registers in CRn 9 (CRm 12-14) and 14 (CRm 8-15), EL1 ones in CRn 9 CRm 14. */
static bool pmu_register(uint32_t key)
{
	unsigned op1 = SYSREG_OP1(key), crn = SYSREG_CRN(key), crm = SYSREG_CRM(key);

	return SYSREG_OP0(key) == 3 &&
	       ((op1 == 3 && crn == 9 && crm >= 12) || (op1 == 3 && crn == 14 && crm >= 8) ||
		(op1 == 0 && crn == 9 && crm == 14));
}

/* Data cache maintenance by set/way (DC ISW, CSW, CISW). */
static bool set_way(uint32_t key)
{
	return key == ISS_SYSREG(1, 0, 7, 6, 2) || key == ISS_SYSREG(1, 0, 7, 10, 2) ||
	       key == ISS_SYSREG(1, 0, 7, 14, 2);
}

/* Debug registers (Op0 2): the OS lock, breakpoints, watchpoints and the debug
 * communication channel read as zero and ignore writes; MDSCR_EL1 is the vCPU's own. */
static uint64_t emulate(struct vcpu *v, uint32_t key, bool read, uint64_t val)
{
	if (key == ICC_SGI1R_EL1 && !read)
		vgic_send_sgi(v, val);
	if (key == MDSCR_EL1) {
		if (!read)
			write_mdscr_el1(val);
		return read_mdscr_el1();
	}
	return 0;
}

/* A paravirtual partition's vCPUs interrupt each other the architectural way too (libapex's
 * cross-core wake-ups): an SGI to vCPUs of its own partition, nothing else. */
static bool paravirtual_sgi(struct vcpu *v, uint64_t val)
{
	vgic_send_sgi(v, val);
	return true;
}

bool arch_vmachine_sysreg(struct vcpu *v, struct arch_regs *r, uint64_t esr)
{
	uint32_t key = (uint32_t)esr & ISS_SYSREG_MASK;
	bool read = esr & 1;
	unsigned rt = (unsigned)(esr >> 5) & 31;

	if (!v->partition->cfg->vmachine)
		return key == ICC_SGI1R_EL1 && !read && paravirtual_sgi(v, rt < 31 ? r->x[rt] : 0);
	/* PMU: no counters (PMCR_EL0.N reads 0). Set/way: the caches are coherent and every
	 * partition's memory is write-back cacheable at stage 2, so there is nothing to do. */
	if (key != ICC_SGI1R_EL1 && SYSREG_OP0(key) != 2 && !pmu_register(key) && !set_way(key))
		return false;
	uint64_t val = emulate(v, key, read, !read && rt < 31 ? r->x[rt] : 0);
	if (read && rt < 31)
		r->x[rt] = val;
	return true;
}
