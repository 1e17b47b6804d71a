/*
 * The merge's table of folded raw contexts (src/cli/ctab.c): one entry
 * per distinct stack however the folds are ordered, grouped and spread
 * over threads; MIBs folded by mib_fold() with weights; histograms added.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "merge/ctab.h"

#define NSTACKS 20000	/* enough for every shard to grow several times */

/* Stack I: 1 to 16 keys, all distinct from every other stack's. */
static uint32_t stack_of(uint32_t i, uint64_t *keys)
{
	uint32_t n = 1 + i % 16;

	for (uint32_t k = 0; k < n; k++)
		keys[k] = (uint64_t)i << 8 | k;
	return n;
}

static void mib_of(uint32_t i, uint64_t count, struct mp_mib *m)
{
	memset(m, 0, sizeof(*m));
	m->v[MIB_AllocCount] = count;
	m->v[MIB_TotalSize] = 8 * count;
	m->v[MIB_MinSize] = m->v[MIB_MaxSize] = 8;
	m->v[MIB_AllocTimestamp] = i;
}

static const struct ctab_entry *find(const struct ctab *t, const uint64_t *keys,
				     uint32_t n)
{
	for (size_t s = 0; s < CTAB_SHARDS; s++)
		for (size_t i = 0; i < t->shard[s].n; i++) {
			const struct ctab_entry *e = t->shard[s].list[i];

			if (e->nkeys == n &&
			    !memcmp(e->keys, keys, n * sizeof(*keys)))
				return e;
		}
	return NULL;
}

/* Fold every stack ROUNDS times, then check one entry each. */
START_TEST(equal_stacks_fold)
{
	uint64_t keys[16];
	struct mp_mib m;
	struct ctab t;
	struct mp_arena a = MP_ARENA_INIT;
	struct ctab_entry *added;

	ctab_init(&t);
	for (int round = 0; round < 3; round++)
		for (uint32_t i = 0; i < NSTACKS; i++) {
			uint32_t n = stack_of(i, keys);

			mib_of(i, 1 + (uint64_t)round, &m);
			ck_assert_int_eq(ctab_fold(&t, &a, keys, n, &m, NULL, 0,
						   NULL, 0, round == 2 ? 10 : 1,
						   &added),
					 MP_OK);
			ck_assert((added != NULL) == (round == 0));
		}
	ck_assert_uint_eq(ctab_count(&t), NSTACKS);
	for (uint32_t i = 0; i < NSTACKS; i += 997) {
		uint32_t n = stack_of(i, keys);
		const struct ctab_entry *e = find(&t, keys, n);

		ck_assert_ptr_nonnull(e);
		/* 1 + 2 + 3 x weight 10; sizes scale, the minimum does not. */
		ck_assert_uint_eq(e->mib.v[MIB_AllocCount], 33);
		ck_assert_uint_eq(e->mib.v[MIB_TotalSize], 8 * 33);
		ck_assert_uint_eq(e->mib.v[MIB_MinSize], 8);
	}
	/* A prefix of a stack is another stack. */
	stack_of(15, keys);
	ck_assert_ptr_null(find(&t, keys, 3));
	ctab_release(&t);
	mp_arena_release(&a);
}
END_TEST

/* Batches fold as single folds do: the same stacks, batched and not. */
START_TEST(batches_fold_alike)
{
	uint64_t keys[16 * 16];
	struct mp_mib m[16];
	struct ctab_item items[16];
	uint32_t order[16];
	struct ctab t;
	struct mp_arena a = MP_ARENA_INIT;
	struct ctab_entry *added;

	ctab_init(&t);
	for (int round = 0; round < 2; round++)
		for (uint32_t i = 0; i < NSTACKS; i += 16) {
			for (uint32_t b = 0; b < 16; b++) {
				items[b].n = stack_of(i + b, keys + 16 * b);
				items[b].keys = keys + 16 * b;
				items[b].hash = ctab_hash(items[b].keys, items[b].n);
				mib_of(i + b, 1, &m[b]);
				items[b].mib = &m[b];
			}
			ck_assert_int_eq(ctab_fold_batch(&t, &a, items, order, 16, 3), MP_OK);
			for (uint32_t b = 0; b < 16; b++)
				ck_assert((items[b].added != NULL) == (round == 0));
		}
	for (uint32_t i = 0; i < NSTACKS; i++) {
		uint32_t n = stack_of(i, keys);

		mib_of(i, 1, &m[0]);
		ck_assert_int_eq(ctab_fold(&t, &a, keys, n, &m[0], NULL, 0, NULL, 0, 1, &added),
				 MP_OK);
		ck_assert(!added);
	}
	ck_assert_uint_eq(ctab_count(&t), NSTACKS);
	for (uint32_t i = 0; i < NSTACKS; i += 997) {
		uint32_t n = stack_of(i, keys);
		const struct ctab_entry *e = find(&t, keys, n);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->mib.v[MIB_AllocCount], 3 + 3 + 1);
	}
	ctab_release(&t);
	mp_arena_release(&a);
}
END_TEST

