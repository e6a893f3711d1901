/* The virtual machine an unmodified guest (Linux) sees on AArch64: a GICv3 distributor and
 * redistributors emulated by trapping their MMIO, the GIC CPU interface through the hardware
 * virtual interface, PSCI through SMC, and a PL011. Paravirtual partitions have none of it. */
#ifndef AARCH64_VMACHINE_H
#define AARCH64_VMACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include "arch.h"
#include "config_tables.h"
#include "bulkhead/abi.h"

#define VGIC_IRQS BH_VIRQ_MAX /* INTIDs 0..287: 16 SGIs, 16 PPIs, 256 SPIs */
#define VGIC_WORDS (VGIC_IRQS / 32)
#define VGIC_PARAVIRT_PRIORITY 0xa0 /* every virtual interrupt of a paravirtual partition */
/* vCPUs of one partition: its redistributors, SGI targets and call states are indexed by vCPU.
 * A partition has at most one vCPU per core (the tool's per-partition limit, abi.MAX_VCPUS);
 * arch_partition_reset checks it. */
#define VMACHINE_MAX_VCPUS BH_MAX_CORES
#define VUART_RX_SIZE 1024u   /* received bytes waiting for the guest; more are dropped (and
                               * reported, console.c): with 256, one run of an 830-byte line
                               * typed just after Linux's boot dropped 229 */

/* One redistributor: the private interrupts (SGIs, PPIs) of one vCPU. */
struct vgic_redist {
	uint32_t enabled;
	uint32_t group;
	uint32_t config[2];   /* GICR_ICFGR0/1: edge or level per interrupt */
	uint8_t priority[32];
	uint32_t waker;       /* GICR_WAKER.ProcessorSleep */
};

/* The distributor: shared interrupts (SPIs) and where each goes. */
struct vgic_dist {
	uint32_t ctlr;
	uint32_t enabled[VGIC_WORDS]; /* SPIs only: words 1.. */
	uint32_t group[VGIC_WORDS];
	uint32_t config[VGIC_IRQS / 16];
	uint8_t priority[VGIC_IRQS];
	uint8_t target[VGIC_IRQS];    /* vCPU index from GICD_IROUTER */
};

/* A PL011 with an always-empty transmit FIFO and a small receive ring. */
struct vuart {
	struct spinlock lock;
	uint32_t imsc, tx_raised, cr, lcr_h, ibrd, fbrd, ifls, dmacr;
	uint32_t rx_head, rx_count;
	uint8_t rx[VUART_RX_SIZE];
};

/* A PL061 whose input lines are hypervisor events (edge interrupts only). */
struct vgpio {
	struct spinlock lock;
	uint32_t dir, is, ibe, iev, ie, ris;
};

/* A CFI flash bank (Intel command set, as QEMU's pflash_cfi01 on virt): the command state
 * machine; the contents are the bank's backing RAM (bh_flash_cfg). */
/* The write buffer: 2 KiB per device (the CFI query says so), two devices per bus word. */
#define VFLASH_BUFFER_WORDS 1024u

struct vflash {
	uint8_t mode;       /* what a read returns: array, status, query or identifier */
	uint8_t cycle;      /* a command waiting for its next write (program, erase, buffer, lock) */
	uint8_t status;     /* the status register */
	bool unmapped;      /* the backed part is unmapped at stage 2, so reads trap */
	uint8_t op;         /* an erase or a buffered program in progress: the device is busy */
	uint64_t op_next;   /* erase: the next bank offset to erase; program: the next buffer index */
	uint64_t op_end;    /* erase: the end of what it erases (the block's backed part) */
	uint64_t erase_at;  /* an erase's setup (20): the bank offset it names, until its second cycle */
	uint32_t count;     /* buffered program: bus words announced (1 .. VFLASH_BUFFER_WORDS) */
	uint32_t buf_words; /* buffered program: bus words written so far */
	uint64_t buf_start; /* buffered program: bank offset of the first word */
	uint64_t tail_reads; /* reads of the erased, unbacked part (counted for the log) */
	uint64_t writes;     /* trapped writes, and */
	uint64_t switches;   /* stage-2 switches, since the partition started (for the log) */
	uint32_t buf[VFLASH_BUFFER_WORDS]; /* buffered program: the words, until the confirm, */
	uint64_t written[VFLASH_BUFFER_WORDS / 64]; /* and which of them were written */
};

/* A PL031 real-time clock: seconds = base + elapsed counter time since the last load. */
struct vrtc {
	uint64_t base_ticks; /* counter value when the RTC held `base` */
	uint32_t base;       /* seconds at base_ticks */
	uint64_t due;        /* counter value at which the armed match fires */
	uint32_t match, imsc, ris, cr, armed;
};

struct vmachine {
	struct spinlock lock; /* distributor and redistributor register writes */
	struct vgic_dist dist;
	struct vgic_redist redist[VMACHINE_MAX_VCPUS];
	struct vuart uart;
	struct vgpio gpio;
	int64_t call_status[VMACHINE_MAX_VCPUS]; /* per vCPU: how its last user-space call went */
	struct spinlock board_lock; /* flash banks and RTC */
	struct vflash flash[BH_FLASH_BANKS];
	struct vrtc rtc;
};

struct vcpu;
struct partition;

struct vmachine *vmachine_of(const struct partition *p); /* NULL for paravirtual partitions */
/* The same for a partition known to have one (its device models): no check. */
struct vmachine *vmachine_of_emulated(const struct partition *p);

