/* Guest buffer translation: guest virtual -> IPA (arch, through the guest's own stage 1) ->
 * physical (the partition's configured areas). Device areas are never accessed on a guest's
 * behalf: reading a device register can have side effects. */
#include "guest_mem.h"
#include "lib.h"
#include "partition.h"

#define GUEST_PAGE 4096u

bool guest_ipa_to_phys(const struct partition *p, uint64_t ipa, uint64_t len, uint32_t rights,
		       uint64_t *pa)
{
	const struct bh_partition_cfg *cfg = p->cfg;

	for (uint32_t i = 0; i < cfg->area_count; i++) {
		const struct bh_area_cfg *a = &cfg->areas[i];
		if (a->flags & BH_AREA_DEVICE || (a->flags & rights) != rights)
			continue;
		if (ipa >= a->ipa && len <= a->size && ipa - a->ipa <= a->size - len) {
			*pa = a->phys + (ipa - a->ipa);
			return true;
		}
	}
	return false;
}

/* Walks [va, va+len) page by page, checking each piece; copies it to dst if copy is set. */
static bool for_each_piece(const struct vcpu *v, uint64_t va, size_t len, bool copy, void *dst)
{
	uint8_t *out = dst;

	while (len) {
		uint64_t in_page = GUEST_PAGE - (va & (GUEST_PAGE - 1));
		uint64_t n = len < in_page ? len : in_page;
		uint64_t ipa, pa;
		if (!arch_guest_va_to_ipa(va, false, &ipa) ||
		    !guest_ipa_to_phys(v->partition, ipa, n, BH_AREA_READ, &pa))
			return false;
		if (copy) {
			memcpy(out, arch_phys_to_ptr(pa), n);
			out += n;
		}
		va += n;
		len -= n;
	}
	return true;
}

bool guest_readable(const struct vcpu *v, uint64_t va, size_t len)
{
	return va + len >= va && for_each_piece(v, va, len, false, NULL);
}

bool guest_copy_from(const struct vcpu *v, void *dst, uint64_t va, size_t len)
{
	return guest_readable(v, va, len) && for_each_piece(v, va, len, true, dst);
}
