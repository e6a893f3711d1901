/* bewake: entry (EL1, interrupts masked: WFI wakes on a pending one, taken by polling). */
#include "smp_start.S"
