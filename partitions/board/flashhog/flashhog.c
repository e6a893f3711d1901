/* flashhog: a hostile firmware image for QEMU's virt machine that makes the hypervisor's flash
 * emulation work as hard as it can, one flash attack per time window of the hostile neighbour's
 * plan (partitions/tests/hostile/attacks.h: the same windows, so latvictim's samples of window k
 * are taken while attack k of this file runs):
 *
 * - erase: block erase (20, D0) of the largest block, a whole 256 KiB block of bank 1, then
 *   status polls until the device is ready (SR.7), back to back;
 * - buffered_program: the largest buffered program, 1024 bus words (E8, count 1023, the words,
 *   D0), then status polls until ready, back to back;
 * - mode_switch: read status (70) and read array (FF) in turn: each one maps or unmaps the bank's
 *   backed part at stage 2;
 * - word_program: a word program (40, data) and read array (FF), back to back.
 *
 * Windows marked aimed start their expensive step (the erase or buffer confirm, or the command
 * that switches modes) 1 to 16 ticks before each instant the victim is due on a timer core
 * (ATTACK_T0 + VICTIM_SLOT_OFFSET + k * VICTIM_SLOT_PERIOD). Every flash access is timed by the
 * counter (CNTVCT; the hypervisor keeps CNTVOFF at 0), and the line of each window gives the
 * longest: on a core of its own, that is the hypervisor's path for the access (the trap, the
 * emulation, the return) to within a tick; beside a victim it also holds the victim's turns.
 *
 * Only aligned 32-bit accesses, no data section (the image runs from flash): its figures live
 * on the stack. Run as a partition's `firmware` (tests/system/test_flash_bound.py). */
#define PROBE_NAME "flashhog"
#include "fwprobe.h"
#include <stdbool.h>
#include "../../tests/hostile/attacks.h"

#define HOG_BLOCK 0x00000ul  /* block 0 of bank 1: 256 KiB, all backed */
#define HOG_BUFFER 0x40000ul /* block 1 of bank 1: the window of the buffered programs */
#define HOG_BUFFER_WORDS 1024u
#define SR_READY 0x80u

enum hog { HOG_QUIET, HOG_ERASE, HOG_BUFFER_PROGRAM, HOG_SWITCH, HOG_WORD, HOG_KINDS };

static const char *const hog_names[HOG_KINDS] = {
	"quiet", "erase", "buffered_program", "mode_switch", "word_program",
};

/* What each of the ATTACK_COUNT windows runs, and whether it aims. */
static const unsigned char window_hog[ATTACK_COUNT] = {
	HOG_QUIET, HOG_ERASE, HOG_BUFFER_PROGRAM, HOG_SWITCH, HOG_WORD, HOG_ERASE,
	HOG_BUFFER_PROGRAM, HOG_SWITCH, HOG_ERASE, HOG_BUFFER_PROGRAM, HOG_SWITCH, HOG_WORD,
};
static const unsigned char window_aimed[ATTACK_COUNT] = {
	0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0,
};

struct figures {
	uint64_t longest, accesses;
};

static inline uint64_t now(void)
{
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static inline void took(struct figures *f, uint64_t t0)
{
	uint64_t d = now() - t0;
	if (d > f->longest)
		f->longest = d;
	f->accesses++;
}

static void timed_cmd(struct figures *f, unsigned long off, uint32_t c)
{
	uint64_t t0 = now();
	flash_cmd(off, c);
	took(f, t0);
}

static void timed_wr(struct figures *f, unsigned long off, uint32_t v)
{
	uint64_t t0 = now();
	flash_wr(off, v);
	took(f, t0);
}

static uint32_t timed_rd(struct figures *f, unsigned long off)
{
	uint64_t t0 = now();
	uint32_t v = flash_rd(off);
	took(f, t0);
	return v;
}

/* Status polls until the device is ready; a bounded number, so a device that never gets ready
 * shows as a line, not as a hang. */
static uint32_t wait_ready(struct figures *f)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < 1u << 20; i++) {
		s = timed_rd(f, 0);
		if (s & SR_READY)
			break;
	}
	return s;
}

