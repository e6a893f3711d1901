/* Minimal bounded formatter: %d %i %u %x %p %s %c %% with l/ll/z and zero-padded width. */
#ifndef BULKHEAD_FORMAT_H
#define BULKHEAD_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

/* Writes at most size-1 characters and a NUL; returns the characters written. */
size_t format_v(char *buf, size_t size, const char *fmt, va_list ap);
size_t format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
