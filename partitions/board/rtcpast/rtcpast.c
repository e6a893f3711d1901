/* rtcpast: a firmware image for QEMU's virt machine that sets the PL031's match register where a
 * hostile or careless guest may: in the past, at the current second, across the 32-bit wrap, and
 * moves the clock (load register) onto and past the match. QEMU's PL031 raises the match
 * interrupt when the counter reaches the match value counting forward (modulo 2^32): a match in
 * the past fires only after the counter wraps, one equal to the count at once. It prints what
 * RIS shows, so that QEMU's own PL031 (-bios) and a Bulkhead board partition's print the same
 * lines (tests/system/test_emuatk.py). */
#define PROBE_NAME "rtcpast"
#include "fwprobe.h"

#define RTC 0x09010000ul
#define RTC_DR 0x00
#define RTC_MR 0x04
#define RTC_LR 0x08
#define RTC_IMSC 0x10
#define RTC_RIS 0x14
#define RTC_ICR 0x1c

static uint32_t rd(unsigned long off)
{
	return mmio_rd(RTC + off);
}

static void wr(unsigned long off, uint32_t v)
{
	mmio_wr(RTC + off, v);
}

static uint64_t counter(void)
{
	uint64_t v;
	__asm__ volatile("isb\n mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

static uint64_t frequency(void)
{
	uint64_t v;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

/* 1 if RIS is set within `tenths` tenths of a second (polled), else 0. */
static uint32_t ris_within(unsigned tenths)
{
	uint64_t start = counter(), limit = tenths * frequency() / 10;
	do {
		if (rd(RTC_RIS) & 1)
			return 1;
	} while (counter() - start < limit);
	return 0;
}

static void clear(void)
{
	wr(RTC_ICR, 1);
}

int main(void)
{
	puts_("rtcpast: start\n");
	wr(RTC_IMSC, 1);
	clear();
	wr(RTC_LR, 100000);
	wr(RTC_MR, rd(RTC_DR) - 5); /* five seconds ago: 2^32 - 5 seconds ahead */
	show("match in the past, ris within 1.5 s", ris_within(15));
	clear();
	wr(RTC_MR, rd(RTC_DR)); /* this second: at once */
	show("match now, ris at once", ris_within(0));
	clear();
	wr(RTC_LR, 0xfffffffeu); /* two seconds before the wrap */
	wr(RTC_MR, 1);           /* three seconds ahead, past the wrap */
	show("match across the wrap, ris at once", ris_within(0));
	show("match across the wrap, ris within 5 s", ris_within(50));
	clear();
	wr(RTC_MR, rd(RTC_DR) + 1000);
	wr(RTC_LR, rd(RTC_MR)); /* the clock moved onto the match: at once */
	show("clock loaded onto the match, ris at once", ris_within(0));
	clear();
	wr(RTC_MR, rd(RTC_DR) + 1000);
	wr(RTC_LR, rd(RTC_MR) + 10); /* the clock moved past the match: 2^32 - 10 seconds ahead */
	show("clock loaded past the match, ris within 1.5 s", ris_within(15));
	clear();
	wr(RTC_IMSC, 0);
	puts_("rtcpast: done\n");
	return 0;
}
