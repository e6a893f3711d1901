/* Ports and doorbells (core/ports.c) on the host: the fixture's alpha (id 0) sends to beta
 * (id 1) over a sampling and a queuing channel, and both map one shared region. */
#include <string.h>
#include "arch/fake.h"
#include "bulkhead/abi.h"
#include "fixture.h"
#include "hypercall.h"
#include "partition.h"
#include "percpu.h"
#include "ports.h"
#include "main.h"
#include "unit.h"

#define NAMES  (ALPHA_RAM_IPA + 0x1000) /* port names in alpha's memory */
#define BUF    (ALPHA_RAM_IPA + 0x2000)
#define BETA_BUF (ALPHA_RAM_IPA + 0x3000)

enum { SAMPLING, QUEUING };

/* Alpha, the source, has its vCPU on core 0 and beta, the destination, on cores 1 and 2
 * (fixture.c): reads on two cores at once. */
#define SAMPLING_COPIES BH_SAMPLING_COPIES(3)
static uint8_t sampling_buf[SAMPLING_COPIES * BH_SAMPLING_SLOT_SIZE(16)] __attribute__((aligned(8)));
static uint8_t queue_buf[2 * BH_MSG_SLOT_SIZE(8)] __attribute__((aligned(8)));
static const struct bh_port_ref sampling_dst[] = { { .partition = 1, .port = 0 } };
static const struct bh_port_ref queue_dst[] = { { .partition = 1, .port = 1 } };
static const struct bh_channel_cfg channels[] = {
	[SAMPLING] = { .name = "s", .kind = BH_CHANNEL_SAMPLING, .max_message_size = 16,
		       .max_messages = 1, .destination_count = 1, .refresh_ns = 1000,
		       .source = { 0, 0 }, .destinations = sampling_dst, .buffer = sampling_buf,
		       .buffer_size = sizeof(sampling_buf) },
	[QUEUING] = { .name = "q", .kind = BH_CHANNEL_QUEUING, .max_message_size = 8,
		      .max_messages = 2, .destination_count = 1, .source = { 0, 1 },
		      .destinations = queue_dst, .buffer = queue_buf,
		      .buffer_size = sizeof(queue_buf) },
};
static const struct bh_port_cfg alpha_ports[] = {
	{ .name = "s_out", .channel = SAMPLING, .direction = BH_SOURCE_PORT },
	{ .name = "q_out", .channel = QUEUING, .direction = BH_SOURCE_PORT },
};
static const struct bh_port_cfg beta_ports[] = {
	{ .name = "s_in", .channel = SAMPLING, .direction = BH_DESTINATION_PORT },
	{ .name = "q_in", .channel = QUEUING, .direction = BH_DESTINATION_PORT },
};
static const struct bh_shm_map_cfg shm_maps[] = {
	{ .partition = 0, .flags = BH_AREA_READ | BH_AREA_WRITE, .ipa = 0x50000000 },
	{ .partition = 1, .flags = BH_AREA_READ, .ipa = 0x50000000 },
};
static const struct bh_shm_cfg shm[] = {
	{ .name = "ring", .phys = 0x42400000, .size = 0x1000, .flags = BH_SHM_DOORBELL,
	  .mapping_count = 2, .mappings = shm_maps },
	{ .name = "mute", .phys = 0x42401000, .size = 0x1000, .mapping_count = 1,
	  .mappings = shm_maps },
};

static struct arch_regs regs;

static void boot(void)
{
	static struct bh_system_cfg sys;

	fixture_partitions[0].ports = alpha_ports;
	fixture_partitions[0].port_count = 2;
	fixture_partitions[1].ports = beta_ports;
	fixture_partitions[1].port_count = 2;
	fixture_boot();
	sys = bh_system_config;
	sys.channels = channels;
	sys.channel_count = 2;
	sys.shm_regions = shm;
	sys.shm_count = 2;
	memset(sampling_buf, 0, sizeof(sampling_buf));
	memset(queue_buf, 0, sizeof(queue_buf));
	ports_init(&sys);
}

static struct vcpu *alpha(void) { return &partitions[0].vcpus[0]; }
static struct vcpu *beta(void) { return &partitions[1].vcpus[0]; }

static int64_t call(struct vcpu *v, uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3,
		    uint64_t a4, uint64_t a5)
{
	fixture_run(v->core, v);
	regs = (struct arch_regs){ .x = { fn, a1, a2, a3, a4, a5 } };
	regs.x[0] = (uint64_t)hypercall_dispatch(v, &regs);
	return (int64_t)regs.x[0];
}

/* The name at NAMES in the caller's memory (alpha's and beta's RAM start at the same IPA). */
static uint64_t name(struct vcpu *v, const char *s)
{
	uint8_t *ram = v == alpha() ? fake_ram : fake_ram + (BETA_RAM_PHYS - ALPHA_RAM_PHYS);
	memcpy(ram + (NAMES - ALPHA_RAM_IPA), s, strlen(s));
	return strlen(s);
}

static int64_t open_q(struct vcpu *v, const char *port, uint64_t dir)
{
	uint64_t len = name(v, port);
	return call(v, BH_HC_QUEUING_PORT_CREATE, NAMES, len, 8, dir, 2);
}

static bool port_irq_pending(struct vcpu *v)
{
	return v->virq.pending[0] & (1u << BH_VIRQ_PORT);
}

static void clear_port_irq(struct vcpu *v)
{
	v->virq.pending[0] &= ~(1u << BH_VIRQ_PORT);
	v->virq.count = 0;
}

