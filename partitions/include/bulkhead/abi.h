/* Bulkhead partition ABI: hypercall function IDs, error codes and entry conventions.
 *
 * This header is the contract between the hypervisor and every paravirtualized partition;
 * the hypervisor includes it too, so the numbers exist once. Freestanding C11, no libc.
 *
 * Calling convention (Arm SMC Calling Convention, SMC64 fast calls through HVC #0):
 *   x0 = function ID, x1..x5 = arguments;
 *   on return x0 = result (>= 0) or a BH_* error code (< 0), x1..x3 = extra results.
 * Function IDs live in the vendor-specific hypervisor service range (owning entity 6).
 */
#ifndef BULKHEAD_ABI_H
#define BULKHEAD_ABI_H

#define BH_ABI_VERSION 1

/* SMCCC: bit 31 fast call, bit 30 SMC64, bits 29:24 owning entity (6 = vendor hypervisor). */
#define BH_HC_BASE 0xC6000000u
#define BH_HC(n) (BH_HC_BASE | (n))

/* Bulkhead's calls are the SMC64 fast calls 0xC6000000..0xC600FFFF; an unused one of these
 * returns BH_UNKNOWN_HYPERCALL. Every other function ID is answered as the SMC Calling
 * Convention (Arm DEN 0028) defines, by HVC in every partition and by SMC in Linux partitions
 * (docs/hypercalls.md, "SMC Calling Convention"). */
#define BH_HC_RANGE_SIZE 0x10000u

#define BH_SMCCC_VERSION        0x80000000u /* () -> 0x10001: SMCCC 1.1 */
#define BH_SMCCC_ARCH_FEATURES  0x80000001u /* (function ID) -> 0, or BH_SMCCC_NOT_SUPPORTED */
#define BH_SMCCC_ARCH_WORKAROUND_1 0x80008000u /* not implemented: NOT_SUPPORTED */
#define BH_SMCCC_ARCH_WORKAROUND_2 0x80007fffu
#define BH_SMCCC_ARCH_WORKAROUND_3 0x80003fffu
#define BH_SMCCC_VERSION_1_1    0x10001
#define BH_SMCCC_NOT_SUPPORTED  (-1)        /* any function ID not implemented */

/* Paravirtualized time (Arm DEN 0057A), for partitions with a virtual machine: each vCPU's
 * stolen time, the time it was ready to run but not running (docs/hypercalls.md). */
#define BH_PV_TIME_FEATURES 0xC5000020u /* (BH_PV_TIME_FEATURES or _ST) -> 0 */
#define BH_PV_TIME_ST       0xC5000021u /* () -> guest address of the caller's record */
#define BH_PV_TIME_RECORD   64u         /* a record: revision 0, attributes 0, stolen ns */

/* PSCI 1.0 (Arm DEN 0022), emulated for the partition's own vCPUs. */
#define BH_PSCI_VERSION           0x84000000u
#define BH_PSCI_CPU_OFF           0x84000002u
#define BH_PSCI_CPU_ON            0xC4000003u /* also as SMC32: 0x84000003 */
#define BH_PSCI_AFFINITY_INFO     0xC4000004u /* also as SMC32: 0x84000004 */
#define BH_PSCI_MIGRATE_INFO_TYPE 0x84000006u
#define BH_PSCI_SYSTEM_OFF        0x84000008u
#define BH_PSCI_SYSTEM_RESET      0x84000009u
#define BH_PSCI_FEATURES          0x8400000Au

