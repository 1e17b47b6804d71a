/* Sample entries of sampled profiles: folding and the 95 % intervals. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "common/mp_samp.h"

/* An entry of N samples at interval R whose bytes estimate is BYTES and
 * variance VAR (the count: BYTES / SIZE, one size). */
static struct mp_samp entry(uint64_t r, uint64_t n, uint64_t u, double bytes,
			    double var, double size)
{
	struct mp_samp s = { r, n, u, { 0 }, { 0 } };

	/* Invalid values leave the entry's zeros: see invalid_entries. */
	mp_samp_set(&s, mp_samp_index(MIB_TotalSize), bytes, var);
	mp_samp_set(&s, mp_samp_index(MIB_AllocCount), bytes / size,
		    var / (size * size));
	return s;
}

START_TEST(fold_adds_equal_intervals_and_sorts)
{
	struct mp_samp list[4], b[2];
	uint32_t n = 0;

	b[0] = entry(8192, 3, 30, 300, 9, 10);
	b[1] = entry(4096, 2, 20, 200, 4, 10);
	mp_samp_fold(list, &n, b, 2, 1);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(list[0].interval, 4096);
	ck_assert_uint_eq(list[1].interval, 8192);
	mp_samp_fold(list, &n, b, 1, 1);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(list[1].n, 6);
	ck_assert_uint_eq(list[1].u, 60);
	ck_assert(mp_samp_est(&list[1], mp_samp_index(MIB_TotalSize)) == 600);
	mp_samp_scale(&list[0], 3);
	ck_assert_uint_eq(list[0].n, 6);
	ck_assert(mp_samp_var(&list[0], mp_samp_index(MIB_TotalSize)) == 12);
}
END_TEST

START_TEST(normal_interval_from_twenty_samples)
{
	struct mp_mib m = { { 0 } };
	struct mp_samp s = entry(4096, 100, 5000, 1e6, 1e8, 100);
	double lo, hi;

	m.v[MIB_TotalSize] = 1000000;
	m.v[MIB_AllocCount] = 10000;
	mp_samp_ci95(&m, &s, 1, MIB_TotalSize, &lo, &hi);
	ck_assert_double_eq_tol(lo, 1e6 - 1.96e4, 1);
	ck_assert_double_eq_tol(hi, 1e6 + 1.96e4, 1);
	/* Fields that are not estimated, and exact contexts: the value. */
	m.v[MIB_MaxSize] = 100;
	mp_samp_ci95(&m, &s, 1, MIB_MaxSize, &lo, &hi);
	ck_assert(lo == 100 && hi == 100);
	mp_samp_ci95(&m, NULL, 0, MIB_TotalSize, &lo, &hi);
	ck_assert(lo == 1e6 && hi == 1e6);
}
END_TEST

/*
 * Below twenty samples, the seed's negative-binomial interval: its table
 * for p = 1/102400 gives, for 8 samples, the failures' 2.5 % and 97.5 %
 * quantiles 353666 and 1476870 (our gamma limit is within 0.1 %).
 */
START_TEST(negative_binomial_interval_matches_the_seed)
{
	struct mp_mib m = { { 0 } };
	struct mp_samp s = entry(102400, 8, 10908, 819200, 1e10, 16);
	double lo, hi;

	m.v[MIB_TotalSize] = 819200;
	m.v[MIB_AllocCount] = 51200;
	mp_samp_ci95(&m, &s, 1, MIB_TotalSize, &lo, &hi);
	ck_assert_double_eq_tol(lo, 353666 + 10908, 353666 * 1e-3);
	ck_assert_double_eq_tol(hi, 1476870 + 10908, 1476870 * 1e-3);
	/* The count's interval is the bytes' over the size. */
	mp_samp_ci95(&m, &s, 1, MIB_AllocCount, &lo, &hi);
	ck_assert_double_eq_tol(lo, (353666 + 10908) / 16.0, 30);
	ck_assert_double_eq_tol(hi, (1476870 + 10908) / 16.0, 100);
}
END_TEST

/*
 * Counts of objects or of consecutive pairs with a property: what the
 * sampled objects show (none here) bounds nothing but the count does.
 */
