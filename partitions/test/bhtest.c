/* bhtest implementation: runs the .bh_tests table and prints verdict lines. */
#include "bhtest.h"

/* Set by part.ld around the .bh_tests output section (equal when there are no tests). */
extern const struct bh_test_case __bh_tests_start[];
extern const struct bh_test_case __bh_tests_end[];

static unsigned passed, failed;

/* State of the test currently running (name NULL: none). */
static const char *cur_name;
static int cur_failures;
static char cur_first[192];   /* "<file>:<line>: <what>" of the first failure */

static void record_failure(const char *file, int line, const char *what)
{
	if (!cur_name) {
		/* Outside any test: still visible, and counted in the summary. */
		bh_printf("bhtest: expectation failed outside a test: %s:%d: %s\n", file, line,
			  what);
		failed++;
		return;
	}
	if (cur_failures++ == 0)
		bh_snprintf(cur_first, sizeof(cur_first), "%s:%d: %s", file, line, what);
	else
		bh_printf("bhtest: %s also failed at %s:%d: %s\n", cur_name, file, line, what);
}

void bh_test_fail(const char *file, int line, const char *what)
{
	record_failure(file, line, what);
}

void bh_test_fail_eq(const char *file, int line, const char *a, const char *b, long va,
		     long vb)
{
	char what[160];

	bh_snprintf(what, sizeof(what), "%s == %s (%ld vs %ld)", a, b, va, vb);
	record_failure(file, line, what);
}

void bh_test_report(const char *name, int ok, const char *detail)
{
	if (ok) {
		passed++;
		bh_printf("BHTEST %s PASS\n", name);
	} else {
		failed++;
		bh_printf("BHTEST %s FAIL %s\n", name, detail && *detail ? detail : "(no detail)");
	}
}

static void run_one(const struct bh_test_case *t)
{
	cur_name = t->name;
	cur_failures = 0;
	t->fn();
	cur_name = 0;
	bh_test_report(t->name, cur_failures == 0, cur_first);
}

int bh_test_summary(void)
{
	bh_printf("BHTEST-SUMMARY %u passed, %u failed\n", passed, failed);
	return (int)failed;
}

int bh_test_run_all(void)
{
	for (const struct bh_test_case *t = __bh_tests_start; t != __bh_tests_end; t++)
		run_one(t);
	return bh_test_summary();
}

unsigned long long bh_test_param(const char *name)
{
	struct bh_port_info info = { 0 };

	bh_port_info(name, &info);
	return info.refresh_ns;
}
