/* A PL031 real-time clock per board partition, at the board's address (QEMU virt: 0x09010000,
 * SPI 2). The time of day comes from the platform's real PL031, read once when the first
 * partition starts; from then on the seconds advance with the system counter, so every
 * partition's clock runs from the same source without touching the device again. A write of
 * the load register sets the partition's own clock. The match interrupt is evaluated whenever
 * the guest accesses the device (there is no timer behind it): a guest polling RIS or waiting
 * for the interrupt while it reads the time sees it, one that only sleeps does not. */
#include "arch/aarch64.h"
#include "arch/vmachine.h"
#include "partition.h"

#define RTC_DR 0x00
#define RTC_MR 0x04
#define RTC_LR 0x08
#define RTC_CR 0x0c
#define RTC_IMSC 0x10
#define RTC_RIS 0x14
#define RTC_MIS 0x18
#define RTC_ICR 0x1c
#define RTC_ID 0xfe0

/* PrimeCell identification of the PL031. */
static const uint8_t pl031_id[8] = { 0x31, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

static struct {
	struct spinlock lock;
	bool read;
	uint32_t seconds; /* the host's time of day ... */
	uint64_t ticks;   /* ... at this counter value */
} host;

/* The host's time of day, once: the device is in the hypervisor's device mapping. */
static void host_time(uint64_t pa, uint32_t *seconds, uint64_t *ticks)
{
	arch_spin_lock(&host.lock);
	if (!host.read) {
		host.seconds = pa ? *(volatile uint32_t *)(uintptr_t)(pa + RTC_DR) : 0;
		host.ticks = arch_counter_read();
		host.read = true;
	}
	*seconds = host.seconds;
	*ticks = host.ticks;
	arch_spin_unlock(&host.lock);
}

static uint32_t now(const struct vrtc *r)
{
	return r->base + (uint32_t)((arch_counter_read() - r->base_ticks) / arch_counter_freq());
}

/* The match interrupt, as the PL031 counts: forward, modulo 2^32. A write of the match or load
 * register arms it for when the counter next equals the match, (match - count) mod 2^32 seconds
 * ahead, which is at once when they are equal and about 136 years away when the match is behind
 * the clock (QEMU's pl031_set_alarm, the same); raised once due, kept until cleared. Comparing
 * match and count as plain numbers instead fired a match in the past at once, and one across the
 * wrap before it. */
static void arm_match(struct vrtc *r)
{
	uint32_t ahead = r->match - now(r);

	r->armed = 1;
	r->due = arch_counter_read() + (uint64_t)ahead * arch_counter_freq();
	if (!ahead) {
		r->ris = 1;
		r->armed = 0;
	}
}

static void check_match(struct partition *p, struct vrtc *r)
{
	if (r->armed && arch_counter_read() >= r->due) {
		r->ris = 1;
		r->armed = 0;
	}
	if (r->ris & r->imsc)
		vgic_raise_spi(p, p->cfg->vmachine->rtc_intid);
}

static uint32_t read_reg(const struct vrtc *r, uint64_t off)
{
	switch (off) {
	case RTC_DR: return now(r);
	case RTC_MR: return r->match;
	case RTC_LR: return r->base; /* the last value loaded */
	case RTC_CR: return r->cr;
	case RTC_IMSC: return r->imsc;
	case RTC_RIS: return r->ris;
	case RTC_MIS: return r->ris & r->imsc;
	}
	if (off >= RTC_ID && off < RTC_ID + 32)
		return pl031_id[(off - RTC_ID) / 4];
	return 0;
}

static void write_reg(struct vrtc *r, uint64_t off, uint32_t val)
{
	switch (off) {
	case RTC_MR:
		r->match = val;
		arm_match(r);
		break;
	case RTC_LR:
		r->base = val;
		r->base_ticks = arch_counter_read();
		arm_match(r); /* the clock moved: the match is that much nearer or further */
		break;
	case RTC_CR: r->cr |= val & 1; break; /* the clock cannot be stopped once started */
	case RTC_IMSC: r->imsc = val & 1; break;
	case RTC_ICR: r->ris &= ~(val & 1); break;
	}
}

bool vrtc_access(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val)
{
	struct partition *p = v->partition;
	struct vmachine *m = vmachine_of(p);

	if (size > 4 || (write && size != 4))
		return false; /* reads of any width (firmware reads the identification bytewise) */
	arch_spin_lock(&m->board_lock);
	if (write)
		write_reg(&m->rtc, off, (uint32_t)*val);
	else
		*val = read_reg(&m->rtc, off & ~3ul) >> (8 * (off & 3));
	check_match(p, &m->rtc);
	arch_spin_unlock(&m->board_lock);
	return true;
}

void vrtc_reset(struct partition *p)
{
	struct vmachine *m = vmachine_of(p);
	uint32_t seconds;
	uint64_t ticks;

	if (!p->cfg->vmachine->rtc_ipa)
		return;
	host_time(p->cfg->vmachine->rtc_host_pa, &seconds, &ticks);
	arch_spin_lock(&m->board_lock);
	m->rtc = (struct vrtc){ .base = seconds, .base_ticks = ticks, .cr = 1 };
	arch_spin_unlock(&m->board_lock);
}
