/*
 * The profile model: view_keep_top() keeps of each input (indexed, LLVM
 * or raw) the contexts a whole view ranks first, in the file's order, and
 * counts every context in the totals (contexts, summed MIBs, folded
 * samples) as a whole view does; view_symbolize() still counts every raw
 * stack.  An LLVM input's stacks are read from the file only when asked
 * for, their GUID names made once per function.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "export/export.h"
#include "indexed/idx.h"
#include "llvm/llvm.h"
#include "profile/view.h"
#include "rawbuild.h"

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

/*
 * The contexts of profile_of(N, SALT) but their samples, as an LLVM file
 * of MemProf version MV (3 or 0) with every MIB field, in BUF.
 */
static void llvm_profile_of(uint32_t n, uint64_t salt, unsigned mv,
			    struct mp_buf *buf)
{
	struct exp_llvm_opts o = { .header_version = 12, .memprof_version = mv,
				   .full_schema = true };
	struct mp_err err = { 0 };
	struct exp_llvm x;
	char *data = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&data, &len);

	ck_assert_ptr_nonnull(fp);
	exp_llvm_init(&x);
	for (uint32_t i = 0; i < n; i++) {
		char leaf[16], mid[16];
		struct mp_frame fr[3] = {
			FRAME(leaf, 100 + i), FRAME(mid, 10 + i % 7),
			FRAME("main", 1),
		};
		struct mp_mib m = { { 0 } };

		snprintf(leaf, sizeof(leaf), "g%u", i);
		snprintf(mid, sizeof(mid), "f%u", i % 7);
		m.v[MIB_AllocCount] = i % 13 + salt;
		m.v[MIB_TotalSize] = n - i;
		m.v[MIB_TotalLifetime] = i * 3 % 101;
		m.v[MIB_TotalAccessCount] = i;
		ck_assert_int_eq(exp_llvm_add(&x, fr, 3, &m, &err), MP_OK);
	}
	ck_assert_int_eq(exp_llvm_write(&x, &o, fp, &err), MP_OK);
	ck_assert_int_eq(fclose(fp), 0);
	exp_llvm_release(&x);
	memset(buf, 0, sizeof(*buf));
	buf->data = (unsigned char *)data;
	buf->size = len;
}

/*
 * The contexts of profile_of(N, SALT) but their samples, as a raw profile
 * (version 4) in BUF: stack i + 1 is three PCs of a module with no binary
 * anywhere, leaf 0x401000 + 16 i, then 0x409000 + 16 (i % 7), then 0x409800.
 */
static void raw_profile_of(uint32_t n, uint64_t salt, struct mp_buf *buf)
{
	static const unsigned char bid[20] = { 0xfe, 0xed, 0xfa, 0xce };
	struct rb b = { 0 };

	rb_begin(&b, 4);
	rb_segment(&b, 0x400000, 0x500000, 0, bid, sizeof(bid));
	rb_mibs(&b, n);
	for (uint32_t i = 0; i < n; i++) {
		struct mp_mib m = { { 0 } };

		m.v[MIB_AllocCount] = i % 13 + salt;
		m.v[MIB_TotalSize] = n - i;
		m.v[MIB_TotalLifetime] = i * 3 % 101;
		m.v[MIB_TotalAccessCount] = i;
		rb_mib(&b, i + 1, &m, NULL, 0);
	}
	rb_stacks(&b, n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t pcs[3] = {
			0x401000 + 16 * (uint64_t)i, 0x409000 + 16 * (i % 7),
			0x409800,
		};

		rb_stack(&b, i + 1, pcs, 3);
	}
	rb_end(&b);
	memset(buf, 0, sizeof(*buf));
	buf->data = b.data;
	buf->size = b.size;
}

#define RAW -2		/* load_as()'s format: raw */

/*
 * V with the two profiles (500 and 300 contexts) added: indexed, or with
 * LLVM (of MemProf version LLVM: 3 or 0; -1 none; RAW: raw) the second,
 * or both (BOTH).
 */