TEST(ports_open_by_matching_configuration_only)
{
	boot();
	EXPECT_EQ(open_q(alpha(), "q_in", BH_SOURCE_PORT), BH_INVALID_CONFIG); /* beta's */
	EXPECT_EQ(open_q(alpha(), "q_out", BH_DESTINATION_PORT), BH_INVALID_CONFIG);
	uint64_t len = name(alpha(), "q_out");
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_PORT_CREATE, NAMES, len, 8, 0, 3), BH_INVALID_CONFIG);
	EXPECT_EQ(call(alpha(), BH_HC_SAMPLING_PORT_CREATE, NAMES, len, 8, 0, 2), BH_INVALID_CONFIG);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_PORT_CREATE, NAMES, len, 8, 2, 2), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_PORT_CREATE, NAMES, 0, 8, 0, 2), BH_INVALID_PARAM);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_PORT_CREATE, 0x7000, len, 8, 0, 2), BH_INVALID_PARAM);
	EXPECT_EQ(open_q(alpha(), "q_out", BH_SOURCE_PORT), 1);
	EXPECT_EQ(open_q(alpha(), "q_out", BH_SOURCE_PORT), BH_NO_ACTION);
	EXPECT_EQ(regs.x[1], 1);
}

TEST(a_restart_closes_the_partitions_ports)
{
	boot();
	EXPECT_EQ(open_q(alpha(), "q_out", BH_SOURCE_PORT), 1);
	partitions[0].restarts++;
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 1, 0, 0), BH_INVALID_PARAM);
	EXPECT_EQ(open_q(alpha(), "q_out", BH_SOURCE_PORT), 1);
}

TEST(queue_is_fifo_bounded_and_notifies_once_per_receive)
{
	boot();
	open_q(alpha(), "q_out", BH_SOURCE_PORT);
	open_q(beta(), "q_in", BH_DESTINATION_PORT);
	memcpy(fake_ram + 0x2000, "abcdefgh", 8);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 3, 0, 0), BH_OK);
	EXPECT(port_irq_pending(beta()));
	clear_port_irq(beta());
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF + 3, 5, 0, 0), BH_OK);
	EXPECT(!port_irq_pending(beta())); /* not re-armed: beta has not received yet */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 1, 0, 0), BH_NOT_AVAILABLE);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 9, 0, 0), BH_INVALID_CONFIG);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 2, 0, 0), 2); /* truncated */
	EXPECT_EQ(regs.x[1], 3);
	EXPECT(port_irq_pending(alpha())); /* the queue was full: room for the sender now */
	uint8_t *beta_ram = fake_ram + (BETA_RAM_PHYS - ALPHA_RAM_PHYS) + 0x3000;
	EXPECT(memcmp(beta_ram, "ab", 2) == 0);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 5);
	EXPECT(memcmp(beta_ram, "defgh", 5) == 0);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), BH_NOT_AVAILABLE);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 1, 0, 0), BH_OK);
	EXPECT(port_irq_pending(beta())); /* re-armed by the receive */
}

TEST(a_bad_buffer_changes_nothing_and_releases_the_lock)
{
	boot();
	open_q(alpha(), "q_out", BH_SOURCE_PORT);
	open_q(beta(), "q_in", BH_DESTINATION_PORT);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, 0x7000, 4, 0, 0), BH_INVALID_PARAM);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), BH_NOT_AVAILABLE);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, 0x7000, 8, 0, 0), BH_INVALID_PARAM);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 4); /* still there */
}

/* Booted, alpha's s_out and beta's s_in open (descriptor 0 each). */
static void boot_with_sampling_ports(void)
{
	boot();
	uint64_t len = name(alpha(), "s_out");
	EXPECT_EQ(call(alpha(), BH_HC_SAMPLING_PORT_CREATE, NAMES, len, 16, 0, 1000), 0);
	len = name(beta(), "s_in");
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_PORT_CREATE, NAMES, len, 16, 1, 1000), 0);
}

TEST(sampling_validity_and_readiness)
{
	boot_with_sampling_ports();
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), BH_NO_ACTION);
	fake.counter = 1000;
	EXPECT_EQ(call(alpha(), BH_HC_SAMPLING_WRITE, 0, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 1); /* s_in has a message it has not read */
	fake.counter = 1000 + 62; /* 62 ticks = 992 ns: still within the 1000 ns refresh */
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 4);
	EXPECT_EQ(regs.x[1], BH_MSG_VALID);
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 0);
	fake.counter = 1000 + 64; /* 1024 ns */
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 4);
	EXPECT_EQ(regs.x[1], 0);
}

/* The source writes 16 bytes of `value`, or another of beta's vCPUs reads, during a read's copy,
 * as another core would (the guest copy calls the copy hook before each piece it copies). */
static unsigned writes_left, locks_taken, guest_copies;
static uint8_t next_value;
static bool writing;

static void count_lock(void) { locks_taken++; }

static void alpha_writes(uint8_t value)
{
	struct arch_regs w = { .x = { BH_HC_SAMPLING_WRITE, 0, BUF, 16 } };

	unsigned core = fake.core; /* the reader's, when this plays alpha's core during a read */

	memset(fake_ram + (BUF - ALPHA_RAM_IPA), value, 16);
	writing = true;
	fake.core = alpha()->core;
	EXPECT_EQ(hypercall_dispatch(alpha(), &w), BH_OK);
	fake.core = core;
	writing = false;
}

static void write_during_copy(void)
{
	if (writing)
		return;
	guest_copies++;
	while (writes_left) {
		writes_left--;
		alpha_writes(next_value++);
	}
}

static uint8_t *beta_ram_at(uint64_t ipa)
{
	return fake_ram + (BETA_RAM_PHYS - ALPHA_RAM_PHYS) + (ipa - ALPHA_RAM_IPA);
}

static bool beta_read_whole(uint64_t ipa, uint8_t value)
{
	const uint8_t *b = beta_ram_at(ipa);

	for (unsigned i = 0; i < 16; i++)
		if (b[i] != value)
			return false;
	return true;
}

/* A sampling read takes no lock and copies the message to its guest once: the copy it reads is
 * its own until it is done, and the source's writes meanwhile (any number: its other vCPUs, or
 * another core) go to other copies. It returns the message as it was when it began; the next
 * read returns the last one written. (Before, a write during the copy made the read copy again,
 * up to five times, the last under the lock: sixth review.) */
