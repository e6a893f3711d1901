/* Bulkhead partition API: hypercall wrappers, console output and timing helpers.
 *
 * Partitions run at EL1 with the MMU off, so every pointer passed to the hypervisor is a
 * guest physical address (IPA) inside the partition's own memory.
 * Freestanding C11; link with libbhpart.a (and part.ld).
 */
#ifndef BULKHEAD_BULKHEAD_H
#define BULKHEAD_BULKHEAD_H

#include <stdarg.h>
#include <stddef.h>

#include "bulkhead/abi.h"
#include "bulkhead/layout.h"
#include "bulkhead/trace.h"

/* ---------------------------------------------------------------------------------------
 * Hypercall primitive.
 *
 * SMCCC (v1.2) lets the callee clobber x0..x17 and preserves x18..x30 and SP. x0..x5 carry
 * the call and x0..x3 the results, so they are in/out operands; x6..x17 are clobbered.
 * The "memory" clobber orders the call against guest memory accesses: the hypervisor
 * reads the console buffer, and a reset or halt must not be moved across stores.
 * --------------------------------------------------------------------------------------- */
struct bh_hc_result {
	long x0;            /* result or BH_* error */
	unsigned long x1;   /* extra results */
	unsigned long x2;
	unsigned long x3;
	unsigned long x4;
};

static inline struct bh_hc_result bh_hvc(unsigned long fn, unsigned long a1, unsigned long a2,
					 unsigned long a3, unsigned long a4, unsigned long a5)
{
	register unsigned long x0 __asm__("x0") = fn;
	register unsigned long x1 __asm__("x1") = a1;
	register unsigned long x2 __asm__("x2") = a2;
	register unsigned long x3 __asm__("x3") = a3;
	register unsigned long x4 __asm__("x4") = a4;
	register unsigned long x5 __asm__("x5") = a5;

	__asm__ volatile("hvc #0"
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5)
			 :
			 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
			   "x16", "x17", "cc", "memory");

	struct bh_hc_result r = { (long)x0, x1, x2, x3, x4 };
	return r;
}

/* Raw hypercall for tests that need arbitrary function IDs and arguments. */
static inline long bh_hypercall(unsigned long fn, unsigned long a1, unsigned long a2,
				unsigned long a3, unsigned long a4, unsigned long a5)
{
	return bh_hvc(fn, a1, a2, a3, a4, a5).x0;
}

/* ---------------------------------------------------------------------------------------
 * Typed wrappers, one per BH_HC_* call.
 * --------------------------------------------------------------------------------------- */

/* Writes len bytes; returns the number written or a BH_* error. Write whole lines. */
static inline long bh_console_write(const void *buf, unsigned long len)
{
	return bh_hypercall(BH_HC_CONSOLE_WRITE, (unsigned long)buf, len, 0, 0, 0);
}

/* Reads up to max (at most 64) bytes typed for this partition; returns the count (0: none yet)
 * or a BH_* error. The first call makes the partition one that takes console input: Ctrl-A
 * three times on the console moves the focus to it, and BH_VIRQ_CONSOLE says input arrived. */
static inline long bh_console_read(void *buf, unsigned long max)
{
	return bh_hypercall(BH_HC_CONSOLE_READ, (unsigned long)buf, max, 0, 0, 0);
}

/* Stores this partition's id and the calling vCPU's id (either pointer may be NULL). */
static inline long bh_get_ids(unsigned *partition, unsigned *vcpu)
{
	struct bh_hc_result r = bh_hvc(BH_HC_GET_IDS, 0, 0, 0, 0, 0);

	if (r.x0 >= 0) {
		if (partition)
			*partition = (unsigned)r.x1;
		if (vcpu)
			*vcpu = (unsigned)r.x2;
	}
	return r.x0;
}

/* Stores the time of clock (BH_CLOCK_*) in ns. */
static inline long bh_get_clock(unsigned clock, unsigned long long *ns)
{
	struct bh_hc_result r = bh_hvc(BH_HC_GET_TIME, clock, 0, 0, 0, 0);

	if (r.x0 >= 0 && ns)
		*ns = r.x1;
	return r.x0;
}

