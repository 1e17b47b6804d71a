/*
 * rt_alloc.c - the allocator: size classes over mmap'd spans, per-thread
 * caches, mmap'd large blocks, block headers, and the walk over live blocks
 * that a dump needs.
 *
 * Small blocks (header included, at most RT_SMALL_MAX bytes) come in 40
 * classes, all multiples of 64 so that no two objects share a 64-byte
 * granule of the access counts' shadow: 64..512 by 64, then four steps
 * per doubling up to 128 KB (a block at most 25% past its header and
 * object from 512 bytes on; below, an object of 1 to 32 bytes takes 64,
 * one of 100 takes 192).  A class's blocks are cut
 * from spans of >= 256 KB, in order, never returned to the system; a free
 * block goes to the freeing thread's cache, whose overflow (half of it at a
 * time) goes back to the class's central pool.  Larger blocks are one
 * mapping each, listed for the heap walk and unmapped on free.
 */
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

_Thread_local struct rt_tls memprof_rt_tls;

/* Whoever links the allocator gets malloc too (see rt_malloc.c). */
__attribute__((used)) static const char *const need_malloc = &memprof_rt_malloc_linked;

/* Class sizes: 64 * (c + 1) up to 512, then 2^e + (k + 1) * 2^(e - 2). */
#define CS(c) ((c) < 8 ? ((c) + 1) * 64u :                                  \
	(1u << (9 + ((c) - 8) / 4)) + (((c) - 8) % 4 + 1) * (1u << (7 + ((c) - 8) / 4)))
/* Thread cache bound: about 32 KB per class, between 2 and 128 blocks. */
#define CAP(c) (32768u / CS(c) < 2 ? 2u : 32768u / CS(c) > 128 ? 128u : 32768u / CS(c))
#define X4(m, c) m(c), m(c + 1), m(c + 2), m(c + 3)
#define X40(m) X4(m, 0), X4(m, 4), X4(m, 8), X4(m, 12), X4(m, 16),          \
	X4(m, 20), X4(m, 24), X4(m, 28), X4(m, 32), X4(m, 36)

static const uint32_t cls_size[RT_NCLASS] = {X40(CS)};
static const uint32_t cls_cap[RT_NCLASS] = {X40(CAP)};
_Static_assert(CS(RT_NCLASS - 1) == RT_SMALL_MAX, "class table ends at RT_SMALL_MAX");

uint32_t memprof_rt_class_size(unsigned cls)
{
	return cls_size[cls];
}

/* The smallest class holding N bytes (header included), N <= RT_SMALL_MAX. */
static inline unsigned class_of(size_t n)
{
	unsigned e;

	if (n <= 512)
		return n <= 64 ? 0 : (unsigned)((n - 1) >> 6);
	e = 63u - (unsigned)__builtin_clzl(n - 1);
	return 8 + (e - 9) * 4 + (unsigned)(((n - 1) - ((size_t)1 << e)) >> (e - 2));
}

/* ------------------------------------------------------------ spans */

#define SPAN_HDR 64u
#define SPAN_MIN (256u * 1024)

struct rt_span {
	struct rt_span *next;		/* this class's spans, newest first */
	_Atomic uintptr_t carved;	/* blocks below were handed out once */
	uintptr_t end;			/* end of the last whole block */
};

struct rt_central {
	rt_lock lock;
	void *free;			/* free blocks, linked through link */
	struct rt_span *cur;		/* the span being cut */
	_Atomic(struct rt_span *) spans;
} __attribute__((aligned(64)));

static struct rt_central central[RT_NCLASS];

/*
 * A LIVE header's link holds the offset to its block (or mapping) in its
 * low 32 bits and, above them, a tag computed from the header's own
 * address.  free() and realloc() of a pointer we did not hand out (an
 * interior pointer, a stray one) find a wrong tag, not merely a wrong
 * state byte (1 chance in 256 to look LIVE), and abort as glibc does: a
 * random header passes one time in 2^32.
 */