#define BH_HC_CONSOLE_WRITE  BH_HC(0x00) /* (buf, len) -> bytes written */
#define BH_HC_GET_IDS        BH_HC(0x01) /* () -> OK, x1 = partition id, x2 = vCPU id */
#define BH_HC_GET_TIME       BH_HC(0x02) /* (clock) -> OK, x1 = time in ns */
#define BH_HC_HALT_SELF      BH_HC(0x03) /* () -> does not return */
#define BH_HC_IDLE           BH_HC(0x04) /* () -> OK when the vCPU's virtual timer fires */
#define BH_HC_RESET_SELF     BH_HC(0x05) /* (mode) -> does not return on success */
#define BH_HC_RAISE_EVENT    BH_HC(0x06) /* (code) -> OK if the action lets the caller go on */
#define BH_HC_HALT_SYSTEM    BH_HC(0x07) /* () -> does not return; system partitions only */
/* Time and timers. */
#define BH_HC_SET_TIMER      BH_HC(0x08) /* (clock, abs_ns, interval_ns) -> OK; BH_VIRQ_TIMER at expiry */
/* Interrupts (paravirtual API; the GIC CPU interface itself is virtualized by hardware). */
#define BH_HC_IRQ_CTL        BH_HC(0x09) /* (op, virq) -> OK */
/* vCPU services on the caller's own partition. */
#define BH_HC_VCPU_CTL       BH_HC(0x0a) /* (op, vcpu, entry) -> OK */
#define BH_HC_VCPU_STATUS    BH_HC(0x0b) /* (vcpu) -> OK, x1 = state, x2 = exec ns */
/* Real-time reporting. */
#define BH_HC_DEADLINE_MISS  BH_HC(0x0c) /* (info) -> health-monitor event deadline_miss */
/* System partition services. */
#define BH_HC_PARTITION_CTL  BH_HC(0x0d) /* (op, partition, mode) -> OK */
#define BH_HC_PARTITION_STATUS BH_HC(0x0e) /* (partition, buf) -> OK, fills bh_partition_status */
#define BH_HC_PLAN_SWITCH    BH_HC(0x0f) /* (plan, when) -> OK */
#define BH_HC_PLAN_STATUS    BH_HC(0x10) /* () -> OK, x1 = current, x2 = next, x3 = major frames
					  * done, x4 = start of the current major frame (ns) */
#define BH_HC_TRACE_READ     BH_HC(0x11) /* (core, buf, max) -> events copied (oldest first) */
/* Ports and shared memory (docs/ports.md). Names are passed as (pointer, length), no NUL. */
#define BH_HC_SAMPLING_PORT_CREATE BH_HC(0x12) /* (name, len, max_size, direction, refresh_ns)
						* -> descriptor; NO_ACTION, x1 = descriptor if open */
#define BH_HC_SAMPLING_WRITE BH_HC(0x13) /* (desc, buf, size) -> OK */
#define BH_HC_SAMPLING_READ  BH_HC(0x14) /* (desc, buf, size) -> bytes copied, x1 = flags,
					  * x2 = message length */
#define BH_HC_QUEUING_PORT_CREATE BH_HC(0x15) /* (name, len, max_size, direction, max_messages)
					       * -> descriptor; NO_ACTION, x1 = descriptor if open */
#define BH_HC_QUEUING_SEND   BH_HC(0x16) /* (desc, buf, size) -> OK */
#define BH_HC_QUEUING_RECEIVE BH_HC(0x17) /* (desc, buf, size) -> bytes copied, x1 = message length */
#define BH_HC_PORT_STATUS    BH_HC(0x18) /* (desc, buf) -> OK, fills bh_port_status */
#define BH_HC_PORT_INFO      BH_HC(0x19) /* (name, len, buf) -> OK, fills bh_port_info */
#define BH_HC_PORT_READY     BH_HC(0x1a) /* () -> OK, x1 = ready ports (bit = descriptor),
					  * x2 = doorbells rung since the last call (bit = region) */
#define BH_HC_SHM_INFO       BH_HC(0x1b) /* (name, len, buf) -> region id, fills bh_shm_info */
#define BH_HC_SHM_DOORBELL   BH_HC(0x1c) /* (region) -> OK: BH_VIRQ_DOORBELL in the other members */
#define BH_HC_CONSOLE_READ   BH_HC(0x1d) /* (buf, max) -> bytes read (0: none); the partition
					  * takes console input from its first call on */
#define BH_HC_QUEUING_RECEIVE_WAIT BH_HC(0x1e) /* (desc, buf, size) -> as RECEIVE; with the queue
					       * empty, blocks until a message or an interrupt
					       * (then BH_NOT_AVAILABLE) */
/* Console output and the health monitor (docs/hypercalls.md). */
#define BH_HC_CONSOLE_FLUSH  BH_HC(0x1f) /* () -> bytes of the caller's output still queued */
#define BH_HC_HM_READ        BH_HC(0x20) /* (buf, max) -> log entries copied (oldest first,
					  * removed), x1 = entries lost since the last read;
					  * system partitions only */
