/* Controls and records of the fake architecture, for host unit tests. The register frame
 * (arch/regs.h) is the AArch64 one: the host tests find it on their include path. */
#ifndef FAKE_ARCH_H
#define FAKE_ARCH_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

struct vcpu;

#define FAKE_RAM_BASE 0x42000000ul
#define FAKE_RAM_SIZE (8ul << 20)

/* Why control left core code through a noreturn arch call. */
enum fake_exit { FAKE_NONE, FAKE_RESUMED, FAKE_IDLED, FAKE_SYSTEM_OFF };

#define FAKE_STILL_READS 100000u

struct fake_state {
	unsigned core;               /* the core this test runs on */
	uint64_t counter;
	uint64_t counter_step;       /* added at every read: time passes while a core waits */
	/* A wait for an instant (a lead's, sched.c wait_until) never ends with counter_step 0: after
	 * FAKE_STILL_READS reads of a counter standing still, each read adds a tick, and this is
	 * set for the runner to fail the test (it hung the whole run before). */
	bool counter_stuck;
	uint64_t still_at, still_reads;
	bool guest_mmu_fault;        /* va -> ipa translation fails */
	bool vtimer_fired;           /* the loaded vCPU's virtual timer condition holds */
	uint64_t vtimer_deadline;    /* what switched-out vCPUs' virtual timers say */
	uint64_t timer;              /* the hypervisor timer deadline last programmed */
	unsigned saves, loads, flushes, detaches;
	void (*relax_hook)(void);    /* runs in cross-core wait loops: plays the other cores */
	/* Attack hooks: play another core at a chosen instant inside a core's own work. */
	void (*release_hook)(struct vcpu *v); /* inside arch_vcpu_release */
	void (*irq_release_hook)(unsigned intid); /* inside arch_irq_release */
	void (*counter_hook)(void);  /* at every arch_counter_read */
	void (*switch_hook)(void);   /* at every arch_vcpu_switch, after it */
	void (*lock_hook)(void);     /* at every arch_spin_lock */
	unsigned held_lock_takes;    /* arch_spin_lock of a lock held: a wait on hardware (one core: a
				      * hook playing another core took it while the first held it) */
	void (*copy_hook)(void);     /* at every arch_phys_to_ptr: inside guest copies */
	char uart[65536];
	unsigned uart_len;
	char uart_input[256];        /* bytes given to partitions' emulated UARTs */
	unsigned uart_input_len;
	unsigned kicks[8];
	uint64_t reset_entry, reset_args[4];
	unsigned resets;
	unsigned releases, stage2_flushes;
	bool irq_pending;            /* a physical interrupt waits for this core */
	unsigned irq_released[512];  /* arch_irq_release calls per INTID */
	unsigned irq_core[512];      /* the core arch_irq_move last sent each INTID to */
	enum fake_exit exit;
	jmp_buf escape;              /* where noreturn arch calls land */
};

extern struct fake_state fake;
extern uint8_t fake_ram[FAKE_RAM_SIZE];

void fake_reset(void);

/* Run code that may leave through a noreturn arch call; fake.exit then says how it left. */
#define FAKE_RUN(stmt)                              \
	do {                                        \
		fake.exit = FAKE_NONE;              \
		if (setjmp(fake.escape) == 0) {     \
			stmt;                       \
		}                                   \
	} while (0)

#endif
