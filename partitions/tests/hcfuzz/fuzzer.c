/* The hypercall fuzzer: random calls, every result checked against the documented codes.
 *
 * Call i of vCPU v takes all its randomness from fz_mix(seed, v, i) alone, so a failure is
 * reproduced by its (seed, vcpu, index), which the FUZZFAIL line prints with the arguments.
 * Each generator below builds one call's arguments (edge-biased: 0, -1, huge sizes, high bits
 * over valid values, unaligned and page-crossing pointers, pointers just past each area, into
 * unmapped, device and other partitions' addresses) and names the argument classes they fall
 * in; `allowed` (the table) says which results docs/hypercalls.md and docs/ports.md allow for
 * each class of each call. A call with an error class may return only that class's codes
 * (never success); the result must be in the union of its classes' rows.
 *
 * Besides the result: x4..x17 must come back unchanged, every output buffer lies in a guard
 * pattern whose bytes outside the documented write window are checked after the call, and
 * the whole pattern, the code and the read-only area are checked every CHECK_EVERY calls.
 *
 * Calls that would legitimately stop the fuzzer are not made with valid arguments: HALT_SELF
 * (never), RESET_SELF with mode 0 or 1, VCPU_CTL SUSPEND/HALT of its own vCPUs, IRQ_CTL
 * disabling the virtual timer (which ends every IDLE and RECEIVE_WAIT a few microseconds
 * after it began). */
#include "fuzz.h"

struct fz_regs { u64 x[18]; };
long fz_hvc(struct fz_regs *r);
extern char __part_start[], __bh_tests_end[];

#define ARENA_SIZE 0x8000u
#define SHM_HALF 0x8000u /* vCPU 1's outputs in fz_shm end here, vCPU 0's at SHM_END */
#define CHECK_EVERY 4096u
/* 20 us at 62.5 MHz. KB3: with 100 ticks (1.6 us) IDLE on the shared core 1 never returns. */
#define WAKEUP_TICKS 1250u
/* The description's `flags` refresh period is FLAGS_BIAS + flags (a period cannot be 0). */
#define FLAGS_BIAS 2u
#define FLAG_STRICT 1u /* known bugs fail too */
#define FLAG_ONLY 2u   /* issue only call number flags >> 8 */
/* The largest window a call may write (bh_hm_status, 104 bytes): arena pointers leave that much
 * room, so a valid output never reaches past the arena into the fuzzer's own variables. */
#define WINDOW_MAX 128u
#define FAILS_PRINTED 16u
#define HI32 0xffffffff00000000ull
#define REG_FILL 0xC0DE000000000000ull /* x6..x17 = REG_FILL | register number */

/* --- result table --------------------------------------------------------------------------- */

/* Argument classes. Soft classes (state the fuzzer cannot know) add results; hard ones rule
 * success out. */
enum cls {
	C_VALID,        /* every argument valid: the call's own results */
	C_EMPTY_FULL,   /* (soft) a queue may be empty / full */
	C_OTHER_WAITER, /* (soft) the other vCPU may be waiting on the port */
	C_WAIT_BUF,     /* (soft) buffer good for a message, not for max_message_size */
	C_BAD_PTR,      /* a buffer not the caller's memory with the needed rights */
	C_BAD_LEN,      /* a length out of range (console, names) */
	C_BAD_ARG,      /* an op, mode, clock, index, direction, interval out of range */
	C_NOT_OPEN,     /* a port descriptor not open, or of the other kind */
	C_WRONG_DIR,    /* a port call against the port's direction */
	C_BAD_SIZE,     /* a message size 0 or above max_message_size */
	C_NO_NAME,      /* a port or region name the caller does not have */
	C_MISMATCH,     /* port parameters other than the description's */
	C_NOT_SYSTEM,   /* a system-partition call, or another partition's id */
	C_NO_PLANS,     /* the system has no cyclic plans */
	C_NO_DOORBELL,  /* a region without a doorbell */
	C_UNKNOWN,      /* no such function ID in Bulkhead's range */
	C_FOREIGN,      /* an ID outside it: an SMCCC function Bulkhead does not implement */
	C_COUNT
};
#define SOFT ((1u << C_VALID) | (1u << C_EMPTY_FULL) | (1u << C_OTHER_WAITER) | (1u << C_WAIT_BUF))
static const char *const cls_names[C_COUNT] = {
	"valid", "empty_full", "other_waiter", "wait_buf", "bad_ptr", "bad_len", "bad_arg",
	"not_open", "wrong_dir", "bad_size", "no_name", "mismatch", "not_system", "no_plans",
	"no_doorbell", "unknown", "foreign",
};

#define E(code) (1u << -(code))
#define SUCCESS (1u << 0) /* a value >= 0 within the call's [lo, hi] */
#define OK_ONLY SUCCESS
#define NA E(BH_NO_ACTION)
#define IP E(BH_INVALID_PARAM)
#define PE E(BH_PERM_ERROR)
#define IC E(BH_INVALID_CONFIG)
#define IM E(BH_INVALID_MODE)
#define NAV E(BH_NOT_AVAILABLE)
#define ONA E(BH_OP_NOT_ALLOWED)

#define NCALLS BH_HC_COUNT
#define N_UNKNOWN NCALLS /* row of function IDs outside the range */
#define ID(hc) ((hc) & 0xffffu)

