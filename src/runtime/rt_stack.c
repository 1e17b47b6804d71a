/*
 * rt_stack.c - calling contexts: capture a stack, give each distinct stack a
 * small id (the stack depot), and keep each context's MIB next to it.
 *
 * Capture walks frame pointers.  bench/runtime measured it against glibc's
 * backtrace() (DWARF unwinding through libgcc_s): see RESULTS.md; the walk
 * costs a few nanoseconds per frame where backtrace() costs hundreds, so it
 * is the default and MEMPROF_OPTIONS=unwind=backtrace the fallback for code
 * built without frame pointers.  The walk trusts a saved frame pointer only
 * if it lies inside this thread's stack, above the previous one and 8-byte
 * aligned, so code built without -fno-omit-frame-pointer yields short (or,
 * rarely, wrong) stacks but never a fault.  The first frame, the entry
 * point's own return address, is always exact.
 *
 * The depot is a hash table of 2^18 chains of ids.  Lookups take no lock;
 * an insertion takes the lock of one of RT_DEPOT_STRIPES bucket groups,
 * looks again, and publishes the new entry with a release store.  Ids are
 * dense (1, 2, ...) so a dump can visit them in order; id -> entry is a
 * two-level table whose second level is mapped on demand.
 */
#include "rt.h"

#include <execinfo.h>
#include <pthread.h>
#include <string.h>

extern void *__libc_stack_end;	/* ld.so: the main thread's initial sp */

/* ------------------------------------------------------------ capture */

