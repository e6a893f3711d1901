/* emulbench: what one trapped-and-emulated access costs an unmodified guest, in instructions
 * under QEMU -icount shift=0 (bench/run.py, bench/emulbench.yaml). A bare-metal program for
 * QEMU's virt machine (board: qemu-virt), no Bulkhead code: every access below traps to the
 * hypervisor, which emulates it (vmachine.c, vgic_dist.c, vpl011.c, vpsci.c).
 *
 * Each access is timed alone, REPS times: a stamp (16 counter reads, exact to the
 * instruction), the access, a stamp (start.S, timed_*), against the same code with `nop`:
 * cost = difference + 1, from the trapping instruction to the next guest instruction, the
 * access's own instruction counted. Every access of a kind must cost the same; the line gives
 * the largest and the smallest: `BENCH emul_<op> <max> cycles <min>`, then `BENCH-DONE`. */
#include <stdint.h>
#include "pl011_print.h"

#define GICD 0x08000000ul
#define GICD_TYPER (GICD + 0x0004)
#define GICD_ISENABLER1 (GICD + 0x0104)  /* SPIs 32-63 */
#define PSCI_VERSION 0x84000000ul
#define CNTFRQ_STAMP 62500000ul          /* the stamps assume 16 ns ticks */
#define REPS 64

typedef void timed_fn(uint64_t addr, uint64_t value, uint64_t reads[32]);
timed_fn timed_nop, timed_ldr32, timed_str32, timed_hvc, timed_smc;

void unexpected(uint64_t esr, uint64_t elr)
{
	puts_("emulbench: unexpected exception esr ");
	putdec(esr);
	puts_(" elr ");
	putdec(elr);
	putc_('\n');
	for (;;)
		__asm__ volatile("wfi");
}

/* The exact time of a stamp's first read (partitions/bench/common/stamp.h): read i happens at
 * T + i, so the first read that differs from the first sits on a tick boundary. */
static uint64_t stamp(const uint64_t *r)
{
	for (unsigned i = 1; i < 16; i++)
		if (r[i] != r[0])
			return r[i] * 16 - i;
	return r[0] * 16;
}

static uint64_t stretch(timed_fn *fn, uint64_t addr, uint64_t value)
{
	uint64_t reads[32];

	fn(addr, value, reads);
	return stamp(reads + 16) - stamp(reads);
}

struct range {
	uint64_t min, max;
};

/* REPS accesses by fn, each timed alone against the nop stretch. */
static struct range measure(timed_fn *fn, uint64_t addr, uint64_t value)
{
	uint64_t base = stretch(timed_nop, addr, value);
	struct range r = { UINT64_MAX, 0 };

	for (unsigned i = 0; i < REPS; i++) {
		uint64_t cost = stretch(fn, addr, value) - base + 1;
		r.min = cost < r.min ? cost : r.min;
		r.max = cost > r.max ? cost : r.max;
	}
	return r;
}

static void report(const char *name, struct range r)
{
	puts_("BENCH emul_");
	puts_(name);
	putc_(' ');
	putdec(r.max);
	puts_(" cycles ");
	putdec(r.min);
	putc_('\n');
}

int main(void)
{
	uint64_t frq;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
	if (frq != CNTFRQ_STAMP) {
		puts_("emulbench: CNTFRQ_EL0 is not 62.5 MHz: the stamps would be wrong\n");
		puts_("BENCH-DONE\n");
		return 0;
	}
	report("gicd_typer_read", measure(timed_ldr32, GICD_TYPER, 0));
	report("gicd_isenabler_read", measure(timed_ldr32, GICD_ISENABLER1, 0));
	report("psci_version_hvc", measure(timed_hvc, 0, PSCI_VERSION));
	report("psci_version_smc", measure(timed_smc, 0, PSCI_VERSION));
	/* The dots continue an open line, as a guest's console output mostly does. */
	puts_("emulbench: UARTDR ");
	struct range dr = measure(timed_str32, UART_DR, '.');
	putc_('\n');
	report("uart_dr_write", dr);
	puts_("BENCH-DONE\n");
	return 0;
}
