/* Invariant failures inside the hypervisor: message, register dump, system halt. */
#ifndef BULKHEAD_PANIC_H
#define BULKHEAD_PANIC_H

_Noreturn void bh_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define BH_CHECK(cond) \
	do { if (!(cond)) bh_panic("check failed: %s (%s:%d)", #cond, __FILE__, __LINE__); } while (0)

#endif
