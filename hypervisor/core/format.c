/* Bounded printf-like formatting for the hypervisor's log. */
#include <stdbool.h>
#include <stdint.h>
#include "format.h"

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len++] = c;
}

static void put_str(struct out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		put(o, *s++);
}

static void put_uint(struct out *o, uint64_t v, unsigned base, unsigned width, char pad)
{
	char digits[24];
	unsigned n = 0;

	do {
		unsigned d = (unsigned)(v % base);
		digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	while (width > n && width-- > 0)
		put(o, pad);
	while (n)
		put(o, digits[--n]);
}

static void put_int(struct out *o, int64_t v, unsigned width, char pad)
{
	if (v < 0) {
		put(o, '-');
		put_uint(o, (uint64_t)0 - (uint64_t)v, 10, width ? width - 1 : 0, pad);
	} else {
		put_uint(o, (uint64_t)v, 10, width, pad);
	}
}

/* Reads the argument of a conversion with `longs` l modifiers (z counts as one). */
static uint64_t arg_unsigned(va_list *ap, unsigned longs)
{
	return longs ? va_arg(*ap, uint64_t) : va_arg(*ap, unsigned);
}

static int64_t arg_signed(va_list *ap, unsigned longs)
{
	return longs ? va_arg(*ap, int64_t) : va_arg(*ap, int);
}

static void convert(struct out *o, char conv, unsigned width, char pad, unsigned longs,
		    va_list *ap)
{
	switch (conv) {
	case 'd':
	case 'i':
		put_int(o, arg_signed(ap, longs), width, pad);
		break;
	case 'u':
		put_uint(o, arg_unsigned(ap, longs), 10, width, pad);
		break;
	case 'x':
		put_uint(o, arg_unsigned(ap, longs), 16, width, pad);
		break;
	case 'p':
		put_str(o, "0x");
		put_uint(o, (uint64_t)(uintptr_t)va_arg(*ap, void *), 16, width, pad);
		break;
	case 's':
		put_str(o, va_arg(*ap, const char *));
		break;
	case 'c':
		put(o, (char)va_arg(*ap, int));
		break;
	default:
		put(o, '%');
		put(o, conv);
	}
}

size_t format_v(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	va_list args;

	va_copy(args, ap);
	while (*fmt) {
		if (*fmt != '%' || fmt[1] == '\0') {
			put(&o, *fmt++);
			continue;
		}
		fmt++;
		if (*fmt == '%') {
			put(&o, *fmt++);
			continue;
		}
		char pad = ' ';
		unsigned width = 0, longs = 0;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (unsigned)(*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			longs++;
			fmt++;
		}
		if (*fmt)
			convert(&o, *fmt++, width, pad, longs, &args);
	}
	va_end(args);
	if (size)
		buf[o.len] = '\0';
	return o.len;
}

size_t format(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = format_v(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
