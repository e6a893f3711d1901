/* Short emulator turns for the partitions that keep a lock busy from several cores (qstorm,
 * qstarve): while a vCPU spins or calls, it keeps its virtual timer armed, masked, a little
 * ahead. Under -icount QEMU 7.2 runs the cores in turn, each until the next timer deadline of
 * any core, and with no deadline near a busy core ran long turns after another core's timer
 * fired (as lockstorm, partitions/board/lockstorm). After bhtest.h. */
#ifndef HOSTILE_TURNS_H
#define HOSTILE_TURNS_H

#define TURN_TICKS 16ull

static inline unsigned long long now(void)
{
	return bh_counter();
}

/* The masked deadline at `at`: the emulator's turn ends there. */
static inline void turn_ends_at(unsigned long long at)
{
	__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1"
			 : : "r"(at), "r"(3ul) : "memory");
}

static inline void keep_turns_short(unsigned long long t)
{
	turn_ends_at(t + TURN_TICKS);
}

static inline void turns_off(void)
{
	__asm__ volatile("msr cntv_ctl_el0, xzr");
}

static inline void spin_until(unsigned long long t)
{
	for (unsigned long long n; (n = now()) < t;)
		keep_turns_short(n);
}

#endif
