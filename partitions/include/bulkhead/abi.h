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

#define BH_HC_CONSOLE_WRITE  BH_HC(0x00) /* (buf, len) -> bytes written */
#define BH_HC_GET_IDS        BH_HC(0x01) /* () -> OK, x1 = partition id, x2 = vCPU id */
#define BH_HC_GET_TIME       BH_HC(0x02) /* (clock) -> OK, x1 = time in ns */
#define BH_HC_HALT_SELF      BH_HC(0x03) /* () -> does not return */
#define BH_HC_IDLE           BH_HC(0x04) /* () -> OK when the vCPU's virtual timer fires */
#define BH_HC_RESET_SELF     BH_HC(0x05) /* (mode) -> does not return on success */
#define BH_HC_RAISE_EVENT    BH_HC(0x06) /* (code) -> OK if the action lets the caller go on */
#define BH_HC_HALT_SYSTEM    BH_HC(0x07) /* () -> does not return; system partitions only */
#define BH_HC_COUNT          8

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

/* BH_HC_GET_TIME clocks. */
#define BH_CLOCK_HW 0 /* system counter since power-on, in ns */

/* BH_HC_RESET_SELF modes. */
#define BH_RESET_COLD 0 /* reload the image from the boot image, then start at the entry */
#define BH_RESET_WARM 1 /* keep memory, start again at the entry */

/* Largest buffer one console write accepts; longer writes get BH_INVALID_PARAM. */
#define BH_CONSOLE_MAX_WRITE 4096u

/* Entry conventions: every vCPU starts at the partition entry at EL1h, MMU off,
 * DAIF masked, with:
 *   x0 = vCPU id,
 *   x1 = boot kind (BH_BOOT_*),
 *   x2 = number of times the partition has been restarted since the system booted. */
#define BH_BOOT_COLD          0 /* first start after system boot */
#define BH_BOOT_COLD_RESTART  1 /* memory reloaded */
#define BH_BOOT_WARM_RESTART  2 /* memory kept */

#endif
