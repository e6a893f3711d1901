/* virtprobe: a bare-metal program for QEMU's `virt` machine (GICv3), written against the board
 * alone: no Bulkhead library, no hypercall. It runs unmodified on bare QEMU and in a Bulkhead
 * partition with `board: qemu-virt`, and prints the same lines in both (tests/system/test_boards.py
 * compares them). Every line starts with "virtprobe: ". */
#include <stdint.h>
#include "pl011_print.h"

#define GICD 0x08000000ul
#define GICR 0x080a0000ul
#define GICR_STRIDE 0x20000ul
#define RAM_BASE 0x40000000ul
#define VTIMER_INTID 27u

#define PSCI_VERSION 0x84000000u
#define PSCI_CPU_ON 0xc4000003u
#define PSCI_SYSTEM_OFF 0x84000008u
#define PSCI_FEATURES 0x8400000au
#define SMCCC_VERSION 0x80000000u

int64_t smc_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
int64_t hvc_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
void secondary_entry(void);
extern char stack1_top[];

static volatile uint32_t ticks;
static volatile uint32_t cpu1_up;

#define SYSREG_R(name) ({ uint64_t v_; __asm__ volatile("mrs %0, " name : "=r"(v_)); v_; })
#define SYSREG_W(name, v) __asm__ volatile("msr " name ", %0" :: "r"((uint64_t)(v)))

static void line(const char *s)
{
	puts_("virtprobe: ");
	puts_(s);
	putc_('\n');
}

void unexpected(uint64_t esr, uint64_t elr)
{
	puts_("virtprobe: unexpected exception esr=");
	puthex(esr);
	puts_(" elr=");
	puthex(elr);
	putc_('\n');
	for (;;)
		__asm__ volatile("wfi");
}

static uint32_t be32(const volatile uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The GICv3 distributor (affinity routing, group 1), this CPU's redistributor awake with the
 * virtual timer's PPI in group 1 and enabled, and the CPU interface by system registers. */
static void gic_init_cpu(unsigned cpu)
{
	uint64_t rd = GICR + cpu * GICR_STRIDE, sgi = rd + 0x10000;

	wr32(rd + 0x14, rd32(rd + 0x14) & ~2u); /* GICR_WAKER.ProcessorSleep */
	while (rd32(rd + 0x14) & 4u)            /* ChildrenAsleep */
		__asm__ volatile("yield");
	wr32(sgi + 0x80, rd32(sgi + 0x80) | (1u << VTIMER_INTID));  /* GICR_IGROUPR0 */
	wr32(sgi + 0x400 + (VTIMER_INTID & ~3u), 0xa0u << (8 * (VTIMER_INTID & 3))); /* priority */
	wr32(sgi + 0x100, 1u << VTIMER_INTID);                      /* GICR_ISENABLER0 */
	SYSREG_W("S3_0_C12_C12_5", SYSREG_R("S3_0_C12_C12_5") | 1); /* ICC_SRE_EL1.SRE */
	__asm__ volatile("isb");
	SYSREG_W("S3_0_C4_C6_0", 0xff);  /* ICC_PMR_EL1 */
	SYSREG_W("S3_0_C12_C12_7", 1);   /* ICC_IGRPEN1_EL1 */
	__asm__ volatile("isb");
}

void irq_handler(void)
{
	uint32_t intid = (uint32_t)SYSREG_R("S3_0_C12_C12_0"); /* ICC_IAR1_EL1 */
	if (intid == VTIMER_INTID) {
		SYSREG_W("cntv_ctl_el0", 0);
		ticks++;
	}
	if (intid < 1020)
		SYSREG_W("S3_0_C12_C12_1", intid); /* ICC_EOIR1_EL1 */
}

static void psci_version(const char *how, int64_t (*call)(uint64_t, uint64_t, uint64_t, uint64_t))
{
	int64_t v = call(PSCI_VERSION, 0, 0, 0);
	puts_("virtprobe: PSCI_VERSION by ");
	puts_(how);
	if (v < 0 || (v >> 16) < 1) {
		puts_(": failed ");
		puthex((uint64_t)v);
	} else {
		puts_(": PSCI ");
		putdec((uint64_t)v >> 16);
		puts_(".x");
	}
	putc_('\n');
}

void secondary_main(void)
{
	gic_init_cpu(1);
	line("cpu 1 up at EL1");
	__atomic_store_n(&cpu1_up, 1, __ATOMIC_SEQ_CST);
	__asm__ volatile("sev");
}

static unsigned cpu_count(const volatile uint8_t *dtb)
{
	/* Count "cpu@" nodes in the structure block: enough for this probe. */
	uint32_t off = be32(dtb + 8), size = be32(dtb + 36);
	unsigned n = 0;
	for (uint32_t i = off; i + 4 < off + size; i += 4)
		if (be32(dtb + i) == 1 && dtb[i + 4] == 'c' && dtb[i + 5] == 'p' && dtb[i + 6] == 'u' && dtb[i + 7] == '@')
			n++;
	return n;
}

void main(uint64_t x0)
{
	const volatile uint8_t *dtb = (const volatile uint8_t *)(x0 ? x0 : RAM_BASE);
	uint64_t el = SYSREG_R("CurrentEL") >> 2;

	line("hello from a bare-metal program for qemu virt");
	puts_("virtprobe: running at EL");
	putdec(el);
	putc_('\n');
	if (be32(dtb) != 0xd00dfeedu) {
		line("no device tree");
	} else {
		puts_("virtprobe: device tree magic ");
		puthex(be32(dtb));
		putc_('\n');
	}
	unsigned cpus = be32(dtb) == 0xd00dfeedu ? cpu_count(dtb) : 1;
	puts_("virtprobe: cpus in the device tree: ");
	putdec(cpus);
	putc_('\n');

	gic_init_cpu(0);
	wr32(GICD + 0x0, 0x12); /* GICD_CTLR: ARE, EnableGrp1 */
	line("gicv3 ready");

	uint64_t freq = SYSREG_R("cntfrq_el0");
	SYSREG_W("cntv_tval_el0", freq / 1000); /* 1 ms */
	SYSREG_W("cntv_ctl_el0", 1);
	__asm__ volatile("msr daifclr, #2");
	while (!ticks)
		__asm__ volatile("wfi");
	__asm__ volatile("msr daifset, #2");
	line("virtual timer interrupt taken (INTID 27)");

	psci_version("SMC", smc_call);
	psci_version("HVC", hvc_call);

	if (cpus >= 2) {
		int64_t rc = smc_call(PSCI_CPU_ON, 1, (uint64_t)secondary_entry, (uint64_t)stack1_top);
		if (rc != 0) {
			puts_("virtprobe: CPU_ON failed ");
			puthex((uint64_t)rc);
			putc_('\n');
		} else {
			while (!__atomic_load_n(&cpu1_up, __ATOMIC_SEQ_CST))
				__asm__ volatile("wfe");
			line("cpu 0 saw cpu 1");
		}
	}
	line("done, SYSTEM_OFF");
	smc_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	line("SYSTEM_OFF returned");
}
