/* uartstorm: entry (EL1, interrupts masked: nothing is taken). */
#include "smp_start.S"
