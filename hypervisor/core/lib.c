/* memcpy/memset/strlen for a freestanding build; the compiler may emit calls to them.
 * Word-sized when both ends allow it: image loads at boot and cold restart go through these. */
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
		/* 64 bytes a step (load and store pairs): a Linux payload is tens of megabytes. */
		for (; n >= 64; n -= 64, d += 64, s += 64) {
			const uint64_t *f = (const void *)s;
			uint64_t *t = (void *)d;
			uint64_t a = f[0], b = f[1], c = f[2], e = f[3], g = f[4], h = f[5], i = f[6],
				 j = f[7];
			t[0] = a, t[1] = b, t[2] = c, t[3] = e, t[4] = g, t[5] = h, t[6] = i, t[7] = j;
		}
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
