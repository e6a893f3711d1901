/* vmtrap: the cost of each trapped-and-emulated operation a Linux guest uses most, in
 * instructions under QEMU -icount shift=0 (bench/linux.py).
 *
 * Booted as the kernel of a `linux:` partition (bench/linux_vmtrap.yaml), every operation below
 * traps to the hypervisor, which emulates it (vmachine.c, vgic_dist.c, vpl011.c, vpsci.c).
 * Booted bare by QEMU at EL1, the same instruction reaches QEMU's own device model.
 *
 * Each operation runs REPS times in a loop `op; subs; b.ne`, timed with stamps (16 back-to-back
 * counter reads, see partitions/bench/common/bench.h), against the same loop with `nop`:
 * cost = (loop - nop loop) / REPS + 1, the operation's own instruction counted. Results go out
 * on the PL011 as `BENCH <op> <cycles> cycles`, then `BENCH-DONE`.
 *
 * Freestanding, MMU off (all data accesses are Device memory: -mstrict-align), no libraries. */
#include "bench.h"

#define GICD_BASE 0x08000000ul
#define GICD_TYPER (GICD_BASE + 0x0004)
#define GICD_ISENABLER1 (GICD_BASE + 0x0104)   /* SPIs 32-63 */
#define GICR_BASE 0x080a0000ul                  /* vCPU / CPU 0's redistributor */
#define GICR_TYPER (GICR_BASE + 0x0008)
#define UART_BASE 0x09000000ul
#define UART_DR (UART_BASE + 0x000)
#define UART_FR (UART_BASE + 0x018)
#define UART_FR_TXFF (1u << 5)

#define PSCI_VERSION 0x84000000ul
#define UART_SPI_BIT (1u << 1)                  /* INTID 33: the PL011's own SPI */
#define SGI_SELF ((15ul << 24) | 1u)            /* SGI 15 to Aff0 = 0 (itself), disabled */

#define CALL_PAGE 0x0b001000ul                  /* the user-space hypercall page (partition only) */
#define HC_GET_TIME 0xc6000002ul                /* BH_HC_GET_TIME */
#define REPS 1000ul
#define DR_REPS 64ul                            /* each prints a character */

/* --- output -------------------------------------------------------------------------------- */

static inline unsigned mmio_read32(unsigned long addr)
{
	unsigned v;

	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

static inline void mmio_write32(unsigned long addr, unsigned v)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(v), "r"(addr) : "memory");
}

static void putc_(char c)
{
	while (mmio_read32(UART_FR) & UART_FR_TXFF)
		;
	mmio_write32(UART_DR, (unsigned char)c);
}

static void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

