/* irqrefire: the forwarded-interrupt probes' entry and vectors. */
#include "blk_irq_start.S"