/* allowed[call][class]: results the documentation allows. Rows not given allow nothing. */
static const unsigned short allowed[NCALLS + 1][C_COUNT] = {
	[ID(BH_HC_CONSOLE_WRITE)] = { [C_VALID] = SUCCESS, [C_BAD_PTR] = IP, [C_BAD_LEN] = IP },
	[ID(BH_HC_GET_IDS)] = { [C_VALID] = OK_ONLY },
	[ID(BH_HC_GET_TIME)] = { [C_VALID] = OK_ONLY, [C_BAD_ARG] = IP },
	[ID(BH_HC_IDLE)] = { [C_VALID] = OK_ONLY },
	[ID(BH_HC_RESET_SELF)] = { [C_BAD_ARG] = IP },
	[ID(BH_HC_RAISE_EVENT)] = { [C_VALID] = OK_ONLY },
	[ID(BH_HC_HALT_SYSTEM)] = { [C_NOT_SYSTEM] = PE },
	[ID(BH_HC_SET_TIMER)] = { [C_VALID] = OK_ONLY, [C_BAD_ARG] = IP },
	[ID(BH_HC_IRQ_CTL)] = { [C_VALID] = OK_ONLY, [C_BAD_ARG] = IP },
	/* Only START of a started vCPU and RESUME of one not suspended are made valid. */
	[ID(BH_HC_VCPU_CTL)] = { [C_VALID] = NA, [C_BAD_ARG] = IP, [C_BAD_PTR] = IP },
	[ID(BH_HC_VCPU_STATUS)] = { [C_VALID] = OK_ONLY, [C_BAD_ARG] = IP },
	[ID(BH_HC_DEADLINE_MISS)] = { [C_VALID] = OK_ONLY },
	[ID(BH_HC_PARTITION_CTL)] = { [C_NOT_SYSTEM] = PE },
	[ID(BH_HC_PARTITION_STATUS)] = { [C_VALID] = OK_ONLY, [C_BAD_PTR] = IP, [C_NOT_SYSTEM] = PE },
	[ID(BH_HC_PLAN_SWITCH)] = { [C_NOT_SYSTEM] = PE },
	[ID(BH_HC_PLAN_STATUS)] = { [C_NO_PLANS] = NAV },
	[ID(BH_HC_TRACE_READ)] = { [C_NOT_SYSTEM] = PE },
	[ID(BH_HC_SAMPLING_PORT_CREATE)] = { [C_VALID] = NA, [C_BAD_ARG] = IP, [C_BAD_LEN] = IP,
					     [C_BAD_PTR] = IP, [C_NO_NAME] = IC, [C_MISMATCH] = IC },
	[ID(BH_HC_SAMPLING_WRITE)] = { [C_VALID] = OK_ONLY, [C_NOT_OPEN] = IP, [C_WRONG_DIR] = IM,
				       [C_BAD_SIZE] = IC, [C_BAD_PTR] = IP },
	[ID(BH_HC_SAMPLING_READ)] = { [C_VALID] = SUCCESS, [C_NOT_OPEN] = IP, [C_WRONG_DIR] = IM,
				      [C_BAD_PTR] = IP },
	[ID(BH_HC_QUEUING_PORT_CREATE)] = { [C_VALID] = NA, [C_BAD_ARG] = IP, [C_BAD_LEN] = IP,
					    [C_BAD_PTR] = IP, [C_NO_NAME] = IC, [C_MISMATCH] = IC },
	/* A full queue is reported before the buffer is looked at (docs/ports.md, order of checks). */
	[ID(BH_HC_QUEUING_SEND)] = { [C_VALID] = OK_ONLY, [C_EMPTY_FULL] = NAV, [C_NOT_OPEN] = IP,
				     [C_WRONG_DIR] = IM, [C_BAD_SIZE] = IC, [C_BAD_PTR] = IP | NAV },
	[ID(BH_HC_QUEUING_RECEIVE)] = { [C_VALID] = SUCCESS, [C_EMPTY_FULL] = NAV,
					[C_NOT_OPEN] = IP, [C_WRONG_DIR] = IM,
					[C_BAD_PTR] = IP | NAV },
	[ID(BH_HC_PORT_STATUS)] = { [C_VALID] = OK_ONLY, [C_NOT_OPEN] = IP, [C_BAD_PTR] = IP },
	[ID(BH_HC_PORT_INFO)] = { [C_VALID] = OK_ONLY, [C_BAD_LEN] = IP, [C_BAD_PTR] = IP,
				  [C_NO_NAME] = IC },
	[ID(BH_HC_PORT_READY)] = { [C_VALID] = OK_ONLY },
	[ID(BH_HC_SHM_INFO)] = { [C_VALID] = SUCCESS, [C_BAD_LEN] = IP, [C_BAD_PTR] = IP,
				 [C_NO_NAME] = IC },
	[ID(BH_HC_SHM_DOORBELL)] = { [C_VALID] = OK_ONLY, [C_NOT_SYSTEM] = PE,
				     [C_NO_DOORBELL] = NAV },
	[ID(BH_HC_CONSOLE_READ)] = { [C_VALID] = SUCCESS, [C_BAD_PTR] = IP },
	/* A wait on an empty queue ends with a message or the wake-up timer (NOT_AVAILABLE). */
	[ID(BH_HC_QUEUING_RECEIVE_WAIT)] = { [C_VALID] = SUCCESS, [C_EMPTY_FULL] = NAV,
					     [C_OTHER_WAITER] = ONA, [C_WAIT_BUF] = IP,
					     [C_NOT_OPEN] = IP, [C_WRONG_DIR] = IM,
					     [C_BAD_PTR] = IP | NAV | ONA },
	/* A post on an empty queue answers NOT_AVAILABLE (posted; the fuzzer cancels it at once);
	 * a bad status word is refused before the queue is looked at. */
	[ID(BH_HC_QUEUING_RECEIVE_POST)] = { [C_VALID] = SUCCESS, [C_EMPTY_FULL] = NAV,
					     [C_OTHER_WAITER] = ONA, [C_WAIT_BUF] = IP,
					     [C_NOT_OPEN] = IP, [C_WRONG_DIR] = IM,
					     [C_BAD_PTR] = IP | ONA },
	/* Nothing posted: NO_ACTION; the other vCPU's post: OK. */
	[ID(BH_HC_QUEUING_RECEIVE_CANCEL)] = { [C_VALID] = SUCCESS | NA, [C_NOT_OPEN] = IP,
					       [C_WRONG_DIR] = IM },
	[ID(BH_HC_CONSOLE_FLUSH)] = { [C_VALID] = SUCCESS },
	[ID(BH_HC_HM_READ)] = { [C_NOT_SYSTEM] = PE },
	[ID(BH_HC_HM_STATUS)] = { [C_VALID] = OK_ONLY, [C_NOT_SYSTEM] = PE, [C_BAD_PTR] = IP },
	[ID(BH_HC_HM_TAKE)] = { [C_VALID] = NAV, [C_BAD_PTR] = IP | NAV },
	[N_UNKNOWN] = { [C_UNKNOWN] = E(BH_UNKNOWN_HYPERCALL),
			[C_FOREIGN] = E(BH_SMCCC_NOT_SUPPORTED) },
};

/* --- the fuzzer's knowledge of itself --------------------------------------------------------- */

struct fport {
	const char *name;
	unsigned len, kind, dir, max, msgs;
	u64 refresh;
	int desc;  /* -1: never opened */
};
static const char *const port_names[] = {
	"seed", "count", "flags", "done", "s_in", "s_out", "q_in", "q_out", "zz_never_opened",
};
#define NPORTS (sizeof(port_names) / sizeof(port_names[0]))
static struct fport ports[NPORTS];
static unsigned closed_desc; /* the descriptor of zz_never_opened */
static u64 open_mask;

struct region { const char *name; u64 base, size; unsigned rights, doorbell; int mapped; };
static const struct region regions[] = {
	{ "fz_shm", SHM_BASE, 0x10000, BH_SHM_READ | BH_SHM_WRITE, 1, 1 },
	{ "fz_quiet", QUIET_BASE, 0x10000, BH_SHM_READ, 0, 1 },
	{ "vic_priv", 0, 0x1000, 0, 1, 0 },
};
#define NREGIONS 3u

/* Names the generators pass: the fuzzer's own, the victim's (not its), and near misses. */
static const char *const other_names[] = { "done_in", "q_outt", "s_i", "S_IN", "fz_sh",
					   "vic_priv", "seed\0x", "zz_never_openeD" };

struct area { u64 base, end; unsigned write; };
static const struct area areas[] = {
	{ RAM_BASE, RAM_END, 1 }, { RO_BASE, RO_END, 0 }, { SHM_BASE, SHM_END, 1 },
	{ QUIET_BASE, QUIET_END, 0 },
};

/* [p, p+len) is the caller's memory with read (and write) rights, area after area. */
static int range_ok(u64 p, u64 len, int write)
{
	u64 end = p + len;

	if (!len)
		return 1;
	if (end < p)
		return 0;
	while (p < end) {
		unsigned i;
		for (i = 0; i < sizeof(areas) / sizeof(areas[0]); i++)
			if (p >= areas[i].base && p < areas[i].end && (!write || areas[i].write))
				break;
		if (i == sizeof(areas) / sizeof(areas[0]))
			return 0;
		p = areas[i].end;
	}
	return 1;
}

/* --- per-vCPU state ------------------------------------------------------------------------ */

struct fz {
	unsigned vcpu;
	u64 seed, index, rng, flags; /* flags: FLAG_* */
	unsigned char *arena;
	u64 last_hw, last_seq;
	u64 calls, fails, known, reg_fails, mem_fails;
	u64 per_call[NCALLS + 1], per_code[NCALLS + 1][9];
};

static unsigned char arenas[FUZZ_VCPUS][ARENA_SIZE] __attribute__((aligned(4096)));
static struct fz states[FUZZ_VCPUS];
static u64 text_sum, ro_sum;
static volatile unsigned finished[FUZZ_VCPUS];
/* The call each vCPU is in, published before it is made: a vCPU that finds the other still
 * running long after it finished reports what the other is blocked in. */
static struct call *volatile in_call[FUZZ_VCPUS];
static struct call *last_call[FUZZ_VCPUS]; /* the last call that returned (stack) */
#define HANG_NS 2000000000ull /* 2 s: no call may block that long (wake-up after 1.6 us) */

static unsigned char pat(u64 a) { return (unsigned char)(((a * 0x9E3779B1ull) >> 24) ^ (a >> 12)); }

