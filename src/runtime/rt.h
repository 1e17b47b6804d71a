/*
 * rt.h - internals of libmemprof, the MemProf-compatible heap profiler
 * runtime (module prefix memprof_rt_, types rt_).
 *
 * libmemprof is the process's malloc.  Every allocation entry point
 * (rt_malloc.c, rt_new.c) captures the caller's stack, stamps a header in
 * front of the block and, on free, folds what it learnt about the object
 * into a per-context Memory Info Block (MIB).  At exit or on memprof_dump()
 * rt_dump.c writes the MIBs as a raw MemProf profile, version 4, the bytes
 * clang 19's compiler-rt writes (include/memprof/raw_format.h is the only tool
 * header used here).
 *
 * Block layout: the RFC's 32-byte header scheme.
 *
 *	block (64-aligned, size a multiple of 64)
 *	| hdr (32) | user ................................ | slack |
 *	           ^ malloc's result: block + 32, so 32 mod 64
 *
 * Every block starts on a 64-byte granule and spans whole granules, so no
 * two blocks share a shadow granule: the instrumented code's counter for a
 * granule (one u64 per 64 bytes) only ever sees one object.  The header
 * shares its granule with the first 32 user bytes; the runtime's own header
 * writes are not instrumented, so they never count.  An aligned allocation
 * (alignment > 32) puts its header at user - 32 somewhere inside the block
 * and leaves a redirect record (state RT_REDIRECT) at the block start for
 * the heap walk.  Large blocks (> RT_SMALL_MAX) are their own mmap with an
 * rt_large record at the mapping start.
 *
 * Locking: nothing global on the hot path.  Each thread has a cache of
 * free blocks per size class in static TLS; the central pool of each class
 * has its own lock (taken once per batch); each allocation context has its
 * own lock (taken on free to merge the MIB); the stack depot is read without
 * locks and written under one of RT_DEPOT_STRIPES locks.
 *
 * The runtime never calls malloc: its memory comes from mmap (rt_util.c).
 * Library calls that may allocate (pthread_getattr_np, backtrace, dlopen
 * inside it) run with memprof_rt_tls.in_rt set, so the allocations they make
 * are served but not profiled.
 */
#ifndef MEMPROF_RT_H
#define MEMPROF_RT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "memprof/raw_format.h"

#define RT_PAGE 4096u		/* x86-64 Linux, the only target */
#define RT_HDR 32u		/* header bytes in front of every block */
#define RT_ALIGN 32u		/* alignment of every malloc result */
#define RT_NCLASS 40		/* small size classes */
#define RT_SMALL_MAX 131072u	/* largest small block (header included) */
#define RT_MAX_REQUEST ((size_t)PTRDIFF_MAX - (1u << 20))
/* Bound of malloc_context_size: compiler-rt's (kStackTraceMax, which it
 * CHECKs the option against). */
#define RT_MAX_FRAMES 255

/* ------------------------------------------------------------ locks */

/* A test-and-test-and-set spin lock that yields; held for short stretches. */
typedef struct {
	atomic_int v;
} rt_lock;

void memprof_rt_lock(rt_lock *l);
void memprof_rt_unlock(rt_lock *l);

/* ------------------------------------------------------------ blocks */

enum rt_state {			/* rt_hdr.state */
	RT_UNUSED = 0,		/* never handed out (fresh span memory) */
	RT_LIVE = 0xa5,		/* allocated */
	RT_FREE = 0x5a,		/* on a free list */
	RT_REDIRECT = 0xc3,	/* block start of an aligned block; see link */
};

#define RT_CLS_LARGE 0xff	/* rt_hdr.cls of an mmap'd block */

struct rt_hdr {
	/* LIVE: bytes from the block start to this header (0 if equal) in
	 * the low 32 bits, a check tag of the header's address above them
	 * (rt_alloc.c); FREE: next block on the free list; REDIRECT: offset
	 * of the header. */
	uint64_t link;
	uint64_t size;		/* requested size, >= 1 (malloc(0) counts 1) */
	uint32_t stack;		/* stack depot id; 0: not profiled; with
				 * RT_SAMPLED: a sampled object */
	uint32_t alloc_ms;	/* allocation time, ms since start */
	uint32_t cpu;		/* allocating CPU, UINT32_MAX if unknown */
	uint8_t cls;		/* size class or RT_CLS_LARGE */
	_Atomic uint8_t state;	/* enum rt_state, written last on allocation */
	uint16_t gen;		/* memprof_rt_gen at allocation (fork epoch) */
};
_Static_assert(sizeof(struct rt_hdr) == RT_HDR, "32-byte header");