TEST(a_sampling_read_copies_the_message_to_the_guest_once_however_the_source_writes)
{
	boot_with_sampling_ports();
	alpha_writes('a');
	fake.lock_hook = count_lock;
	fake.copy_hook = write_during_copy;
	locks_taken = guest_copies = 0, writes_left = 7, next_value = 'b';
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	EXPECT_EQ(guest_copies, 1);
	EXPECT(beta_read_whole(BETA_BUF, 'a'));
	EXPECT_EQ(locks_taken, 2 * 7); /* the source's writes only: the pick, the publication */

	locks_taken = guest_copies = 0;
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	EXPECT(beta_read_whole(BETA_BUF, 'h'));
	EXPECT_EQ(guest_copies, 1);
	EXPECT_EQ(locks_taken, 0);
	fake.lock_hook = NULL;
	fake.copy_hook = NULL;
}

/* Beta's second vCPU (core 2) reads 16 bytes to BETA_BUF + 0x100, inside a call of its first:
 * the outer call's registers are its own. */
static void second_vcpu_reads(void)
{
	struct vcpu *second = &partitions[1].vcpus[1];
	struct arch_regs r = { .x = { BH_HC_SAMPLING_READ, 0, BETA_BUF + 0x100, 16 } };

	fixture_run(second->core, second);
	EXPECT_EQ(hypercall_dispatch(second, &r), 16);
}

/* Beta's second vCPU (core 2) reads while its first (core 1) is in its copy, and the source
 * writes during both: each holds its own copy, the writes take the others (the channel has one
 * for each core its ports' vCPUs may use, and the last message). */
static void read_on_core_2_during_copy(void)
{
	static bool nested;

	if (writing || nested)
		return;
	nested = true;
	alpha_writes('x');
	fake.copy_hook = write_during_copy;
	writes_left = 5, next_value = 'p';
	second_vcpu_reads();
	nested = false;
}

TEST(sampling_reads_on_two_cores_each_keep_their_copy_while_the_source_writes)
{
	boot_with_sampling_ports();
	alpha_writes('a');
	fake.copy_hook = read_on_core_2_during_copy;
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	fake.copy_hook = NULL;
	EXPECT(beta_read_whole(BETA_BUF, 'a'));         /* as when core 1's read began */
	EXPECT(beta_read_whole(BETA_BUF + 0x100, 'x')); /* as when core 2's began */
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	EXPECT(beta_read_whole(BETA_BUF, 'p' + 4));     /* the last write */
	EXPECT_EQ(call(beta(), BH_HC_PORT_STATUS, 0, BETA_BUF + 0x200, 0, 0, 0), BH_OK);
	EXPECT_EQ(((struct bh_port_status *)(void *)beta_ram_at(BETA_BUF + 0x200))->last_size, 16);
}

/* A write copies from its guest outside the channel's lock: another write meanwhile (another
 * vCPU of the source, here played by alpha's on core 3) does not wait for it, and each
 * publishes a whole message, the last to end the latest. */
static void alpha_writes_on_core_3(void)
{
	static bool nested;
	struct vcpu *a = alpha();

	if (nested)
		return;
	nested = true;
	unsigned core = a->core;
	struct arch_regs w = { .x = { BH_HC_SAMPLING_WRITE, 0, BUF + 0x100, 16 } };
	memset(fake_ram + (BUF + 0x100 - ALPHA_RAM_IPA), 'n', 16);
	a->core = 3;
	fixture_run(3, a);
	EXPECT_EQ(hypercall_dispatch(a, &w), BH_OK);
	a->core = core;
	fake.core = core;
	nested = false;
}

TEST(a_sampling_write_copies_outside_the_lock_and_another_write_meanwhile_waits_for_nothing)
{
	boot_with_sampling_ports();
	fake.held_lock_takes = 0;
	fake.copy_hook = alpha_writes_on_core_3;
	memset(fake_ram + (BUF - ALPHA_RAM_IPA), 'o', 16);
	EXPECT_EQ(call(alpha(), BH_HC_SAMPLING_WRITE, 0, BUF, 16, 0, 0), BH_OK);
	fake.copy_hook = NULL;
	EXPECT_EQ(fake.held_lock_takes, 0); /* the inner write never met the lock held */
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	EXPECT(beta_read_whole(BETA_BUF, 'o')); /* the outer write ended last */
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 0); /* and was numbered last: nothing newer unread */
}

/* Readiness never goes back: beta's vCPU on core 1 reads the message while the source writes a
 * newer one and beta's vCPU on core 2 reads that; the first read, of the older message, ends
 * last, and the port still counts the newer one as read (before, it said "a message you have
 * not read" again: helper-48). */
static void newer_write_and_read_on_core_2(void)
{
	if (writing)
		return;
	fake.copy_hook = NULL;
	alpha_writes('n');
	second_vcpu_reads();
}

TEST(a_slower_read_of_an_older_message_leaves_the_newer_one_read)
{
	boot_with_sampling_ports();
	alpha_writes('o');
	fake.copy_hook = newer_write_and_read_on_core_2;
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	fake.copy_hook = NULL;
	EXPECT(beta_read_whole(BETA_BUF, 'o') && beta_read_whole(BETA_BUF + 0x100, 'n'));
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 0); /* 'n', the newest, was read */
	alpha_writes('m');
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 1);
}

/* A write whose buffer fails its check publishes nothing: readers keep the last message. */
TEST(a_failed_sampling_write_leaves_the_last_message)
{
	boot_with_sampling_ports();
	alpha_writes('a');
	EXPECT_EQ(call(alpha(), BH_HC_SAMPLING_WRITE, 0, 0x7000, 16, 0, 0), BH_INVALID_PARAM);
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 1);
	EXPECT_EQ(call(beta(), BH_HC_SAMPLING_READ, 0, BETA_BUF, 16, 0, 0), 16);
	EXPECT(beta_read_whole(BETA_BUF, 'a'));
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[1], 0);
}

