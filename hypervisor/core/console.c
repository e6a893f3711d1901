/* One physical UART shared by every partition and the hypervisor.
 *
 * Output is buffered per source (each partition, and the hypervisor's own log): a writer only
 * copies the complete lines of its write into its own ring, all of them as one record stamped
 * with a global sequence number (so a write costs the same however many lines it holds), and
 * keeps the unfinished last line for the next write; a full ring drops a paravirtual write's
 * record and counts it, and the loss is reported in the output ("[name] ... (N bytes dropped)"),
 * while an emulated UART's byte is refused and its store made again (console_vuart_write).
 * Getting records onto the wire is a separate step, the drain: whoever calls it takes the wire
 * lock only if it is free (trylock) and emits whole lines, at most CONSOLE_DRAIN_CHUNK bytes:
 * the rest of the record in flight, then its own source's records, then the oldest records of
 * anyone (by sequence number). The drain splits a record into lines (and lines longer than
 * CONSOLE_LINE_MAX into pieces). So no core ever waits for another partition's output, no call
 * pays for more than one chunk, and a partition's own lines are not held behind a flooding
 * neighbour's backlog. Every write and every log line drains once after queueing;
 * console_drain() lets idle time drain too. What a drain leaves queued never waits for its
 * writer to write again: idle cores drain it (console_drain_idle says when to come back), and
 * a console helper (an idle core with time to spare) drains what nobody else moves
 * (console_drain_stale; sched.c idle_drain). A record's lines go out one after another, before
 * any other record's, so lines never interleave.
 *
 * Input goes to one partition with an emulated UART, the one with focus; Ctrl-A pressed three
 * times moves the focus to the next such partition. The partition with focus is interactive:
 * its UART output goes to the wire byte by byte (a shell prompt has no newline), as records
 * of one byte. Its line is whole on the wire: while it is open and younger than
 * CONSOLE_HOLD_NS, anyone else's lines wait (they go out when it ends); only a line left open
 * longer (a prompt waiting for input) is ended by a line from anyone else. Its next line waits
 * for the lines queued before it, so each of anyone else's lines waits for one line at most. */
#include "console.h"
#include "format.h"
#include "lib.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"

/* Per source: the ring of queued records. Producers (the source's vCPUs, on any core, or its
 * emulated UART) serialise on the ring's lock, held for one write call (at most
 * BH_CONSOLE_MAX_WRITE bytes); only the drain, under the wire lock, moves head. A record is a
 * 32-bit header (text length, flags, sequence number) and its text, padded to 4 bytes, so a
 * header is one aligned store and never wraps. A line record holds one or more complete lines
 * as written, newlines included (the last one may end without: a flushed line, or a piece of
 * a long line); '\r' is dropped and unprintable bytes become '?' on the way out, so the writer
 * only copies. */
#define CONSOLE_RING_SIZE 2048u /* a power of two */
#define RING_MASK (CONSOLE_RING_SIZE - 1u)
#define CONSOLE_SOURCES (BH_MAX_PARTITIONS + 1u)
#define HYP_SOURCE BH_MAX_PARTITIONS
#define RECORD_HEADER 4u
#define RECORD_INTERACTIVE 0x8000u /* raw bytes of the focus partition, no prefix of their own */
#define RECORD_NOTE 0x4000u        /* a loss: its text is the count, the drain words it */
#define RECORD_LEN_MASK 0x0fffu
#define CONSOLE_NAME_MAX 15u       /* partition names (the tool's limit) */
#define NOTE_MAX 40u               /* "... (N bytes dropped)" */
/* Wire bytes of a line of len text bytes at most: an open line's end, "[name] ", the text,
 * CR LF (an interactive record is one line of at most one byte, a newline being CR LF). */
#define LINE_WIRE_MAX(len) ((len) + 2u + CONSOLE_NAME_MAX + 3u + 2u)
/* The longest record: a line in progress completed by a whole write. */
_Static_assert(CONSOLE_LINE_MAX - 1 + BH_CONSOLE_MAX_WRITE <= RECORD_LEN_MASK &&
	       RECORD_HEADER + CONSOLE_LINE_MAX + BH_CONSOLE_MAX_WRITE <= CONSOLE_RING_SIZE / 2,
	       "a record fits its header's length field, and twice in a ring");

struct out_ring {
	struct spinlock lock;
	volatile uint32_t head, tail; /* free-running byte positions, multiples of 4 */
	volatile uint32_t dropped;   /* bytes lost since the last report */
	uint32_t lost;               /* bytes lost since boot */
	/* Emulated UART bytes refused since a record of the ring last went out: refused while
	 * fewer than CONSOLE_REFUSE_MAX (byte_goes_in). */
	volatile uint32_t refused;
	char buf[CONSOLE_RING_SIZE] __attribute__((aligned(4)));
};

/* The record the wire is in the middle of (under wire_lock): a drain that runs out of budget
 * between two of its lines leaves it here, and the next drain, by anyone, goes on with it. */
