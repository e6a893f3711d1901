/* Last-resort handling of EL1 exceptions and of main returning.
 *
 * IRQs at EL1h go to the interrupt path (irq.c). Any other exception that reaches EL1 is
 * a bug in the partition, which has no recovery code: report it, tell the health monitor,
 * stop.
 */
#include "bulkhead/bulkhead.h"
#include "crt_asm.h"

_Static_assert(BH_ASM_HC_CONSOLE_WRITE == BH_HC_CONSOLE_WRITE, "crt_asm.h out of sync");
_Static_assert(BH_ASM_HC_HALT_SELF == BH_HC_HALT_SELF, "crt_asm.h out of sync");

/* Event code raised for an unhandled EL1 exception: 0xE0000000 | ESR_EL1.EC. */
#define BH_EXC_EVENT_BASE 0xE0000000ul
#define ESR_EC(esr) (((esr) >> 26) & 0x3ful)

/* Vector index 4 is "synchronous, current EL, SP_ELx": the only kind expected here. */
#define VECTOR_SYNC_EL1H 4

/* One flag per vCPU (defined in crt0.S, cleared on every entry) so a fault inside the
 * reporting path cannot recurse forever. */
extern volatile unsigned char bh_exc_nesting[BH_PART_MAX_VCPUS];

void bh_unhandled_exception(unsigned long vector, unsigned long esr, unsigned long elr,
			    unsigned long far, unsigned long vcpu);
_Noreturn void bh_crt_main_returned(int code);

static const char *const vector_names[16] = {
	"sync EL1t", "IRQ EL1t", "FIQ EL1t", "SError EL1t",
	"sync EL1h", "IRQ EL1h", "FIQ EL1h", "SError EL1h",
	"sync lower-EL64", "IRQ lower-EL64", "FIQ lower-EL64", "SError lower-EL64",
	"sync lower-EL32", "IRQ lower-EL32", "FIQ lower-EL32", "SError lower-EL32",
};

_Noreturn void bh_unhandled_exception(unsigned long vector, unsigned long esr,
				      unsigned long elr, unsigned long far, unsigned long vcpu)
{
	if (vcpu < BH_PART_MAX_VCPUS) {
		if (bh_exc_nesting[vcpu])
			bh_halt_self();	/* faulted while reporting: stop quietly */
		bh_exc_nesting[vcpu] = 1;
	}
	/* ESR/FAR are only meaningful for synchronous exceptions; name the others. */
	if (vector != VECTOR_SYNC_EL1H)
		bh_printf("unexpected %s exception (vector %lu)\n",
			  vector_names[vector & 15], vector);
	bh_printf("unhandled exception: ESR=0x%lx ELR=0x%lx FAR=0x%lx\n", esr, elr, far);
	bh_raise_event(BH_EXC_EVENT_BASE | ESR_EC(esr));
	bh_halt_self();
}

_Noreturn void bh_crt_main_returned(int code)
{
	(void)code;
	bh_halt_self();
}