#define BH_HC_HM_STATUS      BH_HC(0x21) /* (partition, buf) -> OK, fills bh_hm_status */
#define BH_HC_HM_TAKE        BH_HC(0x22) /* (buf) -> OK, fills bh_hm_log_entry with the event
					  * propagated to the calling vCPU (BH_VIRQ_HM) and
					  * clears it; NOT_AVAILABLE if none */
/* Posted receive buffers (docs/ports.md, "Posted receive buffers"). */
#define BH_HC_QUEUING_RECEIVE_POST BH_HC(0x23) /* (desc, buf, size, status) -> as RECEIVE with a
					       * message queued; with the queue empty the buffer
					       * is posted (BH_NOT_AVAILABLE): the next send copies
					       * into it and writes *status (BH_POST_DONE | ...) */
#define BH_HC_QUEUING_RECEIVE_CANCEL BH_HC(0x24) /* (desc) -> OK: the post withdrawn, untouched;
						 * NO_ACTION: none (the status word tells) */
#define BH_HC_COUNT          0x25

/* The status word of a posted buffer (8 bytes, 8-aligned, written by the hypervisor): 0 while
 * posted; once a message went into the buffer, BH_POST_DONE | its length << 32 | bytes copied. */
#define BH_POST_DONE (1ull << 63)
#define BH_POST_BYTES(s)  ((unsigned)((s) & 0xffffffffu))
#define BH_POST_LENGTH(s) ((unsigned)(((s) >> 32) & 0x7fffffffu))

/* Error codes (XtratuM numbering). */
#define BH_OK                  0
#define BH_NO_ACTION          (-1)
#define BH_UNKNOWN_HYPERCALL  (-2)
#define BH_INVALID_PARAM      (-3)
#define BH_PERM_ERROR         (-4)
#define BH_INVALID_CONFIG     (-5)
#define BH_INVALID_MODE       (-6)
#define BH_NOT_AVAILABLE      (-7)
#define BH_OP_NOT_ALLOWED     (-8)

/* BH_HC_GET_TIME / BH_HC_SET_TIMER clocks. */
#define BH_CLOCK_HW   0 /* wall clock: system counter since power-on, in ns */
#define BH_CLOCK_EXEC 1 /* execution clock: ns the calling vCPU has run since its partition started */

/* Virtual interrupt numbers the hypervisor injects (PPIs of the virtual GIC). */
#define BH_VIRQ_SLOT_START  20 /* a cyclic slot with notify began for this vCPU */
#define BH_VIRQ_TIMER       21 /* the BH_HC_SET_TIMER timer expired */
#define BH_VIRQ_PLAN_SWITCH 22 /* a new cyclic plan took effect */
/* Ports and doorbells, in vCPU 0 of the partition concerned. 18 and 19, not 23 and 24: QEMU's
 * virt board gives PPI 23 to the PMU and 25 to the GIC maintenance interrupt, which a Linux
 * guest's device tree may name; 16..19 are free everywhere. */
#define BH_VIRQ_HM          16 /* a health-monitor event with action propagate (BH_HC_HM_TAKE) */
#define BH_VIRQ_CONSOLE     17 /* console input arrived (see BH_HC_CONSOLE_READ) */
#define BH_VIRQ_DOORBELL    18 /* a member of a shared-memory region rang its doorbell */
#define BH_VIRQ_PORT        19 /* a port became ready (see BH_HC_PORT_READY) */
#define BH_VIRQ_VTIMER      27 /* the EL1 virtual timer (architectural PPI) */
/* The same notifications for a Linux partition: edges on lines of its event GPIO
 * (a PL061, "bulkhead,events" in its device tree), which user space waits for. */
#define BH_EVENT_LINE_PORT     0
#define BH_EVENT_LINE_DOORBELL 1
#define BH_VIRQ_MAX         288 /* virtual INTIDs 0..BH_VIRQ_MAX-1 */

/* BH_HC_IRQ_CTL operations. All virtual interrupts start enabled. */
#define BH_IRQ_ENABLE  0
#define BH_IRQ_DISABLE 1