struct drain_state {
	int source;          /* -1: none */
	uint32_t flags, len; /* of the record */
	uint32_t off;        /* text bytes of it already out */
};

static struct out_ring rings[CONSOLE_SOURCES];
static struct spinlock wire_lock;
static struct drain_state cur = { .source = -1 };
static volatile uint32_t next_seq;   /* one per write call: ordering across sources */
static volatile uint32_t drain_wanted; /* a writer found the wire busy: the holder goes on */
static volatile uint32_t output_queued; /* set after every record or loss: worth draining */
/* Sources that may have records or an unreported loss: set after every record or loss of the
 * source, cleared by anything_queued when it finds the ring empty. A clear bit means nothing is
 * there, so the look at whether anything is queued costs one load when nothing is. */
static uint32_t maybe_queued;
_Static_assert(CONSOLE_SOURCES <= 32, "maybe_queued has a bit per source");
static int open_line = -1;          /* the source the wire is in the middle of a line for */
static uint64_t open_since;         /* when that line began (counter ticks) */
static bool hold_off;               /* console_flush_all: nothing waits for an open line */
static struct spinlock input_lock;   /* the input rings of paravirtual partitions */
static struct partition *volatile focus; /* where input goes; NULL: no partition takes input */

/* How long the focus partition's open line keeps everyone else's lines off the wire: long enough
 * for a kernel or a program to print a whole line one trapped byte at a time, short enough that
 * a prompt waiting for input holds nobody back noticeably. */
#define CONSOLE_HOLD_NS 100000000ull /* 100 ms */

#define ESCAPE_CHAR 0x01 /* Ctrl-A */
#define ESCAPE_COUNT 3u

/* --- Queueing (the writer's side) ------------------------------------------------------ */

static uint32_t ring_room(const struct out_ring *r)
{
	return CONSOLE_RING_SIZE - (r->tail - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE));
}

static uint32_t padded(uint32_t len)
{
	return RECORD_HEADER + ((len + 3u) & ~3u);
}

/* Copy len bytes into the ring at position at, wrapping; returns the position after them. */
static uint32_t ring_copy(struct out_ring *r, uint32_t at, const char *text, uint32_t len)
{
	uint32_t off = at & RING_MASK, first = CONSOLE_RING_SIZE - off;

	if (first > len)
		first = len;
	memcpy(&r->buf[off], text, first);
	memcpy(r->buf, text + first, len - first);
	return at + len;
}

/* After a record or a loss of r: the drain has work. */
static void mark_queued(const struct out_ring *r)
{
	__atomic_fetch_or(&maybe_queued, 1u << (r - rings), __ATOMIC_SEQ_CST);
	__atomic_store_n(&output_queued, 1u, __ATOMIC_SEQ_CST);
}

/* Append one record whose text is a then b, with the ring's lock held; false (nothing
 * written) when it has no room. */
static bool put_record(struct out_ring *r, uint32_t hdr, const char *a, uint32_t alen,
		       const char *b, uint32_t blen)
{
	uint32_t at = r->tail, len = alen + blen;

	if (ring_room(r) < padded(len))
		return false;
	*(uint32_t *)&r->buf[at & RING_MASK] = hdr | len;
	ring_copy(r, ring_copy(r, at + RECORD_HEADER, a, alen), b, blen);
	__atomic_store_n(&r->tail, at + padded(len), __ATOMIC_RELEASE);
	mark_queued(r);
	return true;
}

static uint32_t record_header(uint32_t flags)
{
	return flags | __atomic_fetch_add(&next_seq, 1u, __ATOMIC_RELAXED) << 16;
}

/* Count a loss (ring lock held). */
static void lose(struct out_ring *r, uint32_t bytes)
{
	r->dropped += bytes;
	r->lost += bytes;
	mark_queued(r);
}

/* Report an earlier loss in its place, if there is room for the note (ring lock held). The
 * note holds the count only: the drain, in its own budget, formats it, not the writer. */
static bool report_loss(struct out_ring *r, uint32_t hdr)
{
	uint32_t count = r->dropped;

	if (!count)
		return true;
	if (ring_room(r) < padded(sizeof(count)))
		return false;
	put_record(r, hdr | RECORD_NOTE, (const char *)&count, sizeof(count), "", 0);
	r->dropped = 0;
	return true;
}

/* Room for records of this many ring bytes, and for the note of an earlier loss before them. */
static bool fits(const struct out_ring *r, uint32_t bytes)
{
	return ring_room(r) >= (r->dropped ? padded(sizeof(uint32_t)) : 0) + bytes;
}

/* Queue a line record whose text is a then b, or count it lost (ring lock held). The note of
 * an earlier loss goes in only together with the record after it: ahead of a record that is
 * lost too it would cost a format for nothing and fill the ring with notes. */
