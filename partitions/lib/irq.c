/* Virtual interrupt dispatch: the IRQ vector in crt0.S saves the interrupted context and
 * calls bh_irq_dispatch, which acknowledges, handles and ends every pending INTID.
 *
 * The hypervisor sets the GICv3 virtual CPU interface up at vCPU reset; ICC_* accesses
 * at EL1 reach the virtual interface (ICV_*) because HCR_EL2.IMO is set.
 */
#include "bulkhead/bulkhead.h"

/* ICC_IAR1_EL1 returns 1020..1023 when nothing (more) is pending. */
#define INTID_SPECIAL_FIRST 1020u

/* System register interface: RAO/WI under a GICv3 hypervisor, so setting it is harmless. */
#define ICC_SRE_SRE   1ul
#define ICC_PMR_ALL   0xfful  /* priority mask: let every priority through */
#define ICC_IGRPEN1_ON 1ul

void bh_crt_init_vcpu(unsigned long vcpu);

/* Shared by all vCPUs: handlers are per INTID, not per vCPU. NULL means the default. An
 * aligned pointer store is single-copy atomic, so installing one while another vCPU takes
 * interrupts is safe. */
static bh_irq_handler_t volatile handlers[BH_VIRQ_MAX];

/* The default handler reports each unexpected INTID once, not on every arrival. */
static volatile unsigned char reported[BH_VIRQ_MAX];

static volatile unsigned char vtimer_fired[BH_PART_MAX_VCPUS];

long bh_irq_set_handler(unsigned intid, bh_irq_handler_t fn)
{
	if (intid >= BH_VIRQ_MAX)
		return BH_INVALID_PARAM;
	handlers[intid] = fn;
	return BH_OK;
}

int bh_vtimer_take_fired(void)
{
	unsigned v = bh_vcpu_self();
	int fired;

	if (v >= BH_PART_MAX_VCPUS)
		return 0;
	fired = vtimer_fired[v];
	vtimer_fired[v] = 0;
	return fired;
}

/* The virtual timer interrupt is level-triggered: disabling the timer drops the level, so
 * the interrupt does not fire again after the EOI. */
static void vtimer_default(unsigned intid)
{
	unsigned v = bh_vcpu_self();

	(void)intid;
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
	if (v < BH_PART_MAX_VCPUS)
		vtimer_fired[v] = 1;
}

static void unexpected_default(unsigned intid)
{
	if (intid < BH_VIRQ_MAX) {
		if (reported[intid])
			return;
		reported[intid] = 1;
	}
	bh_printf("unexpected virtual interrupt %u\n", intid);
}

/* Port and doorbell interrupts only wake the vCPU: what happened is read with
 * bh_port_ready(), so by default there is nothing to do. */
static void wake_only_default(unsigned intid)
{
	(void)intid;
}

static bh_irq_handler_t handler_for(unsigned intid)
{
	bh_irq_handler_t fn = intid < BH_VIRQ_MAX ? handlers[intid] : 0;

	if (fn)
		return fn;
	if (intid == BH_VIRQ_PORT || intid == BH_VIRQ_DOORBELL)
		return wake_only_default;
	return intid == BH_VIRQ_VTIMER ? vtimer_default : unexpected_default;
}

/* The dsb after the acknowledge orders it before the handler's memory accesses; the isb
 * after the EOI makes the priority drop take effect before the next acknowledge. */
static unsigned ack(void)
{
	unsigned long intid;

	__asm__ volatile("mrs %0, icc_iar1_el1\n\tdsb sy" : "=r"(intid) : : "memory");
	return (unsigned)intid;
}

static void eoi(unsigned intid)
{
	__asm__ volatile("msr icc_eoir1_el1, %0\n\tisb" : : "r"((unsigned long)intid) : "memory");
}

/* Called by the IRQ vector with IRQs masked. */
void bh_irq_dispatch(void)
{
	for (;;) {
		unsigned intid = ack();

		if (intid >= INTID_SPECIAL_FIRST)
			return;
		handler_for(intid)(intid);
		eoi(intid);
	}
}

/* Called by crt0 on every vCPU before main/secondary_main. The hypervisor already set the
 * virtual CPU interface up; writing the same values again costs nothing and keeps the
 * runtime correct should a vCPU reset ever leave them at their architectural defaults. */
void bh_crt_init_vcpu(unsigned long vcpu)
{
	unsigned long sre;

	__asm__ volatile("mrs %0, icc_sre_el1" : "=r"(sre));
	__asm__ volatile("msr icc_sre_el1, %0\n\tisb" : : "r"(sre | ICC_SRE_SRE) : "memory");
	__asm__ volatile("msr icc_pmr_el1, %0\n\tmsr icc_igrpen1_el1, %1\n\tisb"
			 : : "r"(ICC_PMR_ALL), "r"(ICC_IGRPEN1_ON) : "memory");
	/* A warm restart keeps memory: do not let a stale flag survive it. */
	if (vcpu < BH_PART_MAX_VCPUS)
		vtimer_fired[vcpu] = 0;
}
