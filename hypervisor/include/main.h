/* Boot entry points the architecture calls once it has a stack, a console and an MMU. */
#ifndef BULKHEAD_MAIN_H
#define BULKHEAD_MAIN_H

#include "config_tables.h"

/* On the boot core: check the tables and set up every partition. */
const struct bh_system_cfg *bh_boot_primary(void);
/* On every core, once it is ready: run its vCPU or idle. */
_Noreturn void bh_enter_core(unsigned core);

#endif
