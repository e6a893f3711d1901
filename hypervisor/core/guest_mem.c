/* Guest buffer translation: guest virtual -> IPA (arch, through the guest's own stage 1) ->
 * physical (the partition's configured areas). Device areas are never accessed on a guest's
 * behalf: reading a device register can have side effects. */
#include "guest_mem.h"
#include "lib.h"
#include "partition.h"

#define GUEST_PAGE 4096u
#define NO_PA (~0ull) /* no physical address: not 8-byte aligned, beyond any machine's */

/* Up to this many areas a scan is as quick as a search; a partition has one or two mostly. */
#define AREA_SCAN_MAX 4u

/* The physical address of [ipa, ipa+len) if one memory area of p with `rights` holds it. The
 * areas are in guest address order and never overlap (the tool emits them so, checked at boot:
 * partition.c check_areas), so the only area that can hold ipa is the last one starting at or
 * below it: found by binary search, whatever the count. A scan of all of them for each page of
 * each buffer, several times per call, made a console write from the last of 301 areas 2400
 * ticks longer than from the first (tests/system/test_areas.py). */
HOT_INLINE uint64_t area_pa(const struct partition *p, uint64_t ipa, uint64_t len, uint32_t rights)
{
	const struct bh_partition_cfg *cfg = p->cfg;
	const struct bh_area_cfg *a = NULL;

	if (cfg->area_count <= AREA_SCAN_MAX) {
		/* the first that holds it is the only one: 17 instructions a port call fewer than
		 * looking for the last one starting below it (bench/ports.yaml) */
		for (uint32_t i = 0; i < cfg->area_count; i++) {
			a = &cfg->areas[i];
			if (a->flags & BH_AREA_DEVICE || (a->flags & rights) != rights)
				continue;
			if (ipa >= a->ipa && len <= a->size && ipa - a->ipa <= a->size - len)
				return a->phys + (ipa - a->ipa);
		}
		return NO_PA;
	}
	uint32_t lo = 0, hi = cfg->area_count; /* the answer is below hi, if any */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (cfg->areas[mid].ipa <= ipa)
			lo = mid + 1;
		else
			hi = mid;
	}
	a = lo ? &cfg->areas[lo - 1] : NULL;
	if (!a || a->flags & BH_AREA_DEVICE || (a->flags & rights) != rights)
		return NO_PA;
	if (len <= a->size && ipa - a->ipa <= a->size - len)
		return a->phys + (ipa - a->ipa);
	return NO_PA;
}

bool guest_ipa_to_phys(const struct partition *p, uint64_t ipa, uint64_t len, uint32_t rights,
		       uint64_t *pa)
{
	*pa = area_pa(p, ipa, len, rights);
	return *pa != NO_PA;
}

enum copy { CHECK_ONLY, COPY_IN, COPY_OUT, TRANSLATE };

/* The physical address of [va, va+n), which lies in one guest page, if it has `rights`. */
HOT_INLINE uint64_t piece_pa(const struct vcpu *v, uint64_t va, uint64_t n, uint32_t rights)
{
	uint64_t ipa;

	if (!arch_guest_va_to_ipa(va, rights & BH_AREA_WRITE, &ipa))
		return NO_PA;
	return area_pa(v->partition, ipa, n, rights);
}

/* Under a lock (held, else NULL), a piece longer than this is copied this much at a time, with
 * a turn point between (arch_turn_point): a multiple of 8, so every part keeps the whole's
 * alignment. */
#define COPY_TURN_BYTES 512u

static void copy_piece(enum copy mode, void *buf, uint64_t pa, uint64_t n,
		       const struct spinlock *held)
{
	uint8_t *to = mode == COPY_IN ? buf : arch_phys_to_ptr(pa);
	const uint8_t *from = mode == COPY_IN ? arch_phys_to_ptr(pa) : buf;

	for (; held && n > COPY_TURN_BYTES; n -= COPY_TURN_BYTES, to += COPY_TURN_BYTES,
	     from += COPY_TURN_BYTES) {
		memcpy(to, from, COPY_TURN_BYTES);
		arch_turn_point();
	}
	memcpy(to, from, n);
}

/* Walks [va, va+len) page by page, checking each piece for `rights`; copies it into the
 * hypervisor buffer (COPY_IN) or out of it (COPY_OUT), or records it (TRANSLATE: buf is a
 * struct guest_pieces with room for the pieces). */
static bool for_each_piece(const struct vcpu *v, uint64_t va, size_t len, uint32_t rights,
			   enum copy mode, void *buf, const struct spinlock *held)
{
	uint8_t *h = buf;
	struct guest_pieces *out = buf;

	while (len) {
		uint64_t in_page = GUEST_PAGE - (va & (GUEST_PAGE - 1));
		uint64_t n = len < in_page ? len : in_page;
		uint64_t pa = piece_pa(v, va, n, rights);
		if (pa == NO_PA)
			return false;
		if (mode == COPY_IN || mode == COPY_OUT)
			copy_piece(mode, h, pa, n, held);
		else if (mode == TRANSLATE) {
			out->piece[out->count++] = (struct guest_piece){ pa, (uint32_t)n };
			out->len += (uint32_t)n;
		}
		h += mode == COPY_IN || mode == COPY_OUT ? n : 0;
		va += n;
		len -= n;
	}
	return true;
}

