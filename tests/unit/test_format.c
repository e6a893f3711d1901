#include <string.h>
#include "format.h"
#include "unit.h"

TEST(format_conversions)
{
	char b[128];
	format(b, sizeof(b), "%d %u %x %lx %s %c %% %i", -42, 7u, 0xbeefu, 0x123456789ul, "str",
	       'z', 0);
	EXPECT(strcmp(b, "-42 7 beef 123456789 str z % 0") == 0);
}

TEST(format_width_and_padding)
{
	char b[64];
	const char *volatile none = 0;
	format(b, sizeof(b), "[%08lx][%3u][%02u][%s]", 0xabcul, 5u, 123u, none);
	EXPECT(strcmp(b, "[00000abc][  5][123][(null)]") == 0);
}

TEST(format_truncates_and_terminates)
{
	char b[8];
	size_t n = format(b, sizeof(b), "%s", "0123456789");
	EXPECT_EQ(n, 7);
	EXPECT(strcmp(b, "0123456") == 0);
}

TEST(format_extremes)
{
	char b[64];
	format(b, sizeof(b), "%ld %lu", (long)-9223372036854775807L - 1, 18446744073709551615ul);
	EXPECT(strcmp(b, "-9223372036854775808 18446744073709551615") == 0);
}