/* What the emulated machine made of a trapped access. A device model's bool is the first two
 * (true: MMIO_DONE). */
enum mmio_result {
	MMIO_UNCLAIMED = 0, /* no device register there: the caller raises a health-monitor event */
	MMIO_DONE = 1,      /* emulated (a read's value in *val): on to the next instruction; the
			     * one value with bit 0 set (vectors.S tests it alone) */
	MMIO_AGAIN = 2,     /* nothing done, the same instruction runs again: the device's lock
			     * was held by other cores until the core's instant (core_give_way_at),
			     * or the console refused a UART byte (its ring full) */
};

/* Emulated MMIO: true if the access hit an emulated device (value read into *val). The
 * interrupt controller's, the UART's, the hypercall page and the flash may also answer
 * MMIO_AGAIN. */
enum mmio_result vgic_dist_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
				  uint64_t *val);
enum mmio_result vgic_redist_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
				    uint64_t *val);
enum mmio_result vuart_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
			      uint64_t *val);
/* A byte written to UARTDR that changes no UART state (transmit interrupt raised, nothing
 * unmasked pending: a guest that polls) goes to the console without the UART's lock: MMIO_DONE,
 * or MMIO_AGAIN if the console refused it (its ring full: the store is made again);
 * MMIO_UNCLAIMED, having done nothing, for any other case (vuart_access takes it). */
enum mmio_result vuart_data_write(struct partition *p, uint64_t val);
bool vgpio_access(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val);
/* A call through the hypercall page may answer MMIO_AGAIN too: its port call gave up a channel's
 * lock (ports.c lock_for_call). */
enum mmio_result vcall_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
			      uint64_t *val);
/* Board devices: the flash banks (ipa anywhere in a bank) and the PL031. A flash access from a
 * trap gives the board's lock up as the other trap locks (percpu.h trap_lock): MMIO_AGAIN, nothing
 * done, the guest's access made again. */
enum mmio_result vflash_access(struct vcpu *v, uint64_t ipa, unsigned size, bool write,
			       uint64_t *val);
/* A load pair's two elements of size 4 or 8 from ipa, inside one flash bank, aligned: read as two
 * loads (val[0], val[1]) in one trap; MMIO_UNCLAIMED, having done nothing, anywhere else. */
enum mmio_result vflash_read_pair(struct vcpu *v, uint64_t ipa, unsigned size, uint64_t val[2]);
/* An instruction fetch or a load without a syndrome from a flash bank faulted: in read-array mode,
 * in the image's part, the bank is busy (read array sent while an operation is in progress) or was
 * mapped again since. One step of the operation and true: the access is to be made again (the bank
 * is mapped when the operation ends), as QEMU's never-busy flash answers at once; true with nothing
 * done if the board's lock was given up (trap_lock). False (nothing done) anywhere else. */
bool vflash_wait(struct vcpu *v, uint64_t ipa);
bool vrtc_access(struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t *val);

/* ICC_SGI1R_EL1 written by the guest: raise the SGI in the vCPUs it names. */
void vgic_send_sgi(struct vcpu *v, uint64_t value);
/* A device model's interrupt line: make the SPI pending in the vCPU it is routed to. */
void vgic_raise_spi(struct partition *p, unsigned intid);
/* Priority the guest gave intid, for its list register (partitions with a vmachine). */
uint8_t vgic_priority(const struct vcpu *v, unsigned intid);
/* Where the guest's priority for intid lives (its GICD/GICR IPRIORITYR byte). */
const uint8_t *vgic_priority_ref(const struct vcpu *v, unsigned intid);

void vgic_reset_dist(struct partition *p);
void vgic_reset_redist(struct vcpu *v);
void vuart_reset(struct partition *p);
void vgpio_reset(struct partition *p);
/* Partition (re)start: banks back in read-array mode (contents kept), RTC running from the
 * host's time of day. */
void vflash_reset(struct partition *p);
void vrtc_reset(struct partition *p);

/* Trap handlers: MMIO_DONE if the access was emulated (the caller skips the instruction),
 * MMIO_UNCLAIMED if it is not part of the machine (the caller raises a health-monitor event),
 * MMIO_AGAIN if it is to be made again (the caller leaves the instruction to run again). */
enum mmio_result arch_vmachine_mmio(struct vcpu *v, struct arch_regs *r, uint64_t esr,
				    uint64_t ipa);
/* The same for a write (ESR WNR set): a guest's console byte (UARTDR) is taken first, without
 * a frame: the trap an unmodified guest takes most. */
enum mmio_result arch_vmachine_mmio_write(struct vcpu *v, struct arch_regs *r, uint64_t esr,
					  uint64_t ipa);
bool arch_vmachine_sysreg(struct vcpu *v, struct arch_regs *r, uint64_t esr);

/* PSCI: emulated into r->x[0]; false if the function is not one we emulate. */
bool vpsci_call(struct vcpu *v, struct arch_regs *r);
/* Any SMCCC call that is not Bulkhead's own (HVC, or SMC with a virtual machine): the result
 * for x0, BH_SMCCC_NOT_SUPPORTED for what is not implemented. */
int64_t vpsci_smccc_call(struct vcpu *v, struct arch_regs *r);
/* An SMC with function ID fn and immediate imm is an SMCCC call (imm 0, a fast call with bits
 * 23:16 zero); any other SMC is a health-monitor event. */
bool vpsci_smc_is_smccc(uint32_t fn, unsigned imm);

#endif
