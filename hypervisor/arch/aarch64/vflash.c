/* CFI flash banks of a board partition, as QEMU's virt machine presents them (pflash_cfi01):
 * two 64 MiB banks of two interleaved 16-bit Intel/Sharp devices (command set 0x0001), a 4-byte
 * bus, 256 KiB erase blocks. Firmware keeps its code in bank 0 and its variables in bank 1.
 *
 * Reads in read-array mode cost nothing: the bank's backed part (bh_flash_cfg.backed, the used
 * part of its image) is ordinary RAM mapped read-only and executable at stage 2. A write there
 * is a permission fault, which lands here as a command. While a command is in progress, or the
 * bank answers status, query or identifier reads, its backed part is unmapped so those reads
 * trap too; the read-array command maps it again. The part beyond `backed` is never mapped: it
 * reads as erased (all ones), erases trivially, and programming a zero there is a program error
 * in the status register, as on a worn-out block.
 *
 * Commands are taken from the low byte of the written value (the first device's half; firmware
 * sends every command to both devices). Status, query and identifier reads answer for both
 * devices at once, the 16-bit answer repeated in each half of the 32-bit bus word; a narrower
 * read gets the word's low end whatever its lane. An 8-byte access is two bus accesses, the low
 * word first (QEMU's memory core splits it so for pflash_cfi01): an 8-byte store of a command
 * is the command and then a zero, an 8-byte identifier read two consecutive codes.
 *
 * Every path here is bounded by a small constant, whatever the guest does: an erase (256 KiB) or
 * a buffered program's confirm (up to 1024 words) is an operation in progress, as on real flash,
 * done a step at a time (FLASH_STEP_BYTES of flash, FLASH_STEP_WORDS of the buffer) at each
 * access the partition makes to the bank, its status polls: in its own time, never more than one
 * step in one trap, so a neighbour on the same core waits for one step at most. The status
 * register reports busy (SR.7 = 0) until the last step, as real flash does while it erases or
 * programs. A mode switch maps or unmaps the backed part by its 2 MiB level-2 entries (at most
 * 32 for a 64 MiB bank), not page by page, and is made once at the end of a trap, whatever the
 * access changed: one step and one switch at most per trap. */
#include "arch/aarch64.h"
#include "arch/vmachine.h"
#include "console.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "percpu.h"
#include "stage2.h"

#define FLASH_BLOCK 0x40000ul  /* erase block of the bank (both devices) */
#define FLASH_BUS 4u           /* bytes per bus word: two 16-bit devices */
#define FLASH_WINDOW 0x200000ul /* what a mode switch maps or unmaps at once: a level-2 entry */
/* The work of one access while an operation is in progress (docs/performance.md, "Flash"). */
#define FLASH_STEP_BYTES 2048ul /* an erase: bytes set to ones */
#define FLASH_STEP_WORDS 128u   /* a buffered program: bus words stored */

enum { MODE_ARRAY, MODE_STATUS, MODE_QUERY, MODE_ID };
enum { CYCLE_NONE, CYCLE_PROGRAM, CYCLE_ERASE, CYCLE_BUF_COUNT, CYCLE_BUF_DATA, CYCLE_BUF_CONFIRM,
       CYCLE_LOCK };

enum { OP_NONE, OP_ERASE, OP_PROGRAM };

#define SR_READY 0x80u
#define SR_PROGRAM_ERROR 0x10u

/* The CFI query table of one device, indexed by its word address (16-bit units): what
 * pflash_cfi01 answers for virt's geometry (32 MiB per device, 256 blocks of 128 KiB each,
 * 2 KiB write buffer). Unlisted addresses read 0. */