static bool push_line(struct out_ring *r, uint32_t hdr, const char *a, uint32_t alen,
		      const char *b, uint32_t blen)
{
	if (!fits(r, padded(alen + blen))) {
		lose(r, alen + blen);
		return false;
	}
	report_loss(r, hdr);
	put_record(r, hdr, a, alen, b, blen);
	return true;
}

static bool has_newline(uint64_t w)
{
	uint64_t x = w ^ 0x0a0a0a0a0a0a0a0aull; /* a zero byte where w has a newline */

	return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

/* The position after the last newline of buf[0..n), 0 if it has none. Eight bytes a step
 * where aligned (aligned loads only: the hypervisor is built -mstrict-align): every write
 * searches all of itself when it ends in a long line. */
static size_t after_last_newline(const char *buf, size_t n)
{
	size_t s = n;

	for (; s && ((uintptr_t)(buf + s) & 7u); s--)
		if (buf[s - 1] == '\n')
			return s;
	while (s >= 8u && !has_newline(*(const uint64_t *)(const void *)(buf + s - 8u)))
		s -= 8u;
	while (s && buf[s - 1] != '\n')
		s--;
	return s;
}

/* Where the complete lines of buf end, for a line in progress of l bytes before it: after its
 * last newline, or at the last CONSOLE_LINE_MAX boundary of the line that follows (a longer
 * line goes out in pieces); 0 if buf completes no line. */
static size_t complete_end(unsigned l, const char *buf, size_t n)
{
	size_t s = after_last_newline(buf, n);
	size_t before = s ? 0 : l; /* of the last line, before buf[s] */
	size_t open = before + (n - s);
	size_t full = open - open % CONSOLE_LINE_MAX;
	return full ? s + full - before : s;
}

/* Queue the complete lines of buf, after the line in progress (line, *len), as one record, and
 * keep what follows them as the line in progress. One search for the last newline and two
 * copies, however many lines buf holds: the drain splits the record into lines. */
static void assemble(struct out_ring *r, uint32_t hdr, char *line, unsigned *len,
		     const char *buf, size_t n)
{
	unsigned l = *len;
	size_t end = complete_end(l, buf, n);

	if (end) {
		push_line(r, hdr, line, l, buf, (uint32_t)end);
		l = 0;
	}
	memcpy(line + l, buf + end, n - end);
	*len = l + (unsigned)(n - end);
}

static void queue_line(unsigned src, const char *text, unsigned len)
{
	struct out_ring *r = &rings[src];

	arch_spin_lock(&r->lock);
	push_line(r, record_header(0), text, len, "", 0);
	arch_spin_unlock(&r->lock);
}

/* --- Draining (onto the wire) ---------------------------------------------------------- */

static const char *source_name(int src)
{
	return src == HYP_SOURCE ? "bulkhead" : partitions[src].cfg->name;
}

static uint32_t head_word(const struct out_ring *r)
{
	return *(const uint32_t *)&r->buf[r->head & RING_MASK];
}

static bool ring_empty(const struct out_ring *r)
{
	return r->head == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

/* The source whose oldest record is the oldest of all, or -1 if nothing is queued. */
static int oldest_source(void)
{
	int best = -1;
	uint16_t best_seq = 0;

	for (unsigned s = 0; s < CONSOLE_SOURCES; s++) {
		struct out_ring *r = &rings[s];
		if (ring_empty(r))
			continue;
		uint16_t seq = (uint16_t)(head_word(r) >> 16);
		if (best < 0 || (int16_t)(uint16_t)(seq - best_seq) < 0) {
			best = (int)s;
			best_seq = seq;
		}
	}
	return best;
}

static char text_at(const struct out_ring *r, uint32_t i)
{
	return r->buf[(r->head + RECORD_HEADER + i) & RING_MASK];
}

/* Make the oldest record of source src the one in flight. */
static void start_record(int src)
{
	uint32_t word = head_word(&rings[src]);

	cur.source = src;
	cur.flags = word & (RECORD_INTERACTIVE | RECORD_NOTE);
	cur.len = word & RECORD_LEN_MASK;
	cur.off = 0;
}

/* Records the drains have finished since boot (under wire_lock): a console helper tells from it
 * whether anyone else is still moving output (console_drain_stale). */
static volatile uint32_t records_out;

static void finish_record(void)
{
	struct out_ring *r = &rings[cur.source];

	records_out++;
	r->refused = 0; /* the ring is drained: a refused writer is being served */
	if ((cur.flags & RECORD_INTERACTIVE) && (!cur.len || text_at(r, cur.len - 1) != '\n'))
		open_line = cur.source;
	__atomic_store_n(&r->head, r->head + padded(cur.len), __ATOMIC_RELEASE);
	cur.source = -1;
}

static char printable(char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' ? c : '?';
}

static uint32_t put_string(const char *s)
{
	uint32_t n = 0;

	for (; s[n]; n++)
		arch_console_putc(s[n]);
	return n;
}

/* What goes before a line of the record in flight: the end of someone's open interactive
 * line, and the prefix unless the line continues the open one. Returns the wire bytes. */
static uint32_t emit_prefix(bool continues)
{
	uint32_t n = 0;

	/* A line broken for someone else's ends in LF CR, not CR LF: it looks the same on a
	 * terminal, and a program reading the console can join the pieces again. */
	if (open_line >= 0 && !continues)
		n += put_string("\n\r");
	if (!continues) {
		n += put_string("[");
		n += put_string(source_name(cur.source));
		n += put_string("] ");
	}
	open_line = -1;
	return n;
}

/* The next line of the line record in flight: its text bytes, up to its newline (*newline)
 * and at most CONSOLE_LINE_MAX, or what is left of the record. */
static uint32_t next_line(bool *newline)
{
	const struct out_ring *r = &rings[cur.source];
	uint32_t n = 0, left = cur.len - cur.off;

	while (n < left && n < CONSOLE_LINE_MAX && text_at(r, cur.off + n) != '\n')
		n++;
	*newline = n < left && text_at(r, cur.off + n) == '\n';
	return n;
}

/* Emit the next line (len bytes, then its newline if it has one) of the line record in
 * flight, prefixed and ended with CR LF; returns the wire bytes. */
static uint32_t emit_line(uint32_t len, bool newline)
{
	const struct out_ring *r = &rings[cur.source];
	uint32_t n = emit_prefix(false);

	for (uint32_t i = 0; i < len; i++) {
		char c = text_at(r, cur.off + i);
		if (c != '\r') {
			arch_console_putc(printable(c));
			n++;
		}
	}
	n += put_string("\r\n");
	cur.off += len + newline;
	if (cur.off >= cur.len)
		finish_record();
	return n;
}

/* Emit the interactive record in flight (raw bytes of the focus partition, as typed, newlines
 * as CR LF; no prefix when it continues its own open line); returns the wire bytes. */
static uint32_t emit_interactive(void)
{
	const struct out_ring *r = &rings[cur.source];
	bool continues = open_line == cur.source;
	uint32_t n = emit_prefix(continues);

	if (!continues)
		open_since = arch_counter_read(); /* a new line: the others wait for it (line_held) */

	for (uint32_t i = 0; i < cur.len; i++, n++) {
		char c = text_at(r, i);
		if (c == '\n') {
			arch_console_putc('\r');
			n++;
		}
		arch_console_putc(c);
	}
	finish_record();
	return n;
}

/* Emit the loss note in flight as a line of its source; returns the wire bytes. */
static uint32_t emit_note(void)
{
	const struct out_ring *r = &rings[cur.source];
	uint32_t count = 0;
	char note[NOTE_MAX];

	for (uint32_t i = 0; i < sizeof(count); i++) /* the ring's bytes, as put_record copied them */
		((char *)&count)[i] = text_at(r, i);
	format(note, sizeof(note), "... (%u bytes dropped)", count);
	uint32_t n = emit_prefix(false) + put_string(note) + put_string("\r\n");
	finish_record();
	return n;
}

/* A loss nobody has reported because its source wrote nothing since: queue the note now. */
static bool report_idle_losses(void)
{
	bool queued = false;

	for (unsigned s = 0; s < CONSOLE_SOURCES && !queued; s++) {
		struct out_ring *r = &rings[s];
		if (!r->dropped || !arch_spin_trylock(&r->lock))
			continue;
		queued = r->dropped && report_loss(r, record_header(0));
		arch_spin_unlock(&r->lock);
	}
	return queued;
}

/* Another source's ring is more than half full behind the open line (a racy look: a wrong
 * answer costs one break too many, or leaves it to the next drain). Its lines go out now, and
 * break the open line as its hold's end does: held, they were dropped. A focus partition that
 * printed a dot every 10 ms and never a newline opened a new held line after each break, and a
 * neighbour printing 30 KB/s lost a third of its lines (test_attack.py, console_hold.yaml). */
static bool ring_pressed(int open)
{
	uint32_t marked = __atomic_load_n(&maybe_queued, __ATOMIC_SEQ_CST) & ~(1u << open);

	for (; marked; marked &= marked - 1) {
		const struct out_ring *r = &rings[__builtin_ctz(marked)];
		if (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) - r->head > CONSOLE_RING_SIZE / 2)
			return true;
	}
	return false;
}

/* The focus partition's line is open on the wire and young: only its own records go out, so
 * no one else's line lands in the middle of it (under wire_lock), unless they would be lost. */
static bool line_held(void)
{
	int open = open_line; /* console_flush looks without the wire's lock */

	return open >= 0 && !hold_off &&
	       arch_counter_read() - open_since < ns_to_ticks(CONSOLE_HOLD_NS) && !ring_pressed(open);
}

/* The head record of source s would open a new line of the focus partition, which holds
 * everyone else's until it ends. */
static bool opens_held_line(int s)
{
	return (head_word(&rings[s]) & RECORD_INTERACTIVE) && open_line != s;
}

/* Put the next record in flight, if none is: src's own first, then the oldest of anyone's
 * (while a line is held, the open line's source's only). False when nothing may go out; *held
 * set if that is because the open line holds everyone else's. */
static bool start_next(int src, bool *held)
{
	if (cur.source >= 0)
		return true;
	if (line_held()) {
		if (ring_empty(&rings[open_line])) {
			*held = true;
			return false;
		}
		start_record(open_line);
		return true;
	}
	int next = src >= 0 && !ring_empty(&rings[src]) ? src : oldest_source();
	if (next >= 0 && opens_held_line(next))
		next = oldest_source(); /* older lines first: a chain of held lines cannot starve them */
	if (next < 0 && report_idle_losses())
		next = oldest_source();
	if (next < 0)
		return false;
	start_record(next);
	return true;
}

/* Whole lines only, so none is ever left half on the wire, while the next one fits in what is
 * left of the budget (CONSOLE_DRAIN_CHUNK holds the longest line). A record none of whose
 * lines went out is not in flight: it waits in its ring, in its order. *stopped: a line that
 * may go out did not fit, or everyone else's lines wait for the focus partition's open line.
 * The latter as start_next found it, not by a later look: the hold may end in between, and the
 * lines it held would then be left with nobody told to come back for them (drain). */
static uint32_t drain_locked(int src, uint32_t budget, bool *stopped)
{
	*stopped = false;
	while (start_next(src, stopped)) {
		bool newline = false;
		uint32_t len = cur.flags & RECORD_NOTE ? NOTE_MAX :
			       cur.flags ? cur.len : next_line(&newline);
		if (LINE_WIRE_MAX(len) > budget) {
			if (!cur.off)
				cur.source = -1;
			*stopped = true;
			return budget;
		}
		uint32_t n = cur.flags & RECORD_NOTE ? emit_note() :
			     cur.flags ? emit_interactive() : emit_line(len, newline);
		budget = n < budget ? budget - n : 0;
	}
	return budget;
}

/* Wire bytes this core may emit now: at most a chunk, and only what ends before the core's
 * next scheduling event (sched_next_event: a slot's lead, a budget's end, a higher priority
 * vCPU's wake-up, the virtual timer of the idle vCPU it holds loaded) with
 * CONSOLE_DRAIN_MARGIN_NS to spare. So output is drained in the caller's own time and never
 * makes the next vCPU late; what does not fit waits for the next drain. (The loaded idle
 * vCPU's timer was left out: a fixed-priority core idling with its victim loaded drained whole
 * chunks of another partition's lines over the victim's wake-up, 3000 ticks late; req_fp.yaml.)
 * A core inside its scheduling decision (timer fired, not yet programmed again) emits nothing;
 * one that never programmed its timer (boot, an idle core) a chunk. */
static uint32_t drain_budget(void)
{
	const struct percpu *c = this_cpu();
	uint64_t at = sched_next_event(), now, margin = ns_to_ticks(CONSOLE_DRAIN_MARGIN_NS);

	if (at == 0)
		return c->loaded ? 0 : CONSOLE_DRAIN_CHUNK;
	if (at == TIME_NEVER)
		return CONSOLE_DRAIN_CHUNK;
	now = arch_counter_read();
	if (now + margin >= at)
		return 0;
	uint64_t bytes = ticks_to_ns(at - now - margin) / CONSOLE_BYTE_NS;
	return bytes < CONSOLE_DRAIN_CHUNK ? (uint32_t)bytes : CONSOLE_DRAIN_CHUNK;
}

/* Ticks a direct byte needs before the core's next event: the margin and two bytes' time (a
 * byte and its '\r'), set at boot (console_init). */
static uint64_t direct_room;

/* drain_budget() >= 2, without its arithmetic (within a tick, on the safe side): the direct
 * byte's test. */
static inline __attribute__((always_inline)) bool room_for_direct_byte(void)
{
	const struct percpu *c = this_cpu();
	uint64_t at = c->sched.timer_at;

	if (at == 0)
		return !c->loaded;
	return at == TIME_NEVER || arch_counter_read() + direct_room < at;
}

static inline __attribute__((always_inline)) bool anything_queued(void);

/* A writer's drain (src >= 0) that may leave output queued tells the scheduler, so the output
 * goes out even if its writer falls silent now (sched_console_left: a vCPU on a dedicated core
 * may wait in hardware next, unseen; idle drains come back themselves). Returns true: output
 * may be left. */
static bool left_queued(int src)
{
	if (src >= 0)
		sched_console_left();
	return true;
}

static bool drain(int src)
{
	/* A writer that finds the wire busy leaves a note; the holder then goes on once more
	 * with a fresh chunk, so a record queued meanwhile does not wait for the next write. */
	for (unsigned round = 0; round < 2; round++) {
		uint32_t budget = drain_budget();
		if (budget < LINE_WIRE_MAX(0u))
			return left_queued(src);
		if (!arch_spin_trylock(&wire_lock)) {
			__atomic_store_n(&drain_wanted, 1u, __ATOMIC_SEQ_CST);
			return left_queued(src);
		}
		__atomic_store_n(&drain_wanted, 0u, __ATOMIC_SEQ_CST);
		bool stopped; /* out of budget, or everyone else's lines wait for the open line */
		uint32_t left = drain_locked(src, budget, &stopped);
		arch_spin_unlock(&wire_lock);
		if (!left || !__atomic_load_n(&drain_wanted, __ATOMIC_SEQ_CST))
			return stopped && anything_queued() ? left_queued(src) : false;
	}
	return left_queued(src);
}

static bool source_queued(const struct out_ring *r)
{
	return !ring_empty(r) || r->dropped;
}

/* Looks only at the sources marked; clears the mark of one found empty, then looks again: a
 * writer marks after its record is in, so if its mark came before the clear, the second look
 * sees the record (all sequentially consistent) and the mark is put back. */
static inline __attribute__((always_inline)) bool anything_queued(void)
{
	uint32_t marked = __atomic_load_n(&maybe_queued, __ATOMIC_SEQ_CST);

	for (; marked; marked &= marked - 1) {
		unsigned s = (unsigned)__builtin_ctz(marked);
		if (source_queued(&rings[s]))
			return true;
		__atomic_fetch_and(&maybe_queued, ~(1u << s), __ATOMIC_SEQ_CST);
		if (source_queued(&rings[s])) {
			__atomic_fetch_or(&maybe_queued, 1u << s, __ATOMIC_SEQ_CST);
			return true;
		}
	}
	return false;
}

/* Mostly nothing is queued, and an idle core's drain must then cost one load: it delays the
 * wake-up an interrupt brings meanwhile. The flag is cleared before the rings are looked at,
 * so a record queued meanwhile is either drained now or sets it again. */
bool console_drain(void)
{
	if (!__atomic_load_n(&output_queued, __ATOMIC_SEQ_CST))
		return false;
	__atomic_store_n(&output_queued, 0u, __ATOMIC_SEQ_CST);
	bool more = drain(-1);
	if (anything_queued()) /* what did not fit, or the wire was busy: later */
		__atomic_store_n(&output_queued, 1u, __ATOMIC_SEQ_CST);
	return more;
}

/* Whether output or an unreported loss is queued (one load when nothing is). A flag left set by
 * a write that drained all it queued is cleared here as console_drain clears it, so a core that
 * asks again finds it clear. */
bool console_pending(void)
{
	if (!__atomic_load_n(&output_queued, __ATOMIC_SEQ_CST))
		return false;
	__atomic_store_n(&output_queued, 0u, __ATOMIC_SEQ_CST);
	if (!anything_queued())
		return false;
	__atomic_store_n(&output_queued, 1u, __ATOMIC_SEQ_CST);
	return true;
}

uint64_t console_drain_idle(void)
{
	console_drain();
	if (!__atomic_load_n(&output_queued, __ATOMIC_SEQ_CST))
		return TIME_NEVER;
	return console_retry_at();
}

/* records_out at a helper's last pass (helpers race on it: at worst one drain more or fewer). */
static uint32_t records_seen;

uint64_t console_drain_stale(void)
{
	if (!console_pending())
		return TIME_NEVER;
	if (records_out == records_seen)
		console_drain(); /* nobody moved any output since the last pass: its writers are quiet */
	records_seen = records_out;
	return console_pending() ? console_retry_at() : TIME_NEVER;
}

uint64_t console_retry_at(void)
{
	/* Left: more than a drain's chunks, the wire busy, or everyone else's lines held behind the
	 * focus partition's open line, until its hold ends (a racy look at the line: a wrong
	 * instant only means one more retry). */
	uint64_t again = arch_counter_read() + ns_to_ticks(CONSOLE_RETRY_NS);
	uint64_t held_until = open_since + ns_to_ticks(CONSOLE_HOLD_NS);
	if (__atomic_load_n(&open_line, __ATOMIC_RELAXED) >= 0 && held_until > again)
		again = held_until;
	return again;
}

/* --- Writers ---------------------------------------------------------------------------- */

void console_guest_flush(struct vcpu *v)
{
	if (v->line_len == 0)
		return;
	queue_line(v->partition->cfg->id, v->line, v->line_len);
	v->line_len = 0;
	drain((int)v->partition->cfg->id);
}

void console_guest_write(struct vcpu *v, const char *buf, size_t len)
{
	struct out_ring *r = &rings[v->partition->cfg->id];

	arch_spin_lock(&r->lock);
	assemble(r, record_header(0), v->line, &v->line_len, buf, len);
	arch_spin_unlock(&r->lock);
	drain((int)v->partition->cfg->id);
}

/* A byte of the focus partition that continues its own open line while nothing else is queued
 * or in flight goes straight to the wire: what queueing it as a record and draining that would
 * emit, without the record (a shell's echo, a kernel's console output: one trap a byte). */
static inline __attribute__((always_inline)) bool emit_direct(int src, char c)
{
	if (open_line != src || !room_for_direct_byte() || !arch_spin_trylock(&wire_lock))
		return false;
	bool direct = open_line == src && cur.source < 0 && !anything_queued();
	if (direct) {
		if (c == '\n') {
			arch_console_putc('\r');
			open_line = -1;
		}
		arch_console_putc(c);
	}
	arch_spin_unlock(&wire_lock);
	return direct;
}

/* A direct byte needs no record, so not the ring's lock: the wire's orders it against
 * everything else (emit_direct finds nothing queued under it). The line the partition wrote
 * before it had focus, if any, goes first, so that case takes the ring's lock. */
static inline __attribute__((always_inline)) bool vuart_write_direct(struct partition *p, char c)
{
	if (p != focus || __atomic_load_n(&p->uart_line_len, __ATOMIC_RELAXED) ||
	    !emit_direct((int)p->cfg->id, c))
		return false;
	if (__atomic_load_n(&drain_wanted, __ATOMIC_SEQ_CST))
		drain((int)p->cfg->id); /* a writer found the wire busy meanwhile */
	return true;
}

/* An emulated UART's byte that needs `bytes` of its ring (ring lock held): false if the ring has
 * no room and the byte is to be refused. Not for ever: a writer whose own drains can never fit
 * one of its lines (a 10 us slot is shorter than a long line's wire time) on a core that nobody
 * else drains (no idle pass, no console helper) would make its store again for ever. Refused
 * CONSOLE_REFUSE_MAX times while no record of its ring goes out, its bytes are dropped and
 * counted, as a paravirtual write's, until one does (finish_record; test_console.c). A count,
 * not a time: the counter read would be one more instruction the emulator must time exactly on
 * every refused store. */
static bool byte_goes_in(struct out_ring *r, uint32_t bytes)
{
	if (fits(r, bytes))
		return true;
	if (r->refused >= CONSOLE_REFUSE_MAX)
		return true;
	r->refused++;
	return false;
}

/* The focus partition's byte, queued as a record of its own after the line the partition wrote
 * before it had focus, if any (ring lock held); false, nothing changed, if it is refused.
 * *direct: it went to the wire after all (nothing was queued meanwhile). */
static bool focus_byte(struct partition *p, struct out_ring *r, char c, bool *direct)
{
	uint32_t before = p->uart_line_len;

	if (!byte_goes_in(r, (before ? padded(before) : 0) + padded(1)))
		return false;
	if (before) /* what it wrote before it had focus goes first */
		push_line(r, record_header(0), p->uart_line, before, "", 0);
	p->uart_line_len = 0;
	*direct = emit_direct((int)p->cfg->id, c);
	if (!*direct) {
		uint32_t hdr = record_header(0);
		if (!report_loss(r, hdr) || !put_record(r, hdr | RECORD_INTERACTIVE, &c, 1, "", 0))
			lose(r, 1); /* refused long enough */
	}
	return true;
}

/* Another partition's byte: into its line in progress, and the line queued as a record once the
 * byte ends it (ring lock held); false, nothing changed, if it is refused. */
static bool line_byte(struct partition *p, struct out_ring *r, char c)
{
	unsigned len = p->uart_line_len;

	if (complete_end(len, &c, 1) && !byte_goes_in(r, padded(len + 1)))
		return false;
	assemble(r, record_header(0), p->uart_line, &p->uart_line_len, &c, 1);
	return true;
}

/* p->uart_line is under the ring's lock (the emulated UART's is not always held). Out of
 * line, so that the direct byte's way (console_vuart_write) needs no stack frame. */
static __attribute__((noipa)) bool vuart_write_queued(struct partition *p, char c)
{
	struct out_ring *r = &rings[p->cfg->id];
	int src = (int)p->cfg->id;
	bool direct = false, taken;

	arch_spin_lock(&r->lock);
	taken = p == focus ? focus_byte(p, r, c, &direct) : line_byte(p, r, c);
	arch_spin_unlock(&r->lock);
	if (!direct || __atomic_load_n(&drain_wanted, __ATOMIC_SEQ_CST))
		drain(src); /* a direct byte drains only for a writer that found the wire busy */
	return taken;
}

/* A byte the ring has no room for is refused, never lost: the guest makes its store again, and
 * the drain in the refusing write has made room for it by then, unless the wire is busy. One
 * drain a write, as for any byte: offered again in the same write, a refused byte's second drain
 * doubled the longest path a storm of writers takes (under -icount, one emulator turn of 7 500
 * instructions made a fixed-priority wake-up 482 ticks late: test_uartwait.py). */
bool console_vuart_write(struct partition *p, char c)
{
	return vuart_write_direct(p, c) || vuart_write_queued(p, c);
}

unsigned console_flush(struct partition *p)
{
	const struct out_ring *r = &rings[p->cfg->id];

	drain((int)p->cfg->id);
	/* Output held behind the focus partition's open line goes out when that line ends or the
	 * hold does, by whoever drains next: the caller has nothing to wait for in its own time
	 * (a racy look: at worst one more call, or one less). */
	int open = __atomic_load_n(&open_line, __ATOMIC_RELAXED);
	if (open >= 0 && open != (int)p->cfg->id && line_held())
		return 0;
	return r->tail - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
}

uint64_t console_lost(unsigned pid)
{
	return pid < CONSOLE_SOURCES ? rings[pid].lost : 0;
}

/* --- Input ------------------------------------------------------------------------------ */

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

/* A byte for the focused partition: its emulated UART, or its input ring and an interrupt.
 * True if it had room for it. */
static bool deliver(struct partition *p, char c)
{
	if (p->cfg->vmachine)
		return arch_vuart_receive(p, c);
	arch_spin_lock(&input_lock);
	bool room = p->input_count < CONSOLE_INPUT_MAX;
	if (room)
		p->input[(p->input_head + p->input_count++) % CONSOLE_INPUT_MAX] = c;
	arch_spin_unlock(&input_lock);
	if (room)
		virq_inject(&p->vcpus[0], BH_VIRQ_CONSOLE, false);
	return room;
}

/* Typed bytes the focus partition had no room for (it did not read them in time) are dropped:
 * the hypervisor reads the UART on, so that Ctrl-A always reaches it. The loss is said once it
 * ends: at the next byte the partition takes, or when the focus moves. */
static unsigned input_dropped;

static void report_input_loss(const struct partition *p)
{
	if (input_dropped && p)
		bh_log("console input: %u bytes typed for %s dropped (it did not read them in time)",
		       input_dropped, p->cfg->name);
	input_dropped = 0;
}

static void give_input(struct partition *p, char c)
{
	if (!deliver(p, c))
		input_dropped++;
	else if (input_dropped)
		report_input_loss(p);
}

static void set_focus(struct partition *p)
{
	report_input_loss(focus);
	focus = p;
	if (p)
		bh_log("console input goes to %s (press Ctrl-A three times to switch)",
		       p->cfg->name);
}

void console_init(void)
{
	direct_room = ns_to_ticks(CONSOLE_DRAIN_MARGIN_NS + 2 * CONSOLE_BYTE_NS);
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
			give_input(p, ESCAPE_CHAR);
	if (p)
		give_input(p, c);
	console_drain(); /* input time on core 0 moves output too */
}

/* --- The hypervisor's own lines ---------------------------------------------------------- */

void bh_vlog(const char *fmt, va_list ap)
{
	char line[256];
	size_t n = format_v(line, sizeof(line), fmt, ap);

	/* In pieces of a line at most, like a partition's: every record fits a drain chunk. */
	for (size_t done = 0; done < n; done += CONSOLE_LINE_MAX)
		queue_line(HYP_SOURCE, line + done,
			   (unsigned)(n - done < CONSOLE_LINE_MAX ? n - done : CONSOLE_LINE_MAX));
	drain(HYP_SOURCE);
}

void bh_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bh_vlog(fmt, ap);
	va_end(ap);
}

