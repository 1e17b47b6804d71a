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

#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <stddef.h>
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

/* ------------------------------------------------------------ code map */

/*
 * The executable segments of the loaded modules, sorted, to tell a return
 * address from what code without frame pointers leaves where a frame
 * pointer should be (libstdc++ is built without them): a "return address"
 * in no executable mapping ends the walk.  Built on the first miss and
 * again when a miss finds modules loaded since (dl_iterate_phdr's
 * dlpi_adds); tables are published whole and the old ones kept (one per
 * dlopen that caused a miss, never freed: walks may still read them).
 */
struct code_map {
	uint64_t adds;		/* dlpi_adds when built */
	size_t n;
	struct { uintptr_t lo, hi; } r[];
};

static _Atomic(struct code_map *) code_map;
static rt_lock code_map_lock;

struct code_walk {
	struct code_map *m;	/* NULL: count only */
	size_t n;
	uint64_t adds;
};

static int add_code(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_walk *w = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		w->adds = info->dlpi_adds;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (w->m && w->n < w->m->n) {
			w->m->r[w->n].lo = info->dlpi_addr + ph->p_vaddr;
			w->m->r[w->n].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
		w->n++;
	}
	return 0;
}

static int loads_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		*(uint64_t *)arg = info->dlpi_adds;
	return 1;	/* the first module tells */
}

/*
 * Rebuild the map if modules were loaded since it was made: 1 if it did.
 * Asking costs the loader's lock, and code without frame pointers makes
 * misses on every allocation it does: ask at most every 10 ms (a module
 * loaded meanwhile has its frames cut that long).
 */
static int code_map_refresh(void)
{
	static _Atomic uint32_t asked_ms = UINT32_MAX;
	struct code_map *old = atomic_load_explicit(&code_map, memory_order_acquire);
	struct code_walk w = { NULL, 0, 0 };
	uint32_t now = memprof_rt_now_ms(), last;
	uint64_t adds = 0;
	int ret = 0;

	last = atomic_load_explicit(&asked_ms, memory_order_relaxed);
	if (old && last != UINT32_MAX && now - last < 10)
		return 0;
	atomic_store_explicit(&asked_ms, now, memory_order_relaxed);
	dl_iterate_phdr(loads_of, &adds);
	if (old && old->adds == adds)
		return 0;
	memprof_rt_lock(&code_map_lock);
	old = atomic_load_explicit(&code_map, memory_order_acquire);
	if (!old || old->adds != adds) {
		dl_iterate_phdr(add_code, &w);
		/* Room for a module or two loaded between the passes. */
		struct code_map *m = memprof_rt_ialloc(sizeof(*m) +
						       (w.n + 8) * sizeof(m->r[0]));

		if (m) {
			m->n = w.n + 8;
			w.m = m;
			w.n = 0;
			dl_iterate_phdr(add_code, &w);
			m->n = w.n < m->n ? w.n : m->n;
			m->adds = w.adds;
			/* Insertion sort: a few dozen ranges. */
			for (size_t i = 1; i < m->n; i++)
				for (size_t j = i; j && m->r[j - 1].lo > m->r[j].lo; j--) {
					uintptr_t lo = m->r[j].lo, hi = m->r[j].hi;

					m->r[j] = m->r[j - 1];
					m->r[j - 1].lo = lo;
					m->r[j - 1].hi = hi;
				}
			atomic_store_explicit(&code_map, m, memory_order_release);
			ret = 1;
		}
	}
	memprof_rt_unlock(&code_map_lock);
	return ret;
}

static int code_map_find(const struct code_map *m, uintptr_t pc,
			 uintptr_t *lo, uintptr_t *hi)
{
	size_t a = 0, b = m ? m->n : 0;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (pc < m->r[mid].lo)
			b = mid;
		else if (pc >= m->r[mid].hi)
			a = mid + 1;
		else {
			*lo = m->r[mid].lo;
			*hi = m->r[mid].hi;
			return 1;
		}
	}
	return 0;
}

/* Does PC lie in the code of a loaded module?  The thread's last hit
 * answers most calls with two compares. */
static int is_code(struct rt_tls *t, uintptr_t pc)
{
	struct code_map *m;

	if (pc - t->code_lo < t->code_hi - t->code_lo)
		return 1;
	m = atomic_load_explicit(&code_map, memory_order_acquire);
	if (code_map_find(m, pc, &t->code_lo, &t->code_hi))
		return 1;
	return code_map_refresh() &&
	       code_map_find(atomic_load_explicit(&code_map, memory_order_acquire),
			     pc, &t->code_lo, &t->code_hi);
}

/*
 * Return addresses, leaf first, starting with the one in frame FP (the
 * allocation entry point's frame): the program's call site.  The walk
 * stops at a frame pointer that leaves the thread's stack or goes
 * backwards, and at a return address in no module's code.
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

		if (ret < RT_PAGE || (n && !is_code(t, ret - 1)))
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
	/*
	 * compiler-rt's stack of malloc_context_size frames begins with its
	 * own interceptor's, which readers drop: the program keeps one frame
	 * fewer.  The same here (but always one), so that a deep stack is cut
	 * where compiler-rt cuts it and the two runtimes' contexts match.
	 * Its slow unwinder (fast_unwind_on_malloc=0) spends two more of the
	 * frames on its own, dropped after the walk: 27 of the program's of
	 * 30 (libclang-rt-19, the same at 5, 10 and 64; below 5 it keeps
	 * none of the program's).
	 */
	if (max > 1)
		max--;
	if (memprof_rt_opts.slow_unwind_cut)
		max = max > 3 ? max - 2 : 1;
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
	/* A thread of the parent may have been rebuilding the code map. */
	atomic_init(&code_map_lock.v, 0);
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
