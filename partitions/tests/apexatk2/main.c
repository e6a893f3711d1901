/* apexatk2: a hostile or careless APEX process against libapex's memory protection
 * (tests/system/test_attack2_apex.py, configs/apex_atk2.yaml; memory_violation: propagate as
 * for apexhm). Each test provokes one thing and checks that the error lands on the process
 * that caused it, that the others go on, and that nothing outside the faulting context is
 * overwritten. The tests run in source order; the last one may stop the partition. The image
 * runs twice (apex_atk2.yaml): as partition 1 it runs only the test that may stop it early
 * (an SVC with SP outside the partition), as partition 0 all the others (each test returns at
 * once in the other).
 */
#include "bhtest.h"

#include "apex/apex.h"
#include "../apextest/apexutil.h"

#define US 1000ll
#define MS 1000000ll
#define INF INFINITE_TIME_VALUE
#define PAGE 4096ul
#define MAX_SEEN 32

/* Role 0 (partition 0): most tests; 1 (partition 1, apexatk2far): SP outside the partition;
 * 2 (a partition with two vCPUs, apexatk2mc in apex_atk2_mc.yaml): overflows on the second. */
static unsigned role(void)
{
	if (bh_vcpu_status(2, 0, 0) >= 0)
		return 3; /* three vCPUs: an overflow of the initialization's stack (apex_atk2_init) */
	return bh_vcpu_status(1, 0, 0) >= 0 ? 2 : bh_partition_id();
}
#define ONLY_IN(r) do { if (role() != (r)) return; } while (0)

/* --- What the error handler saw --------------------------------------------------------------- */

struct seen {
	ERROR_CODE_TYPE code;
	PROCESS_ID_TYPE pid;
};

static struct seen seen[MAX_SEEN];
static volatile unsigned nseen;
static volatile int handler_recurse;
static volatile unsigned handler_depth_limit = ~0u;

static unsigned __attribute__((noinline)) handler_deep(unsigned n)
{
	volatile char frame[256];

	frame[0] = (char)n;
	if (n == handler_depth_limit)
		return frame[0];
	return handler_deep(n + 1) + (unsigned)frame[0];
}

static void error_handler(void)
{
	ERROR_STATUS_TYPE e;
	RETURN_CODE_TYPE rc;

	for (;;) {
		GET_ERROR_STATUS(&e, &rc);
		if (rc != NO_ERROR)
			break;
		seen[nseen % MAX_SEEN] = (struct seen){ e.ERROR_CODE, e.FAILED_PROCESS_ID };
		nseen++;
	}
	if (handler_recurse) {
		handler_recurse = 0;
		handler_deep(0); /* the handler's own stack overflow */
	}
}

/* The errors recorded since n0 that name `pid`. */
static unsigned errors_of(PROCESS_ID_TYPE pid, unsigned n0)
{
	unsigned n = 0;

	for (unsigned i = n0; i < nseen; i++)
		n += seen[i % MAX_SEEN].pid == pid;
	return n;
}

static int seen_since(PROCESS_ID_TYPE pid, ERROR_CODE_TYPE code, unsigned n0)
{
	for (unsigned i = n0; i < nseen; i++)
		if (seen[i % MAX_SEEN].pid == pid && seen[i % MAX_SEEN].code == code)
			return 1;
	return 0;
}

/* --- Processes ----------------------------------------------------------------------------------- */

static PROCESS_ID_TYPE driver, bb_reader, bb_writer, bb_writer2, buf_receiver, buf_sender;
static PROCESS_ID_TYPE buf_sender2, guard_irq, guard_irq_edge, far_svc, far_irq, misaligned;
static BLACKBOARD_ID_TYPE board;
static BUFFER_ID_TYPE buffer, pool_filler;

static volatile int displayed, displayed2, sent, sent2, reader_back, receiver_back;
static volatile RETURN_CODE_TYPE display_rc = -1, display2_rc = -1, send_rc = -1, send2_rc = -1;
static volatile RETURN_CODE_TYPE read_rc = -1, receive_rc = -1;
static volatile int survived;

/* An address in the partition's code: read-only with the MMU on. */
static void code_target(void) { __asm__ volatile("nop"); }
#define CODE_ADDR ((MESSAGE_ADDR_TYPE)(unsigned long)code_target)

/* A reader that hands READ_BLACKBOARD a buffer it cannot write (its code), and waits. */
static void bb_reader_body(void)
{
	MESSAGE_SIZE_TYPE len;
	RETURN_CODE_TYPE rc;

	READ_BLACKBOARD(board, INF, CODE_ADDR, &len, &rc);
	read_rc = rc;
	reader_back = 1;
}