/* This partition's id (0 should the call ever fail): test partitions pick their role by it. */
static inline unsigned bh_partition_id(void)
{
	unsigned id = 0;

	bh_get_ids(&id, 0);
	return id;
}

/* Stores the hypervisor's BH_CLOCK_HW time (ns since power-on). */
static inline long bh_get_time(unsigned long long *ns)
{
	return bh_get_clock(BH_CLOCK_HW, ns);
}

/* Stores the calling vCPU's execution time (BH_CLOCK_EXEC) in ns. */
static inline long bh_get_exec_time(unsigned long long *ns)
{
	return bh_get_clock(BH_CLOCK_EXEC, ns);
}

/* Halts the calling partition. Parks in wfi should the hypervisor ever return. */
_Noreturn static inline void bh_halt_self(void)
{
	bh_hypercall(BH_HC_HALT_SELF, 0, 0, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi" ::: "memory");
}

/* Blocks until this vCPU has a virtual interrupt pending or its EL1 virtual timer
 * condition is met; returns at once if one already is. Acknowledges nothing: with IRQs
 * masked, follow it with bh_irq_poll() so pending interrupts are taken (see bh_sleep_ns). */
static inline long bh_idle(void)
{
	return bh_hypercall(BH_HC_IDLE, 0, 0, 0, 0, 0);
}

/* Restarts the partition (BH_RESET_COLD / BH_RESET_WARM); returns only on error. */
static inline long bh_reset_self(unsigned mode)
{
	return bh_hypercall(BH_HC_RESET_SELF, mode, 0, 0, 0, 0);
}

/* Reports a partition error event to the health monitor; returns if the action allows. */
static inline long bh_raise_event(unsigned long code)
{
	return bh_hypercall(BH_HC_RAISE_EVENT, code, 0, 0, 0, 0);
}

/* Halts the whole system; system partitions only, so it may return BH_PERM_ERROR. */
static inline long bh_halt_system(void)
{
	return bh_hypercall(BH_HC_HALT_SYSTEM, 0, 0, 0, 0, 0);
}

/* Arms the BH_VIRQ_TIMER timer of clock (BH_CLOCK_*) at abs_ns, then every interval_ns
 * (0: one shot); abs_ns = 0 disarms it. */
static inline long bh_set_timer(unsigned clock, unsigned long long abs_ns,
				unsigned long long interval_ns)
{
	return bh_hypercall(BH_HC_SET_TIMER, clock, abs_ns, interval_ns, 0, 0);
}

/* Enables or disables (BH_IRQ_ENABLE / BH_IRQ_DISABLE) delivery of virtual INTID virq. */
static inline long bh_irq_ctl(unsigned op, unsigned virq)
{
	return bh_hypercall(BH_HC_IRQ_CTL, op, virq, 0, 0, 0);
}

/* BH_VCPU_* operation on one of the caller's own vCPUs; entry (IPA) only for START,
 * 0 meaning the partition entry _start, which sets up the runtime and calls
 * secondary_main. Any other entry starts with no stack, vectors or runtime state. */
static inline long bh_vcpu_ctl(unsigned op, unsigned vcpu, unsigned long entry)
{
	return bh_hypercall(BH_HC_VCPU_CTL, op, vcpu, entry, 0, 0);
}

static inline long bh_vcpu_start(unsigned vcpu)
{
	return bh_vcpu_ctl(BH_VCPU_START, vcpu, 0);
}

static inline long bh_vcpu_suspend(unsigned vcpu)
{
	return bh_vcpu_ctl(BH_VCPU_SUSPEND, vcpu, 0);
}

static inline long bh_vcpu_resume(unsigned vcpu)
{
	return bh_vcpu_ctl(BH_VCPU_RESUME, vcpu, 0);
}

static inline long bh_vcpu_halt(unsigned vcpu)
{
	return bh_vcpu_ctl(BH_VCPU_HALT, vcpu, 0);
}

/* Stores the vCPU's BH_VCPU_STATE_* and execution time in ns (either pointer may be
 * NULL). */
static inline long bh_vcpu_status(unsigned vcpu, unsigned *state,
				  unsigned long long *exec_ns)
{
	struct bh_hc_result r = bh_hvc(BH_HC_VCPU_STATUS, vcpu, 0, 0, 0, 0);

	if (r.x0 >= 0) {
		if (state)
			*state = (unsigned)r.x1;
		if (exec_ns)
			*exec_ns = r.x2;
	}
	return r.x0;
}

/* Stores how many kicks from other cores (their requests to its core to reconsider) reached
 * vCPU `vcpu` while it ran, since its last reset: interruptions by other cores' work. */
static inline long bh_vcpu_kicks(unsigned vcpu, unsigned long long *kicks)
{
	struct bh_hc_result r = bh_hvc(BH_HC_VCPU_STATUS, vcpu, 0, 0, 0, 0);

	if (r.x0 >= 0)
		*kicks = r.x3;
	return r.x0;
}

/* Reports a missed deadline (info: free-form, e.g. the activation number) to the health
 * monitor; returns if the configured action lets the caller go on. */
static inline long bh_deadline_miss(unsigned long info)
{
	return bh_hypercall(BH_HC_DEADLINE_MISS, info, 0, 0, 0, 0);
}

/* System partitions only: BH_PARTITION_* operation on partition id; mode for RESTART. */
static inline long bh_partition_ctl(unsigned op, unsigned id, unsigned mode)
{
	return bh_hypercall(BH_HC_PARTITION_CTL, op, id, mode, 0, 0);
}

/* Fills *st for partition id (a normal partition may only ask about itself). */
static inline long bh_partition_status(unsigned id, struct bh_partition_status *st)
{
	return bh_hypercall(BH_HC_PARTITION_STATUS, id, (unsigned long)st, 0, 0, 0);
}

/* System partitions only: switch to cyclic plan, when = BH_PLAN_*. */
static inline long bh_plan_switch(unsigned plan, unsigned when)
{
	return bh_hypercall(BH_HC_PLAN_SWITCH, plan, when, 0, 0, 0);
}

/* Stores the current and next plan, the number of major frames completed and when the
 * current one began, in ns (any pointer may be NULL). */
static inline long bh_plan_status(unsigned *current, unsigned *next,
				  unsigned long long *frames, unsigned long long *frame_start_ns)
{
	struct bh_hc_result r = bh_hvc(BH_HC_PLAN_STATUS, 0, 0, 0, 0, 0);

	if (r.x0 >= 0) {
		if (current)
			*current = (unsigned)r.x1;
		if (next)
			*next = (unsigned)r.x2;
		if (frames)
			*frames = r.x3;
		if (frame_start_ns)
			*frame_start_ns = r.x4;
	}
	return r.x0;
}

/* Moves queued console output of this partition to the UART, within its own time; returns the
 * bytes still queued (0: all out) or a BH_* error. bh_printf and bh_puts call it until done. */
static inline long bh_console_flush(void)
{
	return bh_hypercall(BH_HC_CONSOLE_FLUSH, 0, 0, 0, 0, 0);
}

/* System partitions only: copies up to max (at most BH_HM_LOG_READ_MAX) of the oldest
 * health-monitor log entries into buf and removes them; returns how many, or a BH_* error.
 * *lost (may be NULL) = entries overwritten since the previous read. */
static inline long bh_hm_read(struct bh_hm_log_entry *buf, unsigned max, unsigned long *lost)
{
	struct bh_hc_result r = bh_hvc(BH_HC_HM_READ, (unsigned long)buf, max, 0, 0, 0);

	if (r.x0 >= 0 && lost)
		*lost = r.x1;
	return r.x0;
}

/* Health-monitor counts of partition id (itself, or any for a system partition). */
static inline long bh_hm_status(unsigned id, struct bh_hm_status *st)
{
	return bh_hypercall(BH_HC_HM_STATUS, id, (unsigned long)st, 0, 0, 0);
}

/* The event propagated to this vCPU (action propagate, BH_VIRQ_HM), cleared by the call;
 * BH_NOT_AVAILABLE if there is none. */
static inline long bh_hm_take(struct bh_hm_log_entry *e)
{
	return bh_hypercall(BH_HC_HM_TAKE, (unsigned long)e, 0, 0, 0, 0);
}

/* When the current major frame began (ns, wall clock; BH_HC_PLAN_STATUS x4), or a negative
 * BH_* error (BH_NOT_AVAILABLE: no cyclic plans): what a partition measures its slot starts
 * against. */
static inline long bh_plan_frame_start(unsigned long long *ns)
{
	struct bh_hc_result r = bh_hvc(BH_HC_PLAN_STATUS, 0, 0, 0, 0, 0);

	if (r.x0 >= 0 && ns)
		*ns = r.x4;
	return r.x0;
}

/* System partitions only: copies up to max of core's oldest trace events into buf and
 * removes them from the ring; returns how many, or a BH_* error. */
static inline long bh_trace_read(unsigned core, struct bh_trace_event *buf, unsigned max)
{
	return bh_hypercall(BH_HC_TRACE_READ, core, (unsigned long)buf, max, 0, 0);
}

/* ---------------------------------------------------------------------------------------
 * Ports and shared memory (docs/ports.md). Names are the ones in the system description;
 * descriptors are small integers (0..63), the bit numbers of bh_port_ready().
 * --------------------------------------------------------------------------------------- */

unsigned long bh_strlen(const char *s); /* libbhpart */
/* The rest of s after prefix, or 0 if s does not start with it (libbhpart). */
const char *bh_after_prefix(const char *s, const char *prefix);

/* Both create calls return the port's descriptor (>= 0), or BH_NO_ACTION when this partition
 * already opened the port (*desc gets the descriptor all the same), or an error: every
 * argument must match the description, else BH_INVALID_CONFIG. desc may be NULL. */
static inline long bh_port_create_(unsigned long fn, const char *name, unsigned max_size,
				   unsigned direction, unsigned long long param, int *desc)
{
	struct bh_hc_result r = bh_hvc(fn, (unsigned long)name, bh_strlen(name), max_size,
				       direction, param);

	if (desc && (r.x0 >= 0 || r.x0 == BH_NO_ACTION))
		*desc = (int)(r.x0 >= 0 ? r.x0 : (long)r.x1);
	return r.x0;
}

static inline long bh_sampling_port_create(const char *name, unsigned max_size,
					   unsigned direction, unsigned long long refresh_ns,
					   int *desc)
{
	return bh_port_create_(BH_HC_SAMPLING_PORT_CREATE, name, max_size, direction, refresh_ns,
			       desc);
}

static inline long bh_queuing_port_create(const char *name, unsigned max_size,
					  unsigned direction, unsigned max_messages, int *desc)
{
	return bh_port_create_(BH_HC_QUEUING_PORT_CREATE, name, max_size, direction, max_messages,
			       desc);
}

/* Overwrites the channel's message with size (1..max) bytes of buf. */
static inline long bh_sampling_write(int desc, const void *buf, unsigned size)
{
	return bh_hypercall(BH_HC_SAMPLING_WRITE, (unsigned long)desc, (unsigned long)buf, size,
			    0, 0);
}

/* Copies the current message, at most size bytes, into buf; returns the bytes copied, or
 * BH_NO_ACTION if nothing was ever written. *flags (may be NULL) gets BH_MSG_VALID while the
 * message is younger than the refresh period, *length (may be NULL) its full length. */
static inline long bh_sampling_read(int desc, void *buf, unsigned size, unsigned *flags,
				    unsigned *length)
{
	struct bh_hc_result r = bh_hvc(BH_HC_SAMPLING_READ, (unsigned long)desc,
				       (unsigned long)buf, size, 0, 0);

	if (r.x0 >= 0) {
		if (flags)
			*flags = (unsigned)r.x1;
		if (length)
			*length = (unsigned)r.x2;
	}
	return r.x0;
}

/* Appends size (1..max) bytes of buf to the queue; BH_NOT_AVAILABLE when it is full. */
static inline long bh_queuing_send(int desc, const void *buf, unsigned size)
{
	return bh_hypercall(BH_HC_QUEUING_SEND, (unsigned long)desc, (unsigned long)buf, size,
			    0, 0);
}

/* Takes the oldest message, copying at most size bytes into buf (a longer message is
 * truncated and consumed all the same); returns the bytes copied, or BH_NOT_AVAILABLE when
 * the queue is empty. *length (may be NULL) gets the message's full length. */
static inline long bh_queuing_receive(int desc, void *buf, unsigned size, unsigned *length)
{
	struct bh_hc_result r = bh_hvc(BH_HC_QUEUING_RECEIVE, (unsigned long)desc,
				       (unsigned long)buf, size, 0, 0);

	if (r.x0 >= 0 && length)
		*length = (unsigned)r.x1;
	return r.x0;
}

/* bh_queuing_receive that waits: with the queue empty the vCPU blocks until a message
 * arrives, which is copied straight from the sender into buf (the sender's core switches to
 * this vCPU if the scheduler prefers it), or until an interrupt is pending for the vCPU, when
 * it returns BH_NOT_AVAILABLE (buf's contents are then undefined). Arm the virtual timer
 * first for a timeout. One vCPU at a time may wait on a port (else BH_OP_NOT_ALLOWED). */
static inline long bh_queuing_receive_wait(int desc, void *buf, unsigned size, unsigned *length)
{
	struct bh_hc_result r = bh_hvc(BH_HC_QUEUING_RECEIVE_WAIT, (unsigned long)desc,
				       (unsigned long)buf, size, 0, 0);

	if (r.x0 >= 0 && length)
		*length = (unsigned)r.x1;
	return r.x0;
}

/* bh_queuing_receive that, finding the queue empty, posts buf instead (BH_NOT_AVAILABLE): the
 * next message sent is copied straight into it (at most size bytes), *status (8 bytes,
 * 8-aligned) becomes BH_POST_DONE | length << 32 | bytes copied, and BH_VIRQ_PORT is raised.
 * The vCPU goes on meanwhile. With a message queued it is bh_queuing_receive (status unused).
 * One post per port (else BH_OP_NOT_ALLOWED); paravirtual partitions only (BH_PERM_ERROR). */
static inline long bh_queuing_receive_post(int desc, void *buf, unsigned size,
					   volatile unsigned long long *status, unsigned *length)
{
	struct bh_hc_result r = bh_hvc(BH_HC_QUEUING_RECEIVE_POST, (unsigned long)desc,
				       (unsigned long)buf, size, (unsigned long)status, 0);

	if (r.x0 >= 0 && length)
		*length = (unsigned)r.x1;
	return r.x0;
}

/* Withdraws desc's post: BH_OK if it was still posted (the buffer and status untouched);
 * BH_NO_ACTION if none was (a message filled it first: the status word says so). */
static inline long bh_queuing_receive_cancel(int desc)
{
	return bh_hypercall(BH_HC_QUEUING_RECEIVE_CANCEL, (unsigned long)desc, 0, 0, 0, 0);
}

static inline long bh_port_status(int desc, struct bh_port_status *st)
{
	return bh_hypercall(BH_HC_PORT_STATUS, (unsigned long)desc, (unsigned long)st, 0, 0, 0);
}

/* The configuration of this partition's port `name`, opened or not. */
static inline long bh_port_info(const char *name, struct bh_port_info *info)
{
	return bh_hypercall(BH_HC_PORT_INFO, (unsigned long)name, bh_strlen(name),
			    (unsigned long)info, 0, 0);
}

/* *ports: the open ports ready now (bit = descriptor): a destination with a message it has
 * not read (sampling) or any message (queuing), a source that can send. *doorbells: the
 * shared regions whose doorbell rang since the last call (bit = region id); this call takes
 * them. Either pointer may be NULL. */
static inline long bh_port_ready(unsigned long long *ports, unsigned long long *doorbells)
{
	struct bh_hc_result r = bh_hvc(BH_HC_PORT_READY, 0, 0, 0, 0, 0);

	if (r.x0 >= 0) {
		if (ports)
			*ports = r.x1;
		if (doorbells)
			*doorbells = r.x2;
	}
	return r.x0;
}

/* Opens the port `name` with the parameters the system description gives it (read with
 * bh_port_info), for partitions that take their ports as configured (libbhpart). Returns its
 * descriptor, also when it was open already, or the error of either call. */
long bh_port_open(const char *name);

/* Blocks (BH_HC_IDLE) until a port in `mask` is ready or a doorbell rang; stores both as
 * bh_port_ready() does (libbhpart). Takes the BH_VIRQ_PORT/BH_VIRQ_DOORBELL interrupts that
 * woke it, whatever the caller's IRQ mask. */
long bh_port_wait(unsigned long long mask, unsigned long long *ports,
		  unsigned long long *doorbells);

/* Returns the region id (>= 0) of shared region `name` and fills *info with where this
 * partition maps it; BH_INVALID_CONFIG if it does not map such a region. */
static inline long bh_shm_info(const char *name, struct bh_shm_info *info)
{
	return bh_hypercall(BH_HC_SHM_INFO, (unsigned long)name, bh_strlen(name),
			    (unsigned long)info, 0, 0);
}

/* Raises BH_VIRQ_DOORBELL in every other partition that maps region `id`. */
static inline long bh_shm_doorbell(unsigned id)
{
	return bh_hypercall(BH_HC_SHM_DOORBELL, id, 0, 0, 0, 0);
}

/* ---------------------------------------------------------------------------------------
 * Virtual interrupts (libbhpart). The hypervisor delivers them through the GICv3 virtual
 * CPU interface; the runtime's IRQ vector acknowledges each pending INTID, calls its
 * handler on the interrupted vCPU's stack, and ends it (EOI). Handlers run with IRQs
 * masked, may call hypercalls and bh_printf, and must not use FP/SIMD registers (the
 * vector saves general-purpose registers only; everything is built -mgeneral-regs-only).
 * A level-triggered source (the virtual timer) must be quietened by its handler, or it
 * fires again right after the EOI.
 * Every vCPU starts with IRQs masked (DAIF.I set).
 * --------------------------------------------------------------------------------------- */
typedef void (*bh_irq_handler_t)(unsigned intid);

/* Installs fn for intid (< BH_VIRQ_MAX) on every vCPU of the partition; NULL restores the
 * default. Returns BH_OK or BH_INVALID_PARAM. Defaults: BH_VIRQ_VTIMER disables the timer
 * and sets this vCPU's "fired" flag; BH_VIRQ_PORT and BH_VIRQ_DOORBELL do nothing (they
 * wake the vCPU; bh_port_ready() says why); any other INTID prints
 * "unexpected virtual interrupt <n>" the first time it arrives. */
long bh_irq_set_handler(unsigned intid, bh_irq_handler_t fn);

/* Acknowledges, handles and ends every pending INTID, with IRQs masked: what the runtime's IRQ
 * vector calls. For library kernels that install their own EL1 vectors (libapex). */
void bh_irq_dispatch(void);

/* Returns and clears the calling vCPU's flag set by the default BH_VIRQ_VTIMER handler. */
int bh_vtimer_take_fired(void);

#define BH_DAIF_I (1ul << 7)  /* PSTATE.I as read through DAIF */

/* The "memory" clobbers keep the compiler from moving accesses to data shared with
 * handlers across the mask changes. */
static inline void bh_irq_enable(void)
{
	__asm__ volatile("msr daifclr, #2" : : : "memory");
}

static inline void bh_irq_disable(void)
{
	__asm__ volatile("msr daifset, #2" : : : "memory");
}

/* Masks IRQs; returns the previous DAIF value for bh_irq_restore. */
static inline unsigned long bh_irq_save(void)
{
	unsigned long flags;

	__asm__ volatile("mrs %0, daif\n\tmsr daifset, #2" : "=r"(flags) : : "memory");
	return flags;
}

static inline void bh_irq_restore(unsigned long flags)
{
	__asm__ volatile("msr daif, %0" : : "r"(flags) : "memory");
}

static inline int bh_irq_enabled(void)
{
	unsigned long flags;

	__asm__ volatile("mrs %0, daif" : "=r"(flags));
	return !(flags & BH_DAIF_I);
}

/* Takes every interrupt pending now, then restores the previous mask. The isb makes the
 * unmasking take effect, so a pending interrupt is taken before IRQs are masked again. */
static inline void bh_irq_poll(void)
{
	unsigned long flags;

	__asm__ volatile("mrs %0, daif\n\tmsr daifclr, #2\n\tisb\n\tmsr daif, %0"
			 : "=&r"(flags) : : "memory");
}

/* The calling vCPU's id without a hypercall: crt0 keeps it in TPIDR_EL1. */
static inline unsigned bh_vcpu_self(void)
{
	unsigned long v;

	__asm__ volatile("mrs %0, tpidr_el1" : "=r"(v));
	return (unsigned)v;
}

/* ---------------------------------------------------------------------------------------
 * Trace (libbhpart, system partitions): prints the hypervisor's trace rings as the text
 * form described in bulkhead/trace.h.
 * --------------------------------------------------------------------------------------- */

/* Prints "BHTRACE-FREQ <CNTFRQ>". */
void bh_trace_print_freq(void);

/* Reads core's events (BH_HC_TRACE_READ, 32 at a time) and prints one BHTRACE line each,
 * until a read comes back short or empty; stores the count in *count (may be NULL) and
 * returns BH_OK or the error a read returned. */
long bh_trace_drain_rc(unsigned core, unsigned *count);

/* Same, returning only the number of events printed. */
unsigned bh_trace_drain(unsigned core);

/* ---------------------------------------------------------------------------------------
 * Console formatting (libbhpart). Each call formats into its own stack line buffer and
 * hands the hypervisor a write at every '\n' (or when the buffer fills, or at the end of
 * the call), so concurrent vCPUs never interleave inside a line they print in one call.
 * Supported: %d %i %u %x %X %c %s %p %% with l/ll/z/h length, '-'/'0' flags, width and
 * '*', and a precision for %s.
 * --------------------------------------------------------------------------------------- */
int bh_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bh_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Formats into buf (always NUL-terminated when size > 0); returns the untruncated length. */
int bh_snprintf(char *buf, unsigned long size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int bh_vsnprintf(char *buf, unsigned long size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Prints s followed by '\n' as one line. */
int bh_puts(const char *s);
/* Calls BH_HC_CONSOLE_FLUSH until this partition's queued output is out (a bounded number of
 * times): bh_printf and bh_puts do it; call it after bh_console_write to the same effect. */
void bh_console_drain(void);

/* ---------------------------------------------------------------------------------------
 * Time, from the EL1 virtual counter (CNTVOFF_EL2 = 0, so it counts since power-on).
 * --------------------------------------------------------------------------------------- */

/* The isb keeps the read from being speculated ahead of earlier instructions. */
static inline unsigned long long bh_counter(void)
{
	unsigned long long v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static inline unsigned long long bh_counter_freq(void)
{
	unsigned long long v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

unsigned long long bh_ticks_to_ns(unsigned long long ticks);
unsigned long long bh_ns_to_ticks(unsigned long long ns); /* rounds up */
unsigned long long bh_now_ns(void);              /* no hypercall */

/* Sleeps on the EL1 virtual timer (so they must not be used by a partition that installs
 * its own BH_VIRQ_VTIMER handler). Interrupts that arrive meanwhile are taken and handled;
 * the caller's IRQ mask is restored on return. */
void bh_sleep_until_ns(unsigned long long deadline_ns); /* absolute, bh_now_ns time base */
void bh_sleep_ns(unsigned long long ns);
void bh_sleep_ms(unsigned ms);

/* ---------------------------------------------------------------------------------------
 * Memory protection inside the partition (libbhpart mmu.c), for partitions that want it
 * (libapex: stack guards). Partitions start with the MMU off; with it on, the map is the
 * identity (addresses handed to the hypervisor stay IPAs) of the partition's areas, the
 * image's code and read-only data read-only, the rest read-write and not executable.
 * --------------------------------------------------------------------------------------- */
/* What stage 2 maps for the partition (its areas and shared regions, guest addresses), which
 * `bulkhead build` writes into the image at this symbol: with it, stage 1 maps those (each
 * widened to whole 2 MiB blocks) and nothing else, so that an address outside them faults at
 * EL1 in the partition, not at stage 2 in the hypervisor. count 0 (an image the tool did not
 * write, more areas than BH_MEMORY_MAP_MAX): every GiB is mapped but the first 2 MiB. */
#define BH_MEMORY_MAP_MAGIC 0x504d4842u /* "BHMP" */
#define BH_MEMORY_MAP_MAX 16
struct bh_memory_map {
	unsigned int magic, count;
	struct {
		unsigned long long base, size;
	} areas[BH_MEMORY_MAP_MAX];
};
extern struct bh_memory_map bh_memory_map;
/* Builds the translation tables, once per boot, before any vCPU calls bh_mmu_on: 0, or -1 if
 * the image spans more than 8 MiB from its 2 MiB boundary or crosses a 1 GiB boundary. */
int bh_mmu_build(void);
/* Turns the calling vCPU's MMU and caches on over the tables bh_mmu_build made. */
void bh_mmu_on(void);
/* Takes one 4 KiB page of the image's writable segment out of the map, for every vCPU: any
 * access to it then faults at EL1 (a data abort). 0, or -1 if page is not such a page. */
int bh_mmu_unmap_page(const void *page);
/* bh_mmu_unmap_page for each page of [page, page + bytes). */
void bh_mmu_unmap_pages(const void *page, unsigned long bytes);
/* Where [buf, buf + len) does not allow the access (a write when write), touches its first such
 * byte, which faults there, in the caller; otherwise does nothing. With the MMU off, nothing. */
void bh_mmu_check_access(const void *buf, unsigned long len, int write);
/* Whether addr is mapped for reading at EL1 now (an address translation, no access). */
int bh_mmu_page_mapped(const void *addr);
/* Unmaps the two lowest pages of each of the first n vCPUs' own stacks (the initialization's
 * and the idle loops'), as guard pages: each keeps 8 KiB of its 16. */
void bh_mmu_guard_vcpu_stacks(unsigned n);

/* ---------------------------------------------------------------------------------------
 * Single 32-bit accesses to an arbitrary IPA, for code that probes isolation. Inline asm
 * guarantees exactly one store/load that the compiler can neither drop nor split.
 * --------------------------------------------------------------------------------------- */
static inline void bh_write32(unsigned long addr, unsigned int val)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(val), "r"(addr) : "memory");
}

static inline unsigned int bh_read32(unsigned long addr)
{
	unsigned int v;

	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

/* ---------------------------------------------------------------------------------------
 * Entry points the application provides (called by crt0).
 * --------------------------------------------------------------------------------------- */
int main(unsigned vcpu, unsigned boot_kind, unsigned restarts);
/* Weak default in libbhpart parks the vCPU; returning from it parks the vCPU too. */
void secondary_main(unsigned vcpu, unsigned boot_kind, unsigned restarts);

/* Who asked for the partition's last restart (BH_RESTART_*: its own call, the health monitor,
 * a system partition; BH_RESTART_NONE after the system boot), as vCPU 0's x3 said at entry. */
extern unsigned bh_restart_cause_at_entry;
static inline unsigned bh_restart_cause(void)
{
	return bh_restart_cause_at_entry;
}

#endif