TEST(doorbells_ring_members_only_and_once_until_taken)
{
	boot();
	EXPECT_EQ(call(beta(), BH_HC_SHM_DOORBELL, 1, 0, 0, 0, 0), BH_PERM_ERROR); /* not mapped */
	EXPECT_EQ(call(alpha(), BH_HC_SHM_DOORBELL, 1, 0, 0, 0, 0), BH_NOT_AVAILABLE);
	EXPECT_EQ(call(alpha(), BH_HC_SHM_DOORBELL, 2, 0, 0, 0, 0), BH_PERM_ERROR);
	EXPECT_EQ(call(alpha(), BH_HC_SHM_DOORBELL, 0, 0, 0, 0, 0), BH_OK);
	EXPECT(beta()->virq.pending[0] & (1u << BH_VIRQ_DOORBELL));
	EXPECT(!(alpha()->virq.pending[0] & (1u << BH_VIRQ_DOORBELL)));
	beta()->virq.pending[0] = 0;
	beta()->virq.count = 0;
	EXPECT_EQ(call(alpha(), BH_HC_SHM_DOORBELL, 0, 0, 0, 0, 0), BH_OK);
	EXPECT(!(beta()->virq.pending[0] & (1u << BH_VIRQ_DOORBELL)));
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[2], 1); /* region 0 rang; taken now */
	EXPECT_EQ(call(beta(), BH_HC_PORT_READY, 0, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(regs.x[2], 0);
	uint64_t len = name(beta(), "ring");
	EXPECT_EQ(call(beta(), BH_HC_SHM_INFO, NAMES, len, BETA_BUF, 0, 0), 0);
	len = name(beta(), "mute");
	EXPECT_EQ(call(beta(), BH_HC_SHM_INFO, NAMES, len, BETA_BUF, 0, 0), BH_INVALID_CONFIG);
}

/* --- Receive waits ------------------------------------------------------------------------ */

static uint8_t *beta_buf(void) { return fake_ram + (BETA_RAM_PHYS - ALPHA_RAM_PHYS) + 0x3000; }

/* Beta's vCPU v calls BH_HC_QUEUING_RECEIVE_WAIT on q_in with its own register frame, on a
 * shared core (so a block gives the core away instead of waiting in place). */
static int64_t wait_call(struct vcpu *v, uint64_t buf, uint64_t size)
{
	fixture_run(v->core, v);
	percpu[v->core].sched.policy = BH_POLICY_FIXED_PRIORITY;
	v->regs = (struct arch_regs){ .x = { BH_HC_QUEUING_RECEIVE_WAIT, 1, buf, size } };
	v->regs.x[0] = (uint64_t)hypercall_dispatch(v, &v->regs);
	return (int64_t)v->regs.x[0];
}

static uint32_t queued(void)
{
	EXPECT_EQ(call(beta(), BH_HC_PORT_STATUS, 1, BETA_BUF + 0x100, 0, 0, 0), BH_OK);
	uint8_t *st = beta_buf() + 0x100;
	return ((struct bh_port_status *)(void *)st)->messages;
}

static void open_both(void)
{
	boot();
	open_q(alpha(), "q_out", BH_SOURCE_PORT);
	open_q(beta(), "q_in", BH_DESTINATION_PORT);
	memcpy(fake_ram + 0x2000, "abcdefgh", 8);
}

TEST(a_receive_wait_takes_a_queued_message_at_once)
{
	open_both();
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 3, 0, 0), BH_OK);
	EXPECT_EQ(wait_call(beta(), BETA_BUF, 8), 3);
	EXPECT_EQ(beta()->regs.x[1], 3);
	EXPECT_EQ(beta()->state, VCPU_READY);
	EXPECT(memcmp(beta_buf(), "abc", 3) == 0);
}

TEST(a_waiting_receiver_gets_the_message_straight_from_the_sender)
{
	open_both();
	EXPECT_EQ(wait_call(beta(), BETA_BUF, 8), BH_NOT_AVAILABLE);
	EXPECT_EQ(beta()->state, VCPU_IDLE);
	EXPECT(percpu[beta()->core].exit_work & EXIT_DECIDE); /* its core goes to others */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF + 2, 5, 0, 0), BH_OK);
	EXPECT_EQ(beta()->state, VCPU_READY);
	EXPECT(memcmp(beta_buf(), "cdefg", 5) == 0);
	EXPECT_EQ(queued(), 0);                 /* never in the queue */
	EXPECT(!port_irq_pending(beta()));      /* the call's return is the notification */
	EXPECT_EQ(fake.kicks[beta()->core], 1); /* another core: kicked */
	EXPECT_EQ(ports_wait_finish(beta()), 5);
	EXPECT_EQ(beta()->regs.x[0], 5);
	EXPECT_EQ(beta()->regs.x[1], 5);
	EXPECT(beta()->wait.port == NULL);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 1, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1); /* nobody waits now */
}

TEST(a_message_longer_than_the_waiting_buffer_is_truncated_and_consumed)
{
	open_both();
	memset(beta_buf(), 'z', 8);
	wait_call(beta(), BETA_BUF, 2);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 6, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 2);
	EXPECT_EQ(beta()->regs.x[1], 6);
	EXPECT(memcmp(beta_buf(), "abzz", 4) == 0); /* nothing past its buffer */
	EXPECT_EQ(queued(), 0);
}

TEST(a_waiter_woken_by_something_else_gets_not_available_and_the_message_queues)
{
	open_both();
	wait_call(beta(), BETA_BUF, 8);
	beta()->state = VCPU_READY; /* as an interrupt wakes it */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1);
	EXPECT(port_irq_pending(beta()));
	EXPECT_EQ(ports_wait_finish(beta()), BH_NOT_AVAILABLE);
	EXPECT_EQ((int64_t)beta()->regs.x[0], BH_NOT_AVAILABLE);
	EXPECT_EQ(wait_call(beta(), BETA_BUF, 8), 4); /* the next wait takes it */
}