static void bb_writer_body(void)
{
	RETURN_CODE_TYPE rc;

	DISPLAY_BLACKBOARD(board, (MESSAGE_ADDR_TYPE)"hello", 5, &rc);
	display_rc = rc;
	displayed = 1;
}

static void bb_writer2_body(void)
{
	RETURN_CODE_TYPE rc;

	DISPLAY_BLACKBOARD(board, (MESSAGE_ADDR_TYPE)"again", 5, &rc);
	display2_rc = rc;
	displayed2 = 1;
}

static void buf_receiver_body(void)
{
	MESSAGE_SIZE_TYPE len;
	RETURN_CODE_TYPE rc;

	RECEIVE_BUFFER(buffer, INF, CODE_ADDR, &len, &rc);
	receive_rc = rc;
	receiver_back = 1;
}

static void buf_sender_body(void)
{
	RETURN_CODE_TYPE rc;

	SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)"hello", 5, 0, &rc);
	send_rc = rc;
	sent = 1;
}

static void buf_sender2_body(void)
{
	RETURN_CODE_TYPE rc;

	SEND_BUFFER(buffer, (MESSAGE_ADDR_TYPE)"again", 5, 0, &rc);
	send2_rc = rc;
	sent2 = 1;
}

/* Stacks of 4096 bytes: with the 512-byte canary zone, two pages, the stack at their top
 * (kernel.c apex_stack_alloc), and the two guard pages right below them. */
#define STACK 4096
#define STACK_PAGES (2 * PAGE)

static unsigned long guard_top_of_mine(void)
{
	unsigned long sp;

	__asm__ volatile("mov %0, sp" : "=r"(sp));
	return ((sp + PAGE - 1) & ~(PAGE - 1)) - STACK_PAGES;
}

/* SP put inside its own guard pages, IRQs unmasked: the next interrupt (the driver's wake-up)
 * finds no room for its frame. */
static void guard_irq_body(void)
{
	unsigned long target = guard_top_of_mine() - 1024;

	__asm__ volatile("mov sp, %0\n1:\tb 1b" : : "r"(target) : "memory");
	survived = 1;
}

/* SP just above the guard: the frame's top fits, its bottom does not. */
static void guard_irq_edge_body(void)
{
	unsigned long target = guard_top_of_mine() + 128;

	__asm__ volatile("mov sp, %0\n1:\tb 1b" : : "r"(target) : "memory");
	survived = 1;
}

/* SP outside the partition's memory, then an SVC: the exception entry's check finds it outside
 * the image (stage 1 does not map it either: it maps the partition's areas only). */
#define OUTSIDE 0x80000000ul
static void far_svc_body(void)
{
	__asm__ volatile("mov sp, %0\n\tsvc #0\n1:\tb 1b" : : "r"(OUTSIDE + 0x1000) : "memory");
	survived = 1;
}

/* SP misaligned (not a multiple of 8) in its own stack, then an SVC: with alignment checks on
 * (SCTLR_EL1.A, set with the MMU), the entry's first store faults again at every entry. */
static void misaligned_svc_body(void)
{
	__asm__ volatile("mov x9, sp\n\tsub x9, x9, #516\n\tmov sp, x9\n\tsvc #0\n1:\tb 1b"
			 : : : "x9", "memory");
	survived = 1;
}

/* The same with an interrupt instead of the SVC: the IRQ entry has no check of its own. */
static void far_irq_body(void)
{
	__asm__ volatile("mov sp, %0\n1:\tb 1b" : : "r"(OUTSIDE + 0x1000) : "memory");
	survived = 1;
}

/* Recursion that calls a service at every level (GET_TIME: the kernel lock with two vCPUs), so
 * that the overflow comes in the service for some frame sizes: the lock must not stay held. */
#define MC_RECURSERS 4
static volatile unsigned mc_depth[MC_RECURSERS];
static volatile int mc_survived[MC_RECURSERS];
static PROCESS_ID_TYPE mc_recurser[MC_RECURSERS], mc_after;
static volatile int mc_after_ran;

#define RECURSE_WITH_SERVICE(k, size)                                                     \
	static unsigned __attribute__((noinline)) recurse_svc##k(unsigned n)              \
	{                                                                                 \
		volatile char frame[size];                                                \
		SYSTEM_TIME_TYPE t;                                                       \
		RETURN_CODE_TYPE rc;                                                      \
		frame[0] = (char)n;                                                       \
		GET_TIME(&t, &rc);                                                        \
		mc_depth[k] = n;                                                          \
		if (n == ~0u)                                                             \
			return frame[0];                                                  \
		return recurse_svc##k(n + 1) + (unsigned)frame[0] + (unsigned)t;          \
	}                                                                                 \
	static void mc_recurser##k##_body(void)                                           \
	{                                                                                 \
		recurse_svc##k(1);                                                        \
		mc_survived[k] = 1;                                                       \
	}