static u64 rnd(struct fz *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static unsigned below(struct fz *f, unsigned n) { return (unsigned)(rnd(f) % n); }
static int one_in(struct fz *f, unsigned n) { return below(f, n) == 0; }

static const u64 edges[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, 257, 287, 288, 4095, 4096, 4097,
	0x7fffffff, 0x80000000, 0xffffffff, 1ull << 32, (1ull << 32) + 1, (1ull << 32) + 2,
	1ull << 48, (1ull << 48) + 1, 1ull << 63, ~0ull, ~0ull - 1, 0xC6000000,
};

static u64 edge(struct fz *f)
{
	switch (below(f, 4)) {
	case 0: return edges[below(f, sizeof(edges) / sizeof(edges[0]))];
	case 1: return rnd(f);
	case 2: return below(f, 16);
	default: return (1ull << below(f, 64)) + below(f, 4);
	}
}

/* A small valid value v, sometimes with high bits over it (a truncation would accept it). */
static u64 with_high(struct fz *f, u64 v)
{
	switch (below(f, 8)) {
	case 0: return v | 1ull << 32;
	case 1: return v | 1ull << 48;
	case 2: return v | (rnd(f) & HI32);
	default: return v;
	}
}

static u64 arena_base(const struct fz *f) { return (u64)(unsigned long)f->arena; }
static u64 text_addr(struct fz *f)
{
	return (u64)(unsigned long)__part_start + below(f, (unsigned)(__bh_tests_end - __part_start));
}

/* A pointer for a buffer of about len bytes; `out`: the hypervisor may write it, so only
 * into the guard patterns (arena; tail for vCPU 0) or somewhere it must refuse. */
/* Every output a call writes fits a window: a pointer drawn inside the arena stays inside. */
_Static_assert(sizeof(struct bh_hm_status) <= WINDOW_MAX && sizeof(struct bh_partition_status) <=
	       WINDOW_MAX && sizeof(struct bh_hm_log_entry) <= WINDOW_MAX, "WINDOW_MAX");

static u64 gen_ptr(struct fz *f, int out)
{
	u64 a = arena_base(f);

	switch (below(f, 24)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
		return a + below(f, ARENA_SIZE - WINDOW_MAX);
	case 8: case 9:
		return a + 4096 * (1 + below(f, ARENA_SIZE / 4096 - 1)) - below(f, 64);
	case 10:
		return f->vcpu == 0 || !out ? RAM_END - below(f, 300) : a + 8 * below(f, 64);
	case 11:
		return one_in(f, 2) ? RO_BASE + below(f, 0x10000) : RO_END - below(f, 64);
	case 12: /* outputs into fz_shm: each vCPU its own end, or one would see the other's */
		if (out && one_in(f, 2))
			return f->vcpu == 0 ? SHM_END - below(f, 64) : SHM_BASE + SHM_HALF - below(f, 64);
		if (out)
			return QUIET_BASE + below(f, 0x10000);
		return one_in(f, 2) ? SHM_BASE + below(f, 0x10000) : QUIET_END - below(f, 64);
	case 13:
		return out ? RAM_BASE - 1 - below(f, 64) : text_addr(f);
	case 14: return below(f, 3) * 8;
	case 15: return ~0ull - below(f, 300);
	case 16: return one_in(f, 2) ? 1ull << 63 : 1ull << 48;
	case 17: return RAM_BASE - 1 - below(f, 64); /* crosses into RAM: never valid */
	case 18: {
		static const u64 foreign[] = { 0x09000000, 0x08000000, 0x080a0000, 0x42800000,
					       0x42c00000, 0x40410000, 0x50010000, 0x100000000ull,
					       0x7ffff000, 0xb001000 };
		return foreign[below(f, sizeof(foreign) / sizeof(foreign[0]))] + below(f, 16);
	}
	case 19: /* the arena seen through high IPA bits: a truncating check would accept it */
		return (one_in(f, 2) ? 1ull << 32 : 0xffff000000000000ull) | (a + below(f, 4096));
	default:
		return (a + below(f, ARENA_SIZE - WINDOW_MAX)) & ~7ull;
	}
}

static u64 gen_len(struct fz *f, u64 typical)
{
	switch (below(f, 8)) {
	case 0: return 0;
	case 1: case 2: case 3: return below(f, (unsigned)typical + 1);
	case 4: return typical;
	case 5: return typical + 1;
	case 6: return edge(f);
	default: return (1ull << 32) + below(f, (unsigned)typical + 1);
	}
}

/* --- one call ------------------------------------------------------------------------------- */

struct call {
	unsigned row;     /* table row: call number, or N_UNKNOWN */
	struct fz_regs r; /* x0..x17 in, then out */
	u64 in[6];
	unsigned cls;     /* bit per class */
	long lo, hi;      /* success values allowed */
	u64 win, win_len; /* output window: the hypervisor may write here */
	int port;         /* ports[] index the call is about, or -1 */
	const char *name; /* name placed in the arena, restored after */
	u64 name_at;
};

#define SET(c, k) ((c)->cls |= 1u << (k))

static void out_window(struct call *c, u64 p, u64 len)
{
	c->win = p;
	c->win_len = len > ARENA_SIZE + 0x10000 ? 0 : len;
}

/* Puts a name (maybe a near miss) in memory the pointer chose, when that is the arena. */
static void gen_name(struct fz *f, struct call *c, const char *const *pool, unsigned n,
		     u64 *ptr, u64 *len)
{
	const char *s = one_in(f, 3) ? other_names[below(f, 8)] : pool[below(f, n)];
	unsigned l = (unsigned)bh_strlen(s);
	u64 a = arena_base(f);

	*ptr = one_in(f, 6) ? gen_ptr(f, 0) : a + below(f, ARENA_SIZE - 40);
	*len = one_in(f, 5) ? gen_len(f, l) : l;
	if (*ptr >= a && *ptr <= a + ARENA_SIZE - 32) { /* no wrap-around */
		for (unsigned i = 0; i <= l && i < 32; i++)
			f->arena[*ptr - a + i] = (unsigned char)s[i];
		c->name = s;
		c->name_at = *ptr;
	}
}

/* The name at (ptr, len) as the hypervisor will read it: its class, and which of `names`. */
static int classify_name(struct call *c, u64 ptr, u64 len, const char *const *names, unsigned n)
{
	if (len == 0 || len > BH_PORT_NAME_MAX) {
		SET(c, C_BAD_LEN);
		return -1;
	}
	if (!range_ok(ptr, len, 0)) {
		SET(c, C_BAD_PTR);
		return -1;
	}
	const char *m = (const char *)(unsigned long)ptr;
	for (unsigned i = 0; i < n; i++) {
		unsigned j = 0;
		while (j < len && names[i][j] && names[i][j] == m[j])
			j++;
		if (j == len && !names[i][len])
			return (int)i;
	}
	SET(c, C_NO_NAME);
	return -1;
}

static u64 gen_desc(struct fz *f, int *port)
{
	unsigned i = below(f, NPORTS + 2);

	*port = -1;
	if (i < NPORTS) {
		*port = (int)i;
		return with_high(f, ports[i].desc < 0 ? closed_desc : (unsigned)ports[i].desc);
	}
	return edge(f);
}

/* Which port a descriptor names, if the caller opened it (never with high bits). */
static const struct fport *open_port_of(u64 desc)
{
	for (unsigned i = 0; i < NPORTS; i++)
		if (ports[i].desc >= 0 && (u64)ports[i].desc == desc)
			return &ports[i];
	return 0;
}

/* Classes of a port call on desc needing kind and dir; returns the port or NULL. */
static const struct fport *port_classes(struct call *c, u64 desc, unsigned kind, unsigned dir)
{
	const struct fport *p = open_port_of(desc);

	if (!p || p->kind != kind) {
		SET(c, C_NOT_OPEN);
		return 0;
	}
	if (p->dir != dir) {
		SET(c, C_WRONG_DIR);
		return 0;
	}
	return p;
}

static u64 min64(u64 a, u64 b) { return a < b ? a : b; }

/* Generators: fill c->in[], the classes, the success range and the write window. */
static void g_console_write(struct fz *f, struct call *c)
{
	u64 p = gen_ptr(f, 0), len = gen_len(f, 64);

	/* A valid write prints: keep them rare and short, so the console stays readable. */
	if (len && len <= BH_CONSOLE_MAX_WRITE && range_ok(p, len, 0) && !one_in(f, 4096))
		len = one_in(f, 2) ? 0 : BH_CONSOLE_MAX_WRITE + 1 + below(f, 4);
	c->in[1] = p, c->in[2] = len;
	if (len > BH_CONSOLE_MAX_WRITE)
		SET(c, C_BAD_LEN);
	else if (!range_ok(p, len, 0))
		SET(c, C_BAD_PTR);
	c->lo = c->hi = (long)len;
}

static void g_console_read(struct fz *f, struct call *c)
{
	u64 p = gen_ptr(f, 1), max = gen_len(f, 64);

	c->in[1] = p, c->in[2] = max;
	if (!range_ok(p, min64(max, 64), 1))
		SET(c, C_BAD_PTR);
	c->lo = c->hi = 0; /* nobody types */
	out_window(c, p, min64(max, 64));
}

static void g_get_time(struct fz *f, struct call *c)
{
	c->in[1] = one_in(f, 3) ? edge(f) : below(f, 2);
	if (c->in[1] > BH_CLOCK_EXEC)
		SET(c, C_BAD_ARG);
}

static void g_reset_self(struct fz *f, struct call *c)
{
	u64 m = edge(f);

	c->in[1] = m <= BH_RESET_WARM ? with_high(f, m) | 1ull << 40 : m;
	SET(c, C_BAD_ARG);
}

static void g_raise(struct fz *f, struct call *c)
{
	c->in[1] = edge(f);
}

static void g_not_system(struct fz *f, struct call *c)
{
	for (unsigned i = 1; i <= 5; i++)
		c->in[i] = one_in(f, 2) ? below(f, 4) : edge(f);
	SET(c, C_NOT_SYSTEM);
}

static void g_set_timer(struct fz *f, struct call *c)
{
	u64 clock = one_in(f, 4) ? edge(f) : below(f, 2);
	u64 at = one_in(f, 2) ? bh_now_ns() + below(f, 2000000) : edge(f);
	u64 interval = one_in(f, 2) ? 0 : one_in(f, 2) ? 10000 + below(f, 1000000) : edge(f);

	c->in[1] = clock, c->in[2] = at, c->in[3] = interval;
	if (clock > BH_CLOCK_EXEC || (interval && interval < 10000))
		SET(c, C_BAD_ARG);
}

static void g_irq_ctl(struct fz *f, struct call *c)
{
	u64 op = one_in(f, 3) ? edge(f) : with_high(f, below(f, 2));
	u64 virq = one_in(f, 3) ? edge(f) : with_high(f, below(f, BH_VIRQ_MAX));

	if (op == BH_IRQ_DISABLE && virq == BH_VIRQ_VTIMER)
		virq = BH_VIRQ_TIMER; /* keep the always-pending interrupt deliverable */
	c->in[1] = op, c->in[2] = virq;
	if (op > BH_IRQ_DISABLE || virq >= BH_VIRQ_MAX)
		SET(c, C_BAD_ARG);
}

static void g_vcpu_ctl(struct fz *f, struct call *c)
{
	u64 op = one_in(f, 3) ? edge(f) : with_high(f, below(f, 2) * 2); /* START, RESUME */
	u64 vcpu = one_in(f, 3) ? edge(f) : below(f, FUZZ_VCPUS);
	u64 entry = one_in(f, 2) ? 0 : one_in(f, 2) ? text_addr(f) : gen_ptr(f, 0);
	unsigned low = (unsigned)op;

	/* Safety, not an exclusion: SUSPEND or HALT of its own vCPU would stop the fuzzer. With
	 * high bits a truncating op check (see KNOWN_BUGS) would do exactly that, so those go
	 * to a vCPU that does not exist. */
	if (vcpu < FUZZ_VCPUS && (low == BH_VCPU_SUSPEND || low == BH_VCPU_HALT))
		vcpu = FUZZ_VCPUS + below(f, 4);
	c->in[1] = op, c->in[2] = vcpu, c->in[3] = entry;
	if (op > BH_VCPU_HALT || vcpu >= FUZZ_VCPUS)
		SET(c, C_BAD_ARG);
	else if (op == BH_VCPU_START && entry && !(entry >= RAM_BASE && entry <= RAM_END - 4))
		SET(c, C_BAD_PTR);
}

static void g_vcpu_status(struct fz *f, struct call *c)
{
	c->in[1] = one_in(f, 2) ? edge(f) : below(f, FUZZ_VCPUS);
	if (c->in[1] >= FUZZ_VCPUS)
		SET(c, C_BAD_ARG);
}

static void g_partition_status(struct fz *f, struct call *c)
{
	u64 id = one_in(f, 2) ? with_high(f, 0) : edge(f), p = gen_ptr(f, 1);

	c->in[1] = id, c->in[2] = p;
	if (id != FUZZER)
		SET(c, C_NOT_SYSTEM);
	else if (!range_ok(p, sizeof(struct bh_partition_status), 1))
		SET(c, C_BAD_PTR);
	out_window(c, p, sizeof(struct bh_partition_status));
}

static void g_hm_status(struct fz *f, struct call *c)
{
	u64 id = one_in(f, 2) ? with_high(f, 0) : edge(f), p = gen_ptr(f, 1);

	c->in[1] = id, c->in[2] = p;
	if (id != FUZZER)
		SET(c, C_NOT_SYSTEM); /* a normal partition asks only about itself */
	else if (!range_ok(p, sizeof(struct bh_hm_status), 1))
		SET(c, C_BAD_PTR);
	out_window(c, p, sizeof(struct bh_hm_status));
}

/* Nothing is ever propagated to the fuzzer (its health actions are ignore). */
static void g_hm_take(struct fz *f, struct call *c)
{
	u64 p = gen_ptr(f, 1);

	c->in[1] = p;
	if (!range_ok(p, sizeof(struct bh_hm_log_entry), 1))
		SET(c, C_BAD_PTR);
	out_window(c, p, sizeof(struct bh_hm_log_entry));
}

static void g_plan_status(struct fz *f, struct call *c)
{
	(void)f;
	SET(c, C_NO_PLANS);
}

static void g_create(struct fz *f, struct call *c, unsigned kind)
{
	u64 ptr, len;

	gen_name(f, c, port_names, NPORTS, &ptr, &len);
	int i = classify_name(c, ptr, len, port_names, NPORTS);
	const struct fport *p = i >= 0 ? &ports[i] : &ports[below(f, NPORTS)];
	u64 max = one_in(f, 4) ? edge(f) : p->max;
	u64 dir = one_in(f, 4) ? edge(f) : p->dir;
	u64 param = one_in(f, 4) ? edge(f) : kind == BH_SAMPLING_PORT ? p->refresh : p->msgs;

	if (i >= 0 && p->desc < 0 && p->kind == kind && dir == p->dir && max == p->max)
		param = ~0ull; /* never open zz_never_opened: its closed state is tested */
	c->in[1] = ptr, c->in[2] = len, c->in[3] = max, c->in[4] = dir, c->in[5] = param;
	if (dir > BH_DESTINATION_PORT)
		SET(c, C_BAD_ARG);
	if (i >= 0 && (p->kind != kind || dir != p->dir || max != p->max ||
		       param != (kind == BH_SAMPLING_PORT ? p->refresh : p->msgs)))
		SET(c, C_MISMATCH);
	c->port = i;
}

static void g_sampling_create(struct fz *f, struct call *c) { g_create(f, c, BH_SAMPLING_PORT); }
static void g_queuing_create(struct fz *f, struct call *c) { g_create(f, c, BH_QUEUING_PORT); }

static void g_write(struct fz *f, struct call *c, unsigned kind)
{
	u64 desc = gen_desc(f, &c->port), p = gen_ptr(f, 0), size = gen_len(f, 64);
	const struct fport *port = port_classes(c, desc, kind, BH_SOURCE_PORT);

	c->in[1] = desc, c->in[2] = p, c->in[3] = size;
	if (port && (size == 0 || size > port->max))
		SET(c, C_BAD_SIZE);
	if (port && !range_ok(p, size, 0))
		SET(c, C_BAD_PTR);
	if (port && kind == BH_QUEUING_PORT)
		SET(c, C_EMPTY_FULL);
}

static void g_sampling_write(struct fz *f, struct call *c) { g_write(f, c, BH_SAMPLING_PORT); }
static void g_queuing_send(struct fz *f, struct call *c) { g_write(f, c, BH_QUEUING_PORT); }

/* Reads and receives: the victim's messages have a known length, so the window is exact. */
static void g_read(struct fz *f, struct call *c, unsigned kind, int wait)
{
	u64 desc = gen_desc(f, &c->port), p = gen_ptr(f, 1), size = gen_len(f, 40);
	const struct fport *port = port_classes(c, desc, kind, BH_DESTINATION_PORT);
	u64 msg = kind == BH_SAMPLING_PORT ? SAMPLE_LEN : QMSG_LEN;

	c->in[1] = desc, c->in[2] = p, c->in[3] = size;
	c->lo = c->hi = (long)min64(msg, size);
	out_window(c, p, min64(size, wait && port ? port->max : msg));
	if (!port)
		return;
	if (!range_ok(p, min64(msg, size), 1))
		SET(c, C_BAD_PTR);
	else if (wait && !range_ok(p, min64(port->max, size), 1))
		SET(c, C_WAIT_BUF);
	if (kind == BH_QUEUING_PORT)
		SET(c, C_EMPTY_FULL);
	if (wait)
		SET(c, C_OTHER_WAITER);
}

static void g_sampling_read(struct fz *f, struct call *c) { g_read(f, c, BH_SAMPLING_PORT, 0); }
static void g_receive(struct fz *f, struct call *c) { g_read(f, c, BH_QUEUING_PORT, 0); }
static void g_receive_wait(struct fz *f, struct call *c) { g_read(f, c, BH_QUEUING_PORT, 1); }

/* A post's status word: this vCPU's own (outside the arena: a post the fuzzer cancels at once
 * may still be filled first), or one the hypervisor must refuse: misaligned, not the
 * caller's, read-only. */
static volatile u64 post_status[FUZZ_VCPUS][2] __attribute__((aligned(16)));

static void g_receive_post(struct fz *f, struct call *c)
{
	g_read(f, c, BH_QUEUING_PORT, 1);
	u64 st = (u64)(unsigned long)&post_status[f->vcpu][0];
	switch (below(f, 6)) {
	case 0: st += 1 + below(f, 7); break;
	case 1: st = gen_ptr(f, 1) | 1; break;
	case 2: st = RO_BASE; break;
	case 3: st = edge(f) | 4; break;
	default: break;
	}
	c->in[4] = st;
	if (st != (u64)(unsigned long)&post_status[f->vcpu][0] &&
	    !(c->cls & (1u << C_NOT_OPEN | 1u << C_WRONG_DIR)))
		SET(c, C_BAD_PTR);
}

static void g_receive_cancel(struct fz *f, struct call *c)
{
	u64 desc = gen_desc(f, &c->port);

	c->in[1] = desc;
	c->lo = c->hi = 0;
	port_classes(c, desc, BH_QUEUING_PORT, BH_DESTINATION_PORT);
}

static void g_port_status(struct fz *f, struct call *c)
{
	u64 desc = gen_desc(f, &c->port), p = gen_ptr(f, 1);

	c->in[1] = desc, c->in[2] = p;
	if (!open_port_of(desc))
		SET(c, C_NOT_OPEN);
	else if (!range_ok(p, sizeof(struct bh_port_status), 1))
		SET(c, C_BAD_PTR);
	out_window(c, p, sizeof(struct bh_port_status));
}

static void g_port_info(struct fz *f, struct call *c)
{
	u64 ptr, len, p = gen_ptr(f, 1);

	gen_name(f, c, port_names, NPORTS, &ptr, &len);
	c->port = classify_name(c, ptr, len, port_names, NPORTS);
	c->in[1] = ptr, c->in[2] = len, c->in[3] = p;
	if (!range_ok(p, sizeof(struct bh_port_info), 1))
		SET(c, C_BAD_PTR);
	out_window(c, p, sizeof(struct bh_port_info));
}

static const char *const region_names[NREGIONS] = { "fz_shm", "fz_quiet", "vic_priv" };

static void g_shm_info(struct fz *f, struct call *c)
{
	u64 ptr, len, p = gen_ptr(f, 1);

	gen_name(f, c, region_names, NREGIONS, &ptr, &len);
	int i = classify_name(c, ptr, len, region_names, NREGIONS);
	if (i >= 0 && !regions[i].mapped)
		SET(c, C_NO_NAME);
	c->port = i;
	c->in[1] = ptr, c->in[2] = len, c->in[3] = p;
	if (!range_ok(p, sizeof(struct bh_shm_info), 1))
		SET(c, C_BAD_PTR);
	c->lo = c->hi = i;
	out_window(c, p, sizeof(struct bh_shm_info));
}

static void g_doorbell(struct fz *f, struct call *c)
{
	u64 id = one_in(f, 2) ? below(f, NREGIONS + 1) : edge(f);

	c->in[1] = id;
	if (id >= NREGIONS || !regions[id].mapped)
		SET(c, C_NOT_SYSTEM);
	else if (!regions[id].doorbell)
		SET(c, C_NO_DOORBELL);
}

static void g_none(struct fz *f, struct call *c)
{
	for (unsigned i = 1; i <= 5; i++)
		c->in[i] = edge(f);
}

typedef void (*gen_fn)(struct fz *, struct call *);
struct spec { const char *name; gen_fn gen; };

static const struct spec specs[NCALLS] = {
	[ID(BH_HC_CONSOLE_WRITE)] = { "CONSOLE_WRITE", g_console_write },
	[ID(BH_HC_GET_IDS)] = { "GET_IDS", g_none },
	[ID(BH_HC_GET_TIME)] = { "GET_TIME", g_get_time },
	[ID(BH_HC_HALT_SELF)] = { "HALT_SELF", 0 },
	[ID(BH_HC_IDLE)] = { "IDLE", g_none },
	[ID(BH_HC_RESET_SELF)] = { "RESET_SELF", g_reset_self },
	[ID(BH_HC_RAISE_EVENT)] = { "RAISE_EVENT", g_raise },
	[ID(BH_HC_HALT_SYSTEM)] = { "HALT_SYSTEM", g_not_system },
	[ID(BH_HC_SET_TIMER)] = { "SET_TIMER", g_set_timer },
	[ID(BH_HC_IRQ_CTL)] = { "IRQ_CTL", g_irq_ctl },
	[ID(BH_HC_VCPU_CTL)] = { "VCPU_CTL", g_vcpu_ctl },
	[ID(BH_HC_VCPU_STATUS)] = { "VCPU_STATUS", g_vcpu_status },
	[ID(BH_HC_DEADLINE_MISS)] = { "DEADLINE_MISS", g_raise },
	[ID(BH_HC_PARTITION_CTL)] = { "PARTITION_CTL", g_not_system },
	[ID(BH_HC_PARTITION_STATUS)] = { "PARTITION_STATUS", g_partition_status },
	[ID(BH_HC_PLAN_SWITCH)] = { "PLAN_SWITCH", g_not_system },
	[ID(BH_HC_PLAN_STATUS)] = { "PLAN_STATUS", g_plan_status },
	[ID(BH_HC_TRACE_READ)] = { "TRACE_READ", g_not_system },
	[ID(BH_HC_SAMPLING_PORT_CREATE)] = { "SAMPLING_PORT_CREATE", g_sampling_create },
	[ID(BH_HC_SAMPLING_WRITE)] = { "SAMPLING_WRITE", g_sampling_write },
	[ID(BH_HC_SAMPLING_READ)] = { "SAMPLING_READ", g_sampling_read },
	[ID(BH_HC_QUEUING_PORT_CREATE)] = { "QUEUING_PORT_CREATE", g_queuing_create },
	[ID(BH_HC_QUEUING_SEND)] = { "QUEUING_SEND", g_queuing_send },
	[ID(BH_HC_QUEUING_RECEIVE)] = { "QUEUING_RECEIVE", g_receive },
	[ID(BH_HC_PORT_STATUS)] = { "PORT_STATUS", g_port_status },
	[ID(BH_HC_PORT_INFO)] = { "PORT_INFO", g_port_info },
	[ID(BH_HC_PORT_READY)] = { "PORT_READY", g_none },
	[ID(BH_HC_SHM_INFO)] = { "SHM_INFO", g_shm_info },
	[ID(BH_HC_SHM_DOORBELL)] = { "SHM_DOORBELL", g_doorbell },
	[ID(BH_HC_CONSOLE_READ)] = { "CONSOLE_READ", g_console_read },
	[ID(BH_HC_QUEUING_RECEIVE_WAIT)] = { "QUEUING_RECEIVE_WAIT", g_receive_wait },
	[ID(BH_HC_CONSOLE_FLUSH)] = { "CONSOLE_FLUSH", g_none },
	[ID(BH_HC_QUEUING_RECEIVE_POST)] = { "QUEUING_RECEIVE_POST", g_receive_post },
	[ID(BH_HC_QUEUING_RECEIVE_CANCEL)] = { "QUEUING_RECEIVE_CANCEL", g_receive_cancel },
	[ID(BH_HC_HM_READ)] = { "HM_READ", g_not_system },
	[ID(BH_HC_HM_STATUS)] = { "HM_STATUS", g_hm_status },
	[ID(BH_HC_HM_TAKE)] = { "HM_TAKE", g_hm_take },
};

static const char *row_name(unsigned row) { return row < NCALLS ? specs[row].name : "unknown-id"; }

/* A function ID: mostly a real call (sometimes with noise in x0's ignored upper half), else
 * one around or outside the range. None that SMCCC or PSCI defines: those are answered (and
 * PSCI's would switch the fuzzer off), see docs/hypercalls.md. */
static u64 gen_function(struct fz *f, unsigned *row)
{
	static const u64 outside[] = { BH_HC_BASE - 1, BH_HC(BH_HC_COUNT), BH_HC(0xff),
				       BH_HC(0xffff), 0x86000000, 0x84000100, 0x46000000, 0,
				       0xffffffff, BH_HC_BASE | 0x10000 };
	unsigned n = below(f, NCALLS + 2);

	if (f->flags & FLAG_ONLY) /* to isolate a finding */
		n = (unsigned)(f->flags >> 8) & 0xff;

	if (n >= NCALLS || !specs[n].gen) { /* HALT_SELF, or a call check_specs reported */
		*row = N_UNKNOWN;
		u64 id = one_in(f, 2) ? outside[below(f, 10)] : BH_HC(BH_HC_COUNT + below(f, 64));
		return id | (one_in(f, 4) ? rnd(f) & HI32 : 0);
	}
	/* Events are logged by the health monitor: keep them rare. */
	if ((n == ID(BH_HC_RAISE_EVENT) || n == ID(BH_HC_DEADLINE_MISS)) && !one_in(f, 1024))
		n = ID(BH_HC_GET_IDS);
	*row = n;
	return BH_HC(n) | (one_in(f, 8) ? rnd(f) & HI32 : 0);
}

/* --- checks ----------------------------------------------------------------------------- */

static unsigned expected_codes(const struct call *c)
{
	unsigned cls = c->cls ? c->cls : 1u << C_VALID, mask = 0;

	if (cls & ~SOFT)
		cls &= ~SOFT; /* a hard error: only its codes */
	else
		cls |= 1u << C_VALID;
	for (unsigned k = 0; k < C_COUNT; k++)
		if (cls & 1u << k)
			mask |= allowed[c->row][k];
	return mask;
}

static int result_allowed(const struct call *c, long got)
{
	unsigned mask = expected_codes(c);

	if (got >= 0)
		return (mask & SUCCESS) && got >= c->lo && got <= c->hi;
	return got >= -8 && (mask & E(got));
}

/* Known, reported hypervisor bugs (docs/reliability.md, "Known bugs"): a discrepancy that
 * matches one counts as `known`, not as a failure, unless the run is strict. None today: the
 * two the fuzzer found (BH_HC_VCPU_CTL's op cut to 32 bits; a zero-length copy translating its
 * pointer) are fixed, and a zero-length buffer is the caller's whatever its address. */
static int known_bug(const struct call *c, long got)
{
	(void)c;
	(void)got;
	return 0;
}

static void print_call(const struct fz *f, const struct call *c, const char *what, long got)
{
	char classes[96] = "";
	unsigned at = 0;

	for (unsigned k = 0; k < C_COUNT; k++)
		if (c->cls & 1u << k)
			at += (unsigned)bh_snprintf(classes + at, sizeof(classes) - at, "%s%s",
						    at ? "," : "", cls_names[k]);
	/* Console lines are split at 160 characters: one short line each, the first begun afresh
	 * (a valid console write of the fuzzer's may have left its line open). */
	bh_printf("\nFUZZFAIL %s seed=%llu vcpu=%u index=%llu call=%s got=%ld\n", what, f->seed,
		  f->vcpu, f->index, row_name(c->row), got);
	bh_printf("FUZZARGS x0=0x%llx x1=0x%llx x2=0x%llx\n", c->in[0], c->in[1], c->in[2]);
	bh_printf("FUZZARGS x3=0x%llx x4=0x%llx x5=0x%llx\n", c->in[3], c->in[4], c->in[5]);
	bh_printf("FUZZWHY classes=%s allowed=0x%x x1_out=0x%llx\n", classes[0] ? classes : "valid",
		  expected_codes(c), c->r.x[1]);
}

static void fail(struct fz *f, const struct call *c, const char *what, long got, u64 *counter)
{
	++*counter;
	if (f->fails + f->reg_fails + f->mem_fails <= FAILS_PRINTED)
		print_call(f, c, what, got);
}

/* x4..x17 come back as they went in (x4 is PLAN_STATUS's fourth result). */
static void check_registers(struct fz *f, const struct call *c)
{
	for (unsigned i = 4; i < 18; i++) {
		u64 want = i < 6 ? c->in[i] : REG_FILL | i;
		if (i == 4 && c->row == ID(BH_HC_PLAN_STATUS))
			continue;
		if (c->r.x[i] != want) {
			fail(f, c, "register-changed", (long)i, &f->reg_fails);
			return;
		}
	}
}

/* The pattern guards: the arena (and for vCPU 0 the RAM tail) hold pat(address) except
 * while a call's window is out; name bytes are put back too. */
static int guarded(const struct fz *f, u64 a)
{
	u64 base = arena_base(f);

	return (a >= base && a < base + ARENA_SIZE) || (f->vcpu == 0 && a >= TAIL_BASE && a < RAM_END);
}

static void restore(const struct fz *f, u64 p, u64 len)
{
	for (u64 a = p; a < p + len && a >= p; a++)
		if (guarded(f, a))
			*(volatile unsigned char *)(unsigned long)a = pat(a);
}

/* Bytes next to the window that the call had no right to write. */
static int window_clean(const struct fz *f, const struct call *c)
{
	u64 lo = c->win >= 64 ? c->win - 64 : 0, hi = c->win + c->win_len;

	for (u64 a = lo; a < c->win; a++)
		if (guarded(f, a) && *(volatile unsigned char *)(unsigned long)a != pat(a))
			return 0;
	for (u64 a = hi; a < hi + 64 && a >= hi; a++)
		if (guarded(f, a) && *(volatile unsigned char *)(unsigned long)a != pat(a))
			return 0;
	return 1;
}

static u64 sum(const unsigned char *p, u64 n)
{
	u64 s = 0;

	for (u64 i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

static long full_check(const struct fz *f)
{
	u64 base = arena_base(f);

	for (u64 a = base; a < base + ARENA_SIZE; a++)
		if (f->arena[a - base] != pat(a))
			return (long)(a - base);
	if (f->vcpu == 0)
		for (u64 a = TAIL_BASE; a < RAM_END; a++)
			if (*(volatile unsigned char *)(unsigned long)a != pat(a))
				return (long)(a - TAIL_BASE) + ARENA_SIZE;
	if (sum((const unsigned char *)__part_start, (u64)(__bh_tests_end - __part_start)) != text_sum)
		return -2;
	if (sum((const unsigned char *)(unsigned long)RO_BASE, RO_END - RO_BASE) != ro_sum)
		return -3;
	return -1;
}

/* What successful calls return besides x0, per call (w: the output window). */
static int time_consistent(struct fz *f, const struct call *c)
{
	u64 t = c->r.x[1];

	if (c->in[1] == BH_CLOCK_EXEC)
		return t <= bh_now_ns();
	if (t < f->last_hw)
		return 0;
	f->last_hw = t;
	return 1;
}

static int status_consistent(const unsigned char *w)
{
	const struct bh_partition_status *st = (const void *)w;

	return st->state == BH_PARTITION_STATE_RUNNING && st->restarts == 0 &&
	       st->vcpu_count == FUZZ_VCPUS && st->current_slot == -1;
}

static int sample_consistent(const struct call *c, const unsigned char *w)
{
	for (u64 i = 0; i < (u64)c->r.x[0]; i++)
		if (w[i] != sample_byte((unsigned)i))
			return 0;
	return c->r.x[2] == SAMPLE_LEN && c->r.x[1] <= BH_MSG_VALID;
}

/* The victim's queued messages: a sequence number, then bytes derived from it, in order. */
static int message_consistent(struct fz *f, const struct call *c, const unsigned char *w)
{
	u64 n = c->r.x[0], seq = 0;

	if (c->r.x[1] != QMSG_LEN)
		return 0;
	if (n < 8)
		return 1;
	for (unsigned i = 0; i < 8; i++)
		seq |= (u64)w[i] << (8 * i);
	for (unsigned i = 8; i < n; i++)
		if (w[i] != qmsg_byte(seq, i))
			return 0;
	if (f->last_seq && seq < f->last_seq)
		return 0; /* FIFO, as seen by one vCPU */
	f->last_seq = seq;
	return 1;
}

static int port_status_consistent(const struct call *c, const unsigned char *w)
{
	const struct bh_port_status *st = (const void *)w;
	const struct fport *p = open_port_of(c->in[1]);

	return st->messages <= p->msgs && st->flags <= BH_MSG_VALID;
}

static int port_info_consistent(const struct call *c, const unsigned char *w)
{
	const struct bh_port_info *in = (const void *)w;
	const struct fport *p = &ports[c->port];

	return in->kind == p->kind && in->direction == p->dir && in->max_message_size == p->max &&
	       in->max_messages == p->msgs && in->refresh_ns == p->refresh &&
	       in->descriptor == p->desc;
}

static int shm_info_consistent(const struct call *c, const unsigned char *w)
{
	const struct bh_shm_info *in = (const void *)w;
	const struct region *g = &regions[c->port];

	return in->guest_address == g->base && in->size == g->size && in->rights == g->rights &&
	       in->doorbell == g->doorbell;
}

static int results_consistent(struct fz *f, const struct call *c)
{
	const struct fz_regs *r = &c->r;
	const unsigned char *w = (const unsigned char *)(unsigned long)c->win;

	switch (c->row) {
	case ID(BH_HC_GET_IDS): return r->x[1] == FUZZER && r->x[2] == f->vcpu;
	case ID(BH_HC_GET_TIME): return time_consistent(f, c);
	case ID(BH_HC_VCPU_STATUS):
		return r->x[1] == BH_VCPU_STATE_READY || r->x[1] == BH_VCPU_STATE_IDLE;
	case ID(BH_HC_PARTITION_STATUS): return status_consistent(w);
	case ID(BH_HC_SAMPLING_READ): return sample_consistent(c, w);
	case ID(BH_HC_QUEUING_RECEIVE):
	case ID(BH_HC_QUEUING_RECEIVE_WAIT):
	case ID(BH_HC_QUEUING_RECEIVE_POST): return message_consistent(f, c, w);
	case ID(BH_HC_PORT_STATUS): return port_status_consistent(c, w);
	case ID(BH_HC_PORT_INFO): return port_info_consistent(c, w);
	case ID(BH_HC_PORT_READY): return (r->x[1] & ~open_mask) == 0 && r->x[2] == 0;
	case ID(BH_HC_SHM_INFO): return shm_info_consistent(c, w);
	}
	return 1;
}

/* --- the loop ------------------------------------------------------------------------------ */

static void make_call(struct fz *f, struct call *c)
{
	f->rng = fz_mix(f->seed ^ fz_mix(((u64)f->vcpu << 48) ^ f->index)) | 1;
	c->cls = 0, c->lo = 0, c->hi = 0x7fffffffffffffffl, c->win = c->win_len = 0;
	c->port = -1, c->name = 0;
	for (unsigned i = 0; i < 6; i++)
		c->in[i] = 0;
	c->in[0] = gen_function(f, &c->row);
	if (c->row == N_UNKNOWN) {
		g_none(f, c);
		if ((unsigned)c->in[0] - BH_HC_BASE < BH_HC_RANGE_SIZE)
			SET(c, C_UNKNOWN);
		else
			SET(c, C_FOREIGN);
	} else {
		specs[c->row].gen(f, c);
	}
	for (unsigned i = 0; i < 18; i++)
		c->r.x[i] = i < 6 ? c->in[i] : REG_FILL | i;
}

/* Before a call that may block (IDLE, RECEIVE_WAIT): the EL1 virtual timer fires a few
 * microseconds later, so the call blocks at most that long. (An interrupt kept pending under
 * masked IRQs instead would make QEMU's -icount run this vCPU a block at a time.) */
static void arm_wakeup(void)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb"
			 : : "r"(bh_counter() + WAKEUP_TICKS), "r"(1ul) : "memory");
}

static void on_wakeup(unsigned intid)
{
	(void)intid;
	__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
}

static void one_call(struct fz *f)
{
	struct call c;

	make_call(f, &c);
	if (c.row == ID(BH_HC_IDLE) || c.row == ID(BH_HC_QUEUING_RECEIVE_WAIT))
		arm_wakeup();
	in_call[f->vcpu] = &c;
	long got = fz_hvc(&c.r);
	in_call[f->vcpu] = 0;
	last_call[f->vcpu] = &c; /* one_call's frame: valid while the vCPU is stuck after it */
	if (c.row == ID(BH_HC_QUEUING_RECEIVE_POST) && got == BH_NOT_AVAILABLE)
		bh_queuing_receive_cancel((int)c.in[1]); /* a message meanwhile lands in the window */
	bh_irq_poll(); /* takes the wake-up and whatever the fuzzed timers raised */
	unsigned code = got >= 0 ? 0 : got >= -8 ? (unsigned)-got : 8;

	f->per_call[c.row]++;
	f->per_code[c.row][code]++;
	if (!result_allowed(&c, got)) {
		if (known_bug(&c, got) && !(f->flags & FLAG_STRICT))
			f->known++;
		else
			fail(f, &c, "undocumented-result", got, &f->fails);
	} else if (got >= 0 && !results_consistent(f, &c)) {
		fail(f, &c, "inconsistent-output", got, &f->fails);
	}
	check_registers(f, &c);
	if (c.name)
		restore(f, c.name_at, 32); /* before the window check: it is not the call's doing */
	if (c.win_len && !window_clean(f, &c))
		fail(f, &c, "wrote-outside-window", got, &f->mem_fails);
	restore(f, c.win, c.win_len);
}

static void print_histogram(const struct fz *f)
{
	for (unsigned row = 0; row <= NCALLS; row++) {
		const u64 *n = f->per_code[row];
		if (!f->per_call[row])
			continue;
		bh_printf("BHFUZZ vcpu=%u call=%s n=%llu ok=%llu -1=%llu -2=%llu -3=%llu -4=%llu "
			  "-5=%llu -6=%llu -7=%llu -8=%llu\n", f->vcpu, row_name(row),
			  f->per_call[row], n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8]);
	}
}