START_TEST(pair_counts_take_the_count_bound)
{
	struct mp_mib m = { { 0 } };
	struct mp_samp s = entry(102400, 8, 10908, 819200, 1e10, 16);
	double clo, chi, lo, hi;

	m.v[MIB_TotalSize] = 819200;
	m.v[MIB_AllocCount] = 51200;
	mp_samp_ci95(&m, &s, 1, MIB_AllocCount, &clo, &chi);
	mp_samp_ci95(&m, &s, 1, MIB_NumLifetimeOverlaps, &lo, &hi);
	ck_assert(lo == 0);
	ck_assert_double_eq_tol(hi, chi - 1, 1e-6);
	mp_samp_ci95(&m, &s, 1, MIB_NumMigratedCpu, &lo, &hi);
	ck_assert(lo == 0);
	ck_assert_double_eq_tol(hi, chi, 1e-6);
	/* Every object certain to be sampled: exact, whatever the field. */
	s = entry(1, 8, 0, 800, 0, 100);
	m.v[MIB_AllocCount] = 8;
	m.v[MIB_NumSameAllocCpu] = 7;
	mp_samp_ci95(&m, &s, 1, MIB_NumSameAllocCpu, &lo, &hi);
	ck_assert(lo == 7 && hi == 7);
}
END_TEST

START_TEST(exact_part_is_added_to_both_ends)
{
	struct mp_mib m = { { 0 } };
	struct mp_samp s = entry(4096, 100, 5000, 1e6, 1e8, 100);
	double lo, hi;

	/* 5000 bytes of the MIB were recorded exactly. */
	m.v[MIB_TotalSize] = 1005000;
	mp_samp_ci95(&m, &s, 1, MIB_TotalSize, &lo, &hi);
	ck_assert_double_eq_tol(lo, 1005000 - 1.96e4, 1);
	ck_assert_double_eq_tol(hi, 1005000 + 1.96e4, 1);
}
END_TEST

/*
 * What was recorded is certain: N sampled objects of at least the MIB's
 * minimum, one of its maximum.  One object of 32 KiB sampled at 4 KiB
 * (the helper's xmllint run) had a lower end of 31067 bytes.
 */
START_TEST(recorded_objects_bound_the_lower_end)
{
	struct mp_mib m = { { 0 } };
	struct mp_samp s = entry(4096, 1, 20000, 32768, 4e8, 32768);
	double lo, hi;

	mp_samp_set(&s, mp_samp_index(MIB_TotalAccessCount), 18994, 1e8);
	m.v[MIB_AllocCount] = 1;
	m.v[MIB_TotalSize] = m.v[MIB_MinSize] = m.v[MIB_MaxSize] = 32768;
	m.v[MIB_TotalAccessCount] = 18994;
	m.v[MIB_MinAccessCount] = m.v[MIB_MaxAccessCount] = 18994;
	mp_samp_ci95(&m, &s, 1, MIB_TotalSize, &lo, &hi);
	ck_assert(lo == 32768 && hi > lo);
	mp_samp_ci95(&m, &s, 1, MIB_TotalAccessCount, &lo, &hi);
	ck_assert(lo == 18994 && hi > lo);
	/* Thirty objects of at least 1000 bytes, a wide normal interval. */
	s = entry(4096, 30, 10000, 40000, 1e9, 1333);
	m.v[MIB_AllocCount] = 30;
	m.v[MIB_TotalSize] = 40000;
	m.v[MIB_MinSize] = 1000;
	m.v[MIB_MaxSize] = 5000;
	mp_samp_ci95(&m, &s, 1, MIB_TotalSize, &lo, &hi);
	ck_assert(lo == 30000);
	ck_assert_double_eq_tol(hi, 40000 + 1.96 * sqrt(1e9), 1);
}
END_TEST

/*
 * A context of growing sizes (a string doubling from 101 bytes to 1.6 MB,
 * 15 objects, at R = 32768): its six largest objects are sampled for
 * certain, and one of 401 bytes was too, with weight 1 / 0.0122 = 82.
 * The count's estimate is 88, almost all of it that one weight; the
 * bytes' interval scaled by count / bytes said [87, 96], which excluded
 * the truth (15) in 191 of 200 seeds of such a run.  The interval now
 * reaches the normal one's ends, whose sd is about that weight.
 */
