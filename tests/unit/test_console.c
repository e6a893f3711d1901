#include <string.h>
#include "arch/fake.h"
#include "console.h"
#include "fixture.h"
#include "partition.h"
#include "unit.h"

TEST(console_emits_whole_prefixed_lines)
{
	fixture_boot();
	struct vcpu *a = &partitions[0].vcpus[0];
	console_guest_write(a, "ab", 2);
	EXPECT_EQ(fake.uart_len, 0);
	console_guest_write(a, "c\nd", 3);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strcmp(fake.uart, "[alpha] abc\r\n") == 0);
}

TEST(console_lines_from_two_partitions_never_mix)
{
	fixture_boot();
	struct vcpu *a = &partitions[0].vcpus[0], *b = &partitions[1].vcpus[0];
	console_guest_write(a, "one ", 4);
	console_guest_write(b, "two ", 4);
	console_guest_write(a, "alpha\n", 6);
	console_guest_write(b, "beta\n", 5);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strcmp(fake.uart, "[alpha] one alpha\r\n[beta] two beta\r\n") == 0);
}

TEST(console_long_line_is_split_and_unprintable_replaced)
{
	char buf[CONSOLE_LINE_MAX + 3];
	fixture_boot();
	memset(buf, 'x', sizeof(buf));
	buf[0] = 0x1b;
	console_guest_write(&partitions[0].vcpus[0], buf, sizeof(buf));
	fake.uart[fake.uart_len] = 0;
	EXPECT(strncmp(fake.uart, "[alpha] ?xx", 11) == 0);
	EXPECT_EQ(fake.uart_len, strlen("[alpha] ") + CONSOLE_LINE_MAX + 2);
	console_guest_flush(&partitions[0].vcpus[0]);
	EXPECT(strstr(fake.uart, "\r\n[alpha] xxx\r\n") != NULL);
}

TEST(console_hypervisor_log_has_its_prefix)
{
	bh_log("value %u", 3u);
	fake.uart[fake.uart_len] = 0;
	EXPECT(strcmp(fake.uart, "[bulkhead] value 3\r\n") == 0);
}