/* --- set-up and the end -------------------------------------------------------------------- */


/* Learns every port from the description; opens all but zz_never_opened. */
static void open_ports(void)
{
	unsigned used = 0;

	for (unsigned i = 0; i < NPORTS; i++) {
		struct bh_port_info info = { 0 };
		struct fport *p = &ports[i];
		p->name = port_names[i];
		p->len = (unsigned)bh_strlen(p->name);
		bh_port_info(p->name, &info);
		*p = (struct fport){ p->name, p->len, info.kind, info.direction,
				     info.max_message_size, info.max_messages, info.refresh_ns, -1 };
		if (i == NPORTS - 1)
			continue;
		int d = bh_port_open(p->name);
		p->desc = d;
		used |= d >= 0 ? 1u << d : 0;
		open_mask |= d >= 0 ? 1ull << d : 0;
		if (d < 0)
			bh_printf("hcfuzz: cannot open %s\n", p->name);
	}
	closed_desc = (unsigned)__builtin_ctz(~used);
}

static void fill_guards(void)
{
	for (unsigned v = 0; v < FUZZ_VCPUS; v++)
		for (unsigned i = 0; i < ARENA_SIZE; i++)
			arenas[v][i] = pat((u64)(unsigned long)&arenas[v][i]);
	for (u64 a = TAIL_BASE; a < RAM_END; a++)
		*(volatile unsigned char *)(unsigned long)a = pat(a);
	text_sum = sum((const unsigned char *)__part_start, (u64)(__bh_tests_end - __part_start));
	ro_sum = sum((const unsigned char *)(unsigned long)RO_BASE, RO_END - RO_BASE);
}