static inline uint64_t live_tag(const struct rt_hdr *h)
{
	return ((uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull) &
	       0xffffffff00000000ull;
}

static inline uint64_t live_link(const struct rt_hdr *h, uint64_t off)
{
	return off | live_tag(h);
}

static inline uint64_t live_off(const struct rt_hdr *h)
{
	return h->link & 0xffffffffu;
}

static inline void *next_of(void *b)
{
	return (void *)(uintptr_t)((struct rt_hdr *)b)->link;
}

static inline void set_free(void *b, void *next)
{
	struct rt_hdr *h = b;

	h->link = (uintptr_t)next;
	atomic_store_explicit(&h->state, RT_FREE, memory_order_relaxed);
}

static struct rt_span *span_new(unsigned cls)
{
	size_t bs = cls_size[cls];
	size_t len = bs * 8 + SPAN_HDR;
	struct rt_span *s;

	if (len < SPAN_MIN)
		len = SPAN_MIN;
	len = (len + RT_PAGE - 1) & ~(size_t)(RT_PAGE - 1);
	s = memprof_rt_map(len);
	if (!s)
		return NULL;
	s->end = (uintptr_t)s + SPAN_HDR + (len - SPAN_HDR) / bs * bs;
	atomic_init(&s->carved, (uintptr_t)s + SPAN_HDR);
	s->next = atomic_load_explicit(&central[cls].spans, memory_order_relaxed);
	atomic_store_explicit(&central[cls].spans, s, memory_order_release);
	return s;
}

/* Take up to WANT free blocks of class CLS; returns a chain, count in *GOT. */
static void *central_take(unsigned cls, uint32_t want, uint32_t *got)
{
	struct rt_central *c = &central[cls];
	size_t bs = cls_size[cls];
	void *head = NULL;
	uint32_t n = 0;

	memprof_rt_lock(&c->lock);
	while (n < want && c->free) {
		void *b = c->free;

		c->free = next_of(b);
		set_free(b, head);
		head = b;
		n++;
	}
	while (n < want) {
		struct rt_span *s = c->cur;
		uintptr_t at, stop;

		if (!s || atomic_load_explicit(&s->carved, memory_order_relaxed) + bs > s->end) {
			s = span_new(cls);
			if (!s)
				break;
			c->cur = s;
		}
		at = atomic_load_explicit(&s->carved, memory_order_relaxed);
		stop = at + (uintptr_t)(want - n) * bs;
		if (stop > s->end)
			stop = s->end;
		for (; at + bs <= stop; at += bs, n++) {
			set_free((void *)at, head);
			head = (void *)at;
		}
		/* The walk may read every block below 'carved' from now on. */
		atomic_store_explicit(&s->carved, at, memory_order_release);
	}
	memprof_rt_unlock(&c->lock);
	*got = n;
	return head;
}

static void central_put(unsigned cls, void *head, void *tail)
{
	struct rt_central *c = &central[cls];

	memprof_rt_lock(&c->lock);
	set_free(tail, c->free);
	c->free = head;
	memprof_rt_unlock(&c->lock);
}

/* ------------------------------------------------------------ thread caches */

static pthread_key_t tls_key;
static _Atomic int tls_key_ok;

/* Called once per thread, from its first allocation or free. */
static void thread_setup(struct rt_tls *t)
{
	memprof_rt_init();
	if (t->state != RT_TLS_NEW)
		return;
	/* Nested allocations (pthread_setspecific may calloc) bypass the cache. */
	t->state = RT_TLS_REGISTERING;
	if (atomic_load_explicit(&tls_key_ok, memory_order_acquire) &&
	    pthread_setspecific(tls_key, t) == 0)
		t->state = RT_TLS_LIVE;
	else
		t->state = RT_TLS_DEAD;
}

void memprof_rt_thread_exit(void *arg)
{
	struct rt_tls *t = &memprof_rt_tls;

	(void)arg;
	/* From here on this thread allocates from the central pools. */
	t->state = RT_TLS_DEAD;
	for (unsigned cls = 0; cls < RT_NCLASS; cls++) {
		struct rt_tcache *c = &t->cache[cls];
		void *tail = c->head;

		if (!tail)
			continue;
		while (next_of(tail))
			tail = next_of(tail);
		central_put(cls, c->head, tail);
		c->head = NULL;
		c->n = 0;
	}
}

static void *block_get(struct rt_tls *t, unsigned cls)
{
	struct rt_tcache *c = &t->cache[cls];
	void *b = c->head;
	uint32_t got;

	if (__builtin_expect(b != NULL, 1)) {
		c->head = next_of(b);
		c->n--;
		return b;
	}
	if (t->state != RT_TLS_LIVE)
		return central_take(cls, 1, &got);
	b = central_take(cls, cls_cap[cls] / 2 ? cls_cap[cls] / 2 : 1, &got);
	if (!b)
		return NULL;
	c->head = next_of(b);
	c->n = got - 1;
	return b;
}

static void block_put(struct rt_tls *t, unsigned cls, void *b)
{
	struct rt_tcache *c = &t->cache[cls];

	if (t->state != RT_TLS_LIVE) {
		central_put(cls, b, b);
		return;
	}
	set_free(b, c->head);
	c->head = b;
	if (++c->n > cls_cap[cls]) {
		/* Give the older half back. */
		uint32_t keep = cls_cap[cls] / 2;
		void *last = c->head;

		for (uint32_t i = 1; i < keep; i++)
			last = next_of(last);
		void *rest = next_of(last), *tail = rest;

		while (next_of(tail))
			tail = next_of(tail);
		set_free(last, NULL);
		c->n = keep;
		central_put(cls, rest, tail);
	}
}

/* ------------------------------------------------------------ large blocks */

struct rt_large {
	struct rt_large *prev, *next;
	size_t map_len;		/* bytes mapped from this record on */
	size_t hdr_off;		/* where the header is */
};
_Static_assert(sizeof(struct rt_large) <= RT_HDR, "fits before the first header");

static rt_lock large_lock;
static struct rt_large *large_head;

static void large_link(struct rt_large *l)
{
	memprof_rt_lock(&large_lock);
	l->prev = NULL;
	l->next = large_head;
	if (large_head)
		large_head->prev = l;
	large_head = l;
	memprof_rt_unlock(&large_lock);
}

static void large_unlink(struct rt_large *l)
{
	memprof_rt_lock(&large_lock);
	if (l->prev)
		l->prev->next = l->next;
	else
		large_head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	memprof_rt_unlock(&large_lock);
}

static inline struct rt_large *large_of(const struct rt_hdr *h)
{
	return (struct rt_large *)((uintptr_t)h - live_off(h));
}

/* A mapping for SIZE user bytes aligned to ALIGN; returns the header. */
static struct rt_hdr *large_alloc(size_t size, size_t align)
{
	size_t a = align > 64 ? align : 64;
	size_t len, slack = a > RT_PAGE ? a : 0;
	struct rt_large *l;
	struct rt_hdr *h;
	uintptr_t user;

	if (size > SIZE_MAX - 2 * a - slack - RT_PAGE)
		return NULL;
	len = (2 * a + size + slack + RT_PAGE - 1) & ~(size_t)(RT_PAGE - 1);
	l = memprof_rt_map(len);
	if (!l)
		return NULL;
	/* At least 96 bytes in: the rt_large record, then room for a
	 * sampled object's words (rt.h) in front of the header. */
	user = ((uintptr_t)l + 96 + a - 1) & ~(uintptr_t)(a - 1);
	h = (struct rt_hdr *)(user - RT_HDR);
	l->map_len = len;
	l->hdr_off = (uintptr_t)h - (uintptr_t)l;
	h->link = live_link(h, l->hdr_off);
	h->cls = RT_CLS_LARGE;
	large_link(l);
	return h;
}

static void large_free(struct rt_hdr *h)
{
	struct rt_large *l = large_of(h);

	large_unlink(l);
	if (__memprof_shadow_memory_dynamic_address)
		memprof_rt_shadow_release((uintptr_t)l, l->map_len);
	memprof_rt_unmap(l, l->map_len);
}

/* ------------------------------------------------------------ allocation */

static inline int profiling(void)
{
	return atomic_load_explicit(&memprof_rt_profiling, memory_order_relaxed);
}

/* Whether to record an object of SIZE bytes about to be allocated. */
enum { REC_NO, REC_EXACT, REC_SAMPLED };

static inline int decide(struct rt_tls *t, size_t size, struct rt_sample_pick *pick)
{
	uint64_t r;

	if (!profiling() || t->in_rt)
		return REC_NO;
	r = atomic_load_explicit(&memprof_rt_sample_interval, memory_order_relaxed);
	if (!r)
		return REC_EXACT;
	return memprof_rt_sampled(t, size, r, pick) ? REC_SAMPLED : REC_NO;
}

/* Fill in the profiling half of a header for a new object at USER; REC
 * is decide()'s answer, and a sampled object has the room rt.h says. */
static inline void stamp(struct rt_tls *t, struct rt_hdr *h, uintptr_t user,
			 size_t size, uintptr_t fp, int rec,
			 const struct rt_sample_pick *pick)
{
	uint32_t sid = 0;

	if (rec != REC_NO) {
		t->in_rt++;
		sid = memprof_rt_stack_id(fp);
		t->in_rt--;
	}
	h->size = size;
	h->stack = sid;
	h->gen = memprof_rt_gen;
	if (sid) {
		if (rec == REC_SAMPLED) {
			uint64_t *ext = memprof_rt_sample_ext(h);

			ext[0] = pick->interval;
			ext[1] = pick->u;
			h->stack = sid | RT_SAMPLED;
		}
		h->alloc_ms = memprof_rt_now_ms();
		h->cpu = memprof_rt_cpu();
		if (__memprof_shadow_memory_dynamic_address)
			memprof_rt_shadow_clear(user, size);
	}
}

/* Account for the end of the object at USER (free, realloc, fork). */
static inline void retire(struct rt_hdr *h, uintptr_t user)
{
	if (h->stack && h->gen == memprof_rt_gen && profiling())
		memprof_rt_record(h, user, memprof_rt_now_ms(), memprof_rt_cpu());
	h->stack = 0;
}

/* memprof_rt_alloc once decide() has answered REC (for SIZE >= 1). */
static void *alloc_decided(struct rt_tls *t, size_t size, size_t align,
			   uintptr_t fp, unsigned flags, int rec,
			   const struct rt_sample_pick *pick)
{
	struct rt_hdr *h;
	uintptr_t user;
	size_t need;

	if (align < RT_ALIGN)
		align = RT_ALIGN;
	/* 64-byte alignment puts the header 32 bytes into its block. */
	if (rec == REC_SAMPLED && align < 64)
		align = 64;
	/* An aligned user pointer lies at most ALIGN bytes into its block. */
	need = size + (align == RT_ALIGN ? RT_HDR : align);
	if (need <= RT_SMALL_MAX) {
		unsigned cls = class_of(need);
		uintptr_t block = (uintptr_t)block_get(t, cls);

		if (!block) {
			errno = ENOMEM;
			return NULL;
		}
		user = (block + RT_HDR + align - 1) & ~(uintptr_t)(align - 1);
		h = (struct rt_hdr *)(user - RT_HDR);
		h->link = live_link(h, (uintptr_t)h - block);
		h->cls = (uint8_t)cls;
		if (live_off(h)) {
			struct rt_hdr *r = (struct rt_hdr *)block;

			r->link = live_off(h);
			r->cls = (uint8_t)cls;
			atomic_store_explicit(&r->state, RT_REDIRECT, memory_order_release);
		}
		if (flags & RT_ZERO)
			memset((void *)user, 0, size);
	} else {
		h = large_alloc(size, align);	/* fresh pages: already zero */
		if (!h) {
			errno = ENOMEM;
			return NULL;
		}
		user = (uintptr_t)h + RT_HDR;
	}
	stamp(t, h, user, size, fp, rec, pick);
	/* Last: a concurrent dump reads the header once it says LIVE. */
	atomic_store_explicit(&h->state, RT_LIVE, memory_order_release);
	return (void *)user;
}

void *memprof_rt_alloc(size_t size, size_t align, uintptr_t fp, unsigned flags)
{
	struct rt_tls *t = &memprof_rt_tls;
	struct rt_sample_pick pick;

	if (__builtin_expect(t->state == RT_TLS_NEW, 0))
		thread_setup(t);
	if (size > RT_MAX_REQUEST || align > RT_MAX_REQUEST) {
		errno = ENOMEM;
		return NULL;
	}
	if (align & (align - 1)) {
		errno = EINVAL;
		return NULL;
	}
	if (size == 0)
		size = 1;	/* as compiler-rt: malloc(0) is a 1-byte object */
	return alloc_decided(t, size, align, fp, flags, decide(t, size, &pick), &pick);
}

static struct rt_hdr *checked_hdr(const void *p, const char *who)
{
	struct rt_hdr *h = (struct rt_hdr *)((uintptr_t)p - RT_HDR);
	uint8_t st = atomic_load_explicit(&h->state, memory_order_relaxed);

	if (__builtin_expect(st != RT_LIVE, 0))
		memprof_rt_die("%s(): %s %p", who,
			       st == RT_FREE ? "double free of" : "invalid pointer", p);
	if (__builtin_expect((h->link & ~0xffffffffull) != live_tag(h) ||
			     (h->cls >= RT_NCLASS && h->cls != RT_CLS_LARGE), 0))
		memprof_rt_die("%s(): invalid pointer %p", who, p);
	return h;
}

void memprof_rt_free(void *p)
{
	struct rt_tls *t = &memprof_rt_tls;
	struct rt_hdr *h;
	int saved;

	if (!p)
		return;
	saved = errno;
	if (__builtin_expect(t->state == RT_TLS_NEW, 0))
		thread_setup(t);
	h = checked_hdr(p, "free");
	/* Not LIVE before it is recorded: a concurrent dump counts it once. */
	atomic_store_explicit(&h->state, RT_FREE, memory_order_relaxed);
	retire(h, (uintptr_t)p);
	if (h->cls == RT_CLS_LARGE)
		large_free(h);
	else
		block_put(t, h->cls, (void *)((uintptr_t)h - live_off(h)));
	errno = saved;
}

/* The bytes from P, a live object's pointer, to the end of its block:
 * what it can grow to in place. */
static size_t room(const void *p)
{
	const struct rt_hdr *h = (const struct rt_hdr *)((uintptr_t)p - RT_HDR);
	uintptr_t base = (uintptr_t)h - live_off(h);

	if (h->cls == RT_CLS_LARGE)
		return large_of(h)->map_len - ((uintptr_t)p - base);
	return cls_size[h->cls] - ((uintptr_t)p - base);
}

/*
 * The size asked for, as compiler-rt answers malloc_usable_size(), not
 * the room behind it: a program that grows into the room it is told of
 * (Redis's strings, which then trim what they did not use) would run
 * another course under this runtime than under compiler-rt's, with
 * other allocations, and count as its own memory a block's rounding (a
 * third more than glibc's for Redis's small objects).
 */
size_t memprof_rt_usable(const void *p)
{
	const struct rt_hdr *h = (const struct rt_hdr *)((uintptr_t)p - RT_HDR);

	if (atomic_load_explicit(&h->state, memory_order_relaxed) != RT_LIVE)
		return 0;
	return (size_t)h->size;
}

/* Grow or shrink a large block with mremap; NULL if that did not work. */
static void *large_remap(struct rt_tls *t, struct rt_hdr *h, void *p,
			 size_t size, uintptr_t fp, int rec,
			 const struct rt_sample_pick *pick)
{
	struct rt_large *l = large_of(h), *nl;
	size_t off = l->hdr_off + RT_HDR, len;
	uint64_t old_size = h->size;

	if (off > RT_PAGE || size > SIZE_MAX - off - RT_PAGE)
		return NULL;	/* over-aligned: mremap would lose the alignment */
	len = (off + size + RT_PAGE - 1) & ~(size_t)(RT_PAGE - 1);
	retire(h, (uintptr_t)p);
	large_unlink(l);
	nl = mremap(l, l->map_len, len, MREMAP_MAYMOVE);
	if (nl == MAP_FAILED) {
		large_link(l);
		return NULL;
	}
	if (__memprof_shadow_memory_dynamic_address && nl != l)
		memprof_rt_shadow_release((uintptr_t)p, old_size);
	nl->map_len = len;
	large_link(nl);
	h = (struct rt_hdr *)((uintptr_t)nl + nl->hdr_off);
	h->link = live_link(h, nl->hdr_off);	/* the tag follows the move */
	stamp(t, h, (uintptr_t)nl + off, size, fp, rec, pick);
	return (void *)((uintptr_t)nl + off);
}

void *memprof_rt_realloc(void *p, size_t size, uintptr_t fp)
{
	struct rt_tls *t = &memprof_rt_tls;
	struct rt_sample_pick pick;
	struct rt_hdr *h;
	size_t space, old;
	void *q;
	int rec;

	if (!p)
		return memprof_rt_alloc(size, 0, fp, 0);
	if (size == 0) {	/* glibc: realloc(p, 0) frees p, returns NULL */
		memprof_rt_free(p);
		return NULL;
	}
	if (size > RT_MAX_REQUEST) {
		errno = ENOMEM;
		return NULL;
	}
	if (__builtin_expect(t->state == RT_TLS_NEW, 0))
		thread_setup(t);
	h = checked_hdr(p, "realloc");
	space = room(p);
	old = (size_t)h->size;
	rec = decide(t, size, &pick);	/* once: the trials are spent */
	/*
	 * As in compiler-rt, the old object ends here and a new one starts
	 * at the realloc call; only the bytes stay put when they can.
	 */
	if (h->cls != RT_CLS_LARGE) {
		size_t used = size + RT_HDR + live_off(h);

		/* A sampled object needs 32 bytes in front of its header. */
		if (size <= space && (h->cls == 0 || used > cls_size[h->cls - 1]) &&
		    (rec != REC_SAMPLED || live_off(h) >= 32)) {
			retire(h, (uintptr_t)p);
			stamp(t, h, (uintptr_t)p, size, fp, rec, &pick);
			return p;
		}
	} else if (size <= space && size >= space / 2) {
		retire(h, (uintptr_t)p);
		stamp(t, h, (uintptr_t)p, size, fp, rec, &pick);
		return p;
	} else if (size + RT_HDR > RT_SMALL_MAX) {
		q = large_remap(t, h, p, size, fp, rec, &pick);
		if (q)
			return q;
	}
	q = alloc_decided(t, size, 0, fp, 0, rec, &pick);
	if (!q)
		return NULL;
	memcpy(q, p, old < size ? old : size);
	memprof_rt_free(p);
	return q;
}

/* ------------------------------------------------------------ heap walk */

static void walk_one(struct rt_hdr *h, uintptr_t block_end, rt_walk_fn *fn,
		     void *arg)
{
	uintptr_t user = (uintptr_t)h + RT_HDR;

	if (atomic_load_explicit(&h->state, memory_order_acquire) != RT_LIVE ||
	    !RT_STACK(h) || h->gen != memprof_rt_gen)
		return;
	/* A block being reused under our feet may show a torn size. */
	if (h->size == 0 || h->size > block_end - user)
		return;
	fn(h, user, arg);
}

void memprof_rt_walk_live(rt_walk_fn *fn, void *arg)
{
	for (unsigned cls = 0; cls < RT_NCLASS; cls++) {
		uintptr_t bs = cls_size[cls];
		struct rt_span *s;

		s = atomic_load_explicit(&central[cls].spans, memory_order_acquire);
		for (; s; s = s->next) {
			uintptr_t end = atomic_load_explicit(&s->carved, memory_order_acquire);

			for (uintptr_t b = (uintptr_t)s + SPAN_HDR; b + bs <= end; b += bs) {
				struct rt_hdr *h = (struct rt_hdr *)b;
				uint8_t st = atomic_load_explicit(&h->state, memory_order_acquire);

				if (st == RT_REDIRECT) {
					uint64_t off = h->link;

					if (off % RT_ALIGN || off + RT_HDR >= bs)
						continue;
					h = (struct rt_hdr *)(b + off);
				} else if (st != RT_LIVE) {
					continue;
				}
				walk_one(h, b + bs, fn, arg);
			}
		}
	}
	memprof_rt_lock(&large_lock);
	for (struct rt_large *l = large_head; l; l = l->next)
		walk_one((struct rt_hdr *)((uintptr_t)l + l->hdr_off),
			 (uintptr_t)l + l->map_len, fn, arg);
	memprof_rt_unlock(&large_lock);
}

/* ------------------------------------------------------------ init, fork */

void memprof_rt_alloc_init(void)
{
	if (pthread_key_create(&tls_key, memprof_rt_thread_exit) == 0)
		atomic_store_explicit(&tls_key_ok, 1, memory_order_release);
}

void memprof_rt_alloc_lock_all(void)
{
	for (unsigned cls = 0; cls < RT_NCLASS; cls++)
		memprof_rt_lock(&central[cls].lock);
	memprof_rt_lock(&large_lock);
}

void memprof_rt_alloc_unlock_all(void)
{
	memprof_rt_unlock(&large_lock);
	for (unsigned cls = RT_NCLASS; cls-- > 0;)
		memprof_rt_unlock(&central[cls].lock);
}

void memprof_rt_alloc_child(void)
{
	/*
	 * Only the forking thread lives on.  The other threads' caches are
	 * abandoned (a bounded leak: no one can tell what they were doing),
	 * their blocks stay allocated, and the new generation makes every
	 * inherited object invisible to this process's profile.
	 */
	memprof_rt_alloc_unlock_all();
}