/* BH_HC_VCPU_CTL operations and vCPU states (BH_HC_VCPU_STATUS x1). */
#define BH_VCPU_START   0 /* start a halted vCPU at entry (0 = the partition entry) */
#define BH_VCPU_SUSPEND 1 /* stop scheduling it until resumed */
#define BH_VCPU_RESUME  2
#define BH_VCPU_HALT    3 /* stop it; only START brings it back */
#define BH_VCPU_STATE_HALTED    0 /* not started, or halted */
#define BH_VCPU_STATE_READY     1 /* runnable: running or waiting for its core */
#define BH_VCPU_STATE_IDLE      2 /* waiting in BH_HC_IDLE for an interrupt */
#define BH_VCPU_STATE_SUSPENDED 3

/* BH_HC_PARTITION_CTL operations (system partitions only) and partition states. */
#define BH_PARTITION_SUSPEND 0
#define BH_PARTITION_RESUME  1
#define BH_PARTITION_HALT    2
#define BH_PARTITION_RESTART 3 /* mode: BH_RESET_COLD or BH_RESET_WARM */
#define BH_PARTITION_STATE_RUNNING   0
#define BH_PARTITION_STATE_HALTED    1
#define BH_PARTITION_STATE_SUSPENDED 2

/* BH_HC_PLAN_SWITCH: when the new plan takes effect. */
#define BH_PLAN_AT_MAJOR_FRAME_END 0
#define BH_PLAN_NOW                1

/* BH_HC_RESET_SELF modes. */
#define BH_RESET_COLD 0 /* reload the image from the boot image, then start at the entry */
#define BH_RESET_WARM 1 /* keep memory, start again at the entry */

/* Largest buffer one console write accepts; longer writes get BH_INVALID_PARAM. Small, because
 * the hypervisor is not preemptible: it bounds how long a write can hold the caller's core past
 * the end of its slot. */
#define BH_CONSOLE_MAX_WRITE 256u

/* Health monitor. Event numbers are those of the description's `health` keys, in the order of
 * docs/configuration.md (memory_violation 0, trapped_instruction 1, smc 2, partition_error 3,
 * internal_error 4, budget_overrun 5, deadline_miss 6); actions likewise (ignore 0,
 * halt_partition 1, cold_restart 2, halt_system 3, suspend 4, warm_restart 5, propagate 6). */
#define BH_HM_EVENT_SLOTS  8u  /* entries of bh_hm_status.counts; events beyond the last are 0 */
#define BH_HM_LOG_READ_MAX 16u /* entries one BH_HC_HM_READ copies at most */

/* Ports (docs/ports.md). Kinds equal enum bh_channel_kind of the configuration tables. */
#define BH_SAMPLING_PORT    0
#define BH_QUEUING_PORT     1
#define BH_SOURCE_PORT      0
#define BH_DESTINATION_PORT 1
#define BH_PORT_NAME_MAX    31u /* characters of a port or shared-memory region name */
#define BH_MSG_VALID        1u  /* read flag: the sampling message is within its refresh period */
/* Shared-memory rights (bh_shm_info.rights), equal to the area flags of the tables. */
#define BH_SHM_READ  1u
#define BH_SHM_WRITE 2u
#define BH_SHM_EXEC  4u

/* Filled by BH_HC_PARTITION_STATUS. */
#ifndef __ASSEMBLER__
struct bh_partition_status {
	unsigned int state;          /* BH_PARTITION_STATE_* */
	unsigned int restarts;
	unsigned long long exec_ns;  /* execution time of all its vCPUs since it last started */
	unsigned int vcpu_count;
	int current_slot;            /* index of the cyclic slot running one of its vCPUs, or -1 */
	unsigned long long hm_events;
};

/* One health-monitor event: an entry of the log (BH_HC_HM_READ) or a propagated event
 * (BH_HC_HM_TAKE). */
struct bh_hm_log_entry {
	unsigned long long time_ns;  /* wall clock when it was raised */
	unsigned long long address;  /* faulting guest address, or the code raised */
	unsigned long long pc;
	unsigned int partition;
	unsigned int vcpu;
	unsigned int event;          /* see BH_HM_EVENT_SLOTS */
	unsigned int action;         /* what was done */
};