TEST(one_vcpu_at_a_time_waits_on_a_port)
{
	open_both();
	struct vcpu *second = &partitions[1].vcpus[1];
	wait_call(beta(), BETA_BUF, 8);
	EXPECT_EQ(wait_call(second, BETA_BUF + 0x10, 8), BH_OP_NOT_ALLOWED);
	EXPECT_EQ(second->state, VCPU_READY);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 4); /* the first one got it */
}

TEST(receive_wait_checks_its_arguments_before_it_blocks)
{
	open_both();
	EXPECT_EQ(wait_call(beta(), 0x7000, 8), BH_INVALID_PARAM);  /* not beta's memory */
	EXPECT_EQ(beta()->state, VCPU_READY);
	EXPECT(beta()->wait.port == NULL);
	EXPECT_EQ(wait_call(beta(), ALPHA_RAM_IPA + 0x200000 - 4, 8), BH_INVALID_PARAM);
	beta()->regs = (struct arch_regs){ .x = { BH_HC_QUEUING_RECEIVE_WAIT, 0, BETA_BUF, 8 } };
	EXPECT_EQ(hypercall_dispatch(beta(), &beta()->regs), BH_INVALID_PARAM); /* port not open */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1); /* no waiter was left behind */
}

TEST(a_bad_sender_buffer_leaves_the_receiver_waiting)
{
	open_both();
	wait_call(beta(), BETA_BUF, 8);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, 0x7000, 4, 0, 0), BH_INVALID_PARAM);
	EXPECT_EQ(beta()->state, VCPU_IDLE);
	/* Truncated to beta's 8 bytes or not, all of the sender's message must be readable. */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, ALPHA_RAM_IPA + ALPHA_RAM_SIZE - 4, 8, 0, 0),
		  BH_INVALID_PARAM);
	EXPECT_EQ(beta()->state, VCPU_IDLE);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 4);
}

TEST(a_handed_over_message_crosses_pages_on_both_sides)
{
	open_both();
	memcpy(fake_ram + 0x3000 - 3, "ABCDEFGH", 8);      /* alpha's message: 3 + 5 bytes */
	memset(beta_buf() + 0x1000 - 6, 0, 10);
	wait_call(beta(), BETA_BUF + 0x1000 - 5, 8);      /* beta's buffer: 5 + 3 bytes */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF + 0x1000 - 3, 8, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 8);
	EXPECT(memcmp(beta_buf() + 0x1000 - 5, "ABCDEFGH", 8) == 0);
	EXPECT(beta_buf()[0x1000 - 6] == 0 && beta_buf()[0x1000 + 3] == 0);
}

/* The copy takes one memcpy when both sides lie in one page, pieces otherwise: every mix. */
TEST(a_handed_over_message_crosses_pages_on_one_side)
{
	open_both();
	memset(beta_buf() + 0x1000 - 6, 0, 10);
	wait_call(beta(), BETA_BUF + 0x1000 - 2, 8);      /* beta's buffer: 2 + 6 bytes */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 5, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 5);
	EXPECT(memcmp(beta_buf() + 0x1000 - 2, "abcde", 5) == 0);
	EXPECT(beta_buf()[0x1000 - 3] == 0 && beta_buf()[0x1000 + 3] == 0);
	memcpy(fake_ram + 0x3000 - 3, "ABCDEFGH", 8);      /* alpha's message: 3 + 5 bytes */
	memset(beta_buf(), 0, 10);
	wait_call(beta(), BETA_BUF, 6);                   /* truncated into one page */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF + 0x1000 - 3, 8, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 6);
	EXPECT_EQ(beta()->regs.x[1], 8);
	EXPECT(memcmp(beta_buf(), "ABCDEF", 6) == 0 && beta_buf()[6] == 0);
}

TEST(a_waiter_with_an_empty_buffer_gets_the_length_alone)
{
	open_both();
	EXPECT_EQ(wait_call(beta(), 0x7000, 0), BH_NOT_AVAILABLE); /* nothing to check: it waits */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 0);
	EXPECT_EQ(beta()->regs.x[1], 4);
	EXPECT_EQ(queued(), 0); /* consumed, as a truncated receive */
}

TEST(a_waiter_woken_otherwise_keeps_its_buffer)
{
	open_both();
	memset(beta_buf(), 0, 8);
	wait_call(beta(), BETA_BUF, 8);
	beta()->state = VCPU_READY; /* its timer woke it on its own core; it has not run yet */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1);
	static const unsigned char zero[8];
	EXPECT(memcmp(beta_buf(), zero, 8) == 0); /* the call it returns from received nothing */
	EXPECT_EQ(ports_wait_finish(beta()), BH_NOT_AVAILABLE);
}

TEST(a_halt_ends_a_wait)
{
	open_both();
	wait_call(beta(), BETA_BUF, 8);
	partition_halt(&partitions[1]);
	fixture_serve(beta()->core);
	EXPECT(beta()->wait.port == NULL);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1); /* queued, not handed to a vCPU that no longer waits */
}

TEST(a_restart_closes_a_waiting_port_at_once)
{
	open_both();
	memset(beta_buf(), 0, 8);
	wait_call(beta(), BETA_BUF, 8);
	partition_restart(&partitions[1], true, BH_RESTART_SELF); /* by a system partition, on another core */
	/* Before beta's core has released its vCPU, a send must not reach beta's memory: the
	 * reload is about to start there. */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(call(alpha(), BH_HC_PORT_STATUS, 1, BUF + 0x100, 0, 0, 0), BH_OK);
	EXPECT_EQ(((struct bh_port_status *)(void *)(fake_ram + 0x2100))->messages, 1); /* queued */
	EXPECT_EQ(beta_buf()[0], 0);
	fixture_serve(beta()->core);
	EXPECT(beta()->wait.port == NULL);
}