static const uint8_t cfi_table[0x40] = {
	[0x10] = 'Q', [0x11] = 'R', [0x12] = 'Y',
	[0x13] = 0x01, [0x14] = 0x00, /* primary command set: Intel/Sharp extended */
	[0x15] = 0x31, [0x16] = 0x00, /* primary extended table at 0x31 */
	[0x1b] = 0x45, [0x1c] = 0x55, /* Vcc 4.5 - 5.5 V */
	[0x1f] = 0x07, [0x20] = 0x07, [0x21] = 0x0a, /* typical timeouts: 128 us, 128 us, 1 s */
	[0x23] = 0x04, [0x24] = 0x04, [0x25] = 0x04, /* maximum: 16 times those */
	[0x27] = 25,                   /* device size 2^25 bytes */
	[0x28] = 0x02, [0x29] = 0x00,  /* x8/x16 interface */
	[0x2a] = 11, [0x2b] = 0,       /* write buffer 2^11 bytes per device */
	[0x2c] = 1,                    /* one erase region: */
	[0x2d] = 0xff, [0x2e] = 0x00,  /* 256 blocks */
	[0x2f] = 0x00, [0x30] = 0x02,  /* of 512 * 256 bytes */
	[0x31] = 'P', [0x32] = 'R', [0x33] = 'I', [0x34] = '1', [0x35] = '0',
};

static const struct bh_flash_cfg *bank_cfg(const struct partition *p, unsigned bank)
{
	return &p->cfg->vmachine->flash[bank];
}

static uint8_t *backing(const struct bh_flash_cfg *c, uint64_t off)
{
	return arch_phys_to_ptr(c->phys + off);
}

/* Map or unmap the backed part (reads in read-array mode go to RAM, others trap): its 2 MiB
 * level-2 entries, whatever maps them, at most 32 steps (the bank's window holds nothing else). */
static void set_mapped(struct partition *p, unsigned bank, struct vflash *f, bool mapped)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);
	uint64_t window = (c->backed + FLASH_WINDOW - 1) & ~(FLASH_WINDOW - 1);

	if (f->unmapped == !mapped || !c->backed)
		return;
	BH_CHECK((c->ipa & (FLASH_WINDOW - 1)) == 0 && window <= c->size);
	stage2_set_present((uint64_t *)(uintptr_t)p->stage2_root, c->ipa, window, mapped);
	__asm__ volatile("dsb ishst" ::: "memory"); /* the descriptors before the invalidation */
	arch_stage2_flush(p);
	f->unmapped = !mapped;
	f->switches++;
}

/* Reads go to RAM only in read-array mode with nothing in progress. */
static void remap(struct partition *p, unsigned bank, struct vflash *f)
{
	set_mapped(p, bank, f, f->mode == MODE_ARRAY && f->cycle == CYCLE_NONE && f->op == OP_NONE);
}

/* A mode and cycle: the bank's stage-2 mapping follows at the end of the access (remap). */
static void enter(struct vflash *f, unsigned mode, unsigned cycle)
{
	f->mode = (uint8_t)mode;
	f->cycle = (uint8_t)cycle;
}

/* Program n bytes at off: a store, as pflash_cfi01 does (firmware erases before it programs).
 * Beyond the backed part only ones can be "programmed". */
static void program(const struct bh_flash_cfg *c, struct vflash *f, uint64_t off, uint64_t val,
		    unsigned n)
{
	if (off + n > c->backed) { /* n is at most a bus word (vflash_access) */
		if ((val | ~((1ul << (8 * n)) - 1)) != ~0ul)
			f->status |= SR_PROGRAM_ERROR;
		return;
	}
	memcpy(backing(c, off), &val, n);
	arch_sync_loaded_image(backing(c, off), n);
}

/* An operation starts: busy until its last step. The first step is taken at once. */
static void op_step(struct partition *p, unsigned bank, struct vflash *f);

static void op_start(struct partition *p, unsigned bank, struct vflash *f, unsigned op,
		     uint64_t next, uint64_t end)
{
	f->op = (uint8_t)op;
	f->op_next = next;
	f->op_end = end;
	f->status &= (uint8_t)~SR_READY;
	op_step(p, bank, f);
}

/* A block erase: the backed part of the block holding off (none beyond it: that part is erased
 * already, and stays so). */
static void erase_start(struct partition *p, unsigned bank, struct vflash *f, uint64_t off)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);
	uint64_t start = off & ~(FLASH_BLOCK - 1), end = start + FLASH_BLOCK;

	if (start > c->backed)
		start = c->backed;
	if (end > c->backed)
		end = c->backed;
	op_start(p, bank, f, OP_ERASE, start, end);
}

