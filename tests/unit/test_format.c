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

/* lib.c's memcpy, every alignment of both ends and lengths around its word and 32-byte steps,
 * up to a 4 KiB port message: the bytes copied and nothing around them. */
TEST(memcpy_every_alignment)
{
	static unsigned char src[4096 + 16], dst[4096 + 32];
	static const size_t lens[] = { 0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 4095, 4096 };

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t so = 0; so < 8; so++)
		for (size_t d_o = 0; d_o < 8; d_o++)
			for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
				size_t n = lens[k];
				memset(dst, 0xee, sizeof(dst));
				memcpy(dst + 8 + d_o, src + so, n);
				EXPECT(memcmp(dst + 8 + d_o, src + so, n) == 0);
				for (size_t i = 0; i < 8 + d_o; i++)
					EXPECT(dst[i] == 0xee);
				for (size_t i = 8 + d_o + n; i < sizeof(dst); i++)
					EXPECT(dst[i] == 0xee);
			}
}