/* The victim's sample is there before the first call, so SAMPLING_READ always has one. */
static void wait_for_sample(void)
{
	unsigned char b[SAMPLE_LEN];

	while (bh_sampling_read(ports[4].desc, b, sizeof(b), 0, 0) != SAMPLE_LEN)
		fz_yield();
}

/* Every call the ABI has must be fuzzed: a new one without a generator is a failure of the
 * campaign itself, not a jump to address 0. */
static void check_specs(struct fz *f)
{
	for (unsigned n = 0; n < NCALLS; n++) {
		if (specs[n].gen || n == ID(BH_HC_HALT_SELF))
			continue;
		f->fails++;
		bh_printf("FUZZFAIL no-generator call=0x%x: add it to specs[] and allowed[]\n",
			  BH_HC(n));
	}
}

static void run(struct fz *f, u64 calls)
{
	check_specs(f);
	for (f->index = 0; f->index < calls; f->index++) {
		one_call(f);
		if ((f->index + 1) % CHECK_EVERY == 0 || f->index + 1 == calls) {
			long at = full_check(f);
			if (at != -1) {
				f->mem_fails++;
				bh_printf("FUZZFAIL memory seed=%llu vcpu=%u calls %llu..%llu: guard "
					  "changed at %ld (-2 code, -3 read-only area)\n", f->seed,
					  f->vcpu, f->index + 1 - CHECK_EVERY, f->index, at);
				fill_guards();
			}
		}
	}
	f->calls = calls;
}

