/*
 * conformance.c - the behaviour of every C allocation entry point under
 * libmemprof, one "ok - ..." / "not ok - ..." line per row of the table in
 * src/runtime/rt_malloc.c (errno, alignment, NULL and 0 cases, usable
 * size), plus the block layout the profiler relies on: every default
 * allocation is 32 mod 64 and its block (32-byte header + usable size)
 * ends on a 64-byte granule, so no two objects share a granule.
 * Exits 1 if any row fails.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
/* Opaque to the optimizer: keeps calls with absurd sizes from being folded. */
volatile size_t big = SIZE_MAX, ptrdiff_big = PTRDIFF_MAX;
void *volatile sink;

static void row(int ok, const char *fn, const char *what)
{
	printf("%s - %s: %s\n", ok ? "ok" : "not ok", fn, what);
	failures += !ok;
}

static int aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static int filled(const unsigned char *p, size_t n, unsigned char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

static void test_malloc(void)
{
	void *a = malloc(0), *b = malloc(0);

	row(a && b && a != b, "malloc", "malloc(0) returns distinct non-NULL pointers");
	row(malloc_usable_size(a) >= 1, "malloc", "malloc(0) has a usable byte");
	free(a);
	free(b);
	for (size_t n = 1; n <= 300000; n = n * 3 + 1) {
		unsigned char *p = malloc(n);
		char what[80];

		snprintf(what, sizeof(what), "malloc(%zu) is 16-aligned, usable >= size", n);
		row(p && aligned(p, 16) && malloc_usable_size(p) >= n, "malloc", what);
		memset(p, 0xab, malloc_usable_size(p));
		free(p);
	}
	errno = 0;
	row(malloc(big) == NULL && errno == ENOMEM, "malloc", "malloc(SIZE_MAX): NULL, ENOMEM");
	errno = 0;
	row(malloc(ptrdiff_big) == NULL && errno == ENOMEM, "malloc",
	    "malloc(PTRDIFF_MAX): NULL, ENOMEM");
	{
		unsigned char *x = malloc(100), *y = malloc(100);

		memset(y, 0x5a, 100);
		memset(x, 0xa5, malloc_usable_size(x));
		row(filled(y, 100, 0x5a), "malloc",
		    "writing all of malloc_usable_size leaves a neighbour intact");
		free(x);
		free(y);
	}
	{
		unsigned char *p = malloc(10 << 20);

		memset(p, 1, 10 << 20);
		row(p && p[(10 << 20) - 1] == 1, "malloc", "malloc(10 MB) is writable");
		free(p);
	}
}

static void test_free(void)
{
	errno = 1234;
	free(NULL);
	row(errno == 1234, "free", "free(NULL) is a no-op, errno kept");
	errno = 4321;
	free(malloc(100));
	free(malloc(1 << 20));
	row(errno == 4321, "free", "free preserves errno (small and mmap'd blocks)");
}

static void test_calloc(void)
{
	unsigned char *p = malloc(1000);
	unsigned char *q;

	memset(p, 0xee, 1000);
	free(p);
	q = calloc(1, 1000);	/* likely the same block, dirty */
	row(q && filled(q, 1000, 0), "calloc", "calloc(1, 1000) is zeroed, even on reuse");
	free(q);
	q = calloc(1000, 1000);
	row(q && filled(q, 1000000, 0), "calloc", "calloc(1000, 1000) is zeroed");
	free(q);
	q = calloc(0, 5);
	row(q != NULL, "calloc", "calloc(0, 5) returns non-NULL");
	free(q);
	errno = 0;
	row(calloc(big / 2, 3) == NULL && errno == ENOMEM, "calloc",
	    "calloc(SIZE_MAX/2, 3) overflows: NULL, ENOMEM");
	errno = 0;
	row(calloc(big, big) == NULL && errno == ENOMEM, "calloc",
	    "calloc(SIZE_MAX, SIZE_MAX) overflows: NULL, ENOMEM");
}

static void test_realloc(void)
{
	unsigned char *p, *q;
	size_t sizes[] = {10, 100, 5000, 200000, 3000000, 150000, 64, 1};
	size_t prev;

	p = realloc(NULL, 100);
	row(p && malloc_usable_size(p) >= 100, "realloc", "realloc(NULL, 100) allocates");
	free(p);
	p = realloc(NULL, 0);
	row(p != NULL, "realloc", "realloc(NULL, 0) returns non-NULL (glibc)");
	free(p);
	p = malloc(50);
	errno = 0;
	row(realloc(p, 0) == NULL && errno == 0, "realloc",
	    "realloc(p, 0) frees p and returns NULL (glibc)");

	/* Contents survive every kind of move: small/small, small/large,
	 * large/large (mremap), shrinking back to small. */
	p = malloc(1);
	p[0] = 0x11;
	prev = 1;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], keep = prev < n ? prev : n;
		char what[80];

		q = realloc(p, n);
		snprintf(what, sizeof(what), "realloc to %zu keeps the first %zu bytes", n, keep);
		row(q && filled(q, keep, 0x11) && malloc_usable_size(q) >= n, "realloc", what);
		memset(q, 0x11, n);
		p = q;
		prev = n;
	}
	errno = 0;
	q = realloc(p, big - 4096);
	row(q == NULL && errno == ENOMEM && filled(p, 1, 0x11), "realloc",
	    "realloc(p, huge): NULL, ENOMEM, p untouched");
	free(p);
}

