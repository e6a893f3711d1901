/* Prints the hypervisor's per-core trace rings in the text form of bulkhead/trace.h. */
#include "bulkhead/bulkhead.h"

#define DRAIN_BATCH 32u
/* Bounds one drain: while other cores fill a ring faster than the console carries the
 * lines, reading until the ring is empty would never end. Events left over wait for the
 * next drain. */
#define DRAIN_MAX_BATCHES 64u
/* Longest line: "BHTRACE " + 3 + 20 + 5 + 3 + 5 + 20 digits, 5 spaces and '\n'. */
#define TRACE_LINE_MAX 72u

void bh_trace_print_freq(void)
{
	bh_printf("BHTRACE-FREQ %llu\n", bh_counter_freq());
}

/* Few console writes per batch rather than one per line: each write is a hypercall, which
 * costs the caller's core time and trace events of its own. */
static void print_batch(const struct bh_trace_event *ev, unsigned n)
{
	char text[DRAIN_BATCH * TRACE_LINE_MAX];
	unsigned long len = 0;

	for (unsigned i = 0; i < n; i++)
		len += (unsigned long)bh_snprintf(text + len, sizeof(text) - len,
						  "BHTRACE %u %llu %u %u %u %llu\n",
						  ev[i].core, ev[i].time, ev[i].type,
						  ev[i].partition, ev[i].vcpu, ev[i].arg);
	for (unsigned long done = 0; done < len;) { /* in writes the hypervisor accepts */
		unsigned long n = len - done < BH_CONSOLE_MAX_WRITE ? len - done : BH_CONSOLE_MAX_WRITE;
		if (bh_console_write(text + done, n) <= 0)
			break;
		done += n;
		bh_console_drain(); /* in this partition's own time, so none of it is dropped */
	}
}

/* Stops at a short read as well as at an empty one: the caller's own core records this
 * drain's hypercalls (the reads and the console writes), so on that core "until a read
 * returns 0" might never come. Whatever arrives after a short read is left for the next
 * drain. */
long bh_trace_drain_rc(unsigned core, unsigned *count)
{
	struct bh_trace_event ev[DRAIN_BATCH];
	unsigned total = 0;
	long rc = BH_OK;

	for (unsigned b = 0; b < DRAIN_MAX_BATCHES; b++) {
		long n = bh_trace_read(core, ev, DRAIN_BATCH);

		if (n < 0) {
			rc = n;
			break;
		}
		if (n > (long)DRAIN_BATCH)  /* never trust a count beyond the buffer */
			n = DRAIN_BATCH;
		if (n > 0)
			print_batch(ev, (unsigned)n);
		total += (unsigned)n;
		if (n < (long)DRAIN_BATCH)
			break;
	}
	if (count)
		*count = total;
	return rc;
}

unsigned bh_trace_drain(unsigned core)
{
	unsigned count = 0;

	bh_trace_drain_rc(core, &count);
	return count;
}
