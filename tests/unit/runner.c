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
	unsigned passed = 0, failed = 0;

	for (struct unit_test *t = head; t; t = t->next) {
		fake_reset();
		unit_failures = 0;
		t->fn();
		printf("%s %s\n", unit_failures ? "FAIL" : "PASS", t->name);
		if (unit_failures)
			failed++;
		else
			passed++;
	}
	printf("unit: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
