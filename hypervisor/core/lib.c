/* memcpy/memset/strlen for a freestanding build; the compiler may emit calls to them.
 * Word-sized when both ends allow it: image loads at boot and cold restart go through these. */
#include <stdint.h>
#include "lib.h"

static int words_ok(const void *a, const void *b)
{
	return (((uintptr_t)a | (uintptr_t)b) & 7) == 0;
}

/* 2 or 4 words, loaded before they are stored (load and store pairs). */
static void copy_2_words(uint8_t *d, const uint8_t *s)
{
	const uint64_t *f = (const void *)s;
	uint64_t *t = (void *)d, a = f[0], b = f[1];

	t[0] = a, t[1] = b;
}

static void copy_4_words(uint8_t *d, const uint8_t *s)
{
	copy_2_words(d, s);
	copy_2_words(d + 16, s + 16);
}

void *memcpy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (words_ok(d, s)) {
		/* 64 bytes a step: a Linux payload is tens of megabytes. */
		for (; n >= 64; n -= 64, d += 64, s += 64) {
			copy_4_words(d, s);
			copy_4_words(d + 32, s + 32);
		}
		/* The rest by halves, without a loop: port messages are mostly under 64 bytes. */
		if (n & 32)
			copy_4_words(d, s), d += 32, s += 32;
		if (n & 16)
			copy_2_words(d, s), d += 16, s += 16;
		if (n & 8)
			*(uint64_t *)(void *)d = *(const uint64_t *)(const void *)s, d += 8, s += 8;
		if (n & 4)
			*(uint32_t *)(void *)d = *(const uint32_t *)(const void *)s, d += 4, s += 4;
		n &= 3;
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
