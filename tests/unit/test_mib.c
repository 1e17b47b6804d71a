/* The MIB merge rules, field by field. */
#include <check.h>
#include <stdlib.h>

#include "check_run.h"
#include "common/mp_mib.h"

/* Distinct sentinel values so a field taken from the wrong side shows. */
static void fill(struct mp_mib *m, uint64_t base)
{
	for (int i = 0; i < MIB__COUNT; i++)
		m->v[i] = base + (uint64_t)i;
}

START_TEST(runtime_sums_mins_maxes)
{
	struct mp_mib a, b;

	fill(&a, 100);
	fill(&b, 1000);
	mib_merge_runtime(&a, &b);
	for (int i = 0; i < MIB__COUNT; i++) {
		uint64_t x = 100 + (uint64_t)i, y = 1000 + (uint64_t)i;

		switch (mib_fields[i].rule) {
		case MIB_RULE_SUM:
			ck_assert_msg(a.v[i] == x + y, "%s", mib_fields[i].name);
			break;
		case MIB_RULE_MIN:
			ck_assert_msg(a.v[i] == x, "%s", mib_fields[i].name);
			break;
		case MIB_RULE_MAX:
		case MIB_RULE_HLEN:
		case MIB_RULE_LAST:
			ck_assert_msg(a.v[i] == y, "%s", mib_fields[i].name);
			break;
		case MIB_RULE_KEEP:
			ck_assert_msg(a.v[i] == x, "%s", mib_fields[i].name);
			break;
		default:
			break;
		}
	}
}
END_TEST

START_TEST(runtime_migrated_cpu_is_summed)
{
	struct mp_mib a = { 0 }, b = { 0 };

	a.v[MIB_NumMigratedCpu] = 3;
	b.v[MIB_NumMigratedCpu] = 4;
	mib_merge_runtime(&a, &b);
	/* LLVM keeps the first (3); it is a count, so 7. */
	ck_assert_uint_eq(a.v[MIB_NumMigratedCpu], 7);
}
END_TEST

START_TEST(runtime_overlap_and_same_cpu)
{
	struct mp_mib a = { 0 }, b = { 0 };

	a.v[MIB_AllocTimestamp] = 10;
	a.v[MIB_DeallocTimestamp] = 50;
	a.v[MIB_AllocCpuId] = 2;
	a.v[MIB_DeallocCpuId] = 3;
	a.v[MIB_NumLifetimeOverlaps] = 5;
	a.v[MIB_NumSameAllocCpu] = 6;
	a.v[MIB_NumSameDeallocCpu] = 7;
	b.v[MIB_AllocTimestamp] = 40;	/* before a's dealloc: overlap */
	b.v[MIB_DeallocTimestamp] = 60;
	b.v[MIB_AllocCpuId] = 2;	/* same alloc cpu */
	b.v[MIB_DeallocCpuId] = 9;	/* different dealloc cpu */
	mib_merge_runtime(&a, &b);
	ck_assert_uint_eq(a.v[MIB_NumLifetimeOverlaps], 6);
	ck_assert_uint_eq(a.v[MIB_NumSameAllocCpu], 7);
	ck_assert_uint_eq(a.v[MIB_NumSameDeallocCpu], 7);
	ck_assert_uint_eq(a.v[MIB_AllocTimestamp], 40);
	ck_assert_uint_eq(a.v[MIB_DeallocTimestamp], 60);
	ck_assert_uint_eq(a.v[MIB_AllocCpuId], 2);
	ck_assert_uint_eq(a.v[MIB_DeallocCpuId], 9);

	/* Allocated after the last deallocation: no overlap. */
	b.v[MIB_AllocTimestamp] = 70;
	b.v[MIB_DeallocTimestamp] = 80;
	mib_merge_runtime(&a, &b);
	ck_assert_uint_eq(a.v[MIB_NumLifetimeOverlaps], 6);
}
END_TEST

START_TEST(fold_is_commutative_and_associative)
{
	struct mp_mib x, y, z, ab, ba, l, r;

	fill(&x, 10);
	fill(&y, 500);
	fill(&z, 7);
	x.v[MIB_DeallocTimestamp] = 9000;	/* x is the newest */
	z.v[MIB_DataTypeId] = 0;
	ab = x;
	mib_fold(&ab, &y);
	ba = y;
	mib_fold(&ba, &x);
	ck_assert_mem_eq(&ab, &ba, sizeof(ab));
	ck_assert_uint_eq(ab.v[MIB_AllocTimestamp], x.v[MIB_AllocTimestamp]);

	l = x;			/* (x + y) + z */
	mib_fold(&l, &y);
	mib_fold(&l, &z);
	r = y;			/* x + (y + z) */
	mib_fold(&r, &z);
	{
		struct mp_mib t = x;

		mib_fold(&t, &r);
		r = t;
	}
	ck_assert_mem_eq(&l, &r, sizeof(l));
	ck_assert_uint_eq(l.v[MIB_NumLifetimeOverlaps],
			  x.v[MIB_NumLifetimeOverlaps] +
			  y.v[MIB_NumLifetimeOverlaps] +
			  z.v[MIB_NumLifetimeOverlaps]);
}
END_TEST

