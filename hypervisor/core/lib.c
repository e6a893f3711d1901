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

/* d 8-byte aligned, s not: whole words of d from the two aligned words of s each straddles,
 * by shifts (little endian), so no access is unaligned (the MMU may be off, where an unaligned
 * access faults). A byte at a time, a 4 KiB port message from an odd guest address cost about
 * 20000 instructions in one hypercall, more than a best-effort vCPU's lead before the core's
 * instant (sched.h BE_LEAD_TICKS); this way it costs about a quarter of that. The aligned words
 * read hold bytes beyond [s, s+n) only within the 8 bytes of a byte that is copied: never
 * another page. Returns the bytes left (under 8). */
/* Not instrumented: the host unit tests build this with AddressSanitizer, which would flag
 * those bytes. */
__attribute__((no_sanitize_address)) static size_t copy_shifted(uint8_t **dp, const uint8_t **sp,
							       size_t n)
{
	unsigned off = (unsigned)((uintptr_t)*sp & 7), lo_shift = off * 8, hi_shift = 64 - lo_shift;
	const uint64_t *f = (const void *)(*sp - off);
	uint64_t *t = (void *)*dp, w = *f++;

	for (; n >= 32; n -= 32, f += 4, t += 4) {
		uint64_t a = f[0], b = f[1], c = f[2], e = f[3];
		t[0] = w >> lo_shift | a << hi_shift;
		t[1] = a >> lo_shift | b << hi_shift;
		t[2] = b >> lo_shift | c << hi_shift;
		t[3] = c >> lo_shift | e << hi_shift;
		w = e;
	}
	for (; n >= 8; n -= 8, t++) {
		uint64_t a = *f++;
		*t = w >> lo_shift | a << hi_shift;
		w = a;
	}
	*dp = (uint8_t *)t;
	*sp = (const uint8_t *)f - 8 + off;
	return n;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (!words_ok(d, s) && n >= 32) {
		for (; (uintptr_t)d & 7; n--)
			*d++ = *s++;
		if (!words_ok(d, s))
			n = copy_shifted(&d, &s, n);
	}
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