/* The buffer's word i into the flash (the unbacked tail: only its status). */
static void commit_word(const struct bh_flash_cfg *c, struct vflash *f, uint32_t i)
{
	uint64_t off = f->buf_start + (uint64_t)i * FLASH_BUS;

	if (!(f->written[i / 64] & (1ul << (i % 64))))
		return; /* a word of the window never written stays as it is */
	if (off + FLASH_BUS <= c->backed)
		*(uint32_t *)(void *)backing(c, off) = f->buf[i];
	else
		program(c, f, off, f->buf[i], FLASH_BUS);
}

/* One step of the operation in progress: at most FLASH_STEP_BYTES erased or FLASH_STEP_WORDS
 * programmed, in ascending order, their data cache lines cleaned. The last step invalidates the
 * instruction caches once for the whole operation (nothing executes from the bank meanwhile:
 * it is unmapped while busy), sets the ready bit and maps the bank again in read-array mode.
 * An operation cut by a restart (power lost) leaves every word old or new: the steps done are
 * in the flash, the others not (docs/architecture.md, "Firmware boot and flash"). */
static void op_step(struct partition *p, unsigned bank, struct vflash *f)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);

	if (f->op == OP_ERASE) {
		uint64_t n = f->op_end - f->op_next;
		if (n > FLASH_STEP_BYTES)
			n = FLASH_STEP_BYTES;
		if (n) {
			memset(backing(c, f->op_next), 0xff, n);
			aarch64_clean_dcache(backing(c, f->op_next), n);
		}
		f->op_next += n;
		if (f->op_next < f->op_end)
			return;
	} else if (f->op == OP_PROGRAM) {
		uint32_t i = (uint32_t)f->op_next, end = i + FLASH_STEP_WORDS;
		if (end > f->count)
			end = f->count;
		uint64_t from = f->buf_start + (uint64_t)i * FLASH_BUS;
		uint64_t to = f->buf_start + (uint64_t)end * FLASH_BUS;
		if (to <= c->backed) { /* the usual case: one pointer, a store per word written */
			uint32_t *w = (uint32_t *)(void *)backing(c, from);
			for (uint32_t k = i; k < end; k++, w++)
				if (f->written[k / 64] & (1ul << (k % 64)))
					*w = f->buf[k];
		} else {
			for (uint32_t k = i; k < end; k++)
				commit_word(c, f, k);
			to = c->backed;
		}
		if (from < to)
			aarch64_clean_dcache(backing(c, from), to - from);
		f->op_next = end;
		if (end < f->count)
			return;
	} else {
		return;
	}
	aarch64_sync_icache();
	f->op = OP_NONE;
	f->status |= SR_READY;
}

/* A read in read-array mode while an operation is in progress (after a read-array command sent
 * while busy, or QEMU's broken erase sequence): the flash as it will be, byte by byte (an access
 * is at most 8 bytes): ones where the erase has still to go, the buffer's words the program has
 * still to store. */
static uint8_t byte_as_it_will_be(const struct bh_flash_cfg *c, const struct vflash *f,
				  uint64_t at)
{
	if (f->op == OP_ERASE && at >= f->op_next && at < f->op_end)
		return 0xff;
	if (f->op == OP_PROGRAM && at >= f->buf_start) {
		uint64_t word = (at - f->buf_start) / FLASH_BUS;
		if (word >= f->op_next && word < f->count && (f->written[word / 64] & (1ul << (word % 64))))
			return (uint8_t)(f->buf[word] >> (8 * ((at - f->buf_start) % FLASH_BUS)));
	}
	return at < c->backed ? *backing(c, at) : 0xff;
}

static uint64_t read_in_progress(const struct bh_flash_cfg *c, const struct vflash *f,
				 uint64_t off, unsigned size)
{
	uint64_t val = 0;

	for (unsigned i = 0; i < size; i++)
		val |= (uint64_t)byte_as_it_will_be(c, f, off + i) << (8 * i);
	return val;
}

