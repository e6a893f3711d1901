/* Sampling and queuing ports with XtratuM semantics, and shared-memory doorbells.
 *
 * Every message is copied twice by the hypervisor: from the sender into its channel's buffer
 * (hypervisor memory the tool sized), and from there to the receiver, so no partition ever
 * sees another's memory through a port. Each channel has a ticket lock held for one copy of at
 * most BH_MAX_MESSAGE_SIZE bytes, so a vCPU on another core waits for at most that long per
 * holder. A partition may keep the lock busy from several cores itself: a guest's call on a
 * core whose instant is near waits for them only until the core's timer or a kick, then
 * changes nothing and is made again after the core's decision (lock_for_call).
 *
 * The exception is a receiver blocked in BH_HC_QUEUING_RECEIVE_WAIT on an empty queue: a send
 * then copies the message straight into the buffer it translated when it began to wait, and
 * wakes it with the message as the call's result. Its buffer is in its own partition's areas
 * (checked then), so whatever its page tables do meanwhile, the copy stays inside them.
 *
 * A destination may also post a buffer (BH_HC_QUEUING_RECEIVE_POST) and go on running: the
 * next send copies straight into it, writes the post's status word and raises BH_VIRQ_PORT.
 * Buffer and status word are translated and checked when posted, like a waiter's; a post is
 * withdrawn under the channel lock by BH_HC_QUEUING_RECEIVE_CANCEL, by the release or reset of
 * its partition's vCPU 0 (so before a restart reloads the image) and by a new create.
 *
 * Notifications (BH_VIRQ_PORT, BH_VIRQ_DOORBELL) are edge-triggered and re-armed only by the
 * receiver: a port raises its interrupt once, then not again until its partition has used the
 * port (read, receive, send) or taken its doorbells. A sender that floods therefore costs the
 * receiver's core at most one interrupt per call the receiver makes. */
#include "bulkhead/abi.h"
#include "guest_mem.h"
#include "hypercall.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "plan.h"
#include "ports.h"
#include "sched.h"
#include "virq.h"

struct channel_rt {
	struct spinlock lock;
	volatile uint32_t head;  /* queuing: slot of the oldest message */
	volatile uint32_t count; /* messages held (sampling: 1 once written) */
	volatile uint32_t seq;   /* sampling: writes so far */
	uint64_t refresh_ticks;  /* sampling: validity */
	volatile uint32_t latest; /* sampling: the copy that holds the last message */
	uint32_t copies;          /* sampling: BH_SAMPLING_COPIES of its port cores */
	uint32_t pin_tag;         /* sampling: its pins' upper bits, its index + 1 (pin_of) */
};

/* A configured port with its run-time state, resolved once by ports_init so a call finds
 * everything it needs from the descriptor by one index. */
struct port {
	const struct bh_port_cfg *cfg;
	const struct bh_channel_cfg *ch;
	struct channel_rt *crt;
	const struct partition *owner;
	struct port *peer;           /* queuing: the channel's other end */
	uint32_t type;               /* TYPE(kind, direction) */
	volatile uint32_t open_gen;  /* owner's restarts + 1 once opened: a restart closes */
	uint32_t seen_seq;           /* sampling destination: the newest write it has read */
	uint32_t notified;           /* BH_VIRQ_PORT raised and not re-armed yet (channel lock) */
	struct vcpu *waiter;         /* queuing destination: blocked in a receive wait, or POSTED:
				      * a buffer is posted (lock) */
};

/* A queuing destination's posted buffer (port.waiter == POSTED), beside port_pool so that a
 * port stays 64 bytes (one shift to find it). */
struct port_post {
	struct guest_pieces buf;     /* translated when posted */
	uint64_t *status;            /* its status word (hypervisor address) */
};
/* port.waiter while a buffer is posted: one test on the way of every send finds either. */
#define POSTED ((struct vcpu *)1)
#define TYPE(kind, direction) ((kind) << 1 | (direction)) /* direction: 0 or 1 */
#define SAMPLING_SOURCE TYPE(BH_CHANNEL_SAMPLING, BH_SOURCE_PORT)
#define SAMPLING_DESTINATION TYPE(BH_CHANNEL_SAMPLING, BH_DESTINATION_PORT)
#define QUEUING_SOURCE TYPE(BH_CHANNEL_QUEUING, BH_SOURCE_PORT)
#define QUEUING_DESTINATION TYPE(BH_CHANNEL_QUEUING, BH_DESTINATION_PORT)

static const struct bh_system_cfg *sys;
static struct channel_rt channels[BH_MAX_CHANNELS];
static struct port port_pool[BH_MAX_SYSTEM_PORTS];
static struct port_post posts[BH_MAX_SYSTEM_PORTS];
/* Each port's and region's name as one word (name_key), beside port_pool, so a look-up by name
 * compares characters only with the names whose key matches. */
static uint32_t port_keys[BH_MAX_SYSTEM_PORTS];
static uint32_t shm_keys[BH_MAX_SHM_REGIONS];
static struct port *part_ports[BH_MAX_PARTITIONS];
static uint32_t part_port_count[BH_MAX_PARTITIONS]; /* 0 until ports_init: every call fails */
static volatile uint64_t doorbells[BH_MAX_PARTITIONS]; /* rung, not taken yet: bit = region */
/* The sampling copy a read or write on each core holds (sampling_pin): 0, none. */
static volatile uint32_t sampling_pins[BH_MAX_CORES];

static uint64_t arg(const struct arch_regs *r, unsigned i) { return arch_regs_arg(r, i); }
static uint32_t min_u32(uint32_t a, uint64_t b) { return b < a ? (uint32_t)b : a; }