/* Waits (with YIELD: -icount) for the other vCPU to finish its calls, as long as it makes
 * progress: it may have many calls left (vCPU 1 runs half of each period), but no single call
 * may take HANG_NS. */
static int other_finished(const struct fz *f)
{
	const volatile struct fz *o = &states[1 - f->vcpu];
	u64 seen = o->index, until = bh_now_ns() + HANG_NS;

	while (!__atomic_load_n(&finished[1 - f->vcpu], __ATOMIC_ACQUIRE)) {
		if (o->index != seen)
			seen = o->index, until = bh_now_ns() + HANG_NS;
		else if (bh_now_ns() > until)
			return 0;
		fz_yield();
	}
	return 1;
}

/* The other vCPU has been inside one call (or between two) for HANG_NS: a hang, printed as a
 * failure. */
static void hang_fail(struct fz *f)
{
	struct fz *o = &states[1 - f->vcpu];
	struct call *c = in_call[o->vcpu];

	f->fails++;
	if (c)
		print_call(o, c, "call-never-returned", 0);
	else
		print_call(o, last_call[o->vcpu], "stuck-after-call", (long)last_call[o->vcpu]->r.x[0]);
}

static void report(void)
{
	u64 calls = 0, fails = 0, known = 0, regs = 0, mem = 0;
	char detail[128];

	for (unsigned v = 0; v < FUZZ_VCPUS; v++) {
		calls += states[v].calls, fails += states[v].fails, known += states[v].known;
		regs += states[v].reg_fails, mem += states[v].mem_fails;
		print_histogram(&states[v]);
	}
	bh_printf("BHSTAT fuzz_seed %llu\nBHSTAT fuzz_calls %llu\nBHSTAT fuzz_fails %llu\n"
		  "BHSTAT fuzz_known_bug_hits %llu\nBHSTAT fuzz_register_fails %llu\n"
		  "BHSTAT fuzz_memory_fails %llu\n", states[0].seed, calls, fails, known, regs, mem);
	bh_snprintf(detail, sizeof(detail), "%llu calls, %llu undocumented results, %llu known-bug "
		    "hits", calls, fails, known);
	bh_test_report("fuzz_results_documented", fails == 0, detail);
	bh_snprintf(detail, sizeof(detail), "%llu calls changed x4..x17", regs);
	bh_test_report("fuzz_registers_preserved", regs == 0, detail);
	bh_snprintf(detail, sizeof(detail), "%llu writes outside a window or guard changes", mem);
	bh_test_report("fuzz_memory_intact", mem == 0, detail);
}