/* A restart counts a vCPU that does not run at once (partition.c stop_all): beta's vCPU 1
 * waits on q_in, switched out on its core, which does not serve its stop before the reload.
 * The next incarnation opens q_in anew (which forgets the old waiter) and waits there, and the
 * old wait, ended when the stop is served at last, takes nothing from it. */
TEST(a_wait_left_by_a_vcpu_counted_for_a_restart_does_not_hold_the_port)
{
	open_both();
	struct vcpu *second = &partitions[1].vcpus[1];
	EXPECT_EQ(wait_call(second, BETA_BUF + 0x10, 8), BH_NOT_AVAILABLE);
	percpu[second->core].vcpu = NULL; /* its core switched it out */
	fake.core = 0;
	EXPECT(partition_restart(&partitions[1], false, BH_RESTART_SYSTEM_PARTITION));
	EXPECT(second->counted);
	EXPECT(second->request & VCPU_REQ_STOP);
	fixture_serve(beta()->core); /* vCPU 0's release: the last count */
	fake.core = beta()->core;
	percpu[beta()->core].sched.timer_at = TIME_NEVER;
	FAKE_RUN(core_exit_work()); /* the reload, in vCPU 0's time */
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING);
	EXPECT(second->wait.port != NULL); /* its stop not served yet */
	open_q(beta(), "q_in", BH_DESTINATION_PORT);
	EXPECT_EQ(wait_call(beta(), BETA_BUF, 8), BH_NOT_AVAILABLE);
	fixture_serve(second->core);
	EXPECT(second->wait.port == NULL);
	EXPECT_EQ(second->state, VCPU_HALTED);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(ports_wait_finish(beta()), 4); /* the new incarnation's wait got it */
}

/* Outside review: a doorbell rung at the old incarnation, never taken, survives the restart in
 * doorbells[] while its BH_VIRQ_DOORBELL is dropped with the old vCPU 0: every later ring
 * finds the bit set and raises nothing, so a new incarnation that waits for the interrupt
 * never hears its peers. */
TEST(attack_a_doorbell_rung_before_a_restart_mutes_the_new_incarnation)
{
	boot();
	EXPECT_EQ(call(alpha(), BH_HC_SHM_DOORBELL, 0, 0, 0, 0, 0), BH_OK);
	partition_restart(&partitions[1], true, BH_RESTART_SELF);
	fixture_serve(1);
	fixture_serve(2);
	fake.core = 1;
	percpu[1].sched.timer_at = TIME_NEVER;
	FAKE_RUN(core_exit_work());
	EXPECT_EQ(partitions[1].state, PARTITION_RUNNING);
	EXPECT(!virq_is_pending(beta(), BH_VIRQ_DOORBELL)); /* went with the old incarnation */
	/* The new incarnation idles for its doorbell; alpha rings. */
	EXPECT_EQ(call(alpha(), BH_HC_SHM_DOORBELL, 0, 0, 0, 0, 0), BH_OK);
	EXPECT(virq_is_pending(beta(), BH_VIRQ_DOORBELL));
}

/* --- Posted receive buffers ------------------------------------------------------------------- */

#define STATUS (BETA_BUF + 0x200) /* beta's status word */

static uint64_t status_word(void) { return *(uint64_t *)(void *)(beta_buf() + 0x200); }

static int64_t post_call(uint64_t buf, uint64_t size, uint64_t status)
{
	return call(beta(), BH_HC_QUEUING_RECEIVE_POST, 1, buf, size, status, 0);
}

TEST(a_post_takes_the_next_message_and_raises_the_port_interrupt)
{
	open_both();
	memset(beta_buf(), 0, 8);
	*(uint64_t *)(void *)(beta_buf() + 0x200) = 99;
	clear_port_irq(beta());
	EXPECT_EQ(post_call(BETA_BUF, 8, STATUS), BH_NOT_AVAILABLE);
	EXPECT_EQ(status_word(), 0);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 5, 0, 0), BH_OK);
	EXPECT_EQ(status_word(), BH_POST_DONE | 5ull << 32 | 5);
	EXPECT(memcmp(beta_buf(), "abcde", 5) == 0);
	EXPECT_EQ(queued(), 0);
	EXPECT(port_irq_pending(beta()));
	/* Gone once filled: the next message is queued, the buffer and status stay. */
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE_CANCEL, 1, 0, 0, 0, 0), BH_NO_ACTION);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF + 5, 3, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1);
	EXPECT(memcmp(beta_buf(), "abcde", 5) == 0);
}

TEST(a_post_and_a_receive_wait_exclude_each_other)
{
	open_both();
	EXPECT_EQ(post_call(BETA_BUF, 8, STATUS), BH_NOT_AVAILABLE);
	EXPECT_EQ(post_call(BETA_BUF, 8, STATUS), BH_OP_NOT_ALLOWED);
	EXPECT_EQ(wait_call(beta(), BETA_BUF, 8), BH_OP_NOT_ALLOWED);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE_CANCEL, 1, 0, 0, 0, 0), BH_OK);
	EXPECT_EQ(post_call(BETA_BUF, 8, STATUS + 4), BH_INVALID_PARAM); /* misaligned */
	EXPECT_EQ(post_call(BETA_BUF, 8, 0x1000), BH_INVALID_PARAM);     /* not its memory */
	EXPECT_EQ(post_call(0x1000, 8, STATUS), BH_INVALID_PARAM);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE_CANCEL, 1, 0, 0, 0, 0), BH_NO_ACTION);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_RECEIVE_POST, 1, BUF, 8, BUF + 0x200, 0),
		  BH_INVALID_MODE); /* alpha's q_out is a source */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_RECEIVE_CANCEL, 1, 0, 0, 0, 0), BH_INVALID_MODE);
}

