/* Force-included (-include) when partitions/lib/printf.c is compiled for the bare-metal
 * runtime: bulkhead.h is read first, so its include guard makes printf.c's own #include a
 * no-op, and then printf.c's console writes go to the PL011 (bare.c) instead of the
 * console hypercall. The formatter itself is the partition library's, unchanged. */
#ifndef BARE_CONSOLE_H
#define BARE_CONSOLE_H

#include "bulkhead/bulkhead.h"

long bare_console_write(const void *buf, unsigned long len);
#define bh_console_write bare_console_write

#endif
