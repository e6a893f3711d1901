/* bhtest: a tiny in-partition test framework (libbhtest.a, test partitions only).
 *
 *   BH_TEST(name) { BH_EXPECT(x > 0); BH_EXPECT_EQ(rc, BH_OK); }
 *
 * BH_TEST registers {name, function} in section .bh_tests; bh_test_run_all() runs them in
 * link order and prints one verdict line per test, then a summary:
 *   BHTEST <name> PASS
 *   BHTEST <name> FAIL <file>:<line>: <what>
 *   BHTEST-SUMMARY <p> passed, <f> failed
 * Expectations record the first failure and let the test continue; later failures of the
 * same test are printed as "bhtest: ..." detail lines before the verdict.
 * Test names must match [A-Za-z0-9_]+. Tests run on one vCPU: the state is not shared-safe.
 */
#ifndef BULKHEAD_BHTEST_H
#define BULKHEAD_BHTEST_H

#include "bulkhead/bulkhead.h"

struct bh_test_case {
	const char *name;
	void (*fn)(void);
};

#define BH_TEST(name)                                                                    \
	static void bh_test_fn_##name(void);                                             \
	static const struct bh_test_case bh_test_rec_##name                              \
		__attribute__((used, section(".bh_tests"), aligned(8))) = {              \
			#name, bh_test_fn_##name                                         \
		};                                                                       \
	static void bh_test_fn_##name(void)

#define BH_EXPECT(cond)                                                                  \
	do {                                                                             \
		if (!(cond))                                                             \
			bh_test_fail(__FILE__, __LINE__, #cond);                         \
	} while (0)

/* Both sides are evaluated once and compared (and printed) as signed long. */
#define BH_EXPECT_EQ(a, b)                                                               \
	do {                                                                             \
		long bh_a_ = (long)(a);                                                  \
		long bh_b_ = (long)(b);                                                  \
		if (bh_a_ != bh_b_)                                                      \
			bh_test_fail_eq(__FILE__, __LINE__, #a, #b, bh_a_, bh_b_);       \
	} while (0)

/* Runs every BH_TEST, prints verdicts and the summary; returns the number of failures
 * (including earlier bh_test_report failures). */
int bh_test_run_all(void);

/* Records and prints a verdict produced outside a BH_TEST body (e.g. after a restart). */
void bh_test_report(const char *name, int ok, const char *detail);

/* Prints BHTEST-SUMMARY for everything recorded so far; returns the failure count.
 * The counters live in .bss, so they survive a warm restart but not a cold one. */
int bh_test_summary(void);

/* A test parameter the description passes as the refresh period (ns) of the sampling port
 * `name` (0 if there is no such port). */
unsigned long long bh_test_param(const char *name);

/* Used by the macros. */
void bh_test_fail(const char *file, int line, const char *what);
void bh_test_fail_eq(const char *file, int line, const char *a, const char *b, long va,
		     long vb);

#endif
