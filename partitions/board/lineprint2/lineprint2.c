/* lineprint2: two vCPUs of one partition print uppercase lines to the same PL011 at once. */
#define PROBE_NAME "LP"
#include "fwprobe.h"

extern char second[];

/* vCPU 1 sets this word in RAM (clear before it starts) when its lines are all written: vCPU 0's
 * last line must not race with them (a real UART would interleave the bytes of two CPUs too). */
#define Y_DONE ((volatile uint32_t *)0x40400000ul)

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
	*Y_DONE = 1;
	for (;;)
		__asm__ volatile("wfi");
}

int main(void)
{
	*Y_DONE = 0;
	register unsigned long x0 __asm__("x0") = 0xc4000003ul; /* CPU_ON */
	register unsigned long x1 __asm__("x1") = 1;
	register unsigned long x2 __asm__("x2") = (unsigned long)second;
	register unsigned long x3 __asm__("x3") = 0;
	__asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
	lines('X');
	while (!*Y_DONE)
		;
	for (volatile unsigned d = 0; d < 2000000; d++)
		;
	puts_("LP DONE\n");
	return 0;
}