static bool range_ok(const struct vcpu *v, uint64_t va, size_t len, uint32_t rights)
{
	return va + len >= va && for_each_piece(v, va, len, rights, CHECK_ONLY, NULL, NULL);
}

bool guest_readable(const struct vcpu *v, uint64_t va, size_t len)
{
	return range_ok(v, va, len, BH_AREA_READ);
}

bool guest_writable(const struct vcpu *v, uint64_t va, size_t len)
{
	return range_ok(v, va, len, BH_AREA_READ | BH_AREA_WRITE);
}

/* A range across pages is checked whole first, so a copy never stops half way. */
static __attribute__((noinline)) bool copy_pages(const struct vcpu *v, uint64_t va, size_t len,
						 uint32_t rights, enum copy mode, void *buf,
						 const struct spinlock *held)
{
	return range_ok(v, va, len, rights) && for_each_piece(v, va, len, rights, mode, buf, held);
}

/* A range within one page is checked and copied in one walk (a failed check copies nothing).
 * Port messages and most hypercall buffers take that way. */
HOT_INLINE bool copy(const struct vcpu *v, uint64_t va, size_t len, uint32_t rights,
		     enum copy mode, void *buf, const struct spinlock *held)
{
	if (!len)
		return true; /* nothing is touched: any pointer will do, as for the range checks */
	if (len > GUEST_PAGE - (va & (GUEST_PAGE - 1))) /* no overflow, whatever len is */
		return copy_pages(v, va, len, rights, mode, buf, held);
	uint64_t pa = piece_pa(v, va, len, rights);
	if (pa == NO_PA)
		return false;
	copy_piece(mode, buf, pa, len, held);
	return true;
}

bool guest_copy_from(const struct vcpu *v, void *dst, uint64_t va, size_t len)
{
	return copy(v, va, len, BH_AREA_READ, COPY_IN, dst, NULL);
}

bool guest_copy_to(const struct vcpu *v, uint64_t va, const void *src, size_t len)
{
	return copy(v, va, len, BH_AREA_READ | BH_AREA_WRITE, COPY_OUT, (void *)src, NULL);
}

bool guest_copy_from_held(const struct vcpu *v, void *dst, uint64_t va, size_t len,
			  const struct spinlock *held)
{
	return copy(v, va, len, BH_AREA_READ, COPY_IN, dst, held);
}

bool guest_copy_to_held(const struct vcpu *v, uint64_t va, const void *src, size_t len,
			const struct spinlock *held)
{
	return copy(v, va, len, BH_AREA_READ | BH_AREA_WRITE, COPY_OUT, (void *)src, held);
}

/* Within one page (the common case, as in copy()) it is one translation, inline. */
HOT_INLINE bool translate(const struct vcpu *v, uint64_t va, size_t len, uint32_t rights,
			  struct guest_pieces *out)
{
	out->count = out->len = 0;
	if (!len || len > GUEST_PAGE)
		return false;
	if (len > GUEST_PAGE - (va & (GUEST_PAGE - 1)))
		return va + len >= va && for_each_piece(v, va, len, rights, TRANSLATE, out, NULL);
	uint64_t pa = piece_pa(v, va, len, rights);
	if (pa == NO_PA)
		return false;
	out->count = 1;
	out->len = (uint32_t)len;
	out->piece[0] = (struct guest_piece){ pa, (uint32_t)len };
	return true;
}

bool guest_translate_writable(const struct vcpu *v, uint64_t va, size_t len,
			      struct guest_pieces *out)
{
	return translate(v, va, len, BH_AREA_READ | BH_AREA_WRITE, out);
}

HOT_INLINE_GLOBAL bool guest_translate_readable(const struct vcpu *v, uint64_t va, size_t len,
					       struct guest_pieces *out)
{
	return translate(v, va, len, BH_AREA_READ, out);
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

void guest_pieces_write(const struct guest_pieces *to, const void *src, uint32_t len)
{
	const uint8_t *s = src;

	for (unsigned i = 0; i < to->count && len; i++) {
		uint32_t n = min_u32(len, to->piece[i].len);
		memcpy(arch_phys_to_ptr(to->piece[i].pa), s, n);
		s += n;
		len -= n;
	}
}

/* Two pieces on each side: at most three copies. */
void guest_pieces_copy_split(const struct guest_pieces *to, const struct guest_pieces *from,
			     uint32_t len)
{
	const struct guest_piece *t = to->piece, *f = from->piece;
	uint32_t t_off = 0, f_off = 0;

	while (len) {
		uint32_t n = min_u32(len, min_u32(t->len - t_off, f->len - f_off));
		memcpy(arch_phys_to_ptr(t->pa + t_off), arch_phys_to_ptr(f->pa + f_off), n);
		len -= n;
		t_off += n;
		f_off += n;
		if (t_off == t->len)
			t++, t_off = 0;
		if (f_off == f->len)
			f++, f_off = 0;
	}
}
