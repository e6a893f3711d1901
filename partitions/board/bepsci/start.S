/* bepsci: vCPU 0 at the reset vector, vCPU 1 (PSCI CPU_ON) at second. */
#include "fw_start.S"
#include "fw_second.S"