/* This thread's stack, found once: [lo, hi) or unknown (hi = 0). */
static void stack_bounds(struct rt_tls *t, uintptr_t sp)
{
	uintptr_t top = (uintptr_t)__libc_stack_end;
	pthread_attr_t attr;

	t->stack_known = 1;
	t->stack_lo = t->stack_hi = 0;
	if (sp < top && top - sp <= memprof_rt_main_stack_size) {
		t->stack_lo = top - memprof_rt_main_stack_size;
		t->stack_hi = top;
		return;
	}
	/* May allocate (glibc sizes a CPU set with realloc): in_rt is set. */
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;

		if (pthread_attr_getstack(&attr, &addr, &size) == 0 &&
		    sp >= (uintptr_t)addr && sp < (uintptr_t)addr + size) {
			t->stack_lo = (uintptr_t)addr;
			t->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
}

/*
 * Return addresses, leaf first, starting with the one in frame FP (the
 * allocation entry point's frame): the program's call site.
 */
static size_t unwind_fp(uintptr_t fp, uint64_t *pc, size_t max)
{
	struct rt_tls *t = &memprof_rt_tls;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	size_t n = 0;

	if (!t->stack_known)
		stack_bounds(t, sp);
	/* FP is our caller's own frame: always readable. */
	for (;;) {
		uintptr_t ret = ((const uintptr_t *)fp)[1];
		uintptr_t next = ((const uintptr_t *)fp)[0];

		if (ret < RT_PAGE)
			break;
		pc[n++] = ret - 1;
		if (n == max || !t->stack_hi || sp < t->stack_lo ||
		    sp >= t->stack_hi)
			break;
		if (next <= fp || next < sp || next > t->stack_hi - 16 || (next & 7))
			break;
		fp = next;
	}
	return n;
}

/* The same through glibc's backtrace(): DWARF CFI, no frame pointers needed. */
static size_t unwind_backtrace(uintptr_t fp, uint64_t *pc, size_t max)
{
	void *buf[RT_MAX_FRAMES + 16];
	uintptr_t site = ((const uintptr_t *)fp)[1];
	int n = backtrace(buf, (int)(max + 16 < RT_MAX_FRAMES + 16 ? max + 16 :
						RT_MAX_FRAMES + 16));
	int i = 0;
	size_t k = 0;

	/* Skip the runtime's own frames: find the entry point's return. */
	while (i < n && (uintptr_t)buf[i] != site)
		i++;
	if (i == n)
		return unwind_fp(fp, pc, max);
	for (; i < n && k < max; i++)
		if ((uintptr_t)buf[i] >= RT_PAGE)
			pc[k++] = (uintptr_t)buf[i] - 1;
	return k;
}

/* ------------------------------------------------------------ the depot */

#define BUCKET_BITS 18
#define STRIPES 64
#define DIR_BITS 12			/* 4096 ids per second-level table */
#define DIR_SIZE (1u << 14)		/* 64 M ids in all */

static _Atomic(_Atomic uint32_t *) buckets;	/* 2^BUCKET_BITS chain heads */
static rt_lock stripe[STRIPES];
static rt_lock grow_lock;		/* buckets, directory tables */
static _Atomic(struct rt_ctx *_Atomic *) dir[DIR_SIZE];
static _Atomic uint32_t nctx;		/* ids handed out */

static inline uint32_t hash_pcs(const uint64_t *pc, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++) {
		h ^= pc[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)(h ^ (h >> 29));
}

struct rt_ctx *memprof_rt_ctx(uint32_t id)
{
	struct rt_ctx *_Atomic *t;

	if (id == 0 || (id >> DIR_BITS) >= DIR_SIZE)
		return NULL;
	t = atomic_load_explicit(&dir[id >> DIR_BITS], memory_order_acquire);
	if (!t)
		return NULL;
	return atomic_load_explicit(&t[id & ((1u << DIR_BITS) - 1)],
				    memory_order_acquire);
}

uint32_t memprof_rt_ctx_count(void)
{
	return atomic_load_explicit(&nctx, memory_order_acquire);
}

static int depot_ready(void)
{
	if (atomic_load_explicit(&buckets, memory_order_acquire))
		return 1;
	memprof_rt_lock(&grow_lock);
	if (!atomic_load_explicit(&buckets, memory_order_relaxed)) {
		/* 1 MB of address space; pages appear as chains are used. */
		void *b = memprof_rt_map(sizeof(uint32_t) << BUCKET_BITS);

		atomic_store_explicit(&buckets, b, memory_order_release);
	}
	memprof_rt_unlock(&grow_lock);
	return atomic_load_explicit(&buckets, memory_order_relaxed) != NULL;
}

static struct rt_ctx *find(uint32_t head, uint32_t h, const uint64_t *pc,
			   size_t n, uint32_t *id)
{
	for (uint32_t i = head; i;) {
		struct rt_ctx *c = memprof_rt_ctx(i);

		if (!c)
			break;
		if (c->hash == h && c->depth == n) {
			size_t k = 0;

			while (k < n && c->pc[k] == pc[k])	/* n is small */
				k++;
			if (k == n) {
				*id = i;
				return c;
			}
		}
		i = c->next;
	}
	return NULL;
}

static uint32_t insert(const uint64_t *pc, size_t n, uint32_t h)
{
	_Atomic uint32_t *bucket = &buckets[h & ((1u << BUCKET_BITS) - 1)];
	rt_lock *l = &stripe[h % STRIPES];
	struct rt_ctx *c, *_Atomic *t;
	uint32_t id = 0, head;

	memprof_rt_lock(l);
	head = atomic_load_explicit(bucket, memory_order_acquire);
	if (find(head, h, pc, n, &id))
		goto out;
	id = atomic_fetch_add_explicit(&nctx, 1, memory_order_acq_rel) + 1;
	if ((id >> DIR_BITS) >= DIR_SIZE) {
		id = 0;		/* full: the object goes unprofiled */
		goto out;
	}
	t = atomic_load_explicit(&dir[id >> DIR_BITS], memory_order_acquire);
	if (!t) {
		memprof_rt_lock(&grow_lock);
		t = atomic_load_explicit(&dir[id >> DIR_BITS], memory_order_relaxed);
		if (!t) {
			t = memprof_rt_map(sizeof(*t) << DIR_BITS);
			atomic_store_explicit(&dir[id >> DIR_BITS], t, memory_order_release);
		}
		memprof_rt_unlock(&grow_lock);
		if (!t) {
			id = 0;
			goto out;
		}
	}
	c = memprof_rt_ialloc(sizeof(*c) + n * sizeof(*pc));
	if (!c) {
		id = 0;
		goto out;
	}
	c->hash = h;
	c->depth = (uint32_t)n;
	memcpy(c->pc, pc, n * sizeof(*pc));
	c->next = head;
	atomic_store_explicit(&t[id & ((1u << DIR_BITS) - 1)], c, memory_order_release);
	atomic_store_explicit(bucket, id, memory_order_release);
out:
	memprof_rt_unlock(l);
	return id;
}

uint32_t memprof_rt_stack_id(uintptr_t fp)
{
	uint64_t pc[RT_MAX_FRAMES];
	size_t max = (size_t)memprof_rt_opts.max_frames, n;
	uint32_t h, id = 0;

	if (max == 0 || !depot_ready())
		return 0;
	if (max > RT_MAX_FRAMES)
		max = RT_MAX_FRAMES;
	n = memprof_rt_opts.unwind_backtrace ? unwind_backtrace(fp, pc, max) :
					       unwind_fp(fp, pc, max);
	if (n == 0)
		return 0;
	h = hash_pcs(pc, n);
	if (find(atomic_load_explicit(&buckets[h & ((1u << BUCKET_BITS) - 1)],
				      memory_order_acquire), h, pc, n, &id))
		return id;
	return insert(pc, n, h);
}

/* ------------------------------------------------------------ fork */

void memprof_rt_depot_lock_all(void)
{
	memprof_rt_lock(&grow_lock);
	for (unsigned i = 0; i < STRIPES; i++)
		memprof_rt_lock(&stripe[i]);
}

void memprof_rt_depot_unlock_all(void)
{
	for (unsigned i = STRIPES; i-- > 0;)
		memprof_rt_unlock(&stripe[i]);
	memprof_rt_unlock(&grow_lock);
}

void memprof_rt_depot_child(void)
{
	uint32_t n = memprof_rt_ctx_count();

	memprof_rt_depot_unlock_all();
	/*
	 * The child starts with an empty profile.  A context lock held by a
	 * thread that does not exist here would never be released: reset
	 * them all while emptying the MIBs.
	 */
	for (uint32_t id = 1; id <= n; id++) {
		struct rt_ctx *c = memprof_rt_ctx(id);

		if (!c)
			continue;
		atomic_init(&c->lock.v, 0);
		c->mib.AllocCount = 0;
		c->mib.AccessHistogramSize = 0;
		c->nsamp = 0;
		if (c->hist)
			memset(c->hist, 0, c->hist_cap * sizeof(*c->hist));
	}
}
