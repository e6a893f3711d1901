/* One physical UART shared by every partition and the hypervisor. Output is collected per vCPU
 * until a newline and then emitted whole, with its prefix, under one lock: lines from different
 * cores never interleave. */
#include "console.h"
#include "format.h"
#include "lib.h"
#include "partition.h"

static struct spinlock console_lock;

static void emit_raw(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			arch_console_putc('\r');
		arch_console_putc(s[i]);
	}
}

static void emit_line(const char *prefix, const char *text, size_t len)
{
	arch_spin_lock(&console_lock);
	emit_raw("[", 1);
	emit_raw(prefix, strlen(prefix));
	emit_raw("] ", 2);
	emit_raw(text, len);
	emit_raw("\n", 1);
	arch_spin_unlock(&console_lock);
}

static char printable(char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' ? c : '?';
}

void console_guest_flush(struct vcpu *v)
{
	if (v->line_len == 0)
		return;
	emit_line(v->partition->cfg->name, v->line, v->line_len);
	v->line_len = 0;
}

void console_guest_write(struct vcpu *v, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (c == '\n') {
			if (v->line_len == 0)
				emit_line(v->partition->cfg->name, "", 0);
			console_guest_flush(v);
			continue;
		}
		if (c == '\r')
			continue;
		v->line[v->line_len++] = printable(c);
		if (v->line_len == CONSOLE_LINE_MAX)
			console_guest_flush(v);
	}
}

void bh_vlog(const char *fmt, va_list ap)
{
	char line[256];
	size_t n = format_v(line, sizeof(line), fmt, ap);

	emit_line("bulkhead", line, n);
}

void bh_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bh_vlog(fmt, ap);
	va_end(ap);
}

void console_emergency(const char *s)
{
	emit_raw(s, strlen(s));
}