static void test_reallocarray(void)
{
	unsigned char *p = malloc(10), *q;

	memset(p, 7, 10);
	errno = 0;
	q = reallocarray(p, big / 2, 3);
	row(q == NULL && errno == ENOMEM && filled(p, 10, 7), "reallocarray",
	    "overflow: NULL, ENOMEM, p untouched");
	q = reallocarray(p, 100, 4);
	row(q && filled(q, 10, 7) && malloc_usable_size(q) >= 400, "reallocarray",
	    "reallocarray(p, 100, 4) grows and keeps the contents");
	p = reallocarray(q, 0, 4);
	row(p == NULL, "reallocarray", "reallocarray(p, 0, 4) frees p, returns NULL");
}

static void test_posix_memalign(void)
{
	size_t good[] = {8, 16, 32, 64, 256, 4096, 65536, 1 << 21};
	size_t bad[] = {0, 3, 4, 24, 100};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		void *p = NULL;
		char what[80];
		int r;

		errno = 77;
		r = posix_memalign(&p, good[i], 100);
		snprintf(what, sizeof(what), "alignment %zu: 0, aligned, errno kept", good[i]);
		row(r == 0 && p && aligned(p, good[i]) && errno == 77, "posix_memalign", what);
		free(p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		void *p = (void *)&failures;
		char what[80];
		int r;

		errno = 77;
		r = posix_memalign(&p, bad[i], 100);
		snprintf(what, sizeof(what),
			 "alignment %zu: EINVAL, *memptr untouched, errno kept", bad[i]);
		row(r == EINVAL && p == (void *)&failures && errno == 77, "posix_memalign", what);
	}
	{
		void *p = (void *)&failures;
		int r = posix_memalign(&p, 64, big - 100);

		row(r == ENOMEM && p == (void *)&failures, "posix_memalign",
		    "huge size: ENOMEM, *memptr untouched");
	}
}

static void test_aligned_alloc(void)
{
	void *p = aligned_alloc(64, 100);

	row(p && aligned(p, 64), "aligned_alloc", "aligned_alloc(64, 100) is 64-aligned");
	free(p);
	p = aligned_alloc(4096, 10);
	row(p && aligned(p, 4096), "aligned_alloc", "aligned_alloc(4096, 10) is page-aligned");
	free(p);
	p = aligned_alloc(1 << 20, 3 << 20);
	row(p && aligned(p, 1 << 20), "aligned_alloc", "aligned_alloc(1 MB, 3 MB) is 1 MB-aligned");
	free(p);
	errno = 0;
	row(aligned_alloc(3, 10) == NULL && errno == EINVAL, "aligned_alloc",
	    "alignment 3: NULL, EINVAL (C17)");
	errno = 0;
	row(aligned_alloc(0, 10) == NULL && errno == EINVAL, "aligned_alloc",
	    "alignment 0: NULL, EINVAL (C17)");
}

