/*
 * rt_shadow.c - Mode A: the shadow memory that code compiled with
 * clang -fmemory-profile counts accesses in, and the functions such code
 * calls.
 *
 * Inline instrumentation (clang 19) does, for every load and store,
 *	++*(uint64_t *)(__memprof_shadow_memory_dynamic_address + ((a >> 6) << 3))
 * so the shadow is one u64 counter per 64-byte granule, for the whole 47-bit
 * user address space: 2^44 bytes reserved with MAP_NORESERVE (as compiler-rt
 * does), of which only the pages behind touched granules ever exist.
 *
 * With -mllvm -memprof-histogram -mllvm -memprof-use-callbacks the objects
 * define __memprof_histogram = 1 and call __memprof_hist_load/store: then
 * the same region holds one saturating u8 counter per 8 bytes (shadow +
 * (a >> 3)), and a MIB also carries a histogram, entry i counting the
 * accesses to bytes [8i, 8i + 8) of the object.  (clang 19's own runtime
 * truncates the address to 32 bits there; we do not.)
 *
 * An object's access count is the sum of the counters of the granules it
 * covers, [p >> 6, (p + size - 1) >> 6].  compiler-rt sums up to the granule
 * of p + size inclusive, one granule too many when the object ends on a
 * granule boundary, which can add a neighbour's accesses; the 32-byte
 * header layout (rt.h) means no granule of ours is shared, so we leave it out.
 */
#include "rt.h"

#include <string.h>
#include <sys/mman.h>

uintptr_t __memprof_shadow_memory_dynamic_address;
int memprof_rt_hist_mode;

/* Defined (1 byte, 0 or 1) by every object clang -fmemory-profile built. */
extern const unsigned char __memprof_histogram __attribute__((weak));

#define SHADOW_SIZE ((uintptr_t)1 << (47 - 3))
#define CLEAR_MADVISE (64u * 1024)	/* shadow bytes; above, madvise pages */

int memprof_rt_shadow_init(void)
{
	static rt_lock lock;
	void *p;

	if (__atomic_load_n(&__memprof_shadow_memory_dynamic_address, __ATOMIC_ACQUIRE))
		return 0;
	memprof_rt_lock(&lock);
	if (__memprof_shadow_memory_dynamic_address) {
		memprof_rt_unlock(&lock);
		return 0;
	}
	memprof_rt_hist_mode = &__memprof_histogram != NULL && __memprof_histogram;
	p = mmap(NULL, SHADOW_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		memprof_rt_unlock(&lock);
		return -1;
	}
	madvise(p, SHADOW_SIZE, MADV_NOHUGEPAGE);
	__atomic_store_n(&__memprof_shadow_memory_dynamic_address, (uintptr_t)p,
			 __ATOMIC_RELEASE);
	memprof_rt_unlock(&lock);
	return 0;
}

/* Shadow bytes [beg, end) behind the memory range [p, p + size). */
static inline void shadow_range(uintptr_t p, uint64_t size, uintptr_t *beg,
				uintptr_t *end)
{
	uintptr_t base = __memprof_shadow_memory_dynamic_address;

	if (memprof_rt_hist_mode) {
		*beg = base + (p >> 3);
		*end = base + ((p + size - 1) >> 3) + 1;
	} else {
		*beg = base + ((p >> MEMPROF_SHADOW_SCALE) << 3);
		*end = base + (((p + size - 1) >> MEMPROF_SHADOW_SCALE) << 3) + 8;
	}
}

