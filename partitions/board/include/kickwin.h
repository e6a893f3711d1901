/* The windows kickwait (the victim) and kickstorm (the neighbour) share
 * (tests/system/test_kickwait.py). Window w runs from KICK_T0 + w * KICK_WINDOW to the next one,
 * in counter ticks since power-on (62.5 MHz on QEMU virt). */
#ifndef BOARD_KICKWIN_H
#define BOARD_KICKWIN_H

#define KICK_T0 1250000ull    /* 20 ms: both partitions are up by then */
#define KICK_WINDOW 312500ull /* 5 ms */

enum kick_window {
	KW_TRAPS_ALONE,   /* kickstorm's CPU 0 writes GICD on the victim's core, nobody else */
	KW_STORM_ALONE,   /* its CPUs 1-2 storm its lock, CPU 0 spins in the guest (no trap) */
	KW_ATTACK,        /* both: CPU 0's writes wait for the lock on the victim's core */
	KW_ATTACK_NO_TIMEOUT, /* the same, the victim waiting with no timeout of its own */
	KW_COUNT,
};

static const char *const kick_window_names[KW_COUNT] = {
	"traps_alone", "storm_alone", "attack", "attack_no_timeout",
};

#define KICK_END (KICK_T0 + KW_COUNT * KICK_WINDOW)

static inline int kick_window_at(unsigned long long t)
{
	if (t < KICK_T0 || t >= KICK_END)
		return -1;
	return (int)((t - KICK_T0) / KICK_WINDOW);
}

/* The victim's timeout while it waits for the SGI (its virtual timer): its core's next instant,
 * the timer a trap of the neighbour on that core gives up at. */
#define KICK_TIMEOUT 40000ull
#define TURN_TICKS 16ull /* a masked virtual timer this far ahead: short turns under -icount */

#endif