static void load_as(struct view *v, size_t top, enum mib_field key,
		    int llvm, bool both)
{
	static const struct { uint32_t n; uint64_t salt; } in[] = {
		{ 500, 0 }, { 300, 5 },
	};
	struct mp_err err = { 0 };

	view_init(v);
	view_keep_top(v, key, top);
	for (size_t i = 0; i < 2; i++) {
		struct mp_buf buf;

		if (llvm == RAW && (i == 1 || both))
			raw_profile_of(in[i].n, in[i].salt, &buf);
		else if (llvm >= 0 && (i == 1 || both))
			llvm_profile_of(in[i].n, in[i].salt, (unsigned)llvm, &buf);
		else
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

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/*
 * _i picks the key and the second input's format (indexed, LLVM with
 * MemProf 3 or 0, raw), each N of tops[]: every context of an input ranked
 * among its input's first N is kept, no other, in the file's order; the
 * totals, the inputs' counts and the folded samples are the whole view's.
 */
START_TEST(keep_top_keeps_the_first_of_each_input)
{
	static const int formats[] = { -1, 3, 0, RAW };	/* -1: indexed */
	enum mib_field key = keys[_i % NKEYS];
	int llvm = formats[_i / NKEYS];
	struct view all;

	load_as(&all, 0, key, llvm, false);
	ck_assert_uint_eq(all.ncontexts, 800);
	ck_assert_uint_eq(all.nall, 800);
	ck_assert_str_eq(all.inputs[1].kind, llvm == RAW ? "raw"
					     : llvm >= 0 ? "llvm" : "indexed");
	for (size_t t = 0; t < sizeof(tops) / sizeof(tops[0]); t++) {
		struct view v;
		size_t k = 0;

		load_as(&v, tops[t], key, llvm, false);
		ck_assert_uint_eq(v.nall, all.nall);
		ck_assert_mem_eq(&v.sums, &all.sums, sizeof(v.sums));
		ck_assert_uint_eq(v.nsamp, all.nsamp);
		ck_assert(v.nsamp > 0);	/* the indexed input's */
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

/*
 * An LLVM context comes with its MIB and its alloc site's offset in the
 * file (its id, one per context), no frames; view_frames() reads its stack from the file, each GUID named
 * once ("guid:HEX" of the function's MD5, one string per function), and
 * view_frames_scratch() reads the same frames without keeping them.  The
 * contexts kept by --top are read the same way, and give the same frames
 * as the whole view's.  _i: MemProf version 3 or 0.
 */
START_TEST(llvm_stacks_read_when_asked)
{
	unsigned mv = _i ? 0 : 3;
	struct view all, top;
	struct view_scratch scratch = { 0 };
	struct mp_err err = { 0 };
	const char *main_name = NULL;
	char want[32];
	uint64_t ids[300];
	size_t nids = 0;

	load_as(&all, 0, MIB_TotalSize, (int)mv, true);
	load_as(&top, 5, MIB_TotalSize, (int)mv, true);
	ck_assert_uint_eq(top.ncontexts, 10);
	snprintf(want, sizeof(want), "guid:%016llx",
		 (unsigned long long)llvm_guid("main"));
	for (size_t i = 0; i < all.ncontexts; i++) {
		struct view_context *c = &all.contexts[i];
		const struct mp_frame *fr;
		const uint32_t *entries;
		uint32_t n;

		ck_assert_ptr_null(c->frames);
		ck_assert_ptr_nonnull(c->llvm);
		/* Not stack entries of an indexed file. */
		ck_assert_int_eq(view_entries_scratch(&all, c, &scratch, &entries,
						      &n, &err), MP_E_INVALID);
		if (c->input == 1) {
			for (size_t j = 0; j < nids; j++)
				ck_assert_uint_ne(ids[j], c->id);
			ck_assert_uint_lt(nids, 300);
			ids[nids++] = c->id;
		}
		ck_assert_int_eq(view_frames_scratch(&all, c, &scratch, &fr,
						     &entries, &n, &err), MP_OK);
		ck_assert_ptr_null(entries);
		ck_assert_uint_eq(n, 3);
		ck_assert_ptr_null(c->frames);	/* not kept */
		ck_assert_int_eq(view_frames(&all, c, &err), MP_OK);
		ck_assert_uint_eq(c->nframes, 3);
		for (uint32_t k = 0; k < 3; k++) {
			ck_assert_str_eq(c->frames[k].function, fr[k].function);
			ck_assert_uint_eq(c->frames[k].line, fr[k].line);
			ck_assert_uint_eq(c->frames[k].flags, MP_FRAME_GUID);
		}
		/* A line offset from the function's first line, which these
		 * frames do not know (0): the line. */
		ck_assert_uint_eq(c->frames[2].line, 1);
		ck_assert_uint_eq(c->frames[2].column, 1);
		ck_assert_str_eq(c->frames[2].function, want);
		if (!main_name)
			main_name = c->frames[2].function;
		ck_assert_ptr_eq(c->frames[2].function, main_name);
		ck_assert_int_eq(view_entries_scratch(&all, c, &scratch, &entries,
						      &n, &err), MP_OK);
	}
	ck_assert_uint_eq(nids, 300);
	for (size_t i = 0; i < top.ncontexts; i++) {
		struct view_context *c = &top.contexts[i], *w = NULL;

		for (size_t j = 0; j < all.ncontexts && !w; j++)
			if (all.contexts[j].input == c->input &&
			    all.contexts[j].id == c->id)
				w = &all.contexts[j];
		ck_assert_ptr_nonnull(w);
		ck_assert_mem_eq(&c->mib, &w->mib, sizeof(c->mib));
		ck_assert_int_eq(view_frames(&top, c, &err), MP_OK);
		ck_assert_uint_eq(c->nframes, w->nframes);
		for (uint32_t k = 0; k < c->nframes; k++)
			ck_assert_str_eq(c->frames[k].function,
					 w->frames[k].function);
	}
	/* The names of the functions met, once each: g0..g499, f0..f6 and
	 * main in the whole view. */
	ck_assert_uint_eq(all.nguids, 500 + 7 + 1);
	ck_assert_uint_le(top.nguids, 10 * 3);
	view_scratch_release(&scratch);
	view_release(&all);
	view_release(&top);
}
END_TEST

/*
 * Of raw inputs kept to their top 7, view_symbolize() counts every stack
 * in its figures, as of the whole view; no stack is kept, each is
 * symbolized again when asked for (view_frames_scratch(), not kept;
 * view_frames(), kept), and a kept context's are the whole view's
 * (unsymbolized: no binary has the module).
 */
START_TEST(raw_top_symbolized_whole)
{
	struct sym_options so = { .no_default_debug_dir = true };
	struct sym_stack_stats st[2] = { { 0 }, { 0 } };
	struct mp_err err = { 0 };
	struct sym_ctx sym[2];	/* as long as the views */
	struct view v[2];

	for (int t = 0; t < 2; t++) {
		load_as(&v[t], t ? 7 : 0, MIB_TotalSize, RAW, true);
		sym_init(&sym[t], &so);
		ck_assert_int_eq(view_symbolize(&v[t], &sym[t], 0, &st[t], &err),
				 MP_OK);
	}
	ck_assert_uint_eq(v[0].ncontexts, 800);
	ck_assert_uint_eq(v[1].ncontexts, 14);
	ck_assert_uint_eq(st[0].frames, 800 * 3);
	ck_assert_mem_eq(&st[0], &st[1], sizeof(st[0]));
	for (size_t i = 0; i < v[1].ncontexts; i++) {
		struct view_context *c = &v[1].contexts[i], *w = NULL;
		struct view_scratch scratch = { 0 };
		const struct mp_frame *fr;
		const uint32_t *entries;
		uint32_t n;

		for (size_t j = 0; j < v[0].ncontexts && !w; j++)
			if (v[0].contexts[j].input == c->input &&
			    v[0].contexts[j].id_index == c->id_index)
				w = &v[0].contexts[j];
		ck_assert_ptr_nonnull(w);
		ck_assert_ptr_null(c->frames);
		ck_assert_int_eq(view_entries_scratch(&v[1], c, &scratch, &entries,
						      &n, &err), MP_E_INVALID);
		ck_assert_int_eq(view_frames_scratch(&v[1], c, &scratch, &fr,
						     &entries, &n, &err), MP_OK);
		ck_assert_uint_eq(n, 3);
		ck_assert_uint_eq(fr[2].offset, 0x409800);
		ck_assert_ptr_null(c->frames);
		view_scratch_release(&scratch);
		ck_assert_int_eq(view_frames(&v[1], c, &err), MP_OK);
		ck_assert_int_eq(view_frames(&v[0], w, &err), MP_OK);
		ck_assert_uint_eq(c->nframes, 3);
		ck_assert_uint_eq(c->nframes, w->nframes);
		for (uint32_t k = 0; k < c->nframes; k++) {
			ck_assert_uint_eq(c->frames[k].offset, w->frames[k].offset);
			ck_assert_uint_eq(c->frames[k].flags, w->frames[k].flags);
		}
		ck_assert_uint_eq(c->frames[2].offset, 0x409800);
	}
	for (int t = 0; t < 2; t++) {
		view_release(&v[t]);
		sym_release(&sym[t]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("keep_top");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, keep_top_keeps_the_first_of_each_input, 0,
			    4 * NKEYS);
	tcase_add_test(tc, raw_top_symbolized_whole);
	tcase_add_loop_test(tc, llvm_stacks_read_when_asked, 0, 2);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