/* A halt does not close the ports; the release of vCPU 0 withdraws the post, so a message
 * sent after it is queued, not written into the halted partition's memory. */
TEST(a_halt_withdraws_the_post)
{
	open_both();
	memset(beta_buf(), 0, 8);
	EXPECT_EQ(post_call(BETA_BUF, 8, STATUS), BH_NOT_AVAILABLE);
	partition_halt(&partitions[1]);
	fake.core = beta()->core;
	core_process_requests();
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(queued(), 1);
	EXPECT_EQ(beta_buf()[0], 0);
	EXPECT_EQ(status_word(), 0);
}

/* A restart closes the port at the request: the send is queued before beta's core has even
 * released its vCPU; and the new incarnation's create finds no post. */
TEST(a_restart_closes_a_posted_port_at_once)
{
	open_both();
	memset(beta_buf(), 0, 8);
	EXPECT_EQ(post_call(BETA_BUF, 8, STATUS), BH_NOT_AVAILABLE);
	partition_restart(&partitions[1], false, BH_RESTART_SELF);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(call(alpha(), BH_HC_PORT_STATUS, 1, BUF + 0x100, 0, 0, 0), BH_OK);
	EXPECT_EQ(((struct bh_port_status *)(void *)(fake_ram + 0x2100))->messages, 1);
	EXPECT_EQ(beta_buf()[0], 0);
	EXPECT_EQ(status_word(), 0);
}

/* reqatk (5e675f8): a vCPU halted by BH_HC_VCPU_CTL while it waits on a port is reported halted
 * at once (BH_HC_VCPU_STATUS), but stays a waiter, state idle, until its core serves the stop:
 * now in its own time (its slot, its priority), no longer at the next exit of its core, kicked at
 * once. A message sent meanwhile is handed to the halted vCPU (send: BH_OK) and lost when the
 * stop is served; hand_over's "halted meanwhile" check sees only the state. Modelled: beta's
 * vCPU 0 waits on core 1, which then runs another partition's vCPU (its slot); beta's vCPU 1
 * (core 2) halts it; a kicked core serves the stop at once, as it did before. */
TEST(reqatk_a_message_sent_after_a_halt_is_not_handed_to_the_halted_vcpu)
{
	open_both();
	EXPECT_EQ(wait_call(beta(), BETA_BUF, 8), BH_NOT_AVAILABLE);
	EXPECT_EQ(beta()->state, VCPU_IDLE);
	percpu[1].vcpu = alpha(); /* core 1 runs another partition's vCPU now */
	percpu[1].requests = 0;
	unsigned kicks = fake.kicks[1];
	fake.core = 2;
	EXPECT_EQ(vcpu_control(&partitions[1].vcpus[1], BH_VCPU_HALT, 0, 0), BH_OK);
	EXPECT_EQ(vcpu_public_state(beta()), VCPU_HALTED); /* what BH_HC_VCPU_STATUS says */
	bool kicked = fake.kicks[1] != kicks;
	if (kicked)
		fixture_serve(1); /* the kicked core's next exit */
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 4, 0, 0), BH_OK);
	EXPECT_EQ(call(alpha(), BH_HC_PORT_STATUS, 1, BUF + 0x100, 0, 0, 0), BH_OK);
	uint32_t messages = ((struct bh_port_status *)(void *)(fake_ram + 0x2100))->messages;
	fixture_serve(1); /* beta vCPU 0's own time: the stop is served */
	printf("    halt %s; message sent after it: %s (queue holds %u), beta vCPU 0 %s\n",
	       kicked ? "kicked its core" : "did not kick its core",
	       messages ? "queued" : "handed to the halted vCPU", messages,
	       beta()->state == VCPU_HALTED ? "halted" : "not halted");
	EXPECT_EQ(messages, 1);
}

/* --- A channel's lock held by other cores past a core's instant -------------------------------
 * A guest's port call waits for the channel's lock only until its core's timer (the lead of the
 * core's next instant) or a pending interrupt; then it changes nothing and is made again
 * (ports.c lock_for_call, hypercall_again). Here the lock is held by a call on another core,
 * which a copy hook interrupts in the middle of its copy to play the call that finds it held. */

#define GUEST_PC (ALPHA_RAM_IPA + 0x804) /* after the HVC: its preferred return */
#define TIMER_IN 64u                     /* the caller's core's timer: 4 relax steps away */

static struct {
	struct vcpu *v;
	bool live;                      /* its core's live frame (an HVC), or a copy (vcall.c) */
	struct arch_regs before, after; /* the registers the call was made with, and left */
	uint32_t policy;                /* its core's, while it calls */
	uint64_t timer_in;              /* its core's timer: due this many ticks from the call */
	int64_t result;
	bool done;
} held;

/* The call in held.before, made once on held.v's own core (of held.policy, its timer due
 * held.timer_in ticks from now), while the test's core holds the channel's lock for its copy. */
static void call_while_the_lock_is_held(void)
{
	struct vcpu *v = held.v;
	unsigned outer = fake.core;

	if (held.done)
		return;
	held.done = true;
	fixture_run(v->core, v);
	struct sched_core *s = &percpu[v->core].sched;
	uint32_t policy = s->policy;
	s->policy = held.policy;
	s->timer_at = arch_counter_read() + held.timer_in;
	struct arch_regs copy = held.before, *r = held.live ? &v->regs : &copy;
	*r = held.before;
	held.result = hypercall_dispatch(v, r);
	held.after = *r;
	s->timer_at = TIME_NEVER;
	s->policy = policy;
	fake.core = outer;
}

static void prepare_held_call(struct vcpu *v, bool live, uint64_t fn, uint64_t desc,
			      uint64_t va, uint64_t size)
{
	held.v = v;
	held.live = live;
	held.before = (struct arch_regs){ .x = { fn, desc, va, size, 0x44, 0x55 }, .elr = GUEST_PC };
	held.policy = BH_POLICY_FIXED_PRIORITY;
	held.timer_in = TIMER_IN;
	held.done = false;
	fake.copy_hook = call_while_the_lock_is_held;
}

