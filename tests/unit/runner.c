/* Runs every registered unit test in registration order. */
#include "arch/fake.h"
#include "unit.h"

static struct unit_test *head, **tail = &head;
int unit_failures;

void unit_register(struct unit_test *t)
{
	*tail = t;
	tail = &t->next;
}

int main(void)
{
	unsigned passed = 0, failed = 0, known = 0;

	for (struct unit_test *t = head; t; t = t->next) {
		fake_reset();
		unit_failures = 0;
		t->fn();
		if (fake.counter_stuck) { /* a wait that would never have ended */
			printf("    the core waited on a counter standing still (counter_step 0)\n");
			unit_failures++;
		}
		if (t->known_flaw) {
			printf("%s %s (%s)\n", unit_failures ? "XFAIL" : "XPASS", t->name, t->known_flaw);
			if (unit_failures)
				known++;
			else
				failed++; /* fixed: make it a TEST */
			continue;
		}
		printf("%s %s\n", unit_failures ? "FAIL" : "PASS", t->name);
		if (unit_failures)
			failed++;
		else
			passed++;
	}
	printf("unit: %u passed, %u failed, %u known flaws\n", passed, failed, known);
	return failed ? 1 : 0;
}