/* The first write of a command. */
static void command(struct vflash *f, uint64_t off, uint8_t cmd)
{
	switch (cmd) {
	case 0xff: case 0xf0: case 0x00:
		enter(f, MODE_ARRAY, CYCLE_NONE);
		break;
	case 0x70: enter(f, MODE_STATUS, CYCLE_NONE); break;
	case 0x50: /* clears the ready bit too, as pflash_cfi01 does */
		f->status = 0;
		break;
	case 0x90: enter(f, MODE_ID, CYCLE_NONE); break;
	case 0x98: enter(f, MODE_QUERY, CYCLE_NONE); break;
	case 0x10: case 0x40: enter(f, MODE_STATUS, CYCLE_PROGRAM); break;
	case 0x20: /* the erase starts at the second cycle (erase_start) */
		f->erase_at = off;
		f->status |= SR_READY;
		enter(f, MODE_STATUS, CYCLE_ERASE);
		break;
	case 0x60: enter(f, MODE_STATUS, CYCLE_LOCK); break;
	case 0xe8:
		f->buf_start = off & ~(uint64_t)(FLASH_BUS - 1);
		f->status |= SR_READY; /* the buffer is free */
		enter(f, MODE_STATUS, CYCLE_BUF_COUNT);
		break;
	default: /* as pflash_cfi01: an unknown command returns to read-array mode */
		enter(f, MODE_ARRAY, CYCLE_NONE);
	}
}

/* Buffered program: a data word at off, inside the window the count announced, kept in the
 * write buffer; the flash changes only at the confirm, so a sequence broken (or a partition
 * restarted: power lost) before it leaves every word as it was, as QEMU's pflash_cfi01 does. */
static void buffer_word(struct vflash *f, uint64_t off, unsigned size, uint64_t val)
{
	uint64_t index = (off - f->buf_start) / FLASH_BUS;

	if (size != FLASH_BUS || off < f->buf_start || index >= f->count) {
		enter(f, MODE_ARRAY, CYCLE_NONE); /* a broken sequence, as pflash_cfi01 */
		return;
	}
	f->buf[index] = (uint32_t)val;
	f->written[index / 64] |= 1ul << (index % 64);
	if (++f->buf_words == f->count)
		f->cycle = CYCLE_BUF_CONFIRM;
}

/* The second write of a two-cycle command: the confirm, or anything else, which pflash_cfi01
 * treats as a broken sequence and answers by returning to read-array mode. */
static bool confirmed(struct vflash *f, bool ok)
{
	if (ok)
		return true;
	enter(f, MODE_ARRAY, CYCLE_NONE);
	return false;
}

/* A write while the device is busy: read status (70) and read array (FF, F0, 00: the flash as it
 * will be, trapped until the operation ends) and clear status (50) are taken, as on real flash;
 * anything else (a program, an erase, data) is ignored: the device accepts no new work. */
static void busy_command(struct vflash *f, uint8_t cmd)
{
	switch (cmd) {
	case 0x70: enter(f, MODE_STATUS, CYCLE_NONE); break;
	case 0xff: case 0xf0: case 0x00: enter(f, MODE_ARRAY, CYCLE_NONE); break;
	case 0x50: f->status = 0; break; /* the ready bit comes with the last step */
	default: break;
	}
}

static void write_bank(struct partition *p, unsigned bank, struct vflash *f, uint64_t off,
		       unsigned size, uint64_t val)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);
	uint8_t cmd = (uint8_t)val;

	f->writes++;
	if (f->op != OP_NONE) {
		busy_command(f, cmd);
		return;
	}
	switch (f->cycle) {
	case CYCLE_NONE:
		command(f, off, cmd);
		return;
	case CYCLE_PROGRAM:
		program(c, f, off, val, size);
		break;
	case CYCLE_ERASE:
		/* pflash_cfi01 erases at the setup command, so a wrong second cycle, which returns
		 * to read-array mode, still erases: the erase starts either way. */
		f->cycle = CYCLE_NONE;
		if (cmd != 0xd0) {
			f->mode = MODE_ARRAY;
			erase_start(p, bank, f, f->erase_at);
			return;
		}
		f->mode = MODE_STATUS;
		erase_start(p, bank, f, f->erase_at);
		return;
	case CYCLE_BUF_CONFIRM:
		if (!confirmed(f, cmd == 0xd0))
			return;
		f->cycle = CYCLE_NONE;
		f->mode = MODE_STATUS;
		op_start(p, bank, f, OP_PROGRAM, 0, 0);
		return;
	case CYCLE_LOCK: /* lock or unlock: blocks are never locked */
		if (!confirmed(f, cmd == 0x01 || cmd == 0xd0))
			return;
		break;
	case CYCLE_BUF_COUNT: /* bus words - 1, in each device's half */
		f->count = (uint32_t)(val & 0xffff) + 1;
		if (f->count > VFLASH_BUFFER_WORDS) { /* more than the buffer holds: a broken sequence */
			enter(f, MODE_ARRAY, CYCLE_NONE);
			return;
		}
		f->buf_words = 0;
		memset(f->written, 0, sizeof(f->written));
		f->cycle = CYCLE_BUF_DATA;
		return;
	case CYCLE_BUF_DATA:
		buffer_word(f, off, size, val);
		return;
	}
	f->status |= SR_READY;
	enter(f, MODE_STATUS, CYCLE_NONE);
}

