/* Internal errors: the hypervisor says what broke and stops the machine, never a silent hang. */
#include <stdarg.h>
#include "console.h"
#include "format.h"
#include "panic.h"
#include "percpu.h"

void bh_panic(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	format_v(line, sizeof(line), fmt, ap);
	va_end(ap);
	console_emergency("\n[bulkhead] PANIC: ");
	console_emergency(line);
	console_emergency("\n[bulkhead] internal error: halting the system\n");
	arch_system_off();
}
