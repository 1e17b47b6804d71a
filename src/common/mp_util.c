#include "mp_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

struct mp_arena_block {
	struct mp_arena_block *next;
	size_t size;
	/* Keeps data 8-byte aligned whatever the header size. */
	_Alignas(8) unsigned char data[];
};

#define ARENA_BLOCK_MIN (64 * 1024)
#define ARENA_BLOCK_MAX (8 << 20)
#define HUGE_PAGE (2 << 20)

/*
 * At least SIZE bytes as whole 2 MiB pages, aligned to them, with
 * transparent huge pages asked for: the first touch of each 2 MiB then
 * costs one fault instead of 512.  *GOT is SIZE rounded up to whole
 * pages, all of it usable.  The ask is only a hint, ignored where THP is
 * off.  NULL when out of memory or SIZE cannot be rounded.
 */
static void *alloc_huge(size_t size, size_t *got)
{
	void *p;

	if (!mp_add(size, HUGE_PAGE - 1, got))
		return NULL;
	*got &= ~(size_t)(HUGE_PAGE - 1);
	if ((p = aligned_alloc(HUGE_PAGE, *got)))
		madvise(p, *got, MADV_HUGEPAGE);
	return p;
}

void *mp_alloc_big_got(size_t size, size_t *got)
{
	*got = size;
	return size < HUGE_PAGE / 4 ? malloc(size) : alloc_huge(size, got);
}

void *mp_alloc_big(size_t size)
{
	size_t got;

	return mp_alloc_big_got(size, &got);
}

void *mp_calloc_big(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (!mp_mul(n, size, &bytes))
		return NULL;
	/*
	 * Zeroed by writing, not left to calloc(), whose fresh pages stay
	 * unmapped: a table is read before it is written, a read maps the
	 * shared zero page, and the first write then copies it in a second
	 * fault that, while another thread of the process runs, interrupts
	 * that CPU to flush its TLB, once per 4 KiB page (8 % of a two-thread
	 * merge's time went to it).  Written first, a page faults once.
	 */
	if ((p = mp_alloc_big(bytes)))
		memset(p, 0, bytes);
	return p;
}

/* SIZE bytes of A, zeroed when ZERO says so. */
static void *arena_take(struct mp_arena *a, size_t size, bool zero)
{
	struct mp_arena_block *b = a->head;
	size_t rounded, bsize;
	void *p;

	if (!mp_add(size, 7, &rounded))
		return NULL;
	rounded &= ~(size_t)7;
	if (!b || rounded > b->size - a->used) {
		/* Blocks grow with the arena: as many bytes as it holds. */
		size_t min = a->first > ARENA_BLOCK_MIN ? a->first : ARENA_BLOCK_MIN;
		size_t grown = a->total < min ? min
			: a->total < ARENA_BLOCK_MAX ? a->total : ARENA_BLOCK_MAX;

		bsize = rounded > grown ? rounded : grown;
		if (bsize > SIZE_MAX - sizeof(*b))
			return NULL;
		/* A big block is whole huge pages, all of them usable, as
		 * mp_alloc_big() would give. */
		if (sizeof(*b) + bsize >= HUGE_PAGE / 4) {
			size_t got;

			b = alloc_huge(sizeof(*b) + bsize, &got);
			bsize = got - sizeof(*b);
		} else {
			b = malloc(sizeof(*b) + bsize);
		}
		if (!b)
			return NULL;
		b->size = bsize;
		/*
		 * A block made for one large request goes behind the head so
		 * the head's free space is not wasted.
		 */
		if (a->head && rounded > grown) {
			b->next = a->head->next;
			a->head->next = b;
			if (zero)
				memset(b->data, 0, rounded);
			a->total += rounded;
			return b->data;
		}
		b->next = a->head;
		a->head = b;
		a->used = 0;
	}
	p = b->data + a->used;
	a->used += rounded;
	a->total += rounded;
	if (zero)
		memset(p, 0, rounded);
	return p;
}

void *mp_arena_alloc(struct mp_arena *a, size_t size)
{
	return arena_take(a, size, true);
}

void *mp_arena_alloc_uninit(struct mp_arena *a, size_t size)
{
	return arena_take(a, size, false);
}

void *mp_arena_memdup(struct mp_arena *a, const void *p, size_t size)
{
	void *q = mp_arena_alloc(a, size);

	if (q && size)
		memcpy(q, p, size);
	return q;
}

char *mp_arena_strdup(struct mp_arena *a, const char *s)
{
	return mp_arena_memdup(a, s, strlen(s) + 1);
}

void mp_arena_release(struct mp_arena *a)
{
	struct mp_arena_block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
	a->used = 0;
	a->total = 0;
}

bool mp_grow(void **array, size_t *alloc, size_t need, size_t elem)
{
	size_t n = *alloc, bytes;
	void *p;

	if (need <= n)
		return true;
	n = n ? n : 16;
	while (n < need)
		if (!mp_mul(n, 2, &n))
			return false;
	if (!mp_mul(n, elem, &bytes))
		return false;
	if (bytes < HUGE_PAGE) {
		if (!(p = realloc(*array, bytes)))
			return false;
	} else {
		/*
		 * Whole huge pages, all usable (mp_alloc_big()): a copy of
		 * the old contents costs less than the page faults of the
		 * fresh 4 KiB pages realloc() would give.  Not below 2 MiB,
		 * where rounding up could ask up to four times the memory:
		 * a small input must not cost megabytes (the fuzz limits).
		 */
		if (!(p = alloc_huge(bytes, &bytes)))
			return false;
		if (*alloc)
			memcpy(p, *array, *alloc * elem);
		free(*array);
		n = bytes / elem;
	}
	*array = p;
	*alloc = n;
	return true;
}

uint64_t mp_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		h = mp_hash64(h ^ mp_le64(s + i));
	for (; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return mp_hash64(h ^ len);
}

void mp_hex(const uint8_t *p, size_t n, char *buf, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t k = 0;

	if (!size)
		return;
	for (size_t i = 0; i < n && k + 2 < size; i++) {
		buf[k++] = digits[p[i] >> 4];
		buf[k++] = digits[p[i] & 15];
	}
	buf[k] = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mp_unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	for (; s[0]; s += 2) {
		int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);

		if (lo < 0 || n == max)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
	}
	return (int)n;
}

/* mp_util.h: UTF-8 as the outputs read it. */
size_t mp_utf8_len(const unsigned char *p, uint32_t *cpp)
{
	unsigned c = p[0];
	size_t n;
	uint32_t cp;

	*cpp = c;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the terminating NUL */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*cpp = cp;
	return n;
}

bool mp_unicode_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}