/*
 * A sampled object (stack | RT_SAMPLED) keeps two more words, in the 32
 * bytes in front of its header that its block always has (rt_alloc.c):
 * the interval it was sampled at and u = size - offset of its sampled byte.
 */
#define RT_SAMPLED 0x80000000u
#define RT_STACK(h) ((h)->stack & ~RT_SAMPLED)
static inline uint64_t *memprof_rt_sample_ext(const struct rt_hdr *h)
{
	return (uint64_t *)((uintptr_t)h - 24);	/* [0] interval, [1] u */
}

/* Per-thread state, in static TLS (no allocation, valid from thread start). */
enum { RT_TLS_NEW, RT_TLS_REGISTERING, RT_TLS_LIVE, RT_TLS_DEAD };

struct rt_tcache {
	void *head;
	uint32_t n;
};

struct rt_tls {
	int state;		/* RT_TLS_*: whether the caches may be used */
	int in_rt;		/* > 0 while the runtime works for itself */
	uintptr_t stack_lo, stack_hi;	/* this thread's stack; hi 0 = unknown */
	int stack_known;
	uintptr_t code_lo, code_hi;	/* the code range a PC was last in */
	/* Sampling (rt_sample.c): failed trials before the next sampled
	 * byte, drawn for interval samp_ival (0: none drawn yet). */
	uint64_t samp_left;
	uint64_t samp_ival;
	double samp_lnq;
	uint64_t rng;
	uint32_t samp_seq;
	struct rt_tcache cache[RT_NCLASS];
};

extern _Thread_local struct rt_tls memprof_rt_tls;

/* Allocation flags. */
#define RT_ZERO 1u		/* calloc: zero the memory */

/*
 * Allocate SIZE bytes aligned to ALIGN (a power of two, 0 = RT_ALIGN) for
 * an entry point whose frame is FP (its RT_FRAME): the stack recorded
 * starts at that frame's return address.  NULL with errno ENOMEM on
 * failure.
 */
#define RT_FRAME ((uintptr_t)__builtin_frame_address(0))
void *memprof_rt_alloc(size_t size, size_t align, uintptr_t fp, unsigned flags);
void memprof_rt_free(void *p);	/* NULL is fine; preserves errno */
void *memprof_rt_realloc(void *p, size_t size, uintptr_t fp);
size_t memprof_rt_usable(const void *p);

/* Calls FN for every live profiled block of the current generation. */
typedef void rt_walk_fn(struct rt_hdr *h, uintptr_t user, void *arg);
void memprof_rt_walk_live(rt_walk_fn *fn, void *arg);

void memprof_rt_alloc_init(void);	/* from memprof_rt_init */
void memprof_rt_alloc_lock_all(void);	/* fork: hold every pool lock */
void memprof_rt_alloc_unlock_all(void);
void memprof_rt_alloc_child(void);	/* fork child: reset the locks */
void memprof_rt_thread_exit(void *);	/* key destructor: flush caches */

extern const char memprof_rt_malloc_linked;	/* rt_malloc.c */

/* Size class helpers (rt_alloc.c). */
uint32_t memprof_rt_class_size(unsigned cls);

/* ------------------------------------------------------------ MIBs */

/* A MIB in natural alignment; member names are those of RAW_MIB_FIELDS. */
struct rt_mib {
	uint64_t TotalAccessCount, MinAccessCount, MaxAccessCount;
	uint64_t TotalSize, TotalLifetime, DataTypeId;
	uint64_t TotalAccessDensity, TotalLifetimeAccessDensity;
	uint32_t AllocCount, MinSize, MaxSize;
	uint32_t AllocTimestamp, DeallocTimestamp, MinLifetime, MaxLifetime;
	uint32_t AllocCpuId, DeallocCpuId, NumMigratedCpu;
	uint32_t NumLifetimeOverlaps, NumSameAllocCpu, NumSameDeallocCpu;
	uint32_t MinAccessDensity, MaxAccessDensity;
	uint32_t MinLifetimeAccessDensity, MaxLifetimeAccessDensity;
	uint32_t AccessHistogramSize;
};

