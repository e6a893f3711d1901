/* Trace events: per-core rings in the hypervisor, read by system partitions with
 * BH_HC_TRACE_READ and printed as `BHTRACE` lines for `bulkhead trace`. */
#ifndef BULKHEAD_TRACE_H
#define BULKHEAD_TRACE_H

#define BH_TRACE_SLOT_START   1 /* arg = slot index | plan << 16 */
#define BH_TRACE_SLOT_END     2 /* arg = slot index | plan << 16 */
#define BH_TRACE_VCPU_SWITCH  3 /* partition/vcpu = the vCPU now running (0xff/0xffff: idle) */
#define BH_TRACE_HYPERCALL    4 /* arg = call number (function ID & 0xffff) */
#define BH_TRACE_VIRQ         5 /* arg = virtual INTID injected */
#define BH_TRACE_HM_EVENT     6 /* arg = event | action << 8 */
#define BH_TRACE_PLAN_SWITCH  7 /* arg = new plan index */
#define BH_TRACE_BUDGET_EXHAUSTED 8 /* an EDF vCPU ran out of budget */
#define BH_TRACE_HYP_TIMER    9 /* the core's hypervisor timer interrupt (a scheduling tick) */

#define BH_TRACE_IDLE_PARTITION 0xffu
#define BH_TRACE_IDLE_VCPU      0xffffu

#ifndef __ASSEMBLER__
struct bh_trace_event {
	unsigned long long time;   /* system counter ticks (CNTPCT), see CNTFRQ for the rate */
	unsigned short type;       /* BH_TRACE_* */
	unsigned char core;
	unsigned char partition;   /* partition id, or BH_TRACE_IDLE_PARTITION */
	unsigned short vcpu;       /* vCPU index, or BH_TRACE_IDLE_VCPU */
	unsigned short reserved;
	unsigned long long arg;
};

_Static_assert(sizeof(struct bh_trace_event) == 24, "trace event layout");
#endif

/* Text form, one event per line, for logs and `bulkhead trace`:
 *   BHTRACE-FREQ <counter Hz>
 *   BHTRACE <core> <time ticks> <type> <partition> <vcpu> <arg>     (all decimal)
 */

#endif
