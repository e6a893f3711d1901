/* The few C library functions a freestanding hypervisor needs (the compiler emits calls). */
#ifndef BULKHEAD_LIB_H
#define BULKHEAD_LIB_H

#include <stddef.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
size_t strlen(const char *s);

/* A small function on a measured hot path (a port message, the timer interrupt): always inline. */
#define HOT_INLINE static inline __attribute__((always_inline))
/* The same for a function of one file that other files call on such a path: the hypervisor is
 * built as one -flto unit, so it is inlined there too (an out-of-line copy stays, for callers
 * built without -flto such as the unit tests). */
#define HOT_INLINE_GLOBAL inline __attribute__((always_inline))

#endif
