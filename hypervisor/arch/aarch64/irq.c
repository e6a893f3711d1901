/* Physical interrupts at EL2: the hypervisor timer, kicks from other cores, the virtual timer
 * and assigned device interrupts (forwarded to their partition), and vGIC maintenance. */
#include "arch/aarch64.h"
#include "arch/sysreg.h"
#include "console.h"
#include "partition.h"
#include "percpu.h"
#include "platform.h"
#include "sched.h"
#include "trace.h"

#define INTID_SPURIOUS 1020u
#define IRQS_PER_EXIT 64u /* bounds one pass; anything left fires again at once */
#define UART_BYTES_PER_IRQ 32u /* the receive FIFO's depth */

/* The loaded vCPU's virtual timer fired: it stays active, linked to the virtual one, until
 * the guest ends that (a level interrupt cannot storm the hypervisor). False: nobody to take
 * it, end it here. */
static bool vtimer_fired(struct vcpu *v)
{
	if (!v) {
		write_cntv_ctl_el0(0); /* a timer nobody owns: stop its level */
		return false;
	}
	virq_inject(v, PPI_VTIMER, true);
	return true;
}

static void console_receive(void)
{
	int ch;

	for (unsigned n = 0; n < UART_BYTES_PER_IRQ && (ch = plat_uart_getc()) >= 0; n++)
		console_input((char)ch);
}

/* A byte typed during boot is read here: the receive interrupt is raised only as a byte comes
 * in (QEMU's PL011 holds one, with its FIFO off, and takes no more from the host until it is
 * read), and enabling input clears what was raised before (tests/system/test_input_early.py). */
void arch_console_input_enable(void)
{
	plat_uart_rx_enable();
	gic_route_spi(PLAT_UART_INTID, plat_core_affinity(0));
	gic_set_spi_enabled(PLAT_UART_INTID, 1);
	console_receive();
}

/* Handle intid; true if it was forwarded to a guest, which ends it. */
static bool dispatch(struct percpu *c, unsigned intid)
{
	switch (intid) {
	case PPI_HYP_TIMER:
		write_cnthp_ctl_el2(0);
		trace_emit(BH_TRACE_HYP_TIMER, c->vcpu, 0);
		sched_timer_event();
		break;
	case PPI_VTIMER:
		return vtimer_fired(c->loaded);
	case PPI_MAINTENANCE:
		vgic_maintenance();
		break;
	case SGI_KICK:
		if (c->vcpu)
			c->vcpu->kicks++;
		exit_work_set(EXIT_RESCHED);
		break;
	case PLAT_UART_INTID:
		console_receive();
		break;
	default:
		return intid >= 32 && virq_forward_physical(intid);
	}
	return false;
}

/* The hypervisor timer, taken from a best-effort guest at its be_until with nothing else since
 * the core's last decision (sched_timer_hands_back): handled alone, as dispatch handles it (its
 * trace event goes in with the hand-back's switch), and no other interrupt is acknowledged before
 * the hand-back. One pending meanwhile wakes the core from its WFI at once, and the full decision
 * after it sees it, as one that came just after the hand-back (sched.c be_hand_back). */
HOT_INLINE_GLOBAL bool aarch64_timer_hands_back(void)
{
	if (!sched_timer_hands_back())
		return false;
	write_cnthp_ctl_el2(0);
	gic_end(PPI_HYP_TIMER);
	return true;
}

/* At most IRQS_PER_EXIT per pass, each acknowledged only when it will be handled: one
 * acknowledged and left would hold the core's running priority, and no interrupt of its
 * priority (all of them) would ever be taken on this core again. */
void aarch64_handle_irqs(unsigned first)
{
	struct percpu *c = this_cpu();
	unsigned intid = first;

	for (unsigned n = 1; intid < INTID_SPURIOUS; n++) {
		if (dispatch(c, intid))
			gic_drop(intid);
		else
			gic_end(intid);
		if (n == IRQS_PER_EXIT)
			break; /* the rest stays pending: it fires again at once */
		intid = gic_ack();
	}
}

void arch_irq_route(unsigned intid, unsigned core)
{
	gic_route_spi(intid, plat_core_affinity(core));
	gic_set_spi_enabled(intid, 1);
}

#define PLAT_GIC_WINDOW 0x01000000ul /* distributor and redistributors: virt's GIC region */
#define PLAT_FW_CFG_BASE 0x09020000ul /* QEMU's fw_cfg: its DMA interface writes any memory */
#define PLAT_DEVICE_PAGE 0x1000ul

static bool overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

bool arch_device_assignable(uint64_t pa, uint64_t size)
{
	return !overlaps(pa, size, PLAT_GICD_BASE, PLAT_GIC_WINDOW) &&
	       !overlaps(pa, size, PLAT_UART_BASE, PLAT_DEVICE_PAGE) &&
	       !overlaps(pa, size, PLAT_FW_CFG_BASE, PLAT_DEVICE_PAGE);
}

bool arch_irq_assignable(unsigned intid)
{
	return intid != PLAT_UART_INTID;
}

void arch_irq_move(unsigned intid, unsigned core)
{
	gic_route_spi(intid, plat_core_affinity(core));
}

void arch_irq_release(unsigned intid)
{
	if (intid >= 32)
		gic_deactivate_spi(intid);
}