/* The next due instant of the victim at or after t, less 1 to 16 ticks (turn by turn). */
static uint64_t aim_at(uint64_t t, unsigned turn)
{
	uint64_t base = ATTACK_T0 + VICTIM_SLOT_OFFSET;
	uint64_t k = t <= base ? 0 : (t - base + VICTIM_SLOT_PERIOD - 1) / VICTIM_SLOT_PERIOD;
	return base + k * VICTIM_SLOT_PERIOD - 1 - turn % 16;
}

static void spin_until(uint64_t t)
{
	while (now() < t)
		;
}

/* Aimed: wait for the victim's next instant (less 1 to 16 ticks) before the expensive step. */
static void aim(bool aimed, unsigned turn)
{
	if (aimed)
		spin_until(aim_at(now() + 200, turn));
}

/* One round of a flash attack. */
static void round_of(unsigned hog, struct figures *f, bool aimed, unsigned turn)
{
	switch (hog) {
	case HOG_QUIET:
		spin_until(now() + 1000);
		return;
	case HOG_ERASE:
		aim(aimed, turn);
		timed_cmd(f, HOG_BLOCK, 0x20);
		timed_cmd(f, HOG_BLOCK, 0xd0);
		if (!(wait_ready(f) & SR_READY))
			puts_("flashhog: erase never ready\n");
		timed_cmd(f, 0, 0x50);
		timed_cmd(f, 0, 0xff);
		return;
	case HOG_BUFFER_PROGRAM:
		timed_cmd(f, HOG_BUFFER, 0xe8);
		wait_ready(f); /* the buffer is free */
		timed_wr(f, HOG_BUFFER, (HOG_BUFFER_WORDS - 1) << 16 | (HOG_BUFFER_WORDS - 1));
		for (unsigned i = 0; i < HOG_BUFFER_WORDS; i++)
			timed_wr(f, HOG_BUFFER + 4 * i, 0x5a000000u + (turn << 12) + i);
		aim(aimed, turn);
		timed_cmd(f, HOG_BUFFER, 0xd0);
		if (!(wait_ready(f) & SR_READY))
			puts_("flashhog: buffered program never ready\n");
		timed_cmd(f, 0, 0x50);
		timed_cmd(f, 0, 0xff);
		return;
	case HOG_SWITCH:
		aim(aimed, turn);
		timed_cmd(f, 0, 0x70);
		timed_rd(f, 0);
		timed_cmd(f, 0, 0xff);
		return;
	case HOG_WORD:
		aim(aimed, turn);
		timed_cmd(f, 0x100 + 4 * (turn % 64), 0x40);
		timed_wr(f, 0x100 + 4 * (turn % 64), 0xc0de0000u + turn);
		timed_cmd(f, 0, 0xff);
		return;
	}
}

int main(void)
{
	struct figures figs[ATTACK_COUNT] = { 0 };
	unsigned turn = 0;
	uint64_t t;

	puts_("flashhog: start\n");
	/* One access, untimed: the first trapped access of the run costs more once, whatever it is
	 * (132 ticks for a mode switch as for an erase step; not a flash path). */
	flash_cmd(0, 0x70);
	flash_rd(0);
	flash_cmd(0, 0xff);
	while ((t = now()) < ATTACK_END) {
		int w = attack_at(t);
		if (w < 0) {
			spin_until(t + 1000);
			continue;
		}
		unsigned hog = window_hog[w];
		round_of(hog, &figs[w], window_aimed[w], turn++);
	}
	for (int w = 0; w < ATTACK_COUNT; w++) {
		puts_("flashhog: window ");
		putdec((uint64_t)w);
		puts_(" ");
		puts_(hog_names[window_hog[w]]);
		puts_(window_aimed[w] ? " aimed" : " storm");
		puts_(" longest ");
		putdec(figs[w].longest);
		puts_(" accesses ");
		putdec(figs[w].accesses);
		puts_("\n");
	}
	puts_("flashhog: done\n");
	return 0;
}
