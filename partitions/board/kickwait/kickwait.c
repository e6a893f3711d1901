/* kickwait: a bare-metal program for QEMU's virt machine with 2 CPUs, the victim of
 * tests/system/test_kickwait.py. Its CPU 0 (alone on a dedicated core) sends its CPU 1 (on a
 * fixed-priority core it shares with a lower-priority neighbour, kickstorm) an SGI every few
 * thousand ticks and waits for its acknowledgement; CPU 1 waits for it in WFI (trapped: its
 * core runs the neighbour meanwhile), with a timeout on its virtual timer (KICK_TIMEOUT) except
 * in the window KW_ATTACK_NO_TIMEOUT. The SGI wakes CPU 1 by a kick of its core from CPU 0's.
 * CPU 1 times each wake-up from the counter value CPU 0 read just before the SGI.
 *
 * At the end, CPU 0 prints one line per window (kickwin.h):
 *   kickwait: window W NAME n N max X mean M timeouts T */
#define PROBE_NAME "kickwait"
#include "kickwin.h"
#include "smp_guest.h"

#define SGI_INTID 1u

extern char secondary_entry[], stack1_top[];

struct stats {
	uint64_t n, max, sum, timeouts;
};

static struct stats stats[KW_COUNT];
static volatile uint64_t sent_at, seq, acked;
static volatile unsigned up1;

void cpu_main(unsigned cpu)
{
	gic_init_cpu(cpu, 1u << SGI_INTID | 1u << VTIMER_INTID);
	up1 = 1;
	for (;;) {
		uint64_t t0 = now();
		int w0 = kick_window_at(t0);
		if (w0 == KW_ATTACK_NO_TIMEOUT)
			__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb\n\twfi" : : : "memory");
		else
			__asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb\n\twfi"
					 : : "r"(t0 + KICK_TIMEOUT), "r"(1ul) : "memory");
		uint64_t t = now();
		uint32_t intid = (uint32_t)SYSREG_R(ICC_IAR1);
		if (intid == SGI_INTID) {
			uint64_t s = seq, lat = t - sent_at;
			int w = kick_window_at(sent_at);
			if (w >= 0) {
				stats[w].n++;
				stats[w].sum += lat;
				if (lat > stats[w].max)
					stats[w].max = lat;
			}
			acked = s;
		} else if (intid == VTIMER_INTID) {
			__asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" : : : "memory");
			int w = kick_window_at(t);
			if (w >= 0)
				stats[w].timeouts++;
		}
		if (intid < 1020)
			SYSREG_W(ICC_EOIR1, intid);
	}
}

int main(void)
{
	puts_("kickwait: start\n");
	gic_init_cpu(0, 0);
	if (smc_call(PSCI_CPU_ON, 1, (uint64_t)secondary_entry, (uint64_t)stack1_top) != 0)
		show("CPU_ON failed for", 1);
	while (!up1)
		spin_until(now() + 1000);
	puts_("kickwait: up\n");
	spin_until(KICK_T0);
	for (uint64_t k = 1;; k++) {
		uint64_t t = now();
		if (t >= KICK_END - 40000)
			break;
		sent_at = t;
		seq = k;
		__asm__ volatile("dsb sy\n\tmsr " ICC_SGI1R ", %0\n\tisb"
				 : : "r"((uint64_t)SGI_INTID << 24 | 1u << 1) : "memory");
		/* Its acknowledgement, or give up on it after 5 timeouts. */
		while (acked != k && now() - t < 5 * KICK_TIMEOUT)
			keep_turns_short(now());
		spin_until(now() + 2000 + (k * 977) % 3000);
	}
	spin_until(KICK_END + 20000);
	for (int w = 0; w < KW_COUNT; w++) {
		const struct stats *s = &stats[w];
		puts_("kickwait: window ");
		putdec((uint64_t)w);
		puts_(" ");
		puts_(kick_window_names[w]);
		puts_(" n ");
		putdec(s->n);
		puts_(" max ");
		putdec(s->max);
		puts_(" mean ");
		putdec(s->n ? s->sum / s->n : 0);
		puts_(" timeouts ");
		putdec(s->timeouts);
		puts_("\n");
	}
	__asm__ volatile("msr cntv_ctl_el0, xzr");
	puts_("kickwait: done\n");
	for (;;)
		__asm__ volatile("wfi");
}
