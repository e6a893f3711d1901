/* blkprobe: entry and vectors (shared with the forwarded-interrupt probes). */
#include "blk_irq_start.S"
