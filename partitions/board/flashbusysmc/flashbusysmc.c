/* flashbusysmc: flashbusy (flashbusy/flashbusy.c) with its resets (PSCI SYSTEM_RESET) made by SMC,
 * which a Bulkhead firmware partition takes on the emulation's fast path. */
#define PROBE_NAME "flashbusysmc"
#define FW_RESET_INSN "smc #0"
#include "fwprobe.h"
#include "flashbusy.h"
