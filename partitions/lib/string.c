/* The few memory routines GCC may call even in freestanding code (struct copies,
 * aggregate initialisation). Byte loops: partition memory is Device memory while the MMU
 * is off, where unaligned accesses fault, and speed does not matter here. The makefile
 * builds this with -fno-tree-loop-distribute-patterns so GCC cannot turn these loops back
 * into calls to themselves. */
#include <stddef.h>

#include "bulkhead/bulkhead.h"

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++) {
		if (*x != *y)
			return *x - *y;
	}
	return 0;
}

unsigned long bh_strlen(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

const char *bh_after_prefix(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (*s != *prefix)
			return 0;
	return s;
}