void memprof_rt_shadow_clear(uintptr_t p, uint64_t size)
{
	uintptr_t beg, end, pb, pe;

	shadow_range(p, size, &beg, &end);
	if (end - beg < CLEAR_MADVISE) {
		memset((void *)beg, 0, end - beg);
		return;
	}
	/* Whole pages go back to the kernel, which hands out zero pages. */
	pb = (beg + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
	pe = end & ~(uintptr_t)(RT_PAGE - 1);
	memset((void *)beg, 0, pb - beg);
	memset((void *)pe, 0, end - pe);
	madvise((void *)pb, pe - pb, MADV_DONTNEED);
}

void memprof_rt_shadow_release(uintptr_t p, uint64_t size)
{
	uintptr_t beg, end, pb, pe;

	shadow_range(p, size, &beg, &end);
	pb = (beg + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
	pe = end & ~(uintptr_t)(RT_PAGE - 1);
	if (pe > pb)
		madvise((void *)pb, pe - pb, MADV_DONTNEED);
}

uint64_t memprof_rt_shadow_count(uintptr_t p, uint64_t size)
{
	uintptr_t beg, end;
	uint64_t sum = 0;

	shadow_range(p, size, &beg, &end);
	if (memprof_rt_hist_mode) {
		for (const uint8_t *s = (const uint8_t *)beg; s < (const uint8_t *)end; s++)
			sum += *s;
	} else {
		for (const uint64_t *s = (const uint64_t *)beg; s < (const uint64_t *)end; s++)
			sum += *s;
	}
	return sum;
}

/* ------------------------------------------------------------ callbacks */

/* Declared here: these are called only by instrumented code. */
void __memprof_init(void);
void __memprof_version_mismatch_check_v1(void);
void __memprof_load(uintptr_t a);
void __memprof_store(uintptr_t a);
void __memprof_hist_load(uintptr_t a);
void __memprof_hist_store(uintptr_t a);
void __memprof_record_access(const volatile void *a);
void __memprof_record_access_range(const volatile void *a, size_t size);
void __memprof_record_access_hist(const volatile void *a);
void __memprof_record_access_range_hist(const volatile void *a, size_t size);
void *__memprof_memcpy(void *to, const void *from, size_t size);
void *__memprof_memmove(void *to, const void *from, size_t size);
void *__memprof_memset(void *block, int c, size_t size);

void __memprof_init(void)
{
	memprof_rt_init_late();
	memprof_rt_need_shadow();
}

void __memprof_version_mismatch_check_v1(void)
{
}

static inline void count(uintptr_t a)
{
	uintptr_t base = __memprof_shadow_memory_dynamic_address;

	if (base)
		++*(uint64_t *)(base + ((a >> MEMPROF_SHADOW_SCALE) << 3));
}

static inline void count_hist(uintptr_t a)
{
	uintptr_t base = __memprof_shadow_memory_dynamic_address;
	uint8_t *c = (uint8_t *)(base + (a >> 3));

	if (base && *c != UINT8_MAX)
		++*c;
}

void __memprof_load(uintptr_t a)
{
	count(a);
}

void __memprof_store(uintptr_t a)
{
	count(a);
}

void __memprof_hist_load(uintptr_t a)
{
	count_hist(a);
}

void __memprof_hist_store(uintptr_t a)
{
	count_hist(a);
}

void __memprof_record_access(const volatile void *a)
{
	if (memprof_rt_hist_mode)
		count_hist((uintptr_t)a);
	else
		count((uintptr_t)a);
}

void __memprof_record_access_hist(const volatile void *a)
{
	count_hist((uintptr_t)a);
}

/*
 * One access per 8-byte word of [a, a + size), as compiler-rt counts a
 * memcpy, memmove or memset; added per granule rather than per word.
 */
static void count_range(uintptr_t a, size_t size, int hist)
{
	uintptr_t base = __memprof_shadow_memory_dynamic_address;
	size_t words = (size + 7) / 8;

	if (!base || !size)
		return;
	if (hist) {
		for (size_t i = 0; i < words; i++)
			count_hist(a + 8 * i);
		return;
	}
	for (size_t i = 0; i < words;) {
		uintptr_t g = (a + 8 * i) >> MEMPROF_SHADOW_SCALE;
		/* Words i..k-1 start inside granule g. */
		size_t k = (((g + 1) << MEMPROF_SHADOW_SCALE) - a + 7) / 8;

		if (k > words)
			k = words;
		*(uint64_t *)(base + (g << 3)) += k - i;
		i = k;
	}
}

void __memprof_record_access_range(const volatile void *a, size_t size)
{
	count_range((uintptr_t)a, size, memprof_rt_hist_mode);
}

void __memprof_record_access_range_hist(const volatile void *a, size_t size)
{
	count_range((uintptr_t)a, size, 1);
}

void *__memprof_memcpy(void *to, const void *from, size_t size)
{
	count_range((uintptr_t)from, size, memprof_rt_hist_mode);
	count_range((uintptr_t)to, size, memprof_rt_hist_mode);
	return memcpy(to, from, size);
}

void *__memprof_memmove(void *to, const void *from, size_t size)
{
	count_range((uintptr_t)from, size, memprof_rt_hist_mode);
	count_range((uintptr_t)to, size, memprof_rt_hist_mode);
	return memmove(to, from, size);
}

void *__memprof_memset(void *block, int c, size_t size)
{
	count_range((uintptr_t)block, size, memprof_rt_hist_mode);
	return memset(block, c, size);
}