static void test_memalign(void)
{
	void *p = memalign(64, 10);

	row(p && aligned(p, 64), "memalign", "memalign(64, 10) is 64-aligned");
	free(p);
	p = memalign(48, 10);
	row(p && aligned(p, 64), "memalign", "memalign(48, 10) rounds up to 64 (glibc)");
	free(p);
	p = memalign(0, 10);
	row(p != NULL, "memalign", "memalign(0, 10) acts as malloc (glibc)");
	free(p);
	errno = 0;
	row(memalign(big / 2 + 2, 10) == NULL && errno == EINVAL, "memalign",
	    "alignment above SIZE_MAX/2+1: NULL, EINVAL (glibc)");
}

static void test_valloc(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = valloc(100);

	row(p && aligned(p, page), "valloc", "valloc(100) is page-aligned");
	free(p);
	p = valloc(0);
	row(p && aligned(p, page), "valloc", "valloc(0) returns a page-aligned pointer");
	free(p);
	p = pvalloc(5000);
	row(p && aligned(p, page) && malloc_usable_size(p) >= 2 * page, "pvalloc",
	    "pvalloc(5000) is page-aligned, usable >= 2 pages");
	free(p);
	p = pvalloc(0);
	row(p && aligned(p, page) && malloc_usable_size(p) >= page, "pvalloc",
	    "pvalloc(0) is one page");
	free(p);
	errno = 0;
	row(pvalloc(big) == NULL && errno == ENOMEM, "pvalloc",
	    "pvalloc(SIZE_MAX): NULL, ENOMEM");
}

static void test_usable(void)
{
	int ok = 1;

	row(malloc_usable_size(NULL) == 0, "malloc_usable_size", "NULL: 0");
	for (size_t n = 1; n < 400000; n += n / 3 + 1) {
		unsigned char *p = malloc(n), *q;

		if (!p || malloc_usable_size(p) != n)
			ok = 0;
		/* Grown in place or moved, shrunk: the size asked for each time. */
		q = p ? realloc(p, n + n / 8 + 1) : NULL;
		if (!q || malloc_usable_size(q) != n + n / 8 + 1)
			ok = 0;
		p = q ? q : p;
		q = realloc(p, n / 2 + 1);
		if (!q || malloc_usable_size(q) != n / 2 + 1)
			ok = 0;
		free(q ? q : p);
	}
	row(ok, "malloc_usable_size",
	    "the size asked for, as compiler-rt's, through realloc too (1..400000)");
}

static int by_address(const void *x, const void *y)
{
	uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;

	return a < b ? -1 : a > b;
}

/* The profiler's invariant: no two objects share a 64-byte granule. */
static void test_layout(void)
{
	uintptr_t at[500][2];	/* start, size */
	void *p[500];
	int ok = 1;

	for (int i = 0; i < 500; i++) {
		size_t n = (size_t)(i * 37 % 3000) + 1;

		p[i] = malloc(n);
		at[i][0] = (uintptr_t)p[i];
		at[i][1] = n;
		if (!p[i] || ((uintptr_t)p[i] & 63) != 32)
			ok = 0;
	}
	qsort(at, 500, sizeof(at[0]), by_address);
	for (int i = 1; i < 500; i++)
		if ((at[i - 1][0] + at[i - 1][1] - 1) >> 6 >= at[i][0] >> 6)
			ok = 0;
	for (int i = 0; i < 500; i++)
		free(p[i]);
	row(ok, "layout", "malloc results are 32 mod 64, no two in one 64-byte granule");
}

int main(void)
{
	test_malloc();
	test_free();
	test_calloc();
	test_realloc();
	test_reallocarray();
	test_posix_memalign();
	test_aligned_alloc();
	test_memalign();
	test_valloc();
	test_usable();
	test_layout();
	return failures ? 1 : 0;
}