START_TEST(histograms_add_and_grow)
{
	const uint64_t keys[] = { 7, 8 };
	const uint64_t h1[] = { 1, 2 }, h2[] = { 10, 20, 30 };
	struct mp_mib m;
	struct ctab t;
	struct mp_arena a = MP_ARENA_INIT;
	const struct ctab_entry *e;
	struct ctab_entry *added;

	ctab_init(&t);
	mib_of(0, 1, &m);
	ck_assert_int_eq(ctab_fold(&t, &a, keys, 2, &m, h1, 2, NULL, 0, 1, &added), MP_OK);
	ck_assert_int_eq(ctab_fold(&t, &a, keys, 2, &m, h2, 3, NULL, 0, 2, &added), MP_OK);
	e = find(&t, keys, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->nhist, 3);
	ck_assert_uint_eq(e->mib.v[MIB_AccessHistogramSize], 3);
	ck_assert_uint_eq(e->hist[0], 21);
	ck_assert_uint_eq(e->hist[1], 42);
	ck_assert_uint_eq(e->hist[2], 60);
	ctab_release(&t);
	mp_arena_release(&a);
}
END_TEST

struct folder {
	struct ctab *t;
	uint32_t first, step;
	struct mp_arena arena;	/* the thread's own */
};

static void *fold_some(void *arg)
{
	struct folder *f = arg;
	struct mp_arena *a = &f->arena;
	uint64_t keys[16];
	struct mp_mib m;
	struct ctab_entry *added;

	for (uint32_t i = f->first; i < NSTACKS; i += f->step) {
		uint32_t n = stack_of(i, keys);

		mib_of(i, 1, &m);
		if (ctab_fold(f->t, a, keys, n, &m, NULL, 0, NULL, 0, 1, &added))
			return (void *)1;
		/* Every stack also arrives from a second thread. */
		if (ctab_fold(f->t, a, keys, n, &m, NULL, 0, NULL, 0, 1, &added))
			return (void *)1;
	}
	return NULL;
}

/* Four threads, each stack folded by two of them: 4 folds per stack. */
START_TEST(threads_fold_alike)
{
	struct ctab t;
	struct folder f[4];
	pthread_t th[4];
	uint64_t keys[16];

	ctab_init(&t);
	for (uint32_t k = 0; k < 4; k++) {
		f[k] = (struct folder){ &t, k / 2, 2, MP_ARENA_INIT };
		ck_assert_int_eq(pthread_create(&th[k], NULL, fold_some, &f[k]), 0);
	}
	for (int k = 0; k < 4; k++) {
		void *r;

		pthread_join(th[k], &r);
		ck_assert_ptr_null(r);
	}
	ck_assert_uint_eq(ctab_count(&t), NSTACKS);
	for (uint32_t i = 0; i < NSTACKS; i += 101) {
		uint32_t n = stack_of(i, keys);
		const struct ctab_entry *e = find(&t, keys, n);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->mib.v[MIB_AllocCount], 4);
	}
	ctab_release(&t);
	for (int k = 0; k < 4; k++)
		mp_arena_release(&f[k].arena);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ctab");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, equal_stacks_fold);
	tcase_add_test(tc, batches_fold_alike);
	tcase_add_test(tc, histograms_add_and_grow);
	tcase_add_test(tc, threads_fold_alike);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