RECURSE_WITH_SERVICE(0, 120)
RECURSE_WITH_SERVICE(1, 136)
RECURSE_WITH_SERVICE(2, 152)
RECURSE_WITH_SERVICE(3, 168)

static void mc_after_body(void)
{
	BUFFER_STATUS_TYPE st;
	RETURN_CODE_TYPE rc;

	GET_BUFFER_STATUS(buffer, &st, &rc); /* a service that takes the kernel lock */
	mc_after_ran = rc == NO_ERROR ? 1 : 2;
}

/* --- Tests (the driver, priority 100) ------------------------------------------------------------ */

/* A reader whose READ_BLACKBOARD buffer is its own code: the message is copied into it by the
 * writer's DISPLAY_BLACKBOARD. The fault must be the reader's (or its call refused), never the
 * writer's; a later writer must be able to display too. */
BH_TEST(atk2_blackboard_reader_with_a_read_only_buffer_cannot_kill_the_writer)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	START(bb_reader, &rc);
	apexutil_sleep(1 * MS); /* it waits, or was refused */
	START(bb_writer, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT(seen_since(bb_reader, MEMORY_VIOLATION, n0) || read_rc == INVALID_PARAM);
	BH_EXPECT_EQ(errors_of(bb_writer, n0), 0);
	BH_EXPECT_EQ(displayed, 1);
	BH_EXPECT_EQ(display_rc, NO_ERROR);
	START(bb_writer2, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT_EQ(errors_of(bb_writer2, n0), 0);
	BH_EXPECT_EQ(displayed2, 1);
	BH_EXPECT_EQ(display2_rc, NO_ERROR);
}

/* The same through a buffer: SEND_BUFFER to a waiting receiver copies straight into its
 * buffer. */
BH_TEST(atk2_buffer_receiver_with_a_read_only_buffer_cannot_kill_the_sender)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	START(buf_receiver, &rc);
	apexutil_sleep(1 * MS);
	START(buf_sender, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT(seen_since(buf_receiver, MEMORY_VIOLATION, n0) || receive_rc == INVALID_PARAM);
	BH_EXPECT_EQ(errors_of(buf_sender, n0), 0);
	BH_EXPECT_EQ(sent, 1);
	BH_EXPECT_EQ(send_rc, NO_ERROR);
	START(buf_sender2, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT_EQ(errors_of(buf_sender2, n0), 0);
	BH_EXPECT_EQ(sent2, 1);
	BH_EXPECT_EQ(send2_rc, NO_ERROR);
}

static void expect_overflow(PROCESS_ID_TYPE id)
{
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	survived = 0;
	START(id, &rc);
	apexutil_sleep(2 * MS); /* its wake-up is the interrupt that finds SP in the guard */
	BH_EXPECT(seen_since(id, STACK_OVERFLOW, n0));
	BH_EXPECT_EQ(apexutil_state_of(id), DORMANT);
	BH_EXPECT_EQ(survived, 0);
}

/* An interrupt that comes while SP is inside the guard pages (IRQ slot: no check of its own;
 * its first store faults, and the synchronous entry finds no room). */
BH_TEST(atk2_irq_with_sp_inside_the_guard_is_a_stack_overflow)
{
	ONLY_IN(0);
	expect_overflow(guard_irq);
}

BH_TEST(atk2_irq_with_sp_just_above_the_guard_is_a_stack_overflow)
{
	ONLY_IN(0);
	expect_overflow(guard_irq_edge);
}

/* The error handler overflowing its own stack: partition-level (the handler's errors go to
 * Bulkhead's health monitor), the handler stopped, and the next error starts it afresh. */
BH_TEST(atk2_error_handler_stack_overflow_is_clean)
{
	ONLY_IN(0);
	unsigned n0 = nseen;

	handler_recurse = 1;
	expect_overflow(guard_irq); /* the handler runs for it, then overflows */
	BH_EXPECT_EQ(handler_recurse, 0);
	n0 = nseen;
	expect_overflow(guard_irq_edge); /* a fresh handler takes the next error */
	BH_EXPECT_EQ(nseen, n0 + 1);
}

/* SP outside the partition's memory, then an SVC: the process must stop (STACK_OVERFLOW or
 * MEMORY_VIOLATION) and the others go on. */
BH_TEST(atk2_svc_with_a_misaligned_sp_stops_the_process)
{
	ONLY_IN(0);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	survived = 0;
	START(misaligned, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT(seen_since(misaligned, STACK_OVERFLOW, n0) ||
		  seen_since(misaligned, MEMORY_VIOLATION, n0));
	BH_EXPECT_EQ(apexutil_state_of(misaligned), DORMANT);
	BH_EXPECT_EQ(survived, 0);
}

BH_TEST(atk2_svc_with_sp_outside_the_partition_stops_the_process)
{
	ONLY_IN(1);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	survived = 0;
	START(far_svc, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT(seen_since(far_svc, STACK_OVERFLOW, n0) || seen_since(far_svc, MEMORY_VIOLATION, n0));
	BH_EXPECT_EQ(apexutil_state_of(far_svc), DORMANT);
	BH_EXPECT_EQ(survived, 0);
}

/* The interrupt entry does not check SP (every interrupt would pay for it), but stage 1 maps
 * only the partition's areas (bh_memory_map, from the description): the frame's first store
 * faults at EL1, where the synchronous entry finds SP outside the partition, a stack overflow.
 * (Stage 1 mapping everything, these stores were the hypervisor's stage-2 faults, which stopped
 * the partition.) Last, as it was. */
BH_TEST(atk2_irq_with_sp_outside_the_partition_stops_the_process)
{
	ONLY_IN(1);
	RETURN_CODE_TYPE rc;
	unsigned n0 = nseen;

	survived = 0;
	START(far_irq, &rc);
	apexutil_sleep(2 * MS);
	BH_EXPECT(seen_since(far_irq, STACK_OVERFLOW, n0) || seen_since(far_irq, MEMORY_VIOLATION, n0));
	BH_EXPECT_EQ(apexutil_state_of(far_irq), DORMANT);
	BH_EXPECT_EQ(survived, 0);
}

/* On the second vCPU of a two-vCPU partition: each recursion stops at its guard with
 * STACK_OVERFLOW, wherever it is (in the process or in a service holding the kernel lock), and
 * both vCPUs go on using services afterwards. */
BH_TEST(atk2_mc_overflow_on_the_second_vcpu_is_clean)
{
	ONLY_IN(2);
	RETURN_CODE_TYPE rc;

	for (unsigned k = 0; k < MC_RECURSERS; k++) {
		unsigned n0 = nseen;

		START(mc_recurser[k], &rc);
		BH_EXPECT_EQ(rc, NO_ERROR);
		for (unsigned i = 0; i < 20 && apexutil_state_of(mc_recurser[k]) != DORMANT; i++)
			apexutil_sleep(1 * MS);
		BH_EXPECT_EQ(apexutil_state_of(mc_recurser[k]), DORMANT);
		BH_EXPECT(seen_since(mc_recurser[k], STACK_OVERFLOW, n0));
		BH_EXPECT_EQ(mc_survived[k], 0);
		bh_printf("atk2: mc recurser %u stopped at depth %u\n", k, mc_depth[k]);
	}
	START(mc_after, &rc);
	for (unsigned i = 0; i < 20 && !mc_after_ran; i++)
		apexutil_sleep(1 * MS);
	BH_EXPECT_EQ(mc_after_ran, 1);
}

/* An application's interrupt handler runs on libapex's kernel stack (8 KiB per vCPU, vCPU 0's
 * the lowest). One with a frame larger than that must not silently overwrite the memory below
 * it (the buffer and blackboard message pool): the overflow must be found. */
#define HANDLER_FRAME 12288
#define FILL_SIZE 1024
#define FILL_N 31 /* (1024 + 8) * 31 of the pool's 32 KiB: up to its top */
static volatile int big_handler_ran;

static void big_handler(unsigned intid)
{
	volatile char big[HANDLER_FRAME];

	(void)intid;
	for (unsigned i = 0; i < HANDLER_FRAME; i++)
		big[i] = 0x77;
	big_handler_ran = big[0];
}

BH_TEST(atk2_interrupt_handler_cannot_overflow_the_kernel_stack_silently)
{
	ONLY_IN(0);
	static unsigned char msg[FILL_SIZE];
	MESSAGE_SIZE_TYPE len;
	RETURN_CODE_TYPE rc;
	unsigned bad = 0, got = 0;

	for (unsigned m = 0; m < FILL_N; m++) {
		for (unsigned i = 0; i < FILL_SIZE; i++)
			msg[i] = (unsigned char)(m * 7 + i);
		SEND_BUFFER(pool_filler, msg, FILL_SIZE, 0, &rc);
		BH_EXPECT_EQ(rc, NO_ERROR);
	}
	BH_EXPECT_EQ(bh_irq_set_handler(BH_VIRQ_TIMER, big_handler), BH_OK);
	BH_EXPECT_EQ(bh_set_timer(BH_CLOCK_HW, bh_now_ns() + 300 * US, 0), BH_OK);
	apexutil_sleep(1 * MS);
	for (unsigned m = 0; m < FILL_N; m++) {
		RECEIVE_BUFFER(pool_filler, 0, msg, &len, &rc);
		if (rc != NO_ERROR || len != FILL_SIZE)
			continue;
		got++;
		for (unsigned i = 0; i < FILL_SIZE; i++)
			bad += msg[i] != (unsigned char)(m * 7 + i);
	}
	bh_printf("atk2: handler ran %d, %u messages back, %u bytes changed\n", big_handler_ran,
		  got, bad);
	BH_EXPECT_EQ(got, FILL_N);
	BH_EXPECT_EQ(bad, 0);
}

/* --- Initialization ------------------------------------------------------------------------------ */

static void driver_body(void)
{
	RETURN_CODE_TYPE rc;

	bh_test_run_all();
	bh_test_summary();
	SET_PARTITION_MODE(IDLE, &rc);
}

static PROCESS_ID_TYPE make(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
			    STACK_SIZE_TYPE stack)
{
	return apexutil_make(name, entry, prio, INF, INF, stack, SOFT);
}

/* The initialization's own frame, larger than its stack (libbhpart's 16 KiB for vCPU 0): the
 * access below it must be found, not go on into the stack of vCPU 1 (waiting, below it). */
#define INIT_FRAME (20 * 1024)
static volatile int init_frame_done;

static void __attribute__((noinline)) init_big_frame(void)
{
	volatile char big[INIT_FRAME];

	for (unsigned i = 0; i < INIT_FRAME; i++)
		big[i] = 0x55;
	init_frame_done = big[0];
}

BH_TEST(atk2_init_overflow_was_found)
{
	ONLY_IN(3);
	/* Reached only if the initialization went on after its overflow: it was not found. */
	BH_EXPECT_EQ(init_frame_done, 0);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	RETURN_CODE_TYPE rc;

	(void)vcpu;
	apex_init(boot_kind, restarts);
	if (role() == 3)
		init_big_frame();
	driver = make("driver", driver_body, 100, 8192);
	bb_reader = make("bbreader", bb_reader_body, 30, STACK);
	bb_writer = make("bbwriter", bb_writer_body, 20, STACK);
	bb_writer2 = make("bbwriter2", bb_writer2_body, 20, STACK);
	buf_receiver = make("bufrecv", buf_receiver_body, 30, STACK);
	buf_sender = make("bufsend", buf_sender_body, 20, STACK);
	buf_sender2 = make("bufsend2", buf_sender2_body, 20, STACK);
	guard_irq = make("guardirq", guard_irq_body, 20, STACK);
	guard_irq_edge = make("guardedge", guard_irq_edge_body, 20, STACK);
	far_svc = make("farsvc", far_svc_body, 20, STACK);
	far_irq = make("farirq", far_irq_body, 20, STACK);
	misaligned = make("misalign", misaligned_svc_body, 20, STACK);
	{
		static void (*const bodies[MC_RECURSERS])(void) = {
			mc_recurser0_body, mc_recurser1_body, mc_recurser2_body, mc_recurser3_body
		};
		for (unsigned k = 0; k < MC_RECURSERS; k++) {
			char name[4] = { 'm', 'c', (char)('0' + k), 0 };
			mc_recurser[k] = make(name, bodies[k], 20, STACK);
			INITIALIZE_PROCESS_CORE_AFFINITY(mc_recurser[k], 1, &rc); /* refused on one */
		}
		mc_after = make("mcafter", mc_after_body, 20, STACK);
		INITIALIZE_PROCESS_CORE_AFFINITY(mc_after, 1, &rc);
	}
	CREATE_BLACKBOARD("board", 64, &board, &rc);
	CREATE_BUFFER("buffer", 64, 4, FIFO, &buffer, &rc);
	CREATE_BUFFER("filler", FILL_SIZE, FILL_N, FIFO, &pool_filler, &rc);
	if (rc != NO_ERROR)
		bh_printf("atk2: filler buffer: %d\n", (int)rc);
	CREATE_ERROR_HANDLER(error_handler, 4096, &rc);
	START(driver, &rc);
	SET_PARTITION_MODE(NORMAL, &rc);
	return 0;
}