static void emit_raw(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			arch_console_putc('\r');
		arch_console_putc(s[i]);
	}
}

void console_flush_all(void)
{
	hold_off = true; /* nothing waits for an open line now */
	bool stopped;

	while (cur.source >= 0 || oldest_source() >= 0) /* each pass emits at least one line */
		drain_locked(-1, CONSOLE_DRAIN_CHUNK, &stopped);
	hold_off = false;
}

/* The system goes off: everything queued goes out first. A drain of another core holding the
 * wire (a chunk at most) ends first: waited for, a bounded while (the bound only guards against
 * a core stopped with the lock, whose line may then be cut). */
void console_flush_before_off(void)
{
	bool locked = false;

	for (unsigned tries = 0; tries < 1000000u && !locked; tries++)
		locked = arch_spin_trylock(&wire_lock);
	console_flush_all();
	if (locked)
		arch_spin_unlock(&wire_lock);
}

/* Everything still queued goes out first, without the lock (the holder may be this core):
 * what led to the panic is worth more than a clean line. Bounded: the rings are finite. */
void console_emergency(const char *s)
{
	console_flush_all();
	if (open_line >= 0)
		emit_raw("\n", 1);
	open_line = -1;
	emit_raw(s, strlen(s));
}

void console_reset(void)
{
	memset(rings, 0, sizeof(rings));
	cur.source = -1;
	open_line = -1;
	open_since = 0;
	hold_off = false;
	next_seq = 0;
	drain_wanted = 0;
}
