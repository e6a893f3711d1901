/* Guest pointers are never trusted: every access is translated and checked against the
 * calling partition's areas before the hypervisor touches it. */
#ifndef BULKHEAD_GUEST_MEM_H
#define BULKHEAD_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch.h"
#include "lib.h"

struct partition;
struct vcpu;

/* Physical address of guest IPA range [ipa, ipa+len) if it lies in one normal area with the
 * given rights (BH_AREA_*), else false. */
bool guest_ipa_to_phys(const struct partition *p, uint64_t ipa, uint64_t len, uint32_t rights,
		       uint64_t *pa);
/* True if all of [va, va+len) is readable guest memory of the vCPU's partition. */
bool guest_readable(const struct vcpu *v, uint64_t va, size_t len);
bool guest_writable(const struct vcpu *v, uint64_t va, size_t len);
/* Copy len bytes from guest virtual address va. All of it is checked before any byte is
 * copied; returns false (nothing copied) if any part is not readable guest memory. */
bool guest_copy_from(const struct vcpu *v, void *dst, uint64_t va, size_t len);

/* Copy len bytes to guest virtual address va, which must be writable memory of the vCPU's
 * partition; nothing is written unless all of it is. */
bool guest_copy_to(const struct vcpu *v, uint64_t va, const void *src, size_t len);

/* The same under `held`, which the caller holds (a channel's lock over a message of kilobytes):
 * the copy ends the emulator's turn every 512 bytes (arch.h arch_turn_point), whether or not
 * other cores wait for the lock. */
bool guest_copy_from_held(const struct vcpu *v, void *dst, uint64_t va, size_t len,
			  const struct spinlock *held);
bool guest_copy_to_held(const struct vcpu *v, uint64_t va, const void *src, size_t len,
			const struct spinlock *held);

/* A guest buffer of at most one page, translated: the physical pieces it lies in, in order
 * (two when it crosses a page boundary). */
struct guest_piece {
	uint64_t pa;
	uint32_t len;
};
struct guest_pieces {
	unsigned count;
	uint32_t len; /* the pieces' lengths added up */
	struct guest_piece piece[2];
};

/* Translate writable [va, va+len), 0 < len <= 4096, into out; false if any part is not
 * writable memory of the vCPU's partition. The pieces stay in its partition's own areas
 * whatever its page tables do later, so the hypervisor may write them while it waits. */
bool guest_translate_writable(const struct vcpu *v, uint64_t va, size_t len,
			      struct guest_pieces *out);
/* The same for readable [va, va+len); inline into a hand-over of a message to a waiter. */
bool guest_translate_readable(const struct vcpu *v, uint64_t va, size_t len,
			      struct guest_pieces *out);
/* Copy len bytes of hypervisor memory src into `to` (len at most its length): a write that
 * cannot fail, whatever the guest's page tables became since the translation. */
void guest_pieces_write(const struct guest_pieces *to, const void *src, uint32_t len);
/* The copy of guest_pieces_copy when a piece on either side is shorter than len. */
void guest_pieces_copy_split(const struct guest_pieces *to, const struct guest_pieces *from,
			     uint32_t len);

/* Copy the first len bytes of `from` into `to` (len at most the length of each). Inline for
 * the common case, a message and a buffer within one page each: one memcpy. */
HOT_INLINE void guest_pieces_copy(const struct guest_pieces *to, const struct guest_pieces *from,
				  uint32_t len)
{
	if (len && len <= to->piece[0].len && len <= from->piece[0].len)
		memcpy(arch_phys_to_ptr(to->piece[0].pa), arch_phys_to_ptr(from->piece[0].pa), len);
	else if (len)
		guest_pieces_copy_split(to, from, len);
}

#endif