START_TEST(scale_counts_not_extremes)
{
	struct mp_mib m;

	fill(&m, 1);
	mib_scale(&m, 3);
	ck_assert_uint_eq(m.v[MIB_AllocCount], 3 * (1 + MIB_AllocCount));
	ck_assert_uint_eq(m.v[MIB_TotalSize], 3 * (1 + MIB_TotalSize));
	ck_assert_uint_eq(m.v[MIB_MinSize], 1 + MIB_MinSize);
	ck_assert_uint_eq(m.v[MIB_MaxLifetime], 1 + MIB_MaxLifetime);
	ck_assert_uint_eq(m.v[MIB_AllocTimestamp], 1 + MIB_AllocTimestamp);
	m.v[MIB_TotalSize] = UINT64_MAX / 2;
	mib_scale(&m, 4);
	ck_assert_uint_eq(m.v[MIB_TotalSize], UINT64_MAX);	/* saturates */
}
END_TEST

START_TEST(histograms_add_keeping_the_longer)
{
	uint64_t a[4] = { 1, 2, 0, 0 }, b[4] = { 10, 20, 30, 40 };
	uint32_t n;

	n = mib_hist_add(a, 2, b, 4);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(a[0], 11);
	ck_assert_uint_eq(a[1], 22);
	ck_assert_uint_eq(a[2], 30);
	ck_assert_uint_eq(a[3], 40);
	n = mib_hist_add(a, 4, b, 1);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(a[0], 21);
	ck_assert_uint_eq(a[3], 40);
}
END_TEST

/*
 * Types as LLVM decides them, and classes that survive folding: MIBs of
 * one class (random around the thresholds, LLVM's and a 1 s lifetime)
 * fold into a MIB of that class, and so of that type; two not-cold MIBs
 * of different classes can fold into a cold one, which is why the
 * classes exist.
 */
static struct mp_mib typed(uint64_t count, uint64_t density100,
			   uint64_t lifetime_ms)
{
	struct mp_mib m = { { 0 } };

	m.v[MIB_AllocCount] = count;
	m.v[MIB_TotalLifetimeAccessDensity] = density100 * count;
	m.v[MIB_TotalLifetime] = lifetime_ms * count;
	return m;
}

START_TEST(types_and_classes)
{
	struct mib_thresholds t = MIB_THRESHOLDS_DEFAULT, one = t;
	struct mp_mib cold = typed(10, 4, 300000), hot = typed(3, 100001, 5);
	struct mp_mib dense = typed(1000, 6, 500000), brief = typed(1000, 0, 10);
	struct mp_mib sum = dense;
	unsigned seed = 12345;

	one.cold_lifetime = 1;
	ck_assert_int_eq(mib_alloc_type(&cold, &t), MIB_COLD);
	ck_assert_int_eq(mib_alloc_type(&hot, &t), MIB_HOT);
	ck_assert_int_eq(mib_alloc_type(&dense, &t), MIB_NOTCOLD);
	ck_assert_int_eq(mib_alloc_type(&brief, &t), MIB_NOTCOLD);
	ck_assert_int_eq(mib_alloc_type(&brief, &one), MIB_NOTCOLD);
	ck_assert_str_eq(mib_type_name(MIB_NOTCOLD), "notcold");
	/* Two not-cold MIBs, one too dense, one too brief: a cold sum. */
	mib_fold(&sum, &brief);
	ck_assert_int_eq(mib_alloc_type(&sum, &t), MIB_COLD);
	ck_assert_int_ne(mib_alloc_class(&dense, &t), mib_alloc_class(&brief, &t));
	for (int round = 0; round < 20000; round++) {
		const struct mib_thresholds *th = round & 1 ? &one : &t;
		struct mp_mib a = typed(1 + rand_r(&seed) % 1000,
					(uint64_t)rand_r(&seed) % 12,
					(uint64_t)rand_r(&seed) % 400000);
		struct mp_mib b = typed(1 + rand_r(&seed) % 1000,
					(uint64_t)rand_r(&seed) % 12,
					(uint64_t)rand_r(&seed) % 400000);
		enum mib_class k = mib_alloc_class(&a, th);

		if (round % 7 == 0)	/* now and then a hot one */
			b.v[MIB_TotalLifetimeAccessDensity] *= 100000;
		if (mib_alloc_class(&b, th) != k)
			continue;
		mib_fold(&a, &b);
		ck_assert_int_eq(mib_alloc_class(&a, th), k);
	}
}
END_TEST

START_TEST(field_table)
{
	ck_assert_int_eq(mib_field_by_name("AllocCount"), MIB_AllocCount);
	ck_assert_int_eq(mib_field_by_name("totalsize"), MIB_TotalSize);
	ck_assert_int_eq(mib_field_by_name("nope"), -1);
	for (int i = 0; i < MIB__COUNT; i++) {
		ck_assert_int_eq(mib_fields[i].tag, i + 1);
		ck_assert_int_eq(mib_field_by_tag(mib_fields[i].tag), i);
		ck_assert(mib_fields[i].offset + mib_fields[i].width <=
			  RAW_MIB_SIZE_V4);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mib");
	TCase *tc = tcase_create("merge");

	tcase_add_test(tc, runtime_sums_mins_maxes);
	tcase_add_test(tc, runtime_migrated_cpu_is_summed);
	tcase_add_test(tc, runtime_overlap_and_same_cpu);
	tcase_add_test(tc, fold_is_commutative_and_associative);
	tcase_add_test(tc, scale_counts_not_extremes);
	tcase_add_test(tc, histograms_add_keeping_the_longer);
	tcase_add_test(tc, field_table);
	tcase_add_test(tc, types_and_classes);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