START_TEST(one_heavy_sample_widens_the_count)
{
	struct mp_mib m = { { 0 } };
	struct mp_samp s = { 32768, 7, 3100000, { 0 }, { 0 } };
	double p = 1 - pow(1 - 1.0 / 32768, 401), w = 1 / p;
	double cvar = (1 - p) / (p * p), bytes = 3200000 + 401 * w;
	double lo, hi;

	mp_samp_set(&s, mp_samp_index(MIB_AllocCount), 6 + w, cvar);
	mp_samp_set(&s, mp_samp_index(MIB_TotalSize), bytes, 401.0 * 401 * cvar);
	m.v[MIB_AllocCount] = (uint64_t)(6 + w + 0.5);
	m.v[MIB_TotalSize] = (uint64_t)bytes;
	m.v[MIB_MinSize] = 401;
	m.v[MIB_MaxSize] = 1638401;
	mp_samp_ci95(&m, &s, 1, MIB_AllocCount, &lo, &hi);
	ck_assert_msg(lo <= 15 && lo >= 7, "[%g, %g]", lo, hi);
	ck_assert_double_eq_tol(hi, 6 + w + 1.96 * sqrt(cvar), 1);
}
END_TEST

/* Fixed-point sums: any order of folding gives the same bits. */
START_TEST(folding_order_does_not_matter)
{
	struct mp_samp a = entry(4096, 1, 1, 0.1, 0.3, 1);
	struct mp_samp b = entry(4096, 1, 1, 1e17, 0.7, 1);
	struct mp_samp c = entry(4096, 1, 1, -0.0 + 3.3, 1e-3, 1);
	struct mp_samp x = a, y = c;

	mp_samp_add(&x, &b);
	mp_samp_add(&x, &c);
	mp_samp_add(&y, &b);
	mp_samp_add(&y, &a);
	ck_assert(memcmp(x.est, y.est, sizeof(x.est)) == 0);
	ck_assert(memcmp(x.var, y.var, sizeof(x.var)) == 0);
}
END_TEST

/* A sum read back from a file (binary64) and written again is the same:
 * near 2^52 units, rounding half up would turn odd values even. */
START_TEST(file_round_trip_is_stable)
{
	struct mp_samp a = { 4096, 1, 1, { 0 }, { 0 } }, b = a;
	double d[] = { 0x1p32 + 0.5 / (1 << 20), 0x1p32 + 1.0 / (1 << 20),
		       (0x1p52 + 1) / (1 << 20), (0x1p53 - 1) / (1 << 20), 1e20, 0.1 };

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		ck_assert(mp_samp_set(&a, 0, d[i], d[i]));
		ck_assert(mp_samp_set(&b, 0, mp_samp_est(&a, 0), mp_samp_var(&a, 0)));
		ck_assert_msg(a.est[0] == b.est[0] && a.var[0] == b.var[0], "%a", d[i]);
	}
}
END_TEST

START_TEST(invalid_entries)
{
	struct mp_samp s = entry(4096, 1, 1, 10, 1, 10);

	ck_assert(mp_samp_valid(&s));
	s.interval = 0;
	ck_assert(!mp_samp_valid(&s));
	s = entry(4096, 0, 1, 10, 1, 10);
	ck_assert(!mp_samp_valid(&s));
	ck_assert(!mp_samp_set(&s, 0, NAN, 1));
	ck_assert(!mp_samp_set(&s, 0, 1, -1));
	ck_assert(!mp_samp_set(&s, 0, INFINITY, 1));
	ck_assert(mp_samp_set(&s, 0, 1e300, 1e300));	/* saturates */
	ck_assert(mp_samp_est(&s, 0) > 1e31);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("samp");
	TCase *tc = tcase_create("samp");

	tcase_add_test(tc, fold_adds_equal_intervals_and_sorts);
	tcase_add_test(tc, normal_interval_from_twenty_samples);
	tcase_add_test(tc, negative_binomial_interval_matches_the_seed);
	tcase_add_test(tc, exact_part_is_added_to_both_ends);
	tcase_add_test(tc, one_heavy_sample_widens_the_count);
	tcase_add_test(tc, recorded_objects_bound_the_lower_end);
	tcase_add_test(tc, pair_counts_take_the_count_bound);
	tcase_add_test(tc, folding_order_does_not_matter);
	tcase_add_test(tc, file_round_trip_is_stable);
	tcase_add_test(tc, invalid_entries);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
