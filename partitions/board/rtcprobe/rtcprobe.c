/* rtcprobe: a firmware image for QEMU's virt machine that exercises the PL031 real-time clock
 * (identification, control, load, match, the interrupt status and mask) and prints what it sees,
 * relative to the time it loaded, so that QEMU's own PL031 (-bios) and a Bulkhead board partition's
 * print the same lines (tests/system/test_firmware.py). Time is measured with the generic timer's
 * counter; the interrupt is observed in RIS/MIS (polled), not taken. */
#define PROBE_NAME "rtcprobe"
#include "fwprobe.h"

#define RTC 0x09010000ul
#define RTC_DR 0x00
#define RTC_MR 0x04
#define RTC_LR 0x08
#define RTC_CR 0x0c
#define RTC_IMSC 0x10
#define RTC_RIS 0x14
#define RTC_MIS 0x18
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

/* Seconds (in tenths) until RIS is set, polling for at most 5 s; 0xffffffff if it never is. */
static uint32_t tenths_until_match(void)
{
	uint64_t start = counter(), limit = 5 * frequency();
	while (counter() - start < limit)
		if (rd(RTC_RIS) & 1)
			return (uint32_t)((counter() - start) * 10 / frequency());
	return 0xffffffffu;
}

int main(void)
{
	puts_("rtcprobe: start\n");
	for (unsigned off = 0xfe0; off < 0x1000; off += 4)
		show("id", rd(off));
	show("cr", rd(RTC_CR));
	show("time of day is set", rd(RTC_DR) > 1500000000u); /* after 2017 */

	wr(RTC_LR, 1000);
	show("dr after load - 1000", rd(RTC_DR) - 1000);
	show("lr", rd(RTC_LR));
	uint64_t start = counter();
	while (counter() - start < 2 * frequency() + frequency() / 2)
		;
	uint32_t step = rd(RTC_DR) - 1000;
	show("dr 2.5 s later - 1000 is 2 or 3", step == 2 || step == 3);

	wr(RTC_CR, 0); /* the clock cannot be stopped */
	show("cr after writing 0", rd(RTC_CR));

	wr(RTC_IMSC, 1);
	wr(RTC_MR, rd(RTC_DR) + 2);
	show("mr - dr", rd(RTC_MR) - rd(RTC_DR));
	show("ris before the match", rd(RTC_RIS));
	uint32_t tenths = tenths_until_match();
	/* 1 to 2 s by the RTC; up to 3 by the counter, as a loaded host may run the RTC's timer late */
	show("match within 1 to 3 s", tenths >= 10 && tenths <= 30);
	show("ris", rd(RTC_RIS));
	show("mis", rd(RTC_MIS));
	wr(RTC_IMSC, 0);
	show("mis masked", rd(RTC_MIS));
	wr(RTC_ICR, 1);
	show("ris after clear", rd(RTC_RIS));
	puts_("rtcprobe: done\n");
	return 0;
}
