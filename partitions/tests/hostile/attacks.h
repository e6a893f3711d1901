/* The attacks of the hostile neighbour and their time windows, shared by hostile (which runs
 * them) and latvictim (which attributes each lateness sample to the attack in progress).
 *
 * Window k (k = 0 .. ATTACK_COUNT-1) runs from ATTACK_T0 + k * ATTACK_WINDOW to the next one,
 * in counter ticks since power-on (62.5 MHz on QEMU virt: 16 ns a tick). */
#ifndef HOSTILE_ATTACKS_H
#define HOSTILE_ATTACKS_H

#define ATTACK_T0     1250000ull /* 20 ms: every partition is up by then */
#define ATTACK_WINDOW 312500ull  /* 5 ms */

enum attack {
	ATTACK_QUIET,          /* the neighbour sleeps: the hypervisor's own path alone */
	ATTACK_SPIN_MASKED,    /* spins with interrupts masked, never calls the hypervisor */
	ATTACK_CONSOLE_NL,     /* BH_HC_CONSOLE_WRITE of 256 newlines, back to back; aimed */
	ATTACK_CONSOLE_MAX,    /* BH_HC_CONSOLE_WRITE of 256 printable bytes (long lines); aimed */
	ATTACK_HM_RAISE,       /* BH_HC_RAISE_EVENT, action ignore */
	ATTACK_STAGE2,         /* loads outside its memory: memory_violation, action ignore */
	ATTACK_PMU,            /* mrs pmcr_el0: trapped_instruction, action ignore */
	ATTACK_DEBUG,          /* mrs dbgbvr0_el1: trapped_instruction, action ignore */
	ATTACK_SMC,            /* smc #0: smc event, action ignore */
	ATTACK_WFI,            /* wfi with its virtual timer pending: a trap each time */
	ATTACK_WFE,            /* wfe: trapped and skipped */
	ATTACK_HYPERCALLS,     /* BH_HC_PARTITION_STATUS of itself, back to back */
	ATTACK_COUNT,
};

static const char *const attack_names[ATTACK_COUNT] = {
	"quiet", "spin_masked", "console_newlines", "console_max_write", "hm_raise",
	"stage2_fault", "pmu_trap", "debug_trap", "smc", "wfi", "wfe", "hypercall_flood",
};

#define ATTACK_END (ATTACK_T0 + ATTACK_COUNT * ATTACK_WINDOW)

/* When the victim is due: base + VICTIM_SLOT_OFFSET + k * VICTIM_SLOT_PERIOD, base being the
 * major frame start on a cyclic core (its slots; tests/system/configs/lat_cyclic.yaml) and
 * ATTACK_T0 elsewhere (its timer deadlines). */
#define VICTIM_SLOT_OFFSET 6250ull  /* 100 us */
#define VICTIM_SLOT_PERIOD 12500ull /* 200 us */
/* How long before a slot start the hypervisor decides for it (SLOT_LEAD_TICKS,
 * hypervisor/include/sched.h), and before a fixed-priority wake-up (SLOT_LEAD_TICKS and
 * FP_LEAD_PER_VCPU_TICKS for each of the core's 2 vCPUs): where a neighbour's path delays a
 * cyclic or fixed-priority victim. */
#define HYP_SLOT_LEAD_TICKS 50ull
#define HYP_FP_LEAD_TICKS 80ull

/* On an EDF core the neighbour has budget for only part of each of its periods, which start
 * when its vCPU starts: unless the victim's due instants fall where it runs, no attack lands
 * and every window measures the quiet core. There (the description gives both a sampling
 * channel `edf_phase`, tests/system/configs/lat_edf.yaml) the neighbour finds when its periods
 * start (a counter value where one started) and publishes it, and both take the base of the due
 * instants from it: the first counter value from ATTACK_T0 on that starts a neighbour's period,
 * so the victim is due VICTIM_SLOT_OFFSET into those periods (its own, of the same length,
 * started with them at boot: its deadline is the earlier one). */
#define EDF_PHASE_PORT "edf_phase"

static inline unsigned long long due_base_from_release(unsigned long long release)
{
	return ATTACK_T0 + (release + VICTIM_SLOT_PERIOD - ATTACK_T0 % VICTIM_SLOT_PERIOD) %
			   VICTIM_SLOT_PERIOD;
}

/* The attack whose window holds counter value t, or -1 outside every window. */
static inline int attack_at(unsigned long long t)
{
	if (t < ATTACK_T0 || t >= ATTACK_END)
		return -1;
	return (int)((t - ATTACK_T0) / ATTACK_WINDOW);
}

#endif
