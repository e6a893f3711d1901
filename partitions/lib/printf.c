/* Minimal printf for partitions: console output through BH_HC_CONSOLE_WRITE, plus
 * snprintf. One formatter feeds either sink. */
#include "bulkhead/bulkhead.h"

/* Console line buffer size: longer lines are passed on in pieces of this size. */
#define LINE_MAX_CHARS 256

struct sink {
	char *buf;
	unsigned long cap;    /* console: buffer size; string: size including the NUL */
	unsigned long len;    /* characters currently in buf */
	unsigned long total;  /* characters produced so far (the return value) */
	int console;
};

/* Writes the buffered characters; gives up on an error or no progress rather than spin. */
static void sink_flush(struct sink *s)
{
	unsigned long done = 0;

	while (done < s->len) {
		long n = bh_console_write(s->buf + done, s->len - done);

		if (n <= 0)
			break;
		done += (unsigned long)n;
	}
	s->len = 0;
}

/* The hypervisor queues output and moves it to the UART within the writer's own time; when
 * a write came too close to the end of the partition's slot or budget, the rest waits. Ask
 * until it is out (the next slot has time), but not for ever. */
void bh_console_drain(void)
{
	for (unsigned tries = 0; tries < 100000u && bh_console_flush() > 0; tries++)
		;
}

static void put(struct sink *s, char c)
{
	s->total++;
	if (s->console) {
		s->buf[s->len++] = c;
		if (c == '\n' || s->len == s->cap)
			sink_flush(s);
	} else if (s->len + 1 < s->cap) {
		s->buf[s->len++] = c;
	}
}

static void put_pad(struct sink *s, char c, int n)
{
	while (n-- > 0)
		put(s, c);
}

struct spec {
	int left;     /* '-' flag */
	int zero;     /* '0' flag */
	int width;
	int prec;     /* -1: none */
	int lng;      /* number of 'l' (or 'z'): 0 int, >= 1 long / long long */
};

static void put_str(struct sink *s, const char *str, const struct spec *sp)
{
	int n = 0;

	if (!str)
		str = "(null)";
	while (str[n] && (sp->prec < 0 || n < sp->prec))
		n++;
	if (!sp->left)
		put_pad(s, ' ', sp->width - n);
	for (int i = 0; i < n; i++)
		put(s, str[i]);
	if (sp->left)
		put_pad(s, ' ', sp->width - n);
}

/* prefix is "-", "0x" or "" and goes before zero padding but after space padding. */
static void put_num(struct sink *s, unsigned long long v, unsigned base, int upper,
		    const char *prefix, const struct spec *sp)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, plen = (int)bh_strlen(prefix);

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);

	int pad = sp->width - n - plen;

	if (!sp->left && !sp->zero)
		put_pad(s, ' ', pad);
	while (*prefix)
		put(s, *prefix++);
	if (!sp->left && sp->zero)
		put_pad(s, '0', pad);
	while (n)
		put(s, tmp[--n]);
	if (sp->left)
		put_pad(s, ' ', pad);
}

static unsigned long long get_unsigned(va_list *ap, int lng)
{
	if (lng)
		return va_arg(*ap, unsigned long long);
	return va_arg(*ap, unsigned int);
}

static long long get_signed(va_list *ap, int lng)
{
	if (lng)
		return va_arg(*ap, long long);
	return va_arg(*ap, int);
}

/* Parses flags, width, precision and length; returns the conversion character's
 * position. A '*' width or precision is taken from the arguments. */
static const char *parse_spec(const char *f, struct spec *sp, va_list *ap)
{
	*sp = (struct spec){ .prec = -1 };
	for (;; f++) {
		if (*f == '-')
			sp->left = 1;
		else if (*f == '0')
			sp->zero = 1;
		else
			break;
	}
	if (*f == '*') {
		sp->width = va_arg(*ap, int);
		f++;
		if (sp->width < 0) {	/* a negative '*' width means left-justify */
			sp->left = 1;
			sp->width = -sp->width;
		}
	}
	while (*f >= '0' && *f <= '9')
		sp->width = sp->width * 10 + (*f++ - '0');
	if (*f == '.') {
		sp->prec = 0;
		if (*++f == '*') {
			sp->prec = va_arg(*ap, int);
			f++;
		}
		while (*f >= '0' && *f <= '9')
			sp->prec = sp->prec * 10 + (*f++ - '0');
	}
	for (;; f++) {
		if (*f == 'l' || *f == 'z')
			sp->lng++;   /* long, long long and size_t are all 64-bit here */
		else if (*f != 'h')
			break;       /* h/hh: the argument was promoted to int anyway */
	}
	return f;
}

static void convert(struct sink *s, char c, const struct spec *sp, va_list *ap)
{
	switch (c) {
	case 'd':
	case 'i': {
		long long v = get_signed(ap, sp->lng);
		unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v
					       : (unsigned long long)v;

		put_num(s, mag, 10, 0, v < 0 ? "-" : "", sp);
		break;
	}
	case 'u':
		put_num(s, get_unsigned(ap, sp->lng), 10, 0, "", sp);
		break;
	case 'x':
	case 'X':
		put_num(s, get_unsigned(ap, sp->lng), 16, c == 'X', "", sp);
		break;
	case 'p':
		put_num(s, (unsigned long)va_arg(*ap, void *), 16, 0, "0x", sp);
		break;
	case 'c': {
		char ch[2] = { (char)va_arg(*ap, int), 0 };

		put_str(s, ch, sp);
		break;
	}
	case 's':
		put_str(s, va_arg(*ap, const char *), sp);
		break;
	default:	/* '%%' and unknown conversions are printed literally */
		put(s, '%');
		if (c != '%')
			put(s, c);
		break;
	}
}

static void format(struct sink *s, const char *fmt, va_list ap)
{
	va_list args;

	/* Work on a copy so the helpers can take its address portably. */
	va_copy(args, ap);
	while (*fmt) {
		if (*fmt != '%') {
			put(s, *fmt++);
			continue;
		}
		struct spec sp;

		fmt = parse_spec(fmt + 1, &sp, &args);
		if (!*fmt)
			break;	/* a lone '%' at the end */
		convert(s, *fmt++, &sp, &args);
	}
	va_end(args);
}

int bh_vprintf(const char *fmt, va_list ap)
{
	char line[LINE_MAX_CHARS];
	struct sink s = { .buf = line, .cap = sizeof(line), .console = 1 };

	format(&s, fmt, ap);
	sink_flush(&s);	/* a trailing partial line */
	bh_console_drain();
	return (int)s.total;
}

int bh_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = bh_vprintf(fmt, ap);
	va_end(ap);
	return n;
}

int bh_vsnprintf(char *buf, unsigned long size, const char *fmt, va_list ap)
{
	struct sink s = { .buf = buf, .cap = size };

	format(&s, fmt, ap);
	if (size)
		buf[s.len] = '\0';
	return (int)s.total;
}

int bh_snprintf(char *buf, unsigned long size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = bh_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int bh_puts(const char *s)
{
	return bh_printf("%s\n", s);
}
