/* A tiny host unit-test framework: tests register themselves, the runner prints one line per
 * test and a closing "N passed, N failed" line. */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
	struct unit_test *next;
	const char *known_flaw; /* KNOWN_FLAW: it must fail (XFAIL); passing fails the run (XPASS) */
};

void unit_register(struct unit_test *t);
extern int unit_failures; /* failures in the running test */

#define UNIT_TEST_(name, why)                                                       \
	static void test_##name(void);                                              \
	static struct unit_test unit_##name = { #name, test_##name, 0, why };      \
	__attribute__((constructor)) static void reg_##name(void)                   \
	{                                                                           \
		unit_register(&unit_##name);                                        \
	}                                                                           \
	static void test_##name(void)

#define TEST(name) UNIT_TEST_(name, 0)

/* A test that shows a known flaw, documented where `why` says: it must fail until the flaw is
 * fixed, and then be made a TEST (strict, as pytest's xfail). */
#define KNOWN_FLAW(name, why) UNIT_TEST_(name, why)

#define EXPECT(cond)                                                                \
	do {                                                                        \
		if (!(cond)) {                                                      \
			printf("    %s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
			unit_failures++;                                            \
		}                                                                   \
	} while (0)

#define EXPECT_EQ(a, b)                                                             \
	do {                                                                        \
		long long a_ = (long long)(a), b_ = (long long)(b);                 \
		if (a_ != b_) {                                                     \
			printf("    %s:%d: %s == %lld, expected %s == %lld\n",          \
			       __FILE__, __LINE__, #a, a_, #b, b_);                 \
			unit_failures++;                                            \
		}                                                                   \
	} while (0)

#endif
