/*
 * mp_util.h - small helpers every module uses: unaligned little-endian
 * loads and stores, overflow-checked size arithmetic, a bump arena and a
 * growable array.
 *
 * Raw profiles are packed little-endian records that are often misaligned;
 * never cast a pointer into a file buffer, load through mp_le64() & co.
 */
#ifndef MP_UTIL_H
#define MP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t mp_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline uint32_t mp_le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint16_t mp_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline void mp_put_le64(unsigned char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, sizeof(v));
}

static inline void mp_put_le32(unsigned char *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, sizeof(v));
}

/* The bits set in V.  Without -mpopcnt, __builtin_popcountll() is a call
 * into libgcc; the sum by halves below is a dozen instructions inline. */
static inline unsigned mp_popcount64(uint64_t v)
{
#ifdef __POPCNT__
	return (unsigned)__builtin_popcountll(v);
#else
	v -= (v >> 1) & UINT64_C(0x5555555555555555);
	v = (v & UINT64_C(0x3333333333333333)) +
	    ((v >> 2) & UINT64_C(0x3333333333333333));
	v = (v + (v >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((v * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

/* V in decimal, written backwards to end at END, which must have
 * MP_U64_DIGITS bytes before it; returns where the digits begin. */
#define MP_U64_DIGITS 20
static inline char *mp_u64_digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* Overflow-checked arithmetic: false when the result does not fit. */
static inline bool mp_add(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

static inline bool mp_mul(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* True when [off, off+len) lies inside a buffer of SIZE bytes. */
static inline bool mp_in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* The place of V in A[0..N-1], sorted: the first element not below it
 * (N if none); *AT is it, and the result whether A has V there. */
static inline bool mp_u64_find(const uint64_t *a, size_t n, uint64_t v,
			       size_t *at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < n && a[lo] == v;
}

/*
 * A bump arena: many small allocations released together.  Blocks come
 * from malloc (this is tool code, not the runtime).  mp_arena_alloc returns
 * zeroed memory aligned to 8 bytes, or NULL when out of memory.
 *
 *	struct mp_arena a = MP_ARENA_INIT;
 *	uint64_t *pcs = mp_arena_alloc(&a, n * sizeof(*pcs));
 *	...
 *	mp_arena_release(&a);
 */
struct mp_arena_block;
struct mp_arena {
	struct mp_arena_block *head;
	size_t used;		/* bytes used in head */
	size_t total;		/* bytes handed out, for statistics */
	size_t first;		/* size of the first block; 0: 64 KiB */
};
#define MP_ARENA_INIT { NULL, 0, 0, 0 }

void *mp_arena_alloc(struct mp_arena *a, size_t size);
/*
 * The same, not zeroed: for an object the caller fills whole at once.
 * (A merge's table takes a hundred MB of entries: zeroing each before
 * writing it was a twentieth of the fold.)
 */
void *mp_arena_alloc_uninit(struct mp_arena *a, size_t size);
void *mp_arena_memdup(struct mp_arena *a, const void *p, size_t size);
char *mp_arena_strdup(struct mp_arena *a, const char *s);
void mp_arena_release(struct mp_arena *a);

/*
 * Grow *ARRAY (of *ALLOC elements of ELEM bytes) so that it holds at least
 * NEED elements.  Returns false on overflow or out of memory, leaving the
 * array untouched.
 */
bool mp_grow(void **array, size_t *alloc, size_t need, size_t elem);

/*
 * Malloc for a buffer that will be filled whole soon (a file read into
 * memory, a table every entry of which is written): from 512 KiB up,
 * rounded up to whole 2 MiB pages, aligned to them and given huge pages,
 * so that filling it costs a fault per 2 MiB, not per 4 KiB (in a virtual
 * machine a fault costs microseconds: ten of them cost more than zeroing
 * a huge page).  Free it with free(); realloc() works on it.
 */
void *mp_alloc_big(size_t size);
/*
 * mp_alloc_big(), telling in *GOT how many bytes are usable: SIZE, or more
 * when rounded up to whole huge pages.  A table that is reset for each
 * input can grow into that room instead of taking fresh memory.
 */
void *mp_alloc_big_got(size_t size, size_t *got);
/*
 * The same, zeroed by writing, for N elements of SIZE bytes (calloc's
 * contract, but every page mapped: for tables read before written).
 */
void *mp_calloc_big(size_t n, size_t size);

/* The common case, room already there, without a call: a merge grows
 * its scratch once per record. */
static inline bool mp_grow_inline(void **array, size_t *alloc, size_t need,
				  size_t elem)
{
	return need <= *alloc || mp_grow(array, alloc, need, elem);
}

#define MP_GROW(arr, alloc, need) \
	mp_grow_inline((void **)&(arr), &(alloc), (need), sizeof(*(arr)))

/* MP_GROW, the elements it adds past the old capacity zeroed: for
 * arrays indexed by id whose unset entries read as 0. */
static inline bool mp_grow_zero(void **array, size_t *alloc, size_t need,
				size_t elem)
{
	size_t old = *alloc;

	if (need <= old)
		return true;
	if (!mp_grow(array, alloc, need, elem))
		return false;
	memset((char *)*array + old * elem, 0, (*alloc - old) * elem);
	return true;
}

#define MP_GROW_ZERO(arr, alloc, need) \
	mp_grow_zero((void **)&(arr), &(alloc), (need), sizeof(*(arr)))

/* 64-bit mixing hash (a finalizer in the style of splitmix64). */
static inline uint64_t mp_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* FNV-1a over bytes, then mixed: good enough for strings and PC runs. */
uint64_t mp_hash_bytes(const void *p, size_t len, uint64_t seed);

/*
 * The N bytes at P in lowercase hex into BUF of SIZE bytes, cut to fit
 * and always terminated (a build id: 2 * N + 1 bytes are enough).
 */
void mp_hex(const uint8_t *p, size_t n, char *buf, size_t size);

/*
 * The length of the valid UTF-8 sequence at P (1 to 4), its code point in
 * *CP; 0 when the bytes there are not valid UTF-8 (overlong forms,
 * surrogates, past U+10FFFF, or cut short by the string's NUL).
 */
size_t mp_utf8_len(const unsigned char *p, uint32_t *cp);

/*
 * Characters a terminal or a reader would act on rather than show: C1
 * controls (U+009B is a terminal's CSI) and the bidirectional controls
 * that reorder what follows (Trojan Source).  Output escapes them.
 */
bool mp_unicode_hidden(uint32_t cp);

/*
 * Decode the even-length lowercase or uppercase hex string S into at most
 * MAX bytes at OUT: the number of bytes, or -1 if S is not such a string.
 */
int mp_unhex(const char *s, uint8_t *out, size_t max);

#endif /* MP_UTIL_H */