/* Filled by BH_HC_HM_STATUS for one partition. Counts are never lost (64-bit, never reset). */
struct bh_hm_status {
	unsigned long long events;                    /* all its events since boot */
	unsigned long long counts[BH_HM_EVENT_SLOTS]; /* per event */
	unsigned long long not_printed;               /* events whose line was rate-limited away */
	unsigned long long console_lost;              /* bytes of its console output dropped */
	unsigned long long log_lost;                  /* system-wide: log entries overwritten */
	unsigned int log_pending;                     /* system-wide: entries waiting in the log */
	unsigned int reserved;
};

/* Filled by BH_HC_PORT_STATUS. */
struct bh_port_status {
	unsigned long long timestamp_ns; /* sampling: when the current message was written (0: never) */
	unsigned int messages;  /* queuing: messages in the queue; sampling: 1 once written */
	unsigned int last_size; /* sampling: length of the current message; queuing: of the oldest */
	unsigned int flags;     /* BH_MSG_VALID: the sampling message is within its refresh period */
	unsigned int reserved;
};

/* Filled by BH_HC_PORT_INFO: the configuration of one of the caller's ports. */
struct bh_port_info {
	unsigned int kind;             /* BH_SAMPLING_PORT or BH_QUEUING_PORT */
	unsigned int direction;        /* BH_SOURCE_PORT or BH_DESTINATION_PORT */
	unsigned int max_message_size;
	unsigned int max_messages;     /* queuing: the queue depth; sampling: 1 */
	unsigned long long refresh_ns; /* sampling: validity of a message; queuing: 0 */
	int descriptor;                /* its descriptor if the caller opened it, else -1 */
	unsigned int reserved;
};

/* Hypercalls from Linux user space (docs/ports.md, "From Linux"): a process puts the call in a
 * block in its own memory and stores the block's address (8-byte aligned, one 64-bit store) into
 * BH_CALL_PAGE_BLOCK of the hypercall page, mapped through /dev/mem; the results replace x0..x7.
 * Only GET_IDS, GET_TIME and the port and shared-memory calls pass. */
#define BH_CALL_PAGE_BLOCK  0x00 /* write: the block's address in the caller's address space */
#define BH_CALL_PAGE_STATUS 0x08 /* read: BH_OK, or BH_INVALID_PARAM if the block was unreadable */
#define BH_CALL_PAGE_ID     0x10 /* read: BH_CALL_PAGE_MAGIC */
#define BH_CALL_PAGE_MAGIC  0x31304c4c41434842ull /* "BHCALL01" */
struct bh_mmio_call {
	unsigned long long x[8]; /* in: x0 = function ID, x1..x5 = arguments; out: results */
};

/* Filled by BH_HC_SHM_INFO: one shared-memory region as the caller maps it. */
struct bh_shm_info {
	unsigned long long guest_address;
	unsigned long long size;
	unsigned int rights;   /* BH_SHM_READ | BH_SHM_WRITE | BH_SHM_EXEC */
	unsigned int doorbell; /* 1 if members can ring each other (BH_HC_SHM_DOORBELL) */
};
#endif

/* Entry conventions: vCPU 0 starts at the partition entry at EL1h, MMU off, DAIF masked;
 * other vCPUs stay halted until vCPU 0 starts them with BH_HC_VCPU_CTL. Registers:
 *   x0 = vCPU id,
 *   x1 = boot kind (BH_BOOT_*),
 *   x2 = number of times the partition has been restarted since the system booted,
 *   x3 = who asked for the last restart (BH_RESTART_*). */
#define BH_BOOT_COLD          0 /* first start after system boot */
#define BH_BOOT_COLD_RESTART  1 /* memory reloaded */
#define BH_BOOT_WARM_RESTART  2 /* memory kept */

#define BH_RESTART_NONE             0 /* system boot: no restart yet */
#define BH_RESTART_SELF             1 /* BH_HC_RESET_SELF (or PSCI SYSTEM_RESET) */
#define BH_RESTART_HM               2 /* the health monitor's configured action */
#define BH_RESTART_SYSTEM_PARTITION 3 /* BH_HC_PARTITION_CTL of a system partition */

#endif
