/* One physical UART shared by every partition and the hypervisor. Output is collected per vCPU
 * (or per emulated UART) until a newline and then emitted whole, with its prefix, under one
 * lock: lines from different cores never interleave.
 *
 * Input goes to one partition with an emulated UART, the one with focus; Ctrl-A pressed three
 * times moves the focus to the next such partition. The partition with focus is interactive:
 * its UART output goes to the wire byte by byte (a shell prompt has no newline), and a line from
 * anyone else first ends its open line. */
#include "console.h"
#include "format.h"
#include "lib.h"
#include "partition.h"

static struct spinlock console_lock;
static struct spinlock input_lock; /* the input rings of paravirtual partitions */
static const void *open_line;     /* who the wire is in the middle of a line for, or NULL */
static struct partition *volatile focus; /* where input goes; NULL: no partition takes input */

#define ESCAPE_CHAR 0x01 /* Ctrl-A */
#define ESCAPE_COUNT 3u

static void emit_raw(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			arch_console_putc('\r');
		arch_console_putc(s[i]);
	}
}

/* A line broken for someone else's ends in LF CR, not CR LF: it looks the same on a terminal,
 * and a program reading the console can join the pieces again. */
static void end_open_line(void)
{
	if (open_line) {
		arch_console_putc('\n');
		arch_console_putc('\r');
	}
	open_line = NULL;
}

static void emit_prefix(const char *prefix)
{
	emit_raw("[", 1);
	emit_raw(prefix, strlen(prefix));
	emit_raw("] ", 2);
}

static void emit_line(const char *prefix, const char *text, size_t len)
{
	arch_spin_lock(&console_lock);
	end_open_line();
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

/* Add c to a line buffer; emit the line at a newline or when the buffer is full. */
static void buffer_char(const char *name, char *line, unsigned *len, char c)
{
	if (c == '\n') {
		emit_line(name, line, *len);
		*len = 0;
		return;
	}
	if (c == '\r')
		return;
	line[(*len)++] = printable(c);
	if (*len == CONSOLE_LINE_MAX) {
		emit_line(name, line, *len);
		*len = 0;
	}
}

void console_guest_write(struct vcpu *v, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buffer_char(v->partition->cfg->name, v->line, &v->line_len, buf[i]);
}

static void write_through(struct partition *p, char c)
{
	arch_spin_lock(&console_lock);
	if (open_line != p) {
		end_open_line();
		emit_prefix(p->cfg->name);
	}
	arch_console_putc(c);
	open_line = c == '\n' ? NULL : p;
	arch_spin_unlock(&console_lock);
}

static void flush_uart_line(struct partition *p)
{
	if (p->uart_line_len)
		emit_line(p->cfg->name, p->uart_line, p->uart_line_len);
	p->uart_line_len = 0;
}

/* Called with the emulated UART's lock held, which also guards p->uart_line. */
void console_vuart_write(struct partition *p, char c)
{
	if (p == focus) {
		flush_uart_line(p); /* what it wrote before it had focus goes first */
		write_through(p, c);
	} else
		buffer_char(p->cfg->name, p->uart_line, &p->uart_line_len, c);
}

static void set_focus(struct partition *p);

/* Partitions with an emulated UART take input from boot; paravirtual ones once they read. */
static bool takes_input(const struct partition *p)
{
	return p->cfg->vmachine || p->takes_input;
}

static struct partition *next_input_partition(struct partition *after)
{
	unsigned start = after ? after->cfg->id + 1 : 0;

	for (unsigned n = 0; n < partition_count; n++) {
		struct partition *p = &partitions[(start + n) % partition_count];
		if (takes_input(p))
			return p;
	}
	return NULL;
}

unsigned console_read(struct partition *p, char *buf, unsigned max)
{
	unsigned n = 0;

	arch_spin_lock(&input_lock);
	for (; n < max && p->input_count; n++, p->input_count--) {
		buf[n] = p->input[p->input_head];
		p->input_head = (p->input_head + 1) % CONSOLE_INPUT_MAX;
	}
	arch_spin_unlock(&input_lock);
	if (!p->takes_input) {
		p->takes_input = 1;
		if (!focus)
			set_focus(p); /* the first partition that asks gets it */
	}
	return n;
}

/* A byte for the focused partition: its emulated UART, or its input ring and an interrupt. */
static void deliver(struct partition *p, char c)
{
	if (p->cfg->vmachine) {
		arch_vuart_receive(p, c);
		return;
	}
	arch_spin_lock(&input_lock);
	bool room = p->input_count < CONSOLE_INPUT_MAX;
	if (room)
		p->input[(p->input_head + p->input_count++) % CONSOLE_INPUT_MAX] = c;
	arch_spin_unlock(&input_lock);
	if (room)
		virq_inject(&p->vcpus[0], BH_VIRQ_CONSOLE, false);
}

static void set_focus(struct partition *p)
{
	focus = p;
	if (p)
		bh_log("console input goes to %s (press Ctrl-A three times to switch)",
		       p->cfg->name);
}

void console_input_init(void)
{
	set_focus(next_input_partition(NULL));
}

void console_input(char c)
{
	static unsigned escapes;
	struct partition *p = focus;

	if (c == ESCAPE_CHAR && ++escapes == ESCAPE_COUNT) {
		escapes = 0;
		set_focus(next_input_partition(focus));
		return;
	}
	if (c == ESCAPE_CHAR)
		return;
	/* Fewer Ctrl-A than an escape: they were meant for the partition. */
	for (; escapes; escapes--)
		if (p)
			deliver(p, ESCAPE_CHAR);
	if (p)
		deliver(p, c);
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