static void putu(unsigned long long v)
{
	char buf[24];
	int n = 0;

	do
		buf[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		putc_(buf[--n]);
}

static void puthex(unsigned long long v)
{
	puts_("0x");
	for (int shift = 60; shift >= 0; shift -= 4)
		putc_("0123456789abcdef"[(v >> shift) & 15]);
}

void vmtrap_exception(unsigned long kind)
{
	unsigned long esr, elr, far;

	__asm__ volatile("mrs %0, esr_el1\n mrs %1, elr_el1\n mrs %2, far_el1"
			 : "=r"(esr), "=r"(elr), "=r"(far));
	puts_("VMTRAP-EXCEPTION vector ");
	putu(kind);
	puts_(" esr ");
	puthex(esr);
	puts_(" elr ");
	puthex(elr);
	puts_(" far ");
	puthex(far);
	puts_("\n");
	for (;;)
		__asm__ volatile("wfe");
}

/* --- the device tree: which PSCI conduit ---------------------------------------------------- */

#define FDT_MAGIC 0xd00dfeedu
#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE 2u
#define FDT_PROP 3u
#define FDT_NOP 4u

static unsigned be32(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

static int str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static int starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

static unsigned long strlen_(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

/* The /psci node's "method" ("smc" in a partition, "hvc" on QEMU at EL1 without EL2), or 0. */
static const char *psci_method(const unsigned char *fdt)
{
	if (!fdt || be32(fdt) != FDT_MAGIC)
		return 0;
	const unsigned char *p = fdt + be32(fdt + 8), *end = fdt + be32(fdt + 4);
	const char *strings = (const char *)fdt + be32(fdt + 12);
	int depth = 0, psci_depth = -1;

	while (p < end) {
		unsigned token = be32(p);

		p += 4;
		if (token == FDT_BEGIN_NODE) {
			const char *name = (const char *)p;

			depth++;
			if (depth == 2 && starts_with(name, "psci") && (name[4] == 0 || name[4] == '@'))
				psci_depth = depth;
			p += (strlen_(name) + 4) & ~3ul;
		} else if (token == FDT_END_NODE) {
			if (depth-- == psci_depth)
				psci_depth = -1;
		} else if (token == FDT_PROP) {
			unsigned len = be32(p), name = be32(p + 4);

			if (depth == psci_depth && str_eq(strings + name, "method"))
				return (const char *)p + 8;
			p += 8 + ((len + 3) & ~3u);
		} else if (token != FDT_NOP) {
			break;
		}
	}
	return 0;
}

/* --- timed loops ----------------------------------------------------------------------------- */

/* Clobbers of every loop (SMCCC lets an SMC/HVC callee clobber x0-x17), so that the loops with
 * the operation and with `nop` compile to the same code around the asm. */
#define LOOP_CLOBBERS "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", \
	"x12", "x13", "x14", "x15", "x16", "x17", "cc", "memory"

/* TIMED(name, body): a function timing `body; subs; b.ne` n times, from the first counter read
 * of one stamp to the first of the next. body sees %[a] (an address) and %[v] (a value). */
#define TIMED(fname, body)                                                                      \
	static __attribute__((noinline)) unsigned long long fname(unsigned long n,               \
								  unsigned long a,               \
								  unsigned long v)               \
	{                                                                                         \
		struct bench_reads s0, s1;                                                        \
		register unsigned long rn __asm__("x19") = n;                                     \
		register unsigned long ra __asm__("x20") = a;                                     \
		register unsigned long rv __asm__("x21") = v;                                     \
		BENCH_READ16(s0);                                                                 \
		__asm__ volatile("1: " body "\n\tsubs %[n], %[n], #1\n\tb.ne 1b"                \
				 : [n] "+r"(rn)                                                   \
				 : [a] "r"(ra), [v] "r"(rv)                                       \
				 : LOOP_CLOBBERS);                                                \
		BENCH_READ16(s1);                                                                 \
		return bench_stamp_decode(&s1) - bench_stamp_decode(&s0);                         \
	}

TIMED(loop_nop, "nop")
TIMED(loop_ldr32, "ldr w9, [%[a]]")
TIMED(loop_ldr64, "ldr x9, [%[a]]")
TIMED(loop_str32, "str %w[v], [%[a]]")
TIMED(loop_msr_sgi, "msr icc_sgi1r_el1, %[v]")
TIMED(loop_nop_call, "mov x0, %[v]\n\tnop")
TIMED(loop_smc, "mov x0, %[v]\n\tsmc #0")
TIMED(loop_hvc, "mov x0, %[v]\n\thvc #0")
/* One call through the hypercall page: the function ID into the block at %[v] (the result
 * replaced it), then the block's address into the page's BLOCK register. */
TIMED(loop_call_page, "movz x9, #0x0002\n\tmovk x9, #0xc600, lsl #16\n\tstr x9, [%[v]]\n\t"
		      "str %[v], [%[a]]")
TIMED(loop_call_page_base, "movz x9, #0x0002\n\tmovk x9, #0xc600, lsl #16\n\tstr x9, [%[v]]\n\t"
			   "nop")

typedef unsigned long long (*timed_fn)(unsigned long, unsigned long, unsigned long);

static void report(const char *name, unsigned long long with, unsigned long long without,
		   unsigned long reps)
{
	long long extra = (long long)(with - without);

	puts_("BENCH ");
	puts_(name);
	putc_(' ');
	putu((unsigned long long)((extra + (long long)reps / 2) / (long long)reps + 1));
	puts_(" cycles\n");
}

static void measure(const char *name, timed_fn fn, timed_fn base, unsigned long reps,
		    unsigned long a, unsigned long v)
{
	unsigned long long with = fn(reps, a, v), without = base(reps, a, v);

	report(name, with, without, reps);
}

void vmtrap_main(const unsigned char *fdt)
{
	const char *method = psci_method(fdt);
	int smc = method && str_eq(method, "smc");

	puts_("vmtrap: PSCI conduit ");
	puts_(method ? method : "(none: HVC)");
	puts_("\n");
	if (bench_check_counter())
		goto done;

	measure("gicd_typer_read", loop_ldr32, loop_nop, REPS, GICD_TYPER, 0);
	measure("gicd_isenabler_write", loop_str32, loop_nop, REPS, GICD_ISENABLER1, UART_SPI_BIT);
	measure("gicr_typer_read", loop_ldr64, loop_nop, REPS, GICR_TYPER, 0);
	measure("psci_version", smc ? loop_smc : loop_hvc, loop_nop_call, REPS, 0, PSCI_VERSION);
	measure("uart_fr_read", loop_ldr32, loop_nop, REPS, UART_FR, 0);
	{
		/* DR_REPS dots on the console, then the line ends before the figure. */
		unsigned long long with = loop_str32(DR_REPS, UART_DR, '.');
		unsigned long long without = loop_nop(DR_REPS, UART_DR, '.');

		puts_("\n");
		report("uart_dr_write", with, without, DR_REPS);
	}
	measure("sgi_send", loop_msr_sgi, loop_nop, REPS, 0, SGI_SELF);
	if (smc) { /* only a partition has the hypercall page; bare QEMU would fault */
		unsigned long long call_block[8] __attribute__((aligned(64))) = { 0 };
		measure("call_page_get_time", loop_call_page, loop_call_page_base, REPS, CALL_PAGE,
			(unsigned long)call_block);
		measure("hvc_get_time", loop_hvc, loop_nop_call, REPS, 0, HC_GET_TIME);
	}
done:
	puts_("BENCH-DONE\n");
}

/* bench.h's counter check, without libbhbench (which needs the partition runtime). */
int bench_check_counter(void)
{
	unsigned long frq;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
	if (frq == 1000000000ul / BENCH_NS_PER_TICK)
		return 0;
	puts_("vmtrap: CNTFRQ_EL0 is ");
	putu(frq);
	puts_(", not 62.5 MHz: the stamps would be wrong\n");
	return -1;
}
