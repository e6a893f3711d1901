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
 * devices at once, the 16-bit answer repeated in each half of the 32-bit bus word. */
#include "arch/aarch64.h"
#include "arch/vmachine.h"
#include "console.h"
#include "lib.h"
#include "panic.h"
#include "partition.h"
#include "stage2.h"

#define FLASH_BLOCK 0x40000ul  /* erase block of the bank (both devices) */
#define FLASH_BUS 4u           /* bytes per bus word: two 16-bit devices */

enum { MODE_ARRAY, MODE_STATUS, MODE_QUERY, MODE_ID };
enum { CYCLE_NONE, CYCLE_PROGRAM, CYCLE_ERASE, CYCLE_BUF_COUNT, CYCLE_BUF_DATA, CYCLE_BUF_CONFIRM,
       CYCLE_LOCK };

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

/* Map or unmap the backed part (reads in read-array mode go to RAM, others trap). */
static void set_mapped(struct partition *p, unsigned bank, struct vflash *f, bool mapped)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);

	if (f->unmapped == !mapped || !c->backed)
		return;
	stage2_set_present((uint64_t *)(uintptr_t)p->stage2_root, c->ipa, c->backed, mapped);
	__asm__ volatile("dsb ishst" ::: "memory"); /* the descriptors before the invalidation */
	arch_stage2_flush(p);
	f->unmapped = !mapped;
	f->switches++;
}

static void enter(struct partition *p, unsigned bank, struct vflash *f, unsigned mode,
		  unsigned cycle)
{
	f->mode = (uint8_t)mode;
	f->cycle = (uint8_t)cycle;
	set_mapped(p, bank, f, mode == MODE_ARRAY && cycle == CYCLE_NONE);
}

/* Program n bytes at off: a store, as pflash_cfi01 does (firmware erases before it programs).
 * Beyond the backed part only ones can be "programmed". */
static void program(const struct bh_flash_cfg *c, struct vflash *f, uint64_t off, uint64_t val,
		    unsigned n)
{
	if (off + n > c->backed) {
		if (n < 8 && (val | ~((1ul << (8 * n)) - 1)) != ~0ul)
			f->status |= SR_PROGRAM_ERROR;
		else if (n == 8 && val != ~0ul)
			f->status |= SR_PROGRAM_ERROR;
		return;
	}
	memcpy(backing(c, off), &val, n);
	arch_sync_loaded_image(backing(c, off), n);
}

static void erase_block(const struct bh_flash_cfg *c, uint64_t off)
{
	uint64_t start = off & ~(FLASH_BLOCK - 1), n = FLASH_BLOCK;

	if (start >= c->backed)
		return; /* already erased, and stays so */
	if (start + n > c->backed)
		n = c->backed - start;
	memset(backing(c, start), 0xff, n);
	arch_sync_loaded_image(backing(c, start), n);
}

/* The first write of a command. */
static void command(struct partition *p, unsigned bank, struct vflash *f, uint64_t off,
		    uint8_t cmd)
{
	switch (cmd) {
	case 0xff: case 0xf0: case 0x00:
		enter(p, bank, f, MODE_ARRAY, CYCLE_NONE);
		break;
	case 0x70: enter(p, bank, f, MODE_STATUS, CYCLE_NONE); break;
	case 0x50: /* clears the ready bit too, as pflash_cfi01 does */
		f->status = 0;
		break;
	case 0x90: enter(p, bank, f, MODE_ID, CYCLE_NONE); break;
	case 0x98: enter(p, bank, f, MODE_QUERY, CYCLE_NONE); break;
	case 0x10: case 0x40: enter(p, bank, f, MODE_STATUS, CYCLE_PROGRAM); break;
	case 0x20: /* pflash_cfi01 erases at the setup command; the confirm only completes it */
		erase_block(bank_cfg(p, bank), off);
		f->status |= SR_READY;
		enter(p, bank, f, MODE_STATUS, CYCLE_ERASE);
		break;
	case 0x60: enter(p, bank, f, MODE_STATUS, CYCLE_LOCK); break;
	case 0xe8:
		f->buf_start = off & ~(uint64_t)(FLASH_BUS - 1);
		f->status |= SR_READY; /* the buffer is free */
		enter(p, bank, f, MODE_STATUS, CYCLE_BUF_COUNT);
		break;
	default: /* as pflash_cfi01: an unknown command returns to read-array mode */
		enter(p, bank, f, MODE_ARRAY, CYCLE_NONE);
	}
}

/* Buffered program: a data word at off, inside the window the count announced, kept in the
 * write buffer; the flash changes only at the confirm, so a sequence broken (or a partition
 * restarted: power lost) before it leaves every word as it was, as QEMU's pflash_cfi01 does. */
static void buffer_word(struct partition *p, unsigned bank, struct vflash *f, uint64_t off,
			unsigned size, uint64_t val)
{
	uint64_t index = (off - f->buf_start) / FLASH_BUS;

	if (size != FLASH_BUS || off < f->buf_start || index >= f->count) {
		enter(p, bank, f, MODE_ARRAY, CYCLE_NONE); /* a broken sequence, as pflash_cfi01 */
		return;
	}
	f->buf[index] = (uint32_t)val;
	f->written[index / 64] |= 1ul << (index % 64);
	if (++f->buf_words == f->count)
		f->cycle = CYCLE_BUF_CONFIRM;
}

