/* Console multiplexer: partitions' output and the hypervisor's log share one UART,
 * each line whole and prefixed with its origin. Output is queued per source and drained onto
 * the UART in bounded chunks by whoever finds the UART free (docs/architecture.md, Console). */
#ifndef BULKHEAD_CONSOLE_H
#define BULKHEAD_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes one drain puts on the wire at most (whole lines: one of CONSOLE_LINE_MAX bytes with
 * its prefix always fits): bounds what a write, a log line or an idle pass costs its caller
 * beyond its own copy. */
#define CONSOLE_DRAIN_CHUNK 192u
/* What one wire byte costs a drain at most (PL011 ready check and store, the loop, the prefix
 * and record bookkeeping shared out; about 20 instructions measured on QEMU, doubled), and
 * the rest of a hypercall after its drain: a drain ends this long before the core's next
 * scheduling event. */
#define CONSOLE_BYTE_NS 64u
#define CONSOLE_DRAIN_MARGIN_NS 1000u
/* How soon an idle core with time to spare drains again what its drain left queued (more than
 * its chunks, or the wire busy): often enough to move a backlog of every ring in milliseconds,
 * seldom enough to cost the core little (console_drain_idle). */
#define CONSOLE_RETRY_NS 100000u
/* How many times an emulated UART's bytes may be refused for want of room in its ring (each a
 * store made again, a trap of some hundreds of instructions at least) while none of its output
 * goes out, before such bytes are dropped and counted: tens of milliseconds, far longer than a
 * stall of the wire's holder (milliseconds on a loaded host), short enough that a writer nobody
 * drains goes on. */
#define CONSOLE_REFUSE_MAX 65536u

struct partition;
struct vcpu;

/* Feed guest bytes; complete lines are emitted with the partition's prefix. */
void console_guest_write(struct vcpu *v, const char *buf, size_t len);
/* A byte the partition's emulated UART transmits; false if it was refused, nothing changed: its
 * ring has no room (the wire is busy elsewhere or out of the core's time), and the guest's store
 * must be made again. Lost only when refused CONSOLE_REFUSE_MAX times (counted and reported). */
bool console_vuart_write(struct partition *p, char c);
/* BH_HC_CONSOLE_READ: up to max bytes typed for p into buf; p takes input from now on. */
unsigned console_read(struct partition *p, char *buf, unsigned max);
/* A byte received on the physical UART (core 0, interrupt context). */
void console_input(char c);
/* Boot: give input focus to the first partition with an emulated UART; the direct byte's
 * timing constant. */
void console_init(void);
/* Emit what a vCPU still buffers (before it is reset or halted). */
void console_guest_flush(struct vcpu *v);
/* Move at most CONSOLE_DRAIN_CHUNK queued bytes to the UART if no other core is at it; never
 * waits. Returns true if output may be left (call again from idle time). */
bool console_drain(void);
/* Whether any output or unreported loss is queued (one load when nothing is). */
bool console_pending(void);
/* Idle time: console_drain, then when to drain again: TIME_NEVER if nothing is left queued,
 * else CONSOLE_RETRY_NS on, or when the focus partition's open line stops holding everyone
 * else's (a core going idle uses it so that output never waits for a writer that has gone
 * quiet: sched.c idle_drain). */
uint64_t console_drain_idle(void);
/* A console helper's pass: console_drain_idle, but it drains only if no drain has moved any
 * output since its last pass (its writers have gone quiet; while they write, they drain it
 * themselves, in their own time). */
uint64_t console_drain_stale(void);
/* When a drain can move output left queued: CONSOLE_RETRY_NS on, or when the focus partition's
 * open line stops holding everyone else's. */
uint64_t console_retry_at(void);
/* BH_HC_CONSOLE_FLUSH: drain as console_drain, p's own output first; returns the bytes of p's
 * output still queued. */
unsigned console_flush(struct partition *p);
/* Bytes of partition pid's output lost to a full buffer since boot. */
uint64_t console_lost(unsigned pid);
/* Hypervisor log line, prefixed "[bulkhead] ". A trailing newline is added. */
void bh_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bh_vlog(const char *fmt, va_list ap);
/* Everything queued to the UART now, whatever it costs and without the lock: for panics and
 * host unit tests only. */
void console_flush_all(void);
/* The same under the UART lock, waited for a bounded while: before the system powers off. */
void console_flush_before_off(void);
/* Forget all queued output (host unit tests: a fresh boot). */
void console_reset(void);
/* Emit without the lock: only for panics, when the lock holder may be this core. What is
 * still queued goes out first. */
void console_emergency(const char *s);

#endif
