/*
 * unit_rt.c - Check unit tests of the runtime's MIB arithmetic and on-disk
 * MIB bytes, and of its size classes.  Linked with libmemprof.a (so the
 * runtime is also this program's malloc) and its internal header rt.h.
 *
 * Driven by RAW_MIB_FIELDS: a field added to raw_format.h is packed and
 * merged here without a change to this file, or the tests fail.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/memprof.h"
#include "rt.h"

/* A value for field number I that fits its width and differs per byte. */
static uint64_t sentinel(unsigned i, unsigned width)
{
	uint64_t v = 0;

	for (unsigned b = 0; b < width; b++)
		v |= (uint64_t)((i * 16 + b + 1) & 0xff) << (8 * b);
	return v;
}

START_TEST(pack_puts_every_field_at_its_offset)
{
	struct rt_mib m;
	uint8_t out[RAW_MIB_SIZE_V4 + 16];
	unsigned i = 0;

	memset(&m, 0, sizeof(m));
#define SET(name, tag, width, off, ver, merge) m.name = sentinel(i++, width);
	RAW_MIB_FIELDS(SET)
#undef SET
	memset(out, 0xee, sizeof(out));
	memprof_rt_mib_pack(out, &m);
	i = 0;
#define GET(name, tag, width, off, ver, merge)                              \
	{                                                                   \
		uint64_t v = 0;                                             \
		for (unsigned b = 0; b < (width); b++)                      \
			v |= (uint64_t)out[(off) + b] << (8 * b);           \
		ck_assert_msg(v == sentinel(i, width), #name " at %d", off); \
		i++;                                                        \
	}
	RAW_MIB_FIELDS(GET)
#undef GET
	for (unsigned b = 0; b < 8; b++)
		ck_assert_int_eq(out[RAW_MIB_HIST_PTR_OFFSET + b], 0);
	/* Nothing written past the MIB, no byte of it left unwritten. */
	for (unsigned b = RAW_MIB_SIZE_V4; b < sizeof(out); b++)
		ck_assert_int_eq(out[b], 0xee);
	for (unsigned b = 0; b < RAW_MIB_SIZE_V4; b++)
		ck_assert_msg(out[b] != 0xee, "byte %u not written", b);
}
END_TEST

START_TEST(one_object_as_compiler_rt)
{
	struct rt_mib m;

	memprof_rt_mib_one(&m, 100, 250, 10, 15, 1, 2);
	ck_assert_int_eq(m.AllocCount, 1);
	ck_assert_int_eq(m.TotalAccessCount, 250);
	ck_assert_int_eq(m.MinAccessCount, 250);
	ck_assert_int_eq(m.TotalSize, 100);
	ck_assert_int_eq(m.TotalLifetime, 5);
	ck_assert_int_eq(m.TotalAccessDensity, 250);		/* 250 * 100 / 100 */
	ck_assert_int_eq(m.TotalLifetimeAccessDensity, 50000);	/* 250 * 1000 / 5 */
	ck_assert_int_eq(m.MinLifetimeAccessDensity, 50000);
	ck_assert_int_eq(m.NumMigratedCpu, 1);
	ck_assert_int_eq(m.AllocCpuId, 1);
	ck_assert_int_eq(m.DeallocCpuId, 2);
	/* A lifetime of 0 ms divides by 1; densities truncate. */
	memprof_rt_mib_one(&m, 3, 1, 7, 7, 0, 0);
	ck_assert_int_eq(m.TotalAccessDensity, 33);
	ck_assert_int_eq(m.TotalLifetimeAccessDensity, 33000);
	ck_assert_int_eq(m.NumMigratedCpu, 0);
	/* Sizes past 4 GB saturate the 32-bit fields. */
	memprof_rt_mib_one(&m, (uint64_t)5 << 30, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(m.TotalSize, (uint64_t)5 << 30);
	ck_assert_uint_eq(m.MaxSize, UINT32_MAX);
}
END_TEST

/* Each merge rule of raw_format.h, on two MIBs with distinct values. */
START_TEST(merge_follows_the_rules_of_raw_format_h)
{
	struct rt_mib a, b, m;
	unsigned i = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
#define SET(name, tag, width, off, ver, merge) \
	a.name = 10 + i;                        \
	b.name = 20 - i % 3;                    \
	i++;
	RAW_MIB_FIELDS(SET)
#undef SET
	/* Overlap: b allocated before a was freed; same CPUs on both sides. */
	b.AllocTimestamp = 5;
	a.DeallocTimestamp = 9;
	b.AllocCpuId = a.AllocCpuId = 3;
	b.DeallocCpuId = 4;
	a.DeallocCpuId = 5;
	m = a;
	memprof_rt_mib_merge(&m, &b);
#define SUM(x, y) ((x) + (y))
#define MIN(x, y) ((x) < (y) ? (x) : (y))
#define MAX(x, y) ((x) > (y) ? (x) : (y))
#define LAST(x, y) (y)
#define KEEP(x, y) (x)
#define HLEN(x, y) MAX(x, y)
#define OVLP(x, y) ((x) + 1)
#define SAMEA(x, y) ((x) + 1)
#define SAMED(x, y) ((x) + 0)
#define CHECK(name, tag, width, off, ver, merge)                              \
	ck_assert_msg(m.name == merge(a.name, b.name), #name " (" #merge "): %llu", \
		      (unsigned long long)m.name);
	RAW_MIB_FIELDS(CHECK)
#undef CHECK
}
END_TEST

START_TEST(size_classes_are_whole_granules)
{
	for (unsigned c = 0; c < RT_NCLASS; c++) {
		uint32_t s = memprof_rt_class_size(c);

		ck_assert_uint_eq(s % MEMPROF_GRANULE, 0);
		if (c == 0) {
			ck_assert_uint_eq(s, 64);
		} else {
			uint32_t p = memprof_rt_class_size(c - 1);

			ck_assert_uint_gt(s, p);
			ck_assert_uint_le((uint64_t)s * 4, (uint64_t)p * 5 + 4 * 64);
		}
	}
	ck_assert_uint_eq(memprof_rt_class_size(RT_NCLASS - 1), RT_SMALL_MAX);
}
END_TEST

struct span {
	uintptr_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

START_TEST(allocations_never_share_a_granule)
{
	static struct span g[2000];

	for (int i = 0; i < 2000; i++) {
		size_t n = (size_t)(i * 7919 % 5000) + 1;
		char *p = i % 3 ? malloc(n) : aligned_alloc((size_t)64 << (i % 4), n);

		ck_assert_ptr_nonnull(p);
		/* The granules the object and its header occupy. */
		g[i].lo = ((uintptr_t)p - RT_HDR) >> MEMPROF_SHADOW_SCALE;
		g[i].hi = ((uintptr_t)p + n - 1) >> MEMPROF_SHADOW_SCALE;
	}
	qsort(g, 2000, sizeof(g[0]), by_lo);
	for (int i = 1; i < 2000; i++)
		ck_assert_msg(g[i - 1].hi < g[i].lo, "objects %d and %d share a granule", i - 1, i);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runtime");
	TCase *tc = tcase_create("mib");
	SRunner *sr;
	int failed;

	memprof_set_dump_at_exit(0);
	tcase_add_test(tc, pack_puts_every_field_at_its_offset);
	tcase_add_test(tc, one_object_as_compiler_rt);
	tcase_add_test(tc, merge_follows_the_rules_of_raw_format_h);
	tcase_add_test(tc, size_classes_are_whole_granules);
	tcase_add_test(tc, allocations_never_share_a_granule);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);	/* CK_VERBOSITY, default normal */
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