/* The MIB of one object, as compiler-rt's MemInfoBlock constructor: */
void memprof_rt_mib_one(struct rt_mib *m, uint64_t size, uint64_t accesses,
			uint32_t alloc_ms, uint32_t dealloc_ms,
			uint32_t alloc_cpu, uint32_t dealloc_cpu);
/* ... and its Merge(), except that NumMigratedCpu is summed. */
void memprof_rt_mib_merge(struct rt_mib *into, const struct rt_mib *m);
/* The 144 on-disk bytes of a v4 MIB (histogram pointer written as 0). */
void memprof_rt_mib_pack(uint8_t out[RAW_MIB_SIZE_V4], const struct rt_mib *m);

/* ------------------------------------------------------------ contexts */

/*
 * An allocation context: one distinct stack and the MIB of every object
 * allocated there and freed (or still live at a dump) since the last dump.
 * Memory: 200 bytes + 8 per frame, never freed (and sample entries).
 */
struct rt_ctx {
	uint32_t next;		/* next id in the hash chain */
	uint32_t hash;
	uint32_t depth;
	rt_lock lock;		/* protects mib and hist */
	struct rt_mib mib;	/* mib.AllocCount == 0: nothing recorded */
	uint64_t *hist;		/* mib.AccessHistogramSize entries in use */
	uint32_t hist_cap;
	uint32_t nsamp, samp_cap;	/* sample entries, one per interval */
	struct rt_samp *samp;
	uint64_t pc[];		/* return address - 1, leaf first */
};

/* ------------------------------------------------------------ sampling */

enum {
#define RT_TAG(name, tag, width, off, ver, merge) RT_TAG_##name = tag,
	RAW_MIB_FIELDS(RT_TAG)
#undef RT_TAG
};

/* What a context's objects sampled at one interval add up to. */
struct rt_samp {
	uint64_t interval, n, u;
	uint64_t raw[RAW_SAMPLE_NFIELDS];	/* the MIB's share of them */
	double est[RAW_SAMPLE_NFIELDS], var[RAW_SAMPLE_NFIELDS];
};

struct rt_sample_pick {
	uint64_t interval, u;
};

extern _Atomic uint64_t memprof_rt_sample_interval;	/* 0: exact */
/* Is an allocation of SIZE bytes sampled?  The fast half: a compare and
 * a subtraction; the slow half draws, and fills PICK when it says yes. */
int memprof_rt_sample_slow(struct rt_tls *t, uint64_t size, uint64_t cur,
			   struct rt_sample_pick *pick);
static inline int memprof_rt_sampled(struct rt_tls *t, uint64_t size,
				     uint64_t cur, struct rt_sample_pick *pick)
{
	if (__builtin_expect(t->samp_left >= size, 1)) {
		t->samp_left -= size;
		return 0;
	}
	return memprof_rt_sample_slow(t, size, cur, pick);
}
void memprof_rt_sample_set(uint64_t r);		/* clamps */
void memprof_rt_sample_init(int have_seed, uint64_t seed);
void memprof_rt_sample_prefork(void);
void memprof_rt_sample_child(void);
uint8_t memprof_rt_sample_tag(unsigned k);	/* MIB tag of field k */
void memprof_rt_sample_sums(const struct rt_mib *m,
			    uint64_t out[RAW_SAMPLE_NFIELDS]);
/* Add one sampled object of SIZE bytes (interval R, u) whose record
 * changed C's estimated fields by DELTA; C's lock held.  -1: no memory. */
int memprof_rt_sample_add(struct rt_ctx *c, uint64_t r, uint64_t u,
			  uint64_t size, const uint64_t delta[RAW_SAMPLE_NFIELDS]);
/* Replace M's estimated fields (C's MIB) by the estimates, rounded at
 * random with RNG (seeded by memprof_rt_sample_dump_seed()). */
void memprof_rt_sample_apply(struct rt_mib *m, const struct rt_ctx *c,
			     uint64_t *rng);
uint64_t memprof_rt_sample_dump_seed(void);

/* Capture the stack of the entry point whose frame is FP and return its
 * depot id (>= 1), or 0 if it cannot be stored. */