/* One device's 16-bit answer in query or identifier mode, at its word address. */
static uint32_t device_word(const struct vflash *f, uint64_t off)
{
	uint64_t word = off / FLASH_BUS;

	if (f->mode == MODE_QUERY)
		return word < sizeof(cfi_table) ? cfi_table[word] : 0;
	switch (word & 0xff) { /* identifier codes; offset 2 of a block: its lock state */
	case 0: return 0x89;   /* manufacturer: Intel, as virt's */
	case 1: return 0x18;   /* device, as virt's */
	default: return 0;     /* unlocked */
	}
}

static uint64_t read_bank(struct partition *p, unsigned bank, struct vflash *f, uint64_t off,
			  unsigned size)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);
	uint64_t val = ~0ul;

	if (f->mode == MODE_ARRAY) {
		if (f->op != OP_NONE)
			return read_in_progress(c, f, off, size);
		if (off + size <= c->backed)
			memcpy(&val, backing(c, off), size);
		else
			f->tail_reads++;
		return val;
	}
	/* Both devices' answer, whatever the lane: a narrower read gets its low end (the caller
	 * masks), as pflash_cfi01 answers a byte read at offset 1 or 3 too. */
	uint32_t word = f->mode == MODE_STATUS ? f->status : device_word(f, off);
	return word | word << 16;
}

/* One access of at most a bus word (the caller holds the board's lock). */
static void access_bank(struct partition *p, unsigned bank, uint64_t off, unsigned size,
			bool write, uint64_t *val)
{
	struct vflash *f = &vmachine_of_emulated(p)->flash[bank];

	if (write)
		write_bank(p, bank, f, off, size, *val);
	else
		*val = read_bank(p, bank, f, off, size);
}

/* The bank that holds [ipa, ipa + len), or -1. */
static int bank_at(const struct bh_vmachine_cfg *m, uint64_t ipa, uint64_t len)
{
	for (unsigned bank = 0; bank < m->flash_count && bank < BH_FLASH_BANKS; bank++) {
		const struct bh_flash_cfg *c = &m->flash[bank];
		if (ipa >= c->ipa && ipa - c->ipa < c->size && len <= c->size - (ipa - c->ipa))
			return (int)bank;
	}
	return -1;
}

/* n accesses of size bytes from bank offset off (val[i] the i-th's value), under the board's
 * lock: the operation in progress steps once, each access of more than a bus word is two bus
 * accesses, the low word first (as QEMU's memory core splits it), and the bank's mapping follows
 * its mode once at the end, whatever the accesses changed: one step and one stage-2 switch at
 * most per trap (an 8-byte store of a command and a zero, or an operation's last step and a
 * command, would otherwise switch two or three times). Every caller is a trap, which takes the
 * lock as the other trap locks (percpu.h trap_lock: a step is a short hold): MMIO_AGAIN, nothing
 * done, when it was given up before the core's instant. */
