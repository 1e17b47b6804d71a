/*
 * rt_malloc.c - the C allocation entry points, with glibc's semantics where
 * the standards leave room (tests/runtime/conformance.c checks them):
 *
 *	malloc(0), realloc(NULL, 0)   a unique pointer (a 1-byte object)
 *	realloc(p, 0)                 frees p, returns NULL (glibc)
 *	size > PTRDIFF_MAX - 1 MB     NULL, errno ENOMEM
 *	calloc, reallocarray overflow NULL, errno ENOMEM (p untouched)
 *	posix_memalign                EINVAL unless a power of two multiple of
 *	                              sizeof(void *); *memptr untouched on error
 *	aligned_alloc                 EINVAL unless a power of two (C17, glibc
 *	                              2.38; 2.36 rounds up like memalign)
 *	memalign                      glibc: rounds a non-power of two up,
 *	                              EINVAL above SIZE_MAX / 2 + 1
 *	valloc, pvalloc               page-aligned; pvalloc rounds the size up
 *	                              to pages, pvalloc(0) is one page
 *	free                          preserves errno
 *	malloc_usable_size            the size asked for (compiler-rt's answer)
 *
 * Each entry point passes its own frame to the allocator, whose stack
 * starts at that frame's return address: the program's call site.  Neither
 * this file's functions nor any other runtime frame appear in a context.
 * (This file is built with -fno-omit-frame-pointer -fno-optimize-sibling-
 * calls so that each entry point has a frame of its own.)
 */
#include "rt.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

/* rt_alloc.c refers to this, so that linking the allocator from the
 * archive (for operator new, say) always brings malloc and free along. */
const char memprof_rt_malloc_linked = 1;

static inline int pow2(size_t a)
{
	return a && !(a & (a - 1));
}

void *malloc(size_t size)
{
	return memprof_rt_alloc(size, 0, RT_FRAME, 0);
}

void free(void *p)
{
	memprof_rt_free(p);
}

void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return memprof_rt_alloc(total, 0, RT_FRAME, RT_ZERO);
}

void *realloc(void *p, size_t size)
{
	return memprof_rt_realloc(p, size, RT_FRAME);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return memprof_rt_realloc(p, total, RT_FRAME);
}

int posix_memalign(void **memptr, size_t align, size_t size)
{
	int saved = errno;
	void *p;

	if (!pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = memprof_rt_alloc(size, align, RT_FRAME, 0);
	errno = saved;
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	if (!pow2(align)) {
		errno = EINVAL;
		return NULL;
	}
	return memprof_rt_alloc(size, align, RT_FRAME, 0);
}

void *memalign(size_t align, size_t size)
{
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (align && !pow2(align))
		align = (size_t)1 << (64 - __builtin_clzl(align));
	return memprof_rt_alloc(size, align, RT_FRAME, 0);
}

void *valloc(size_t size)
{
	return memprof_rt_alloc(size, RT_PAGE, RT_FRAME, 0);
}

void *pvalloc(size_t size)
{
	size_t rounded;

	if (__builtin_add_overflow(size, RT_PAGE - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(size_t)(RT_PAGE - 1);
	return memprof_rt_alloc(rounded ? rounded : RT_PAGE, RT_PAGE, RT_FRAME,
				0);
}

size_t malloc_usable_size(void *p)
{
	return p ? memprof_rt_usable(p) : 0;
}
