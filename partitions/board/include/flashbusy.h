/* The flashbusy program (flashbusy/flashbusy.c says what it does), shared by flashbusy and
 * flashbusysmc, which resets by SMC (FW_RESET_INSN). Include after fwprobe.h. */
#ifndef BOARD_FLASHBUSY_H
#define BOARD_FLASHBUSY_H

#define BLOCK1 0x40000ul
#define BLOCK_WORDS 0x10000u   /* 256 KiB of bus words */
#define BUF_WORDS 1024u
#define MARK1 0x80000ul
#define MARK2 0x80004ul
#define STAGE1 0x5e000001u
#define STAGE2 0x5e000002u
#define SR_READY 0x80u

static uint32_t pattern(unsigned i) { return 0xa5000000u | i; }
static uint32_t old_word(unsigned i) { return 0x0dd00000u | i; }
static uint32_t new_word(unsigned i) { return 0x0e700000u | i; }

static uint32_t wait_ready(void)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < 1u << 22 && !(s & SR_READY); i++)
		s = flash_rd(0);
	if (!(s & SR_READY))
		show("never ready, status", s);
	return s;
}

static void erase(unsigned long block)
{
	flash_cmd(block, 0x20);
	flash_cmd(block, 0xd0);
	wait_ready();
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
}

static void word_program(unsigned long off, uint32_t v)
{
	flash_cmd(off, 0x40);
	flash_wr(off, v);
	wait_ready();
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
}

/* A buffered program of BUF_WORDS words at off, up to its confirm. */
static void buffer_up_to_confirm(unsigned long off, uint32_t (*value)(unsigned), unsigned first)
{
	flash_cmd(off, 0xe8);
	wait_ready();
	flash_wr(off, (BUF_WORDS - 1) << 16 | (BUF_WORDS - 1));
	for (unsigned i = 0; i < BUF_WORDS; i++)
		flash_wr(off + 4 * i, value(first + i));
	flash_cmd(off, 0xd0);
}

/* Status reads right after a confirm: how many of n say busy. */
static uint32_t busy_polls(unsigned n)
{
	uint32_t busy = 0;
	for (unsigned i = 0; i < n; i++)
		if (!(flash_rd(0) & SR_READY))
			busy++;
	return busy;
}

/* Words [0, n) of block 1 against the expected contents: new (first), old (second), neither;
 * and whether every new word comes before every old one. */
static void survey(const char *what, unsigned n, uint32_t (*new_value)(unsigned),
		   uint32_t (*old_value)(unsigned))
{
	uint32_t news = 0, olds = 0, mixed = 0, ordered = 1;

	for (unsigned i = 0; i < n; i++) {
		uint32_t v = flash_rd(BLOCK1 + 4 * i);
		if (v == new_value(i)) {
			news++;
			if (olds)
				ordered = 0;
		} else if (v == old_value(i)) {
			olds++;
		} else {
			mixed++;
		}
	}
	puts_(PROBE_NAME ": ");
	puts_(what);
	puts_(" new ");
	puthex(news);
	puts_(" old ");
	puthex(olds);
	puts_(" neither ");
	puthex(mixed);
	puts_(" new first ");
	puthex(ordered);
	puts_("\n");
}

static uint32_t erased(unsigned i) { (void)i; return 0xffffffffu; }

static void first_run(void)
{
	erase(BLOCK1);
	for (unsigned k = 0; k < BLOCK_WORDS / BUF_WORDS; k++) {
		buffer_up_to_confirm(BLOCK1 + 4ul * BUF_WORDS * k, pattern, k * BUF_WORDS);
		wait_ready();
		flash_cmd(0, 0x50);
		flash_cmd(0, 0xff);
	}
	survey("filled", BLOCK_WORDS, pattern, erased);
	erase(MARK1);
	word_program(MARK1, STAGE1);
	flash_cmd(BLOCK1, 0x20);
	flash_cmd(BLOCK1, 0xd0);
	show("erase busy polls of 8", busy_polls(8));
	power_loss();
}

static void second_run(void)
{
	survey("erase cut:", BLOCK_WORDS, erased, pattern);
	erase(BLOCK1);
	buffer_up_to_confirm(BLOCK1, old_word, 0);
	wait_ready();
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	word_program(MARK2, STAGE2);
	buffer_up_to_confirm(BLOCK1, new_word, 0);
	show("program busy polls of 2", busy_polls(2));
	power_loss();
}

static void third_run(void)
{
	survey("program cut:", BUF_WORDS, new_word, old_word);
	flash_cmd(0, 0x70);
	show("status", flash_rd(0));
	erase(BLOCK1); /* the flash works again */
	word_program(BLOCK1, 0x33333333u);
	show("programmed after the power losses", flash_rd(BLOCK1));
}

int main(void)
{
	puts_(PROBE_NAME ": start\n");
	if (flash_rd(MARK1) != STAGE1)
		first_run();
	else if (flash_rd(MARK2) != STAGE2)
		second_run();
	else
		third_run();
	puts_(PROBE_NAME ": done\n");
	return 0;
}

#endif
