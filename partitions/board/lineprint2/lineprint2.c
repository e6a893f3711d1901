/* lineprint2: two vCPUs of one partition print uppercase lines to the same PL011 at once. */
#define PROBE_NAME "LP"
#include "fwprobe.h"

extern char second[];

static void lines(char tag)
{
	for (uint32_t i = 0; i < 2000; i++) {
		putc_(tag);
		puts_("QWERTYUIOPASDFGHJKLZXCVBNM\n");
	}
}

void main2(void)
{
	lines('Y');
	for (;;)
		__asm__ volatile("wfi");
}

int main(void)
{
	register unsigned long x0 __asm__("x0") = 0xc4000003ul; /* CPU_ON */
	register unsigned long x1 __asm__("x1") = 1;
	register unsigned long x2 __asm__("x2") = (unsigned long)second;
	register unsigned long x3 __asm__("x3") = 0;
	__asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
	lines('X');
	for (volatile unsigned d = 0; d < 2000000; d++)
		;
	puts_("LP DONE\n");
	return 0;
}
