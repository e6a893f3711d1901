/* victim: keeps a memory pattern and a steady tick while attacker partitions run, then
 * checks the pattern and halts the system (it is the system partition in those setups). */
#include "bhtest.h"

#define PATTERN_WORDS (64 * 1024 / 4)   /* 64 KiB */
#define TICKS         50
#define TICK_MS       10

/* volatile: the check must read memory, not values the compiler remembers. */
static volatile unsigned int pattern[PATTERN_WORDS];

static unsigned int pattern_word(unsigned int i)
{
	return (i * 0x9E3779B1u) ^ 0xA5A5A5A5u;
}

static void fill_pattern(void)
{
	for (unsigned int i = 0; i < PATTERN_WORDS; i++)
		pattern[i] = pattern_word(i);
}

/* Returns the index of the first corrupted word, or -1. */
static long check_pattern(void)
{
	for (unsigned int i = 0; i < PATTERN_WORDS; i++) {
		if (pattern[i] != pattern_word(i))
			return (long)i;
	}
	return -1;
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	char detail[96] = "";

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	fill_pattern();
	for (unsigned n = 1; n <= TICKS; n++) {
		bh_sleep_ms(TICK_MS);
		bh_printf("tick %u\n", n);
	}
	long bad = check_pattern();

	if (bad >= 0)
		bh_snprintf(detail, sizeof(detail), "word %ld at %p changed to 0x%08x", bad,
			    (void *)&pattern[bad], pattern[bad]);
	bh_test_report("victim_memory_intact", bad < 0, detail);
	bh_test_report("victim_ran_50_ticks", 1, "");
	long rc = bh_halt_system();

	bh_printf("victim: halt_system failed: %ld\n", rc);
	return 0;
}
