/* memcpy/memset/strlen for a freestanding build; the compiler may emit calls to them.
 * Word-sized when both ends allow it: image reload at cold restart goes through these. */
#include <stdint.h>
#include "lib.h"

static int words_ok(const void *a, const void *b)
{
	return (((uintptr_t)a | (uintptr_t)b) & 7) == 0;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (words_ok(d, s)) {
		for (; n >= 8; n -= 8, d += 8, s += 8)
			*(uint64_t *)(void *)d = *(const uint64_t *)(const void *)s;
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	uint8_t *d = dst;
	uint64_t word = 0x0101010101010101ull * (uint8_t)c;

	if (words_ok(d, d)) {
		for (; n >= 8; n -= 8, d += 8)
			*(uint64_t *)(void *)d = word;
	}
	while (n--)
		*d++ = (uint8_t)c;
	return dst;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}
