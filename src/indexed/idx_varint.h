/*
 * idx_varint.h - the varints of an indexed profile (LEB128, at most ten
 * bytes, the tenth carrying only bit 63), encoded, and decoded or skipped
 * without reading past the end of their section.  Private to src/indexed;
 * the unit tests hold skip_varints() and put_varint() to the decoder.
 */
#ifndef IDX_VARINT_H
#define IDX_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_util.h"

/* V as a varint at P, which has room for 10 bytes: the bytes written. */
static inline size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/*
 * Decode a varint at *P, not past END; false if malformed or cut off.
 * Long varints are rare: kept out of line, out of the decoding loops
 * (and marked unused, as a static function in a header must be).
 */
__attribute__((noinline, unused))
static bool get_varint_slow(const unsigned char **p, const unsigned char *end,
			    uint64_t *v)
{
	uint64_t r = 0;

	/* Ten bytes ahead: no bound to check byte by byte. */
	if (end - *p >= 10) {
		const unsigned char *q = *p;

		for (int i = 0; i < 9; i++) {
			r |= (uint64_t)(q[i] & 0x7f) << (7 * i);
			if (!(q[i] & 0x80)) {
				*p = q + i + 1;
				*v = r;
				return true;
			}
		}
		if (q[9] > 1)
			return false;
		*p = q + 10;
		*v = r | (uint64_t)q[9] << 63;
		return true;
	}
	for (int i = 0; i < 10; i++) {
		unsigned char c;

		if (*p >= end)
			return false;
		c = *(*p)++;
		/* The tenth byte may only carry the 64th bit. */
		if (i == 9 && c > 1)
			return false;
		r |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/*
 * The varint at P, not past END, into *V; the position after it, or NULL
 * when malformed or cut off.  The position is passed and returned, so
 * that a loop keeps it in a register; one-byte varints, most of a file's,
 * and the few bytes of a MIB sum are decoded inline.
 */
static inline const unsigned char *next_varint(const unsigned char *p,
					       const unsigned char *end,
					       uint64_t *v)
{
	uint64_t r;

	if (p < end && *p < 0x80) {
		*v = *p;
		return p + 1;
	}
	/* MIB sums take a few bytes: up to four decoded here too. */
	if (end - p >= 4) {
		r = p[0] & 0x7f;
		for (int i = 1; i < 4; i++) {
			r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (p[i] < 0x80) {
				*v = r;
				return p + i + 1;
			}
		}
	}
	/* Through a copy: V itself is not address-taken, and so can stay in
	 * a register of the caller's loop. */
	if (!get_varint_slow(&p, end, &r))
		return NULL;
	*v = r;
	return p;
}

/*
 * P moved past K varints, or NULL where K calls of next_varint() would
 * fail: what checking a MIB needs, without the values.  A word of 8 bytes
 * read at the start of a varint shows where the varints in it stop (their
 * bytes below 0x80); only a varint longer than 8 bytes, which has no stop
 * in the word, goes to the exact decoder.  Each word after the first
 * starts right after a stop, so a varint never straddles two words unseen.
 */
static inline const unsigned char *skip_varints(const unsigned char *p,
						const unsigned char *end,
						uint64_t k)
{
	const uint64_t high = UINT64_C(0x8080808080808080);
	uint64_t v;

	while (k) {
		uint64_t stops;
		unsigned n;

		/* The last bytes, or a varint longer than 8: one at a time. */
		if (end - p < 8 || !(stops = ~mp_le64(p) & high)) {
			if (!(p = next_varint(p, end, &v)))
				return NULL;
			k--;
			continue;
		}
		/* One bit per stop, at 7 of its byte: their count by a multiply. */
		n = (unsigned)(((stops >> 7) * UINT64_C(0x0101010101010101)) >> 56);
		if (n >= k) {
			while (--k)
				stops &= stops - 1;
			return p + __builtin_ctzll(stops) / 8 + 1;
		}
		k -= n;
		p += (63 - __builtin_clzll(stops)) / 8 + 1;
	}
	return p;
}

#endif