static enum mmio_result access_locked(struct partition *p, unsigned bank, uint64_t off,
				      unsigned size, unsigned n, bool write, uint64_t *val)
{
	struct vmachine *vm = vmachine_of_emulated(p);

	if (!trap_lock(&vm->board_lock))
		return MMIO_AGAIN;
	op_step(p, bank, &vm->flash[bank]); /* the operation in progress, if any: one step */
	for (unsigned i = 0; i < n; i++, off += size) {
		if (size <= FLASH_BUS) {
			access_bank(p, bank, off, size, write, &val[i]);
			continue;
		}
		uint64_t lo = (uint32_t)val[i], hi = val[i] >> 32;
		access_bank(p, bank, off, FLASH_BUS, write, &lo);
		access_bank(p, bank, off + FLASH_BUS, FLASH_BUS, write, &hi);
		val[i] = (uint32_t)lo | hi << 32;
	}
	remap(p, bank, &vm->flash[bank]);
	arch_spin_unlock(&vm->board_lock);
	return MMIO_DONE;
}

enum mmio_result vflash_access(struct vcpu *v, uint64_t ipa, unsigned size, bool write,
			       uint64_t *val)
{
	const struct bh_vmachine_cfg *m = v->partition->cfg->vmachine;
	int bank = bank_at(m, ipa, size);

	if (bank < 0)
		return MMIO_UNCLAIMED;
	return access_locked(v->partition, (unsigned)bank, ipa - m->flash[bank].ipa, size, 1, write,
			     val);
}

enum mmio_result vflash_read_pair(struct vcpu *v, uint64_t ipa, unsigned size, uint64_t val[2])
{
	const struct bh_vmachine_cfg *m = v->partition->cfg->vmachine;
	int bank = m ? bank_at(m, ipa, 2ul * size) : -1;

	if (bank < 0 || (size != 4 && size != 8) || (ipa & (size - 1)))
		return MMIO_UNCLAIMED;
	return access_locked(v->partition, (unsigned)bank, ipa - m->flash[bank].ipa, size, 2, false,
			     val);
}

bool vflash_wait(struct vcpu *v, uint64_t ipa)
{
	struct partition *p = v->partition;
	const struct bh_vmachine_cfg *m = p->cfg->vmachine;
	int bank = m ? bank_at(m, ipa, FLASH_BUS) : -1;

	if (bank < 0)
		return false;
	struct vmachine *vm = vmachine_of_emulated(p);
	struct vflash *f = &vm->flash[bank];
	if (!trap_lock(&vm->board_lock))
		return true; /* given up before the core's instant: nothing done, made again */
	bool again = f->mode == MODE_ARRAY && ipa - m->flash[bank].ipa < m->flash[bank].backed;
	if (again) { /* busy (or mapped since the fault): one step, then the access once more */
		op_step(p, (unsigned)bank, f);
		remap(p, (unsigned)bank, f);
	}
	arch_spin_unlock(&vm->board_lock);
	return again;
}

/* What the last run of the partition did with a bank: trapped writes (commands and data),
 * stage-2 switches between read-array and command modes, reads of the erased tail. */
static void log_use(const struct partition *p, unsigned bank, struct vflash *f)
{
	if (f->writes || f->tail_reads)
		bh_log("partition %s: flash bank %u: %lu writes, %lu mode switches, %lu tail reads",
		       p->cfg->name, bank, f->writes, f->switches, f->tail_reads);
	f->writes = f->switches = f->tail_reads = 0;
}

/* A restart is the devices' reset: read-array mode, status ready; the contents stay. */
void vflash_reset(struct partition *p)
{
	const struct bh_vmachine_cfg *m = p->cfg->vmachine;
	struct vmachine *vm = vmachine_of(p);

	BH_CHECK(m->flash_count <= BH_FLASH_BANKS);
	arch_spin_lock(&vm->board_lock);
	for (unsigned bank = 0; bank < m->flash_count; bank++) {
		struct vflash *f = &vm->flash[bank];
		BH_CHECK(m->flash[bank].backed <= m->flash[bank].size);
		if (f->op != OP_NONE) /* power lost in the middle: the steps done stay done */
			aarch64_sync_icache();
		f->op = OP_NONE;
		f->status = SR_READY;
		f->count = f->buf_words = 0;
		enter(f, MODE_ARRAY, CYCLE_NONE);
		remap(p, bank, f);
		log_use(p, bank, f);
	}
	arch_spin_unlock(&vm->board_lock);
}
