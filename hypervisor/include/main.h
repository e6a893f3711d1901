/* Boot entry points the architecture calls once it has a stack, a console and an MMU, and
 * the work every exit from the hypervisor to a guest goes through. */
#ifndef BULKHEAD_MAIN_H
#define BULKHEAD_MAIN_H

#include "config_tables.h"

/* On the boot core: check the tables and set up every partition. */
const struct bh_system_cfg *bh_boot_primary(void);
/* On every core, once it is ready: run its vCPUs (or idle until one is ready). */
_Noreturn void bh_enter_core(unsigned core);
/* Before returning to a guest: serve requests, reschedule if asked, deliver virtual
 * interrupts. On return, percpu.regs holds the vCPU to enter. */
void core_exit_work(void);

#endif
