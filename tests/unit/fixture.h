/* The system description the unit tests boot: two partitions, one with two vCPUs. */
#ifndef FIXTURE_H
#define FIXTURE_H

#include "config_tables.h"

#define ALPHA_RAM_PHYS 0x42000000ul /* FAKE_RAM_BASE */
#define ALPHA_RAM_IPA 0x40000000ul
#define ALPHA_RAM_SIZE 0x100000ul
#define ALPHA_DEV_IPA 0x0a000000ul
#define BETA_RAM_PHYS 0x42200000ul
#define SEG_TEXT "segment-data"
#define FIXTURE_STAGE2_PAGES 8u /* exactly what the fixture needs (fixture.c) */

extern struct bh_partition_cfg fixture_partitions[2];
/* Boot the fixture: partition_init_all on a clean fake machine. */
void fixture_boot(void);
struct vcpu;
/* Pretend v is running on `core`, and the test executes on that core. */
void fixture_run(unsigned core, struct vcpu *v);
/* Play `core` serving the requests posted to its vCPUs, in their own time or its spare time
 * (sched.c decides when; these tests are about what serving does). */
void fixture_serve(unsigned core);
/* Everything queued on the console written out; returns the fake UART's text so far. */
const char *fixture_console(void);

#endif
