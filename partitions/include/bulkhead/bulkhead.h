/* Bulkhead partition API: hypercall wrappers, console output and timing helpers.
 *
 * Partitions run at EL1 with the MMU off, so every pointer passed to the hypervisor is a
 * guest physical address (IPA) inside the partition's own memory.
 * Freestanding C11; link with libbhpart.a (and part.ld).
 */
#ifndef BULKHEAD_BULKHEAD_H
#define BULKHEAD_BULKHEAD_H

#include <stdarg.h>
#include <stddef.h>

#include "bulkhead/abi.h"
#include "bulkhead/layout.h"

/* ---------------------------------------------------------------------------------------
 * Hypercall primitive.
 *
 * SMCCC (v1.2) lets the callee clobber x0..x17 and preserves x18..x30 and SP. x0..x5 carry
 * the call and x0..x3 the results, so they are in/out operands; x6..x17 are clobbered.
 * The "memory" clobber orders the call against guest memory accesses: the hypervisor
 * reads the console buffer, and a reset or halt must not be moved across stores.
 * --------------------------------------------------------------------------------------- */
struct bh_hc_result {
	long x0;            /* result or BH_* error */
	unsigned long x1;   /* extra results */
	unsigned long x2;
	unsigned long x3;
};

static inline struct bh_hc_result bh_hvc(unsigned long fn, unsigned long a1, unsigned long a2,
					 unsigned long a3, unsigned long a4, unsigned long a5)
{
	register unsigned long x0 __asm__("x0") = fn;
	register unsigned long x1 __asm__("x1") = a1;
	register unsigned long x2 __asm__("x2") = a2;
	register unsigned long x3 __asm__("x3") = a3;
	register unsigned long x4 __asm__("x4") = a4;
	register unsigned long x5 __asm__("x5") = a5;

	__asm__ volatile("hvc #0"
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5)
			 :
			 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
			   "x16", "x17", "cc", "memory");

	struct bh_hc_result r = { (long)x0, x1, x2, x3 };
	return r;
}

/* Raw hypercall for tests that need arbitrary function IDs and arguments. */
static inline long bh_hypercall(unsigned long fn, unsigned long a1, unsigned long a2,
				unsigned long a3, unsigned long a4, unsigned long a5)
{
	return bh_hvc(fn, a1, a2, a3, a4, a5).x0;
}

/* ---------------------------------------------------------------------------------------
 * Typed wrappers, one per BH_HC_* call.
 * --------------------------------------------------------------------------------------- */

/* Writes len bytes; returns the number written or a BH_* error. Write whole lines. */
static inline long bh_console_write(const void *buf, unsigned long len)
{
	return bh_hypercall(BH_HC_CONSOLE_WRITE, (unsigned long)buf, len, 0, 0, 0);
}

/* Stores this partition's id and the calling vCPU's id (either pointer may be NULL). */
static inline long bh_get_ids(unsigned *partition, unsigned *vcpu)
{
	struct bh_hc_result r = bh_hvc(BH_HC_GET_IDS, 0, 0, 0, 0, 0);

	if (r.x0 >= 0) {
		if (partition)
			*partition = (unsigned)r.x1;
		if (vcpu)
			*vcpu = (unsigned)r.x2;
	}
	return r.x0;
}

/* Stores the hypervisor's BH_CLOCK_HW time (ns since power-on). */
static inline long bh_get_time(unsigned long long *ns)
{
	struct bh_hc_result r = bh_hvc(BH_HC_GET_TIME, BH_CLOCK_HW, 0, 0, 0, 0);

	if (r.x0 >= 0 && ns)
		*ns = r.x1;
	return r.x0;
}

/* Halts the calling partition. Parks in wfi should the hypervisor ever return. */
_Noreturn static inline void bh_halt_self(void)
{
	bh_hypercall(BH_HC_HALT_SELF, 0, 0, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi" ::: "memory");
}

/* Blocks until this vCPU's EL1 virtual timer condition is met (see bh_sleep_ns). */
static inline long bh_idle(void)
{
	return bh_hypercall(BH_HC_IDLE, 0, 0, 0, 0, 0);
}

/* Restarts the partition (BH_RESET_COLD / BH_RESET_WARM); returns only on error. */
static inline long bh_reset_self(unsigned mode)
{
	return bh_hypercall(BH_HC_RESET_SELF, mode, 0, 0, 0, 0);
}

/* Reports a partition error event to the health monitor; returns if the action allows. */
static inline long bh_raise_event(unsigned long code)
{
	return bh_hypercall(BH_HC_RAISE_EVENT, code, 0, 0, 0, 0);
}

/* Halts the whole system; system partitions only, so it may return BH_PERM_ERROR. */
static inline long bh_halt_system(void)
{
	return bh_hypercall(BH_HC_HALT_SYSTEM, 0, 0, 0, 0, 0);
}

/* ---------------------------------------------------------------------------------------
 * Console formatting (libbhpart). Each call formats into its own stack line buffer and
 * hands the hypervisor a write at every '\n' (or when the buffer fills, or at the end of
 * the call), so concurrent vCPUs never interleave inside a line they print in one call.
 * Supported: %d %i %u %x %X %c %s %p %% with l/ll/z/h length, '-'/'0' flags, width and
 * '*', and a precision for %s.
 * --------------------------------------------------------------------------------------- */
int bh_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bh_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Formats into buf (always NUL-terminated when size > 0); returns the untruncated length. */
int bh_snprintf(char *buf, unsigned long size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int bh_vsnprintf(char *buf, unsigned long size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Prints s followed by '\n' as one line. */
int bh_puts(const char *s);

unsigned long bh_strlen(const char *s);

/* ---------------------------------------------------------------------------------------
 * Time, from the EL1 virtual counter (CNTVOFF_EL2 = 0, so it counts since power-on).
 * --------------------------------------------------------------------------------------- */

/* The isb keeps the read from being speculated ahead of earlier instructions. */
static inline unsigned long long bh_counter(void)
{
	unsigned long long v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static inline unsigned long long bh_counter_freq(void)
{
	unsigned long long v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

unsigned long long bh_now_ns(void);              /* no hypercall */
void bh_sleep_until_ns(unsigned long long deadline_ns); /* absolute, bh_now_ns time base */
void bh_sleep_ns(unsigned long long ns);
void bh_sleep_ms(unsigned ms);

/* ---------------------------------------------------------------------------------------
 * Single 32-bit accesses to an arbitrary IPA, for code that probes isolation. Inline asm
 * guarantees exactly one store/load that the compiler can neither drop nor split.
 * --------------------------------------------------------------------------------------- */
static inline void bh_write32(unsigned long addr, unsigned int val)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(val), "r"(addr) : "memory");
}

static inline unsigned int bh_read32(unsigned long addr)
{
	unsigned int v;

	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

/* ---------------------------------------------------------------------------------------
 * Entry points the application provides (called by crt0).
 * --------------------------------------------------------------------------------------- */
int main(unsigned vcpu, unsigned boot_kind, unsigned restarts);
/* Weak default in libbhpart parks the vCPU; returning from it parks the vCPU too. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts);

#endif
