/* Bare-metal backend of the benchmark programs: they run at EL1 on QEMU `virt` without the
 * hypervisor (-M virt,gic-version=3, no virtualization, -kernel <program>.elf), which starts
 * them at the ELF entry with the MMU off and x0 = x1 = x2 = 0. libbhpart's crt0.S sets up
 * the stack and the EL1 vectors and calls bh_crt_init_vcpu (GIC CPU interface) exactly as
 * in a partition; this file stands in for the hypervisor: the PL011 console, the GICv3
 * distributor and redistributor, wfi for the idle hypercall, and the last-resort exception
 * report. It needs BH_VIRQ_VTIMER (PPI 27) only. */
#include "bench.h"

const char bench_platform[] = "bare";

/* PL011 UART0 */
#define UART_BASE   0x09000000ul
#define UART_DR     0x000
#define UART_FR     0x018
#define UART_FR_TXFF (1u << 5)

/* GICv3: distributor, and the redistributor of CPU 0 (RD_base, then SGI_base). */
#define GICD_BASE       0x08000000ul
#define GICD_CTLR       0x0000
#define GICD_CTLR_RWP   (1u << 31)
#define GICD_CTLR_ENABLE_GRP1 (1u << 1)  /* single security state (no EL3): EnableGrp1 */
#define GICD_CTLR_ARE   (1u << 4)
#define GICR_BASE       0x080A0000ul
#define GICR_WAKER      0x0014
#define GICR_WAKER_PROCESSOR_SLEEP (1u << 1)
#define GICR_WAKER_CHILDREN_ASLEEP (1u << 2)
#define GICR_SGI_BASE   (GICR_BASE + 0x10000ul)
#define GICR_IGROUPR0   0x0080
#define GICR_ISENABLER0 0x0100
#define GICR_IPRIORITYR 0x0400
#define PPI_PRIORITY    0xa0u        /* anything below the priority mask 0xff */

static inline void mmio_write8(unsigned long addr, unsigned char v)
{
	__asm__ volatile("strb %w0, [%1]" : : "r"(v), "r"(addr) : "memory");
}

long bare_console_write(const void *buf, unsigned long len)
{
	const char *s = buf;

	for (unsigned long i = 0; i < len; i++) {
		while (bh_read32(UART_BASE + UART_FR) & UART_FR_TXFF)
			;
		bh_write32(UART_BASE + UART_DR, (unsigned char)s[i]);
	}
	return (long)len;
}

static void gicd_wait_rwp(void)
{
	while (bh_read32(GICD_BASE + GICD_CTLR) & GICD_CTLR_RWP)
		;
}

/* Distributor on (affinity routing, group 1), redistributor awake, PPI 27 in group 1,
 * enabled. The CPU interface (ICC_SRE/PMR/IGRPEN1) was set by crt0's bh_crt_init_vcpu. */
static void gic_init(void)
{
	unsigned intid = BH_VIRQ_VTIMER;

	bh_write32(GICD_BASE + GICD_CTLR, 0);
	gicd_wait_rwp();
	bh_write32(GICD_BASE + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENABLE_GRP1);
	gicd_wait_rwp();

	bh_write32(GICR_BASE + GICR_WAKER,
		   bh_read32(GICR_BASE + GICR_WAKER) & ~GICR_WAKER_PROCESSOR_SLEEP);
	while (bh_read32(GICR_BASE + GICR_WAKER) & GICR_WAKER_CHILDREN_ASLEEP)
		;
	bh_write32(GICR_SGI_BASE + GICR_IGROUPR0,
		   bh_read32(GICR_SGI_BASE + GICR_IGROUPR0) | (1u << intid));
	mmio_write8(GICR_SGI_BASE + GICR_IPRIORITYR + intid, PPI_PRIORITY);
	bh_write32(GICR_SGI_BASE + GICR_ISENABLER0, 1u << intid);
	__asm__ volatile("dsb sy\n\tisb" : : : "memory");
}

int bench_init(void)
{
	gic_init();
	return bench_check_counter();
}

void bench_wait(void)
{
	__asm__ volatile("dsb sy\n\twfi" : : : "memory");
}

_Noreturn void bench_exit(void)
{
	bh_irq_disable();
	for (;;)
		__asm__ volatile("wfi" : : : "memory");
}

/* crt0 calls these; the partition library's versions (exception.c) use hypercalls. */
void bh_unhandled_exception(unsigned long vector, unsigned long esr, unsigned long elr,
			    unsigned long far, unsigned long vcpu);
_Noreturn void bh_crt_main_returned(int code);

void bh_unhandled_exception(unsigned long vector, unsigned long esr, unsigned long elr,
			    unsigned long far, unsigned long vcpu)
{
	bh_printf("BENCH-ERROR unhandled exception: vector %lu ESR=0x%lx ELR=0x%lx FAR=0x%lx "
		  "vCPU %lu\n", vector, esr, elr, far, vcpu);
	bench_exit();
}

_Noreturn void bh_crt_main_returned(int code)
{
	bh_printf("BENCH-EXIT %d\n", code);
	bench_exit();
}