static bool valid_ref(const struct bh_system_cfg *cfg, struct bh_port_ref ref)
{
	return ref.partition < cfg->partition_count &&
	       ref.port < cfg->partitions[ref.partition].port_count;
}

static struct port *port_at(struct bh_port_ref ref)
{
	return &part_ports[ref.partition][ref.port];
}

/* A name (at most BH_PORT_NAME_MAX characters) as one word: its length and an FNV-1a hash. */
static uint32_t name_key(const char *name, uint64_t len)
{
	uint32_t h = 2166136261u;

	for (uint64_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	return h << 5 | (uint32_t)len;
}

static uint64_t cfg_name_len(const char *name)
{
	uint64_t n = 0;

	while (n <= BH_PORT_NAME_MAX && name[n])
		n++;
	return n;
}

/* The cores the vCPUs of partition `id` may run on (bit n: core n). */
static uint32_t partition_cores(const struct bh_system_cfg *cfg, uint32_t id)
{
	const struct bh_partition_cfg *p = &cfg->partitions[id];
	uint32_t cores = 0;

	for (uint32_t i = 0; i < p->vcpu_count; i++) {
		const struct bh_vcpu_cfg *v = &p->vcpus[i];
		cores |= v->flags & BH_VCPU_BEST_EFFORT ? v->core_mask :
			 v->core < BH_MAX_CORES ? 1u << v->core : 0;
	}
	return cores;
}

/* The number of cores that may read or write sampling channel ch at once: those of its source's
 * and destinations' partitions' vCPUs. */
static uint32_t port_cores(const struct bh_system_cfg *cfg, const struct bh_channel_cfg *ch)
{
	uint32_t cores = partition_cores(cfg, ch->source.partition), count = 0;

	for (uint32_t d = 0; d < ch->destination_count; d++)
		cores |= partition_cores(cfg, ch->destinations[d].partition);
	for (cores &= (1u << BH_MAX_CORES) - 1; cores; cores &= cores - 1)
		count++;
	return count;
}

static void check_channels(const struct bh_system_cfg *cfg)
{
	BH_CHECK(cfg->channel_count <= BH_MAX_CHANNELS && cfg->shm_count <= BH_MAX_SHM_REGIONS);
	for (unsigned i = 0; i < cfg->channel_count; i++) {
		const struct bh_channel_cfg *ch = &cfg->channels[i];
		BH_CHECK(ch->max_messages && ch->max_message_size <= BH_MAX_MESSAGE_SIZE &&
			 !((uintptr_t)ch->buffer & 7));
		BH_CHECK(valid_ref(cfg, ch->source) && ch->destination_count);
		for (uint32_t d = 0; d < ch->destination_count; d++)
			BH_CHECK(valid_ref(cfg, ch->destinations[d]));
		uint32_t copies = BH_SAMPLING_COPIES(port_cores(cfg, ch));
		BH_CHECK(ch->kind == BH_CHANNEL_SAMPLING ?
			 ch->buffer_size == (uint64_t)copies * BH_SAMPLING_SLOT_SIZE(ch->max_message_size) :
			 ch->buffer_size == (uint64_t)ch->max_messages * BH_MSG_SLOT_SIZE(ch->max_message_size));
		channels[i] = (struct channel_rt){ .refresh_ticks = ns_to_ticks(ch->refresh_ns),
						   .copies = copies, .pin_tag = (i + 1) << 8 };
	}
	for (unsigned i = 0; i < cfg->shm_count; i++) {
		for (uint32_t m = 0; m < cfg->shm_regions[i].mapping_count; m++)
			BH_CHECK(cfg->shm_regions[i].mappings[m].partition < cfg->partition_count);
		const char *name = cfg->shm_regions[i].name;
		shm_keys[i] = name_key(name, cfg_name_len(name));
	}
}

/* Port desc of partition p, resolved, and closed (open_gen 0, nothing notified). */
static void resolve(struct port *port, const struct bh_partition_cfg *p, unsigned desc)
{
	const struct bh_port_cfg *cfg = &p->ports[desc];
	const struct bh_channel_cfg *ch = &sys->channels[cfg->channel];

	*port = (struct port){
		.cfg = cfg, .ch = ch, .crt = &channels[cfg->channel], .owner = &partitions[p->id],
		.type = TYPE(ch->kind, cfg->direction),
	};
}

void ports_init(const struct bh_system_cfg *cfg)
{
	unsigned next = 0;

	sys = cfg;
	for (unsigned i = 0; i < BH_MAX_PARTITIONS; i++)
		doorbells[i] = 0;
	check_channels(cfg);
	for (unsigned i = 0; i < cfg->partition_count; i++) {
		const struct bh_partition_cfg *p = &cfg->partitions[i];
		BH_CHECK(p->id == i && p->port_count <= BH_MAX_PORTS &&
			 next + p->port_count <= BH_MAX_SYSTEM_PORTS);
		part_ports[i] = &port_pool[next];
		for (unsigned d = 0; d < p->port_count; d++) {
			BH_CHECK(p->ports[d].channel < cfg->channel_count && p->ports[d].direction <= 1);
			resolve(&part_ports[i][d], p, d);
			port_keys[next + d] = name_key(p->ports[d].name, cfg_name_len(p->ports[d].name));
		}
		part_port_count[i] = p->port_count;
		next += p->port_count;
	}
	/* A queuing channel has one destination: each end knows the other. */
	for (unsigned i = 0; i < cfg->channel_count; i++) {
		const struct bh_channel_cfg *ch = &cfg->channels[i];
		if (ch->kind != BH_CHANNEL_QUEUING)
			continue;
		port_at(ch->source)->peer = port_at(ch->destinations[0]);
		port_at(ch->destinations[0])->peer = port_at(ch->source);
	}
}

/* --- Ports of the caller ---------------------------------------------------------------- */

static bool is_open(const struct port *p)
{
	return p->open_gen == p->owner->restarts + 1;
}

/* The caller's port `desc`, or NULL if it has none by that descriptor. */
static struct port *own_port(const struct vcpu *v, uint64_t desc)
{
	unsigned id = v->partition->cfg->id;

	return desc < part_port_count[id] ? &part_ports[id][desc] : NULL;
}

/* The caller's open port `desc` of `type`, or NULL: port_error says why not. */
HOT_INLINE struct port *open_port(const struct vcpu *v, uint64_t desc, uint32_t type)
{
	struct port *p = own_port(v, desc);

	return p && p->type == type && is_open(p) ? p : NULL;
}

static int port_error(const struct vcpu *v, uint64_t desc, uint32_t kind)
{
	struct port *p = own_port(v, desc);

	if (!p || !is_open(p) || p->ch->kind != kind)
		return BH_INVALID_PARAM; /* no such open port, or of the other kind */
	return BH_INVALID_MODE;      /* the other direction */
}

/* A guest's call takes its channel's lock this way. The other holders may be its own partition's
 * vCPUs on other cores, each copying a message (4 KiB to an odd address: about 209 ticks), one
 * after the other: waited for in the ticket queue, they made a neighbour of another partition
 * on this core up to 619 ticks late (tests/system/test_chanwait.py). So near the core's instant
 * they are waited for only until it or a kick (trap_lock); false, nothing taken, and the
 * caller, having changed nothing, has its call made again (hypercall_again). Paths the
 * hypervisor runs on its own (a restart, the end of a wait) take the lock in the queue. */
HOT_INLINE bool lock_for_call(struct port *p)
{
	return trap_lock(&p->crt->lock);
}

static uint32_t *slot(const struct port *p, uint32_t index)
{
	return (uint32_t *)(void *)(p->ch->buffer +
				    (uint64_t)index * BH_MSG_SLOT_SIZE(p->ch->max_message_size));
}

/* Names come as (pointer, length): copied once, so nothing depends on a NUL in guest memory. */
static int read_name(struct vcpu *v, uint64_t va, uint64_t len, char name[BH_PORT_NAME_MAX])
{
	if (!len || len > BH_PORT_NAME_MAX || !guest_copy_from(v, name, va, len))
		return BH_INVALID_PARAM;
	return BH_OK;
}

static bool name_is(const char *cfg_name, const char *name, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (!cfg_name[i] || cfg_name[i] != name[i])
			return false;
	return !cfg_name[len];
}

/* The caller's port descriptor named by the guest's (va, len), or a BH_* error (< 0). Only names
 * with its key are compared: compared with each, 64 names sharing a long prefix made a look-up
 * 1332 ticks long (tests/system/test_names.py). */
static int find_port(struct vcpu *v, uint64_t va, uint64_t len)
{
	const struct bh_partition_cfg *p = v->partition->cfg;
	char name[BH_PORT_NAME_MAX];
	int rc = read_name(v, va, len, name);

	if (rc != BH_OK)
		return rc;
	uint32_t key = name_key(name, len);
	const uint32_t *keys = &port_keys[part_ports[p->id] - port_pool];
	for (unsigned d = 0; d < part_port_count[p->id]; d++)
		if (keys[d] == key && name_is(p->ports[d].name, name, len))
			return (int)d;
	return BH_INVALID_CONFIG; /* not an endpoint of any channel: nothing to open */
}

/* Mark `dst` notified and say whether to raise its interrupt (channel lock held). */
static bool arm(struct port *dst)
{
	if (dst->notified || !is_open(dst))
		return false;
	dst->notified = 1;
	return true;
}

/* After the channel lock is released: the injection may kick another core. */
static void notify(uint32_t partition_mask, unsigned intid)
{
	while (partition_mask) {
		struct partition *p = &partitions[__builtin_ctz(partition_mask)];
		partition_mask &= partition_mask - 1;
		if (p->cfg->vmachine) /* Linux: an edge on its event GPIO line */
			arch_vmachine_event(p, intid == BH_VIRQ_PORT ? BH_EVENT_LINE_PORT
								     : BH_EVENT_LINE_DOORBELL);
		else
			virq_inject(&p->vcpus[0], intid, false);
	}
}

/* --- Receive waits ------------------------------------------------------------------------ */

/* The caller found its queue empty (channel lock held): it waits for the next message into
 * its buffer, translated now, and is VCPU_IDLE from here on, so a sender can wake it. */
#define WAITING (INT64_C(1) << 62) /* not a byte count nor an error */
static int64_t begin_wait(struct vcpu *v, struct arch_regs *r, struct port *p)
{
	struct port_wait *w = &v->wait;
	uint32_t n = min_u32(p->ch->max_message_size, arg(r, 3));

	if (p->waiter)
		return BH_OP_NOT_ALLOWED; /* another vCPU waits on it, or a buffer is posted */
	w->buf.count = w->buf.len = 0;
	if (n && !guest_translate_writable(v, arg(r, 2), n, &w->buf))
		return BH_INVALID_PARAM;
	/* Only a ready vCPU waits: one another core suspended meanwhile gets NOT_AVAILABLE. */
	if (!__atomic_compare_exchange_n(&v->state, &(uint32_t){ VCPU_READY }, VCPU_IDLE, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return BH_NOT_AVAILABLE;
	w->port = p;
	w->regs = r;
	w->result = BH_NOT_AVAILABLE;
	p->waiter = v;
	return WAITING;
}

/* Hand size bytes at the sender's va to the waiter: into its buffer (truncated to it) as its
 * result, and make it ready (channel lock held). The message is translated whole first, so
 * nothing can fail once the waiter is claimed. BH_NOT_AVAILABLE if it no longer waits (woken,
 * suspended or halted meanwhile, or a stop posted to it and not served yet): its buffer is not
 * touched and the message is queued. The waiter's core may run it as soon as it is claimed:
 * ports_wait_finish then waits for the channel lock and reads the result stored here. */
static int hand_over(struct vcpu *sender, uint64_t va, uint64_t size, struct vcpu *waiter)
{
	struct port_wait *w = &waiter->wait;
	struct guest_pieces msg;

	if (!guest_translate_readable(sender, va, size, &msg))
		return BH_INVALID_PARAM; /* truncated or not, the whole message must be the sender's */
	/* A stop (or a start's reset) posted to it ends its wait when its core serves it, in its
	 * own time: it is halted already for every other look (vcpu_public_state). */
	if (__atomic_load_n(&waiter->request, __ATOMIC_SEQ_CST) ||
	    !__atomic_compare_exchange_n(&waiter->state, &(uint32_t){ VCPU_IDLE }, VCPU_READY,
					 false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return BH_NOT_AVAILABLE;
	uint32_t done = min_u32(w->buf.len, size);
	guest_pieces_copy(&w->buf, &msg, done);
	w->port->waiter = NULL;
	w->length = (uint32_t)size;
	__atomic_store_n(&w->result, (int64_t)done, __ATOMIC_RELEASE); /* see ports_wait_finish */
	return BH_OK;
}

/* Posted buffers (channel lock held). A message goes into dst's posted buffer (truncated to
 * it) and the status word says so; the post is then gone. The message is translated whole
 * first: BH_INVALID_PARAM leaves the post as it was. */
static struct port_post *post_of(const struct port *p)
{
	return &posts[p - port_pool];
}

static int deliver_post(struct vcpu *sender, uint64_t va, uint64_t size, struct port *dst)
{
	struct port_post *post = post_of(dst);
	struct guest_pieces msg;

	if (!guest_translate_readable(sender, va, size, &msg))
		return BH_INVALID_PARAM;
	uint32_t done = min_u32(post->buf.len, size);
	guest_pieces_copy(&post->buf, &msg, done);
	/* The guest reads the status, then the buffer: the release orders the copy first. */
	__atomic_store_n(post->status, BH_POST_DONE | size << 32 | done, __ATOMIC_RELEASE);
	dst->waiter = NULL;
	return BH_OK;
}

/* The status word of a post: 8 bytes, 8-aligned (so in one page), writable by the caller.
 * Returns its hypervisor address, or NULL. */
static uint64_t *post_status_word(struct vcpu *v, uint64_t va)
{
	struct guest_pieces st;

	if ((va & 7) || !guest_translate_writable(v, va, 8, &st))
		return NULL;
	return arch_phys_to_ptr(st.piece[0].pa);
}

/* A send into the destination's posted buffer (channel lock held; released here). */
HOT_INLINE int64_t send_to_post(struct vcpu *v, struct port *p, uint64_t va, uint64_t size)
{
	int rc = deliver_post(v, va, size, p->peer);
	bool wake = rc == BH_OK && arm(p->peer);

	arch_spin_unlock(&p->crt->lock);
	notify(wake ? 1u << p->ch->destinations[0].partition : 0, BH_VIRQ_PORT);
	return rc;
}

/* The caller found its queue empty (channel lock held): its buffer is posted. */
static int64_t begin_post(struct vcpu *v, struct arch_regs *r, struct port *p, uint64_t *status)
{
	uint32_t n = min_u32(p->ch->max_message_size, arg(r, 3));
	struct port_post *post = post_of(p);

	if (p->waiter)
		return BH_OP_NOT_ALLOWED; /* a vCPU waits on it, or a buffer is posted already */
	post->buf.count = post->buf.len = 0;
	if (n && !guest_translate_writable(v, arg(r, 2), n, &post->buf))
		return BH_INVALID_PARAM;
	__atomic_store_n(status, 0ull, __ATOMIC_RELAXED);
	post->status = status;
	p->waiter = POSTED;
	return BH_NOT_AVAILABLE;
}

/* Withdraws p's post, if any (the channel lock held); true if there was one. */
static bool withdraw_post_locked(struct port *p)
{
	bool had = p->waiter == POSTED;

	if (had)
		p->waiter = NULL;
	arch_spin_unlock(&p->crt->lock);
	return had;
}

/* The same, the channel lock taken in the queue: for the hypervisor's own paths. */
static bool withdraw_post(struct port *p)
{
	arch_spin_lock(&p->crt->lock);
	return withdraw_post_locked(p);
}

/* --- Creating ports ----------------------------------------------------------------------- */

static int64_t create(struct vcpu *v, struct arch_regs *r, uint32_t kind)
{
	uint64_t max_size = arg(r, 3), direction = arg(r, 4), param = arg(r, 5);
	struct partition *p = v->partition;

	if (direction != BH_SOURCE_PORT && direction != BH_DESTINATION_PORT)
		return BH_INVALID_PARAM;
	int desc = find_port(v, arg(r, 1), arg(r, 2));
	if (desc < 0)
		return desc;
	struct port *port = own_port(v, (unsigned)desc);
	uint64_t expected = kind == BH_CHANNEL_SAMPLING ? port->ch->refresh_ns : port->ch->max_messages;
	if (port->type != TYPE(kind, direction) || port->ch->max_message_size != max_size ||
	    expected != param)
		return BH_INVALID_CONFIG;
	/* The caller's incarnation, read before the channel lock (a restart takes the partition's
	 * lock, then channel locks). While its partition restarts the caller is a vCPU of the
	 * incarnation that ended, still in the hypervisor on its core: the restart closed the
	 * ports, and one it opened now would be open in the next incarnation. Should a restart
	 * come after this look, the generation is stale and the port closed all the same. */
	uint32_t restarts;
	if (!partition_incarnation(p, &restarts))
		return BH_NOT_AVAILABLE;
	if (!lock_for_call(port))
		return hypercall_again(r);
	bool was_open = port->open_gen == restarts + 1;
	if (!was_open) {
		port->seen_seq = port->notified = 0;
		port->waiter = NULL; /* no waiter, no post */
		port->open_gen = restarts + 1;
	}
	arch_spin_unlock(&port->crt->lock);
	if (was_open) {
		arch_regs_set(r, 1, (uint64_t)desc);
		return BH_NO_ACTION;
	}
	return desc;
}

int64_t ports_hc_sampling_create(struct vcpu *v, struct arch_regs *r)
{
	return create(v, r, BH_CHANNEL_SAMPLING);
}

int64_t ports_hc_queuing_create(struct vcpu *v, struct arch_regs *r)
{
	return create(v, r, BH_CHANNEL_QUEUING);
}

/* --- Sampling ----------------------------------------------------------------------------- */

/* A sampling channel keeps its message in several copies (config_tables.h): the last one
 * written (latest), and one for each read or write in progress, which holds its copy on its core
 * (sampling_pins) until it is done with it. A write picks a copy that is neither held nor the
 * latest, fills it, and makes it the latest; the channel's lock covers only the pick and the
 * publication (the source's own vCPUs may write at once), not the copy. So a read copies the
 * message to its guest once, whatever the source does meanwhile, and waits for nobody; and
 * readers on other cores, any number the description names, never make a writer wait, nor does
 * one writer wait for another's copy. A read holds its copy in two steps: it asks
 * (SAMPLING_ASKED) and then takes the latest it sees, unless a write has answered its ask first
 * with the latest then; a write looks at every core's ask or hold before it picks its copy. */
#define SAMPLING_ASKED 0xffu

/* One copy of a sampling message (BH_SAMPLING_SLOT_SIZE: the header, then the message). */
struct sampling_copy {
	uint32_t length;     /* 0: never written */
	uint32_t seq;        /* the write's number (channel_rt.seq after it) */
	uint64_t written_at; /* counter ticks */
	uint8_t message[];
};

static uint32_t pin_of(const struct port *p, uint32_t copy)
{
	return p->crt->pin_tag | copy;
}

static struct sampling_copy *sampling_copy_at(const struct port *p, uint32_t copy)
{
	return (struct sampling_copy *)(void *)(p->ch->buffer + (uint64_t)copy *
						BH_SAMPLING_SLOT_SIZE(p->ch->max_message_size));
}

/* The copies a write may not use (bit n: copy n): the latest, and those held by reads and
 * writes; a read that asked gets the latest. Channel lock held. */
static uint32_t sampling_copies_in_use(const struct port *p)
{
	uint32_t latest = p->crt->latest, used = 1u << latest;

	/* After the last write's latest, before the looks: a read that asked and then saw an older
	 * latest is seen here (the store-buffer pattern both sides fence). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned core = 0; core < sys->core_count; core++) {
		uint32_t pin = __atomic_load_n(&sampling_pins[core], __ATOMIC_ACQUIRE);
		if (pin == pin_of(p, SAMPLING_ASKED))
			__atomic_compare_exchange_n(&sampling_pins[core], &pin, pin_of(p, latest), false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		if ((pin & ~0xffu) == p->crt->pin_tag && pin != pin_of(p, SAMPLING_ASKED))
			used |= 1u << (pin & 0xffu);
	}
	return used;
}

int64_t ports_hc_sampling_write(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arg(r, 2), size = arg(r, 3);
	uint32_t wake = 0;
	struct port *p = open_port(v, arg(r, 1), SAMPLING_SOURCE);

	if (!p)
		return port_error(v, arg(r, 1), BH_CHANNEL_SAMPLING);
	if (!size || size > p->ch->max_message_size)
		return BH_INVALID_CONFIG;
	struct channel_rt *c = p->crt;
	volatile uint32_t *pin = &sampling_pins[this_cpu()->core];
	/* In the queue: a sampling channel's lock covers a pick or a publication, never a copy
	 * (nor does a status call's), so its holders on other cores are short. */
	arch_spin_lock(&c->lock);
	uint32_t copy = (uint32_t)__builtin_ctz(~sampling_copies_in_use(p));
	BH_CHECK(copy < c->copies); /* a core holds one copy at most */
	__atomic_store_n(pin, pin_of(p, copy), __ATOMIC_RELAXED); /* later writes leave it */
	arch_spin_unlock(&c->lock);
	struct sampling_copy *msg = sampling_copy_at(p, copy);
	bool copied = guest_copy_from(v, msg->message, va, size);
	arch_spin_lock(&c->lock);
	__atomic_store_n(pin, 0u, __ATOMIC_RELAXED);
	if (!copied) { /* a failed check publishes nothing */
		arch_spin_unlock(&c->lock);
		return BH_INVALID_PARAM;
	}
	msg->length = (uint32_t)size;
	msg->seq = c->seq + 1;
	msg->written_at = arch_counter_read();
	c->count = 1;
	__atomic_store_n(&c->latest, copy, __ATOMIC_RELEASE);
	__atomic_store_n(&c->seq, c->seq + 1, __ATOMIC_RELEASE);
	/* Before the look at the readers' marks: a reader that cleared its mark and then read the
	 * old latest is armed here (sampling_read). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < p->ch->destination_count; i++)
		if (arm(port_at(p->ch->destinations[i])))
			wake |= 1u << p->ch->destinations[i].partition;
	arch_spin_unlock(&c->lock);
	notify(wake, BH_VIRQ_PORT);
	return BH_OK;
}

/* A read of write number seq: the port has seen it, unless another of its partition's vCPUs,
 * reading at the same time, has seen a newer one (readiness must not go back to an older
 * message). Each failed exchange is another read's newer number: the loop ends there. */
static void seen_at_least(struct port *p, uint32_t seq)
{
	uint32_t seen = __atomic_load_n(&p->seen_seq, __ATOMIC_RELAXED);

	while ((int32_t)(seq - seen) > 0 &&
	       !__atomic_compare_exchange_n(&p->seen_seq, &seen, seq, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* The copy a read on this core holds until it clears *pin: the latest when it looked, or the
 * one a write answered its ask with. */
static uint32_t sampling_pin(const struct port *p, volatile uint32_t *pin)
{
	uint32_t asked = pin_of(p, SAMPLING_ASKED);

	__atomic_store_n(pin, asked, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint32_t copy = __atomic_load_n(&p->crt->latest, __ATOMIC_ACQUIRE);
	if (!__atomic_compare_exchange_n(pin, &asked, pin_of(p, copy), false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		copy = asked & 0xffu; /* answered */
	return copy;
}

int64_t ports_hc_sampling_read(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arg(r, 2), size = arg(r, 3);
	struct port *p = open_port(v, arg(r, 1), SAMPLING_DESTINATION);

	if (!p)
		return port_error(v, arg(r, 1), BH_CHANNEL_SAMPLING);
	struct channel_rt *c = p->crt;
	/* Before the look at latest: a write it does not see arms the port again (arm). */
	__atomic_store_n(&p->notified, 0, __ATOMIC_SEQ_CST);
	volatile uint32_t *pin = &sampling_pins[this_cpu()->core];
	const struct sampling_copy *msg = sampling_copy_at(p, sampling_pin(p, pin));
	uint32_t length = msg->length, seq = msg->seq; /* read while the copy is held */
	uint64_t written_at = msg->written_at;
	bool copied = guest_copy_to(v, va, msg->message, min_u32(length, size));
	__atomic_store_n(pin, 0u, __ATOMIC_RELEASE); /* after the copy's loads */
	if (!copied)
		return BH_INVALID_PARAM;
	if (!length)
		return BH_NO_ACTION; /* never written */
	seen_at_least(p, seq);
	bool valid = arch_counter_read() - written_at <= c->refresh_ticks;
	arch_regs_set(r, 1, valid ? BH_MSG_VALID : 0);
	arch_regs_set(r, 2, length);
	return min_u32(length, size);
}

/* --- Queuing ------------------------------------------------------------------------------ */

int64_t ports_hc_queuing_send(struct vcpu *v, struct arch_regs *r)
{
	uint64_t va = arg(r, 2), size = arg(r, 3);
	struct port *p = open_port(v, arg(r, 1), QUEUING_SOURCE);

	if (!p)
		return port_error(v, arg(r, 1), BH_CHANNEL_QUEUING);
	if (!size || size > p->ch->max_message_size)
		return BH_INVALID_CONFIG;
	if (!lock_for_call(p))
		return hypercall_again(r);
	p->notified = 0; /* the sender came back: tell it again when room frees up */
	uint32_t count = p->crt->count, tail = p->crt->head + count;
	if (count == p->ch->max_messages) {
		arch_spin_unlock(&p->crt->lock);
		return BH_NOT_AVAILABLE;
	}
	/* A waiter is handed the message only while its port is open: a restart of its partition
	 * closes the port at once, and its core takes it off the port when it releases it. */
	struct vcpu *waiter = count || !is_open(p->peer) ? NULL : p->peer->waiter;
	if (waiter) {
		if (__builtin_expect(waiter == POSTED, 0))
			return send_to_post(v, p, va, size);
		int rc = hand_over(v, va, size, waiter);
		if (rc != BH_NOT_AVAILABLE) {
			arch_spin_unlock(&p->crt->lock);
			if (rc == BH_OK)
				sched_vcpu_woken(waiter);
			return rc;
		}
	}
	uint32_t *msg = slot(p, tail >= p->ch->max_messages ? tail - p->ch->max_messages : tail);
	if (!guest_copy_from_held(v, msg + 2, va, size, &p->crt->lock)) {
		arch_spin_unlock(&p->crt->lock);
		return BH_INVALID_PARAM;
	}
	msg[0] = (uint32_t)size;
	p->crt->count = count + 1;
	bool wake = arm(p->peer);
	arch_spin_unlock(&p->crt->lock);
	notify(wake ? 1u << p->ch->destinations[0].partition : 0, BH_VIRQ_PORT);
	return BH_OK;
}

/* A receive that does not fit the buffer is truncated and the message consumed all the same
 * (XtratuM): x1 tells the guest the length it missed. With an empty queue, RECEIVE_WAIT makes
 * the caller a waiter (WAITING) and RECEIVE_POST posts its buffer. */
enum receive_mode { RECEIVE, RECEIVE_WAIT, RECEIVE_POST };
HOT_INLINE int64_t receive(struct vcpu *v, struct arch_regs *r, enum receive_mode mode)
{
	uint64_t va = arg(r, 2), size = arg(r, 3);
	struct port *p = open_port(v, arg(r, 1), QUEUING_DESTINATION);
	uint64_t *status = NULL;

	if (!p)
		return port_error(v, arg(r, 1), BH_CHANNEL_QUEUING);
	if (mode == RECEIVE_POST) {
		if (v->partition->cfg->vmachine)
			return BH_PERM_ERROR; /* its pages are its kernel's to reuse: no posts */
		if (!(status = post_status_word(v, arg(r, 4))))
			return BH_INVALID_PARAM;
	}
	if (!lock_for_call(p))
		return hypercall_again(r);
	p->notified = 0;
	uint32_t count = p->crt->count, head = p->crt->head;
	if (!count) {
		int64_t result = mode == RECEIVE_WAIT ? begin_wait(v, r, p)
				 : mode == RECEIVE_POST ? begin_post(v, r, p, status)
							: BH_NOT_AVAILABLE;
		arch_spin_unlock(&p->crt->lock);
		return result;
	}
	const uint32_t *msg = slot(p, head);
	uint32_t length = msg[0], n = min_u32(length, size);
	if (!guest_copy_to_held(v, va, msg + 2, n, &p->crt->lock)) {
		arch_spin_unlock(&p->crt->lock);
		return BH_INVALID_PARAM; /* the message stays */
	}
	p->crt->head = head + 1 == p->ch->max_messages ? 0 : head + 1;
	p->crt->count = count - 1;
	bool wake = count == p->ch->max_messages && arm(p->peer);
	arch_spin_unlock(&p->crt->lock);
	notify(wake ? 1u << p->ch->source.partition : 0, BH_VIRQ_PORT);
	arch_regs_set(r, 1, length);
	return n;
}

int64_t ports_hc_queuing_receive(struct vcpu *v, struct arch_regs *r)
{
	return receive(v, r, RECEIVE);
}

int64_t ports_hc_queuing_receive_post(struct vcpu *v, struct arch_regs *r)
{
	return receive(v, r, RECEIVE_POST);
}

int64_t ports_hc_queuing_receive_cancel(struct vcpu *v, struct arch_regs *r)
{
	struct port *p = open_port(v, arg(r, 1), QUEUING_DESTINATION);

	if (!p)
		return port_error(v, arg(r, 1), BH_CHANNEL_QUEUING);
	if (!lock_for_call(p))
		return hypercall_again(r);
	return withdraw_post_locked(p) ? BH_OK : BH_NO_ACTION;
}

int64_t ports_hc_queuing_receive_wait(struct vcpu *v, struct arch_regs *r)
{
	int64_t rc = receive(v, r, RECEIVE_WAIT);

	if (rc != WAITING)
		return rc;
	sched_vcpu_block(v);
	if (v->state == VCPU_IDLE)
		return BH_NOT_AVAILABLE; /* blocked: ports_wait_finish sets x0 when it runs again */
	return ports_wait_finish(v); /* woken already, or never blocked */
}

/* v's wait ends: take it off its port, unless a sender has handed it a message meanwhile. */
static void stop_waiting(struct vcpu *v)
{
	struct port_wait *w = &v->wait;

	arch_spin_lock(&w->port->crt->lock);
	if (w->port->waiter == v)
		w->port->waiter = NULL;
	arch_spin_unlock(&w->port->crt->lock);
	w->port = NULL;
}

int64_t ports_wait_finish(struct vcpu *v)
{
	struct port_wait *w = &v->wait;

	/* A message handed over is final: the sender took v off the port before it stored the
	 * result. Without one, the lock also waits out a sender that claimed v but is still
	 * copying; the result is read again after it. */
	int64_t result = __atomic_load_n(&w->result, __ATOMIC_ACQUIRE);
	if (result < 0) {
		stop_waiting(v);
		result = __atomic_load_n(&w->result, __ATOMIC_ACQUIRE);
	}
	w->port = NULL;
	arch_regs_set(w->regs, 0, (uint64_t)result);
	if (result >= 0)
		arch_regs_set(w->regs, 1, w->length);
	return result;
}

/* Its ports are closed (the restart counted), vCPU 0 released and the others released or
 * stopped before they run again (partition.c stop_all): no post can be made or
 * filled any more; one a vCPU of the ended incarnation made after vCPU 0's release goes now,
 * and a copy into one still under way is waited out before the image is touched. */
void ports_partition_reloading(const struct partition *p)
{
	unsigned id = p->cfg->id;

	for (unsigned d = 0; d < part_port_count[id]; d++)
		if (part_ports[id][d].type == QUEUING_DESTINATION)
			withdraw_post(&part_ports[id][d]);
}

void ports_partition_restarted(const struct partition *p)
{
	__atomic_store_n(&doorbells[p->cfg->id], 0ull, __ATOMIC_SEQ_CST);
}

/* Posts belong to the partition, and go when its vCPU 0 is released or reset: every stop and
 * restart of the partition releases it, and a restart reloads the image only after that, so
 * no copy into an old post can overlap the reload (withdraw_post waits out one under way). */
void ports_vcpu_reset(struct vcpu *v)
{
	if (v->wait.port)
		stop_waiting(v);
	if (v->id != 0)
		return;
	unsigned id = v->partition->cfg->id;
	for (unsigned d = 0; d < part_port_count[id]; d++)
		if (part_ports[id][d].waiter == POSTED)
			withdraw_post(&part_ports[id][d]);
}

/* --- Status, information, readiness -------------------------------------------------------- */

int64_t ports_hc_status(struct vcpu *v, struct arch_regs *r)
{
	struct bh_port_status st = { 0 };
	struct port *p = own_port(v, arg(r, 1));

	if (!p || !is_open(p))
		return BH_INVALID_PARAM;
	if (!lock_for_call(p))
		return hypercall_again(r);
	st.messages = p->crt->count;
	if (p->ch->kind == BH_CHANNEL_QUEUING) {
		st.last_size = p->crt->count ? slot(p, p->crt->head)[0] : 0;
	} else if (p->crt->count) { /* the latest copy: no write changes it while the lock is held */
		const struct sampling_copy *msg = sampling_copy_at(p, p->crt->latest);
		st.last_size = msg->length;
		st.timestamp_ns = ticks_to_ns(msg->written_at);
		st.flags = arch_counter_read() - msg->written_at <= p->crt->refresh_ticks ? BH_MSG_VALID : 0;
	}
	arch_spin_unlock(&p->crt->lock);
	return guest_copy_to(v, arg(r, 2), &st, sizeof(st)) ? BH_OK : BH_INVALID_PARAM;
}

int64_t ports_hc_info(struct vcpu *v, struct arch_regs *r)
{
	int desc = find_port(v, arg(r, 1), arg(r, 2));

	if (desc < 0)
		return desc;
	const struct port *p = own_port(v, (unsigned)desc);
	struct bh_port_info info = {
		.kind = p->ch->kind, .direction = p->cfg->direction,
		.max_message_size = p->ch->max_message_size, .max_messages = p->ch->max_messages,
		.refresh_ns = p->ch->refresh_ns, .descriptor = is_open(p) ? desc : -1,
	};
	return guest_copy_to(v, arg(r, 3), &info, sizeof(info)) ? BH_OK : BH_INVALID_PARAM;
}

/* A snapshot without locks: readiness is a hint the next call confirms. */
static bool ready(const struct port *p)
{
	if (p->cfg->direction == BH_SOURCE_PORT)
		return p->ch->kind == BH_CHANNEL_SAMPLING || p->crt->count < p->ch->max_messages;
	if (p->ch->kind == BH_CHANNEL_SAMPLING)
		return p->crt->count && p->crt->seq != p->seen_seq;
	return p->crt->count != 0;
}

int64_t ports_hc_ready(struct vcpu *v, struct arch_regs *r)
{
	unsigned id = v->partition->cfg->id;
	uint64_t bits = 0;

	for (unsigned d = 0; d < part_port_count[id]; d++)
		if (is_open(&part_ports[id][d]) && ready(&part_ports[id][d]))
			bits |= 1ull << d;
	arch_regs_set(r, 1, bits);
	arch_regs_set(r, 2, __atomic_exchange_n(&doorbells[id], 0ull, __ATOMIC_SEQ_CST));
	return BH_OK;
}

/* --- Shared memory -------------------------------------------------------------------------- */

static const struct bh_shm_map_cfg *membership(const struct bh_shm_cfg *shm, unsigned partition)
{
	for (uint32_t m = 0; m < shm->mapping_count; m++)
		if (shm->mappings[m].partition == partition)
			return &shm->mappings[m];
	return NULL;
}

int64_t ports_hc_shm_info(struct vcpu *v, struct arch_regs *r)
{
	uint64_t len = arg(r, 2);
	unsigned id = v->partition->cfg->id;
	char name[BH_PORT_NAME_MAX];
	int rc = read_name(v, arg(r, 1), len, name);

	if (rc != BH_OK)
		return rc;
	uint32_t key = name_key(name, len);
	for (uint32_t i = 0; sys && i < sys->shm_count; i++) {
		if (shm_keys[i] != key) /* as find_port: most regions, at one comparison */
			continue;
		const struct bh_shm_cfg *shm = &sys->shm_regions[i];
		const struct bh_shm_map_cfg *map = membership(shm, id);
		if (!map || !name_is(shm->name, name, len))
			continue;
		struct bh_shm_info info = {
			.guest_address = map->ipa, .size = shm->size, .rights = map->flags,
			.doorbell = shm->flags & BH_SHM_DOORBELL ? 1u : 0u,
		};
		return guest_copy_to(v, arg(r, 3), &info, sizeof(info)) ? (int64_t)i : BH_INVALID_PARAM;
	}
	return BH_INVALID_CONFIG; /* a region the caller does not map does not exist for it */
}

int64_t ports_hc_shm_doorbell(struct vcpu *v, struct arch_regs *r)
{
	uint64_t region = arg(r, 1);
	unsigned self = v->partition->cfg->id;
	uint32_t wake = 0;

	if (!sys || region >= sys->shm_count || !membership(&sys->shm_regions[region], self))
		return BH_PERM_ERROR;
	const struct bh_shm_cfg *shm = &sys->shm_regions[region];
	if (!(shm->flags & BH_SHM_DOORBELL))
		return BH_NOT_AVAILABLE;
	for (uint32_t m = 0; m < shm->mapping_count; m++) {
		unsigned peer = shm->mappings[m].partition;
		uint64_t bit = 1ull << region;
		if (peer != self && !(__atomic_fetch_or(&doorbells[peer], bit, __ATOMIC_SEQ_CST) & bit))
			wake |= 1u << peer;
	}
	notify(wake, BH_VIRQ_DOORBELL);
	return BH_OK;
}