_Noreturn void fuzzer_main(unsigned vcpu)
{
	struct fz *f = &states[vcpu];
	u64 seed = bh_test_param("seed"), total = bh_test_param("count");

	*f = (struct fz){ .vcpu = vcpu, .seed = seed, .arena = arenas[vcpu],
			  .flags = bh_test_param("flags") - FLAGS_BIAS };
	bh_irq_set_handler(BH_VIRQ_VTIMER, on_wakeup);
	if (vcpu == 0) {
		open_ports();
		fill_guards();
		wait_for_sample();
		bh_vcpu_start(1);
	}
	u64 t0 = bh_now_ns();
	run(f, total / FUZZ_VCPUS + (vcpu == 0 ? total % FUZZ_VCPUS : 0));
	bh_console_write("\n", 1); /* ends a line the fuzzer's console writes left open */
	__atomic_store_n(&finished[vcpu], 1u, __ATOMIC_RELEASE);
	if (!other_finished(f))
		hang_fail(f);
	if (vcpu != 0)
		bh_vcpu_halt(vcpu); /* only this vCPU: vCPU 0 reports */
	bh_printf("BHSTAT fuzz_virtual_ns %llu\n", bh_now_ns() - t0);
	report();
	bh_test_summary();
	u64 key = seed ^ DONE_KEY;
	bh_sampling_write(ports[3].desc, &key, sizeof(key));
	bh_halt_self();
}