/* The confirm: the buffer goes into the flash (a word written twice keeps its last value; one
 * of the window never written stays as it is), then one cache maintenance for the whole window:
 * not one per word, whose instruction-cache invalidation every core would see, up to 1024 times. */
static void buffer_commit(const struct bh_flash_cfg *c, struct vflash *f)
{
	uint64_t end = f->buf_start + (uint64_t)f->count * FLASH_BUS;

	for (uint32_t i = 0; i < f->count; i++) {
		uint64_t off = f->buf_start + (uint64_t)i * FLASH_BUS;
		if (!(f->written[i / 64] & (1ul << (i % 64))))
			continue;
		if (off + FLASH_BUS <= c->backed)
			memcpy(backing(c, off), &f->buf[i], FLASH_BUS);
		else
			program(c, f, off, f->buf[i], FLASH_BUS); /* the unbacked tail: only its status */
	}
	if (f->buf_start < c->backed)
		arch_sync_loaded_image(backing(c, f->buf_start),
				       (end < c->backed ? end : c->backed) - f->buf_start);
}

/* The second write of a two-cycle command: the confirm, or anything else, which pflash_cfi01
 * treats as a broken sequence and answers by returning to read-array mode. */
static bool confirmed(struct partition *p, unsigned bank, struct vflash *f, bool ok)
{
	if (ok)
		return true;
	enter(p, bank, f, MODE_ARRAY, CYCLE_NONE);
	return false;
}

static void write_bank(struct partition *p, unsigned bank, struct vflash *f, uint64_t off,
		       unsigned size, uint64_t val)
{
	const struct bh_flash_cfg *c = bank_cfg(p, bank);
	uint8_t cmd = (uint8_t)val;

	f->writes++;
	switch (f->cycle) {
	case CYCLE_NONE:
		command(p, bank, f, off, cmd);
		return;
	case CYCLE_PROGRAM:
		program(c, f, off, val, size);
		break;
	case CYCLE_ERASE: /* the block was erased at the setup command */
		if (!confirmed(p, bank, f, cmd == 0xd0))
			return;
		break;
	case CYCLE_BUF_CONFIRM:
		if (!confirmed(p, bank, f, cmd == 0xd0))
			return;
		buffer_commit(c, f);
		break;
	case CYCLE_LOCK: /* lock or unlock: blocks are never locked */
		if (!confirmed(p, bank, f, cmd == 0x01 || cmd == 0xd0))
			return;
		break;
	case CYCLE_BUF_COUNT: /* bus words - 1, in each device's half */
		f->count = (uint32_t)(val & 0xffff) + 1;
		if (f->count > VFLASH_BUFFER_WORDS) { /* more than the buffer holds: a broken sequence */
			enter(p, bank, f, MODE_ARRAY, CYCLE_NONE);
			return;
		}
		f->buf_words = 0;
		memset(f->written, 0, sizeof(f->written));
		f->cycle = CYCLE_BUF_DATA;
		return;
	case CYCLE_BUF_DATA:
		buffer_word(p, bank, f, off, size, val);
		return;
	}
	f->status |= SR_READY;
	enter(p, bank, f, MODE_STATUS, CYCLE_NONE);
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
		if (off + size <= c->backed)
			memcpy(&val, backing(c, off), size);
		else
			f->tail_reads++;
		return val;
	}
	uint32_t word = f->mode == MODE_STATUS ? f->status : device_word(f, off);
	uint64_t bus = (uint64_t)(word | word << 16);
	bus |= bus << 32;
	return bus >> (8 * (off & (FLASH_BUS - 1)));
}

bool vflash_access(struct vcpu *v, uint64_t ipa, unsigned size, bool write, uint64_t *val)
{
	struct partition *p = v->partition;
	const struct bh_vmachine_cfg *m = p->cfg->vmachine;
	struct vmachine *vm = vmachine_of(p);

	for (unsigned bank = 0; bank < m->flash_count && bank < BH_FLASH_BANKS; bank++) {
		const struct bh_flash_cfg *c = &m->flash[bank];
		if (ipa < c->ipa || ipa - c->ipa >= c->size || size > c->size - (ipa - c->ipa))
			continue;
		arch_spin_lock(&vm->board_lock);
		if (write)
			write_bank(p, bank, &vm->flash[bank], ipa - c->ipa, size, *val);
		else
			*val = read_bank(p, bank, &vm->flash[bank], ipa - c->ipa, size);
		arch_spin_unlock(&vm->board_lock);
		return true;
	}
	return false;
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
		f->status = SR_READY;
		f->count = f->buf_words = 0;
		enter(p, bank, f, MODE_ARRAY, CYCLE_NONE);
		log_use(p, bank, f);
	}
	arch_spin_unlock(&vm->board_lock);
}
