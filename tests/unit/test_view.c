/*
 * The profile model: view_keep_top() keeps of each indexed input the
 * contexts a whole view ranks first, in the file's order, and counts
 * every context in the totals (contexts, summed MIBs, folded samples) as
 * a whole view does.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "indexed/idx.h"
#include "profile/view.h"

#define FRAME(fn, l) { .function = fn, .file = "/src/v.c", .line = l, .column = 1 }

/*
 * An indexed profile of N contexts in BUF: stack i is leaf g<i>, then
 * f<i % 7>, then main; AllocCount i % 13 + SALT (ties by the dozen),
 * TotalSize N - i, TotalLifetime i * 3 % 101; every fifth context has
 * a sample entry.
 */
static void profile_of(uint32_t n, uint64_t salt, struct mp_buf *buf)
{
	struct idx_builder b;
	struct mp_err err = { 0 };
	struct mp_frame top = FRAME("main", 1);
	uint32_t stack[3], main_id, mid[7];
	char *data = NULL;
	size_t len = 0;
	FILE *fp;

	idx_builder_init(&b);
	ck_assert_int_eq(idx_builder_frame(&b, &top, &main_id), MP_OK);
	for (uint32_t k = 0; k < 7; k++) {
		char name[16];
		struct mp_frame fr = FRAME(name, 10 + k);

		snprintf(name, sizeof(name), "f%u", k);
		ck_assert_int_eq(idx_builder_frame(&b, &fr, &mid[k]), MP_OK);
	}
	for (uint32_t i = 0; i < n; i++) {
		char name[16];
		struct mp_frame fr = FRAME(name, 100 + i);
		struct mp_mib m = { { 0 } };

		snprintf(name, sizeof(name), "g%u", i);
		ck_assert_int_eq(idx_builder_frame(&b, &fr, &stack[0]), MP_OK);
		stack[1] = mid[i % 7];
		stack[2] = main_id;
		m.v[MIB_AllocCount] = i % 13 + salt;
		m.v[MIB_TotalSize] = n - i;
		m.v[MIB_TotalLifetime] = i * 3 % 101;
		m.v[MIB_TotalAccessCount] = i;
		ck_assert_int_eq(idx_builder_add_stack(&b, stack, 3, &m, NULL, 0, 1,
						       &err), MP_OK);
		if (i % 5 == 0) {
			struct mp_samp s = { .interval = 4096, .n = 1 + i % 3,
					     .u = 7 };

			for (int k = 0; k < MP_SAMP_NFIELDS; k++)
				ck_assert(mp_samp_set(&s, k, 10.0 * i + k, i));
			ck_assert_int_eq(idx_builder_add_samples(&b, &s, 1, 1, &err),
					 MP_OK);
		}
	}
	idx_builder_count_inputs(&b, 1);
	fp = open_memstream(&data, &len);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(idx_builder_write(&b, fp, &err), MP_OK);
	ck_assert_int_eq(fclose(fp), 0);
	idx_builder_release(&b);
	memset(buf, 0, sizeof(*buf));
	buf->data = (unsigned char *)data;
	buf->size = len;
}

/* V with the two profiles (500 and 300 contexts) added. */
static void load(struct view *v, size_t top, enum mib_field key)
{
	static const struct { uint32_t n; uint64_t salt; } in[] = {
		{ 500, 0 }, { 300, 5 },
	};
	struct mp_err err = { 0 };

	view_init(v);
	view_keep_top(v, key, top);
	for (size_t i = 0; i < 2; i++) {
		struct mp_buf buf;

		profile_of(in[i].n, in[i].salt, &buf);
		ck_assert_int_eq(view_add_buf(v, i ? "b" : "a", &buf, NULL, &err),
				 MP_OK);
	}
}

/* Does context A rank before B by KEY (as `show` ranks, A at place PA)? */
static bool ranks_before(const struct view_context *a, size_t pa,
			 const struct view_context *b, size_t pb,
			 enum mib_field key)
{
	if (a->mib.v[key] != b->mib.v[key])
		return a->mib.v[key] > b->mib.v[key];
	if (a->input != b->input)
		return a->input < b->input;
	if (a->id != b->id)
		return a->id < b->id;
	return pa < pb;
}

static const size_t tops[] = { 1, 2, 12, 13, 299, 300, 301, 499, 500, 10000 };
static const enum mib_field keys[] = {
	MIB_AllocCount, MIB_TotalSize, MIB_TotalLifetime,
};

/*
 * _i picks the key, each N of tops[]: every context of an input ranked
 * among its input's first N is kept, no other, in the file's order; the
 * totals, the inputs' counts and the folded samples are the whole view's.
 */
START_TEST(keep_top_keeps_the_first_of_each_input)
{
	enum mib_field key = keys[_i];
	struct view all;

	load(&all, 0, key);
	ck_assert_uint_eq(all.ncontexts, 800);
	ck_assert_uint_eq(all.nall, 800);
	for (size_t t = 0; t < sizeof(tops) / sizeof(tops[0]); t++) {
		struct view v;
		size_t k = 0;

		load(&v, tops[t], key);
		ck_assert_uint_eq(v.nall, all.nall);
		ck_assert_mem_eq(&v.sums, &all.sums, sizeof(v.sums));
		ck_assert_uint_eq(v.nsamp, all.nsamp);
		ck_assert(v.nsamp > 0);
		ck_assert_mem_eq(v.samp, all.samp, v.nsamp * sizeof(*v.samp));
		for (size_t in = 0; in < 2; in++) {
			ck_assert_uint_eq(v.inputs[in].ncontexts,
					  all.inputs[in].ncontexts);
			ck_assert_uint_eq(v.inputs[in].nsampled,
					  all.inputs[in].nsampled);
		}
		/* The whole view in order; those an input ranks first kept. */
		for (size_t i = 0; i < all.ncontexts; i++) {
			const struct view_context *c = &all.contexts[i];
			size_t before = 0;

			for (size_t j = 0; j < all.ncontexts; j++)
				before += all.contexts[j].input == c->input &&
					  j != i &&
					  ranks_before(&all.contexts[j], j, c, i, key);
			if (before >= tops[t])
				continue;
			ck_assert_uint_lt(k, v.ncontexts);
			ck_assert_uint_eq(v.contexts[k].id, c->id);
			ck_assert_uint_eq(v.contexts[k].input, c->input);
			ck_assert_mem_eq(&v.contexts[k].mib, &c->mib, sizeof(c->mib));
			ck_assert_uint_eq(v.contexts[k].nsamp, c->nsamp);
			k++;
		}
		ck_assert_uint_eq(k, v.ncontexts);
		view_release(&v);
	}
	view_release(&all);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("keep_top");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, keep_top_keeps_the_first_of_each_input, 0,
			    sizeof(keys) / sizeof(keys[0]));
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