/* The channel open both ways, "abc" queued (the source's next bytes "defgh" at BUF + 3). */
static void open_with_one_message(void)
{
	open_both();
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 3, 0, 0), BH_OK);
}

static bool registers_kept(void)
{
	return memcmp(held.after.x, held.before.x, sizeof(held.before.x)) == 0;
}

TEST(a_send_that_finds_the_channel_lock_held_until_its_cores_instant_changes_nothing_and_is_made_again)
{
	open_with_one_message();
	clear_port_irq(beta());
	prepare_held_call(alpha(), true, BH_HC_QUEUING_SEND, 1, BUF + 3, 5);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 3); /* holds the lock */
	fake.copy_hook = NULL;
	EXPECT(held.done);
	/* The HVC again, with the guest's registers: x0 its function ID, the PC back on the HVC. */
	EXPECT_EQ(held.result, BH_HC_QUEUING_SEND);
	EXPECT_EQ(held.after.elr, GUEST_PC - 4);
	EXPECT(registers_kept());
	/* Nothing sent: no message, no interrupt for the receiver. */
	EXPECT(!port_irq_pending(beta()));
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), BH_NOT_AVAILABLE);
	/* Made again, the lock free: the message goes. */
	fixture_run(alpha()->core, alpha());
	alpha()->regs = held.before;
	EXPECT_EQ(hypercall_dispatch(alpha(), &alpha()->regs), BH_OK);
	EXPECT(port_irq_pending(beta()));
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 5);
	EXPECT(memcmp(beta_ram_at(BETA_BUF), "defgh", 5) == 0);
}

TEST(a_receive_that_finds_the_channel_lock_held_until_its_cores_instant_takes_nothing_and_is_made_again)
{
	open_with_one_message();
	prepare_held_call(beta(), true, BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8);
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF + 3, 5, 0, 0), BH_OK); /* holds it */
	fake.copy_hook = NULL;
	EXPECT(held.done);
	EXPECT_EQ(held.result, BH_HC_QUEUING_RECEIVE);
	EXPECT_EQ(held.after.elr, GUEST_PC - 4);
	EXPECT(registers_kept()); /* x1 too, where a receive puts the message's length */
	/* Nothing taken: the queue is still full, so the sender was not told of room either. */
	EXPECT(!port_irq_pending(alpha()));
	EXPECT_EQ(call(alpha(), BH_HC_QUEUING_SEND, 1, BUF, 1, 0, 0), BH_NOT_AVAILABLE);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 3);
	EXPECT(memcmp(beta_ram_at(BETA_BUF), "abc", 3) == 0);
	EXPECT(port_irq_pending(alpha()));
}

/* A call that has the time to wait in the ticket queue waits there, fairly: one given up at
 * every instant would never be served while the other cores keep the queue busy (each back in it
 * before the next holder lets go, the lock is never free: tests/system/test_chanstarve.py). */
static void send_held_waits_in_the_queue(uint32_t policy, uint64_t timer_in)
{
	open_with_one_message();
	prepare_held_call(alpha(), true, BH_HC_QUEUING_SEND, 1, BUF + 3, 5);
	held.policy = policy;
	held.timer_in = timer_in;
	fake.held_lock_takes = 0;
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 3);
	fake.copy_hook = NULL;
	EXPECT(held.done);
	EXPECT_EQ(fake.held_lock_takes, 1); /* in the queue, behind the test core's copy */
	EXPECT_EQ(held.result, BH_OK); /* served (the fake lock lets it in during the holder's copy) */
}

TEST(a_port_call_whose_cores_instant_is_beyond_a_full_ticket_queue_waits_in_it)
{
	send_held_waits_in_the_queue(BH_POLICY_FIXED_PRIORITY,
				     bh_system_config.core_count * TRAP_LOCK_HOLD_TICKS + TIMER_IN);
}

/* A dedicated core gives way to nobody: its timer (a console retry) is its own vCPU's. */
TEST(a_port_call_on_a_dedicated_core_waits_for_the_channel_lock_in_the_queue)
{
	send_held_waits_in_the_queue(BH_POLICY_DEDICATED, TIMER_IN);
}

/* A call through the hypercall page (vcall.c) runs on a copy of its block's registers: nothing
 * to rewind there. HYPERCALL_AGAIN tells the page to have the guest's write made again. */
TEST(a_port_call_on_a_copy_of_the_registers_that_gives_up_says_so_and_leaves_them)
{
	open_with_one_message();
	prepare_held_call(alpha(), false, BH_HC_QUEUING_SEND, 1, BUF + 3, 5);
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 3);
	fake.copy_hook = NULL;
	EXPECT_EQ(held.result, HYPERCALL_AGAIN);
	EXPECT_EQ(held.after.elr, GUEST_PC);
	EXPECT(registers_kept());
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), BH_NOT_AVAILABLE);
}

/* A pending interrupt (a kick) ends the wait too, before the core's timer. */
TEST(a_port_call_gives_up_the_channel_lock_at_a_pending_interrupt)
{
	open_with_one_message();
	prepare_held_call(alpha(), true, BH_HC_QUEUING_SEND, 1, BUF + 3, 5);
	uint64_t from = fake.counter;
	fake.irq_pending = true;
	EXPECT_EQ(call(beta(), BH_HC_QUEUING_RECEIVE, 1, BETA_BUF, 8, 0, 0), 3);
	fake.irq_pending = false;
	fake.copy_hook = NULL;
	EXPECT_EQ(held.result, BH_HC_QUEUING_SEND);
	EXPECT(registers_kept());
	EXPECT(fake.counter - from < TIMER_IN); /* it did not wait for the timer */
}