uint32_t memprof_rt_stack_id(uintptr_t fp);
struct rt_ctx *memprof_rt_ctx(uint32_t id);	/* NULL if not (yet) there */
uint32_t memprof_rt_ctx_count(void);		/* ids are 1..count */
void memprof_rt_depot_lock_all(void);
void memprof_rt_depot_unlock_all(void);
void memprof_rt_depot_child(void);		/* also empties every MIB */

/* Record the death (or, at a dump, the current state) of a profiled object. */
void memprof_rt_record(const struct rt_hdr *h, uintptr_t user,
		       uint32_t now_ms, uint32_t cpu);

/* ------------------------------------------------------------ shadow */

extern uintptr_t __memprof_shadow_memory_dynamic_address;
extern int memprof_rt_hist_mode;	/* u8 per 8 bytes instead of u64 per 64 */

int memprof_rt_shadow_init(void);	/* reserve the shadow; 0 or -1 */
void memprof_rt_shadow_clear(uintptr_t beg, uint64_t size);
uint64_t memprof_rt_shadow_count(uintptr_t p, uint64_t size);
void memprof_rt_shadow_release(uintptr_t beg, uint64_t size);
/* Histogram mode: entry i (bytes [p + 8i, p + 8i + 8)) of an object. */
static inline uint8_t memprof_rt_hist_counter(uintptr_t a)
{
	return *(const uint8_t *)(__memprof_shadow_memory_dynamic_address +
				  (a >> 3));
}

/* ------------------------------------------------------------ runtime */

struct rt_opts {
	char log_path[4096];	/* log_path=; "" = not set */
	int dump_at_exit;	/* dump_at_exit=0|1 */
	int max_frames;		/* malloc_context_size= */
	int unwind_backtrace;	/* unwind=fp|backtrace */
	int slow_unwind_cut;	/* fast_unwind_on_malloc=0, not unwind=, last */
	int verbosity;		/* verbosity= */
	uint64_t sample_interval;	/* sample_interval=; 0 = exact */
	uint64_t sample_seed;		/* sample_seed= */
	int sample_seed_set;
};

/* rt_options.c */
extern struct rt_opts memprof_rt_opts;
/* NAME=VALUE pairs from ORIGIN (named in messages) into memprof_rt_opts. */
void memprof_rt_parse_options(const char *s, const char *origin);

/* rt_clock.c */
extern _Atomic int memprof_rt_ready;	/* clock and CPU ids usable */
extern uint16_t memprof_rt_gen;		/* bumped in every fork child */
void memprof_rt_clock_start(void);	/* time 0 is now; ready */
uint32_t memprof_rt_now_ms(void);
uint32_t memprof_rt_cpu(void);

/* rt_init.c */
extern _Atomic int memprof_rt_profiling;	/* 0 after the final dump */
extern uintptr_t memprof_rt_main_stack_size;
void memprof_rt_init(void);		/* early, idempotent: the allocator */
void memprof_rt_init_late(void);	/* constructor: options, clock, exit */
void memprof_rt_need_shadow(void);	/* reserve the shadow or die */

/* rt_dump.c */
int memprof_rt_dump(int final);
void memprof_rt_dump_lock(void);
void memprof_rt_dump_unlock(void);
void memprof_rt_dump_child(void);

/* ------------------------------------------------------------ utilities */

void *memprof_rt_map(size_t len);	/* zeroed pages or NULL */
void memprof_rt_unmap(void *p, size_t len);
void *memprof_rt_ialloc(size_t size);	/* internal, zeroed; never malloc */
void memprof_rt_ifree(void *p, size_t size);
void memprof_rt_ialloc_lock(void);
void memprof_rt_ialloc_unlock(void);
void memprof_rt_ialloc_child(void);

/* A growable byte buffer in mmap'd memory. */
struct rt_buf {
	uint8_t *p;
	size_t len, cap;
	int failed;		/* an allocation failed; contents incomplete */
};
void *memprof_rt_buf_add(struct rt_buf *b, size_t n);	/* NULL on failure */
void memprof_rt_buf_put64(struct rt_buf *b, uint64_t v);
void memprof_rt_buf_release(struct rt_buf *b);

/* Messages on stderr without stdio: %s %d %u %lu %zu %x %lx %p. */
void memprof_rt_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
_Noreturn void memprof_rt_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void memprof_rt_put_le(uint8_t *p, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#endif /* MEMPROF_RT_H */
