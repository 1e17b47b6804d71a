/*
 * test_export - the LLVM export's parts that the compiler does not judge
 * in tests/cli/test_llvm_export.sh: GUIDs (MD5 values from Python's
 * hashlib), canonical names, the file's fixed layout, folding and the
 * independence of the bytes from the order contexts come in.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "export/export.h"
#include "export/exp_intern.h"
#include "llvm/llvm.h"

START_TEST(guids_are_md5_of_the_canonical_name)
{
	/* hashlib.md5(name).digest()[:8], little-endian. */
	ck_assert_uint_eq(llvm_guid("main"), 0xdb956436e78dd5faULL);
	ck_assert_uint_eq(llvm_guid("_Z10scalar_newv"), 0x1c767630fbf125a0ULL);
	ck_assert_uint_eq(llvm_guid("foo"), 0x5cf8c24cdb18bdacULL);
	ck_assert_uint_eq(llvm_guid("foo.llvm.123"), llvm_guid("foo"));
	ck_assert_uint_eq(llvm_guid("foo.part.2"), llvm_guid("foo"));
}
END_TEST

START_TEST(canonical_names)
{
	static const struct { const char *name; size_t len; } cases[] = {
		{ "foo", 3 },
		{ "foo.llvm.123", 3 },
		{ "foo.part.7", 3 },
		{ "foo.__uniq.1234", 15 },		/* kept */
		{ "foo.__uniq.12.llvm.9", 13 },		/* .llvm. only */
		{ "foo.llvm.1.cold", 15 },		/* a '.' follows */
		{ "foo.part.1.llvm.2", 3 },		/* both, last first */
		{ ".llvm.", 0 },
		{ "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(llvm_canonical_len(cases[i].name) == cases[i].len,
			      "%s: %zu, want %zu", cases[i].name,
			      llvm_canonical_len(cases[i].name), cases[i].len);
}
END_TEST

#define FR(fn, l, c, s, fl) { .function = fn, .file = "/src/a.cc", .line = l, \
			      .column = c, .start_line = s, .flags = fl }

static const struct mp_frame ctx_a[] = {
	FR("_Z4leafv", 12, 5, 10, MP_FRAME_INLINED),
	FR("_Z3midv", 22, 7, 20, 0),
	FR("main", 31, 3, 30, 0),
};
static const struct mp_frame ctx_b[] = {
	/* Its first PC is the runtime's (dropped), its second has no DWARF
	 * name (dropped too). */
	{ .function = "malloc", .file = "/x/compiler-rt/lib/memprof/m.cpp" },
	{ .function = "_Znwm" },
	FR("_Z3midv", 23, 7, 20, 0),
	FR("main", 32, 3, 30, 0),
};

static char *write_mp(int order, unsigned header, unsigned mv, size_t *len)
{
	struct exp_llvm_opts o = { .header_version = header,
				   .memprof_version = mv };
	struct exp_llvm x;
	struct mp_err err = { 0 };
	struct mp_mib m;
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);

	memset(&m, 0, sizeof(m));
	m.v[MIB_AllocCount] = 2;
	m.v[MIB_TotalSize] = 64;
	exp_llvm_init(&x);
	for (int i = 0; i < 3; i++) {
		int which = order ? 2 - i : i;

		if (which == 1)
			ck_assert_int_eq(exp_llvm_add(&x, ctx_b, 4, &m, &err), MP_OK);
		else
			ck_assert_int_eq(exp_llvm_add(&x, ctx_a, 3, &m, &err), MP_OK);
	}
	/* ctx_a twice: folded; ctx_b on its own, its first two PCs gone. */
	ck_assert_uint_eq(x.nctxs, 2);
	ck_assert_uint_eq(x.dropped_contexts, 0);
	ck_assert_int_eq(exp_llvm_write(&x, &o, fp, &err), MP_OK);
	fclose(fp);
	exp_llvm_release(&x);
	return buf;
}

static char *write_profile(int order, unsigned header, size_t *len)
{
	return write_mp(order, header, 3, len);
}

static uint64_t le64(const char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

/*
 * A context's class frame (MP_FRAME_CLASS_BASE, at the root) is no part
 * of its stack, but keeps records of different classes apart: the same
 * frames in classes 0, 1 and 0 again make two contexts, in either order,
 * and the same bytes.
 */
START_TEST(class_frames_keep_records_apart)
{
	struct mp_frame c0[4], c1[4];
	struct exp_llvm_opts o = { .header_version = 8, .memprof_version = 3 };
	struct mp_err err = { 0 };
	struct mp_mib m = { { 0 } };
	char *buf[2] = { NULL, NULL };
	size_t len[2];

	memcpy(c0, ctx_a, sizeof(ctx_a));
	memcpy(c1, ctx_a, sizeof(ctx_a));
	c0[3] = (struct mp_frame){ .offset = MP_FRAME_CLASS_BASE };
	c1[3] = (struct mp_frame){ .offset = MP_FRAME_CLASS_BASE + 1 };
	ck_assert_int_eq(mp_frame_class(&c1[3]), 1);
	ck_assert_int_eq(mp_frame_class(&c0[2]), -1);
	m.v[MIB_AllocCount] = 2;
	for (int order = 0; order < 2; order++) {
		struct exp_llvm x;
		FILE *fp = open_memstream(&buf[order], &len[order]);

		exp_llvm_init(&x);
		ck_assert_int_eq(exp_llvm_add(&x, order ? c1 : c0, 4, &m, &err), MP_OK);
		ck_assert_int_eq(exp_llvm_add(&x, order ? c0 : c1, 4, &m, &err), MP_OK);
		ck_assert_int_eq(exp_llvm_add(&x, c0, 4, &m, &err), MP_OK);
		ck_assert_uint_eq(x.nctxs, 2);
		ck_assert_uint_eq(x.nstacks, 3);	/* the stack, 2 call sites */
		ck_assert_int_eq(exp_llvm_write(&x, &o, fp, &err), MP_OK);
		fclose(fp);
		exp_llvm_release(&x);
	}
	ck_assert_uint_eq(len[0], len[1]);
	ck_assert_mem_eq(buf[0], buf[1], len[0]);
	free(buf[0]);
	free(buf[1]);
}
END_TEST

START_TEST(layout_and_determinism)
{
	size_t n1, n2, n3;
	char *a = write_profile(0, 8, &n1);
	char *b = write_profile(1, 8, &n2);
	char *c = write_profile(0, 12, &n3);

	ck_assert_uint_eq(n1, n2);
	ck_assert(memcmp(a, b, n1) == 0);	/* any order, same bytes */
	ck_assert(memcmp(a, "\xff\x6c\x70\x72\x6f\x66\x69\x81", 8) == 0);
	ck_assert_uint_eq(le64(a + 8), 8 | 1ULL << 62);
	ck_assert_uint_eq(le64(c + 8), 12 | 1ULL << 62);
	/* Header 48 bytes, summary 448, then the counters' empty table. */
	ck_assert_uint_eq(le64(a + 32), 48 + 448);
	ck_assert_uint_eq(le64(a + 40), 48 + 448 + 24);
	ck_assert_uint_eq(le64(c + 32), 72 + 448);
	ck_assert_uint_eq(le64(a + 48), 6);		/* summary fields */
	ck_assert_uint_eq(le64(a + 48 + 16 + 48), 10000);	/* first cutoff */
	/* MemProf version 3 and the hot/cold schema. */
	ck_assert_uint_eq(le64(a + 520), 3);
	ck_assert_uint_eq(le64(a + 520 + 32), 4);
	ck_assert_uint_eq(le64(a + 520 + 40), 1);
	ck_assert_uint_eq(le64(a + 520 + 64), 23);
	/* Version 12 ends with the binary ids' and vtable names' zeros. */
	ck_assert_uint_eq(le64(c + 48), n3 - 16);
	ck_assert_uint_eq(le64(c + 64), n3 - 8);
	free(a);
	free(b);
	free(c);
}
END_TEST

static enum mp_errcode count_ctx(void *arg, const struct llvm_context *c,
				  struct mp_err *err)
{
	(void)err;
	ck_assert_uint_ge(c->n, 1);
	*(size_t *)arg += c->mib.v[MIB_AllocCount];
	return MP_OK;
}

/* What we write, our reader reads back: the contexts and their MIBs,
 * from MemProf version 3 and 0, under headers 12 and 8. */
START_TEST(read_back)
{
	for (unsigned mv = 0; mv <= 3; mv += 3) {
		size_t n, allocs = 0;
		char *a = write_mp(0, mv ? 12 : 8, mv, &n);
		struct mp_err err = { 0 };
		struct llvm_file f;

		ck_assert_int_eq(llvm_open(&f, a, n, &err), MP_OK);
		ck_assert_uint_eq(f.version, mv ? 12 : 8);
		ck_assert_uint_eq(f.memprof_version, mv);
		ck_assert_uint_eq(f.ncontexts, 2);
		ck_assert_int_eq(llvm_foreach_context(&f, count_ctx, &allocs,
						      &err), MP_OK);
		ck_assert_uint_eq(allocs, 6);
		free(a);
	}
}
END_TEST

/* A context as read back: its record, then its frames, as text; with F,
 * its stack read again from its site (llvm_stack()) is the same. */
struct ctx_lines {
	char **v;
	size_t n;
	const struct llvm_file *f;
};

static enum mp_errcode keep_ctx(void *arg, const struct llvm_context *c,
				struct mp_err *err)
{
	struct ctx_lines *l = arg;
	char *line = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&line, &len);

	if (l->f) {
		struct llvm_frame again[16];

		ck_assert_uint_le(c->n, 16);
		ck_assert_int_eq(llvm_stack(l->f, c->site, again, 1, err), c->n);
		ck_assert_int_eq(llvm_stack(l->f, c->site, again, 16, err), c->n);
		for (uint32_t k = 0; k < c->n; k++) {
			ck_assert_uint_eq(again[k].guid, c->frames[k].guid);
			ck_assert_uint_eq(again[k].line_offset,
					  c->frames[k].line_offset);
			ck_assert_uint_eq(again[k].column, c->frames[k].column);
			ck_assert_int_eq(again[k].inlined, c->frames[k].inlined);
		}
	}
	fprintf(fp, "%016llx %llu:", (unsigned long long)c->function,
		(unsigned long long)c->mib.v[MIB_AllocCount]);
	for (uint32_t k = 0; k < c->n; k++)
		fprintf(fp, " %016llx/%u/%u/%d",
			(unsigned long long)c->frames[k].guid,
			c->frames[k].line_offset, c->frames[k].column,
			c->frames[k].inlined);
	fclose(fp);
	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	ck_assert_ptr_nonnull(l->v);
	l->v[l->n++] = line;
	return MP_OK;
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Version 3 stores call stacks in a radix array, where stacks share their
 * root ends through jumps; version 0 spells every stack out.  Random
 * stacks over a few functions (shared root ends, stacks that are the
 * root end of others, inline chains) read back the same from both, and
 * the radix array is smaller than the stacks spelled out.
 */
START_TEST(radix_stacks_read_back)
{
	static const char *const fn[] = {
		"main", "_Z1av", "_Z1bv", "_Z1cv", "_Z1dv", "_Z1ev",
	};
	struct ctx_lines got[2] = { { NULL, 0 }, { NULL, 0 } };
	uint64_t words = 0;
	unsigned seed = 12345;

	for (unsigned mv = 0; mv <= 3; mv += 3) {
		struct exp_llvm_opts o = { .header_version = 8, .memprof_version = mv };
		struct ctx_lines *l = &got[mv != 0];
		struct mp_err err = { 0 };
		struct exp_llvm x;
		struct llvm_file f;
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);

		seed = 12345;
		exp_llvm_init(&x);
		for (int i = 0; i < 400; i++) {
			struct mp_frame fr[16];
			struct mp_mib m = { { 0 } };
			uint32_t n;

			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 14;
			for (uint32_t k = 0; k < n; k++) {
				/* Root side mostly alike, leaf side varied. */
				uint32_t d = n - 1 - k, r;

				seed = seed * 1103515245u + 12345u;
				r = (seed >> 16) % (d < 4 ? 2 : 6);
				fr[k] = (struct mp_frame)FR(fn[r], 10 * (d + 1) + r,
							    1 + (int)d, 10 * (d + 1),
							    r == 5 && k + 1 < n
							    ? MP_FRAME_INLINED : 0);
			}
			m.v[MIB_AllocCount] = 1 + (uint64_t)i % 3;
			ck_assert_int_eq(exp_llvm_add(&x, fr, n, &m, &err), MP_OK);
		}
		if (mv)
			words = x.nstacks + x.nstack_ids;
		ck_assert_int_eq(exp_llvm_write(&x, &o, fp, &err), MP_OK);
		fclose(fp);
		exp_llvm_release(&x);
		ck_assert_int_eq(llvm_open(&f, buf, len, &err), MP_OK);
		l->f = &f;
		ck_assert_int_eq(llvm_foreach_context(&f, keep_ctx, l, &err), MP_OK);
		/* A site that is none of the file's. */
		ck_assert_int_lt(llvm_stack(&f, (struct llvm_site){ len, len + 8 },
					    NULL, 0, &err), 0);
		if (mv) {
			uint64_t cs = le64(buf + 520 + 8), payload = le64(buf + 520 + 16);

			/* The array ends where the records begin. */
			ck_assert_uint_lt((payload - cs) / 4, words * 3 / 4);
		}
		free(buf);
		qsort(l->v, l->n, sizeof(*l->v), by_line);
	}
	ck_assert_uint_gt(got[0].n, 100);
	ck_assert_uint_eq(got[0].n, got[1].n);
	for (size_t i = 0; i < got[0].n; i++) {
		ck_assert_str_eq(got[0].v[i], got[1].v[i]);
		free(got[0].v[i]);
		free(got[1].v[i]);
	}
	free(got[0].v);
	free(got[1].v);
}
END_TEST

/* Every truncation is refused, under header 8 and 12 (whose last bytes
 * are the binary ids' and vtable names' sections, read by nothing else
 * here); every single-byte change is refused or read cleanly (ASan and
 * UBSan watch under make check-asan). */
START_TEST(truncation_and_mutation_sweeps)
{
	size_t n, accepted = 0;
	/* MemProf 0 and 3, each under header 8 and 12. */
	char *a = write_mp(0, _i & 2 ? 12 : 8, _i & 1 ? 3 : 0, &n);
	struct mp_err err = { 0 };
	struct llvm_file f;

	for (size_t len = 0; len < n; len++) {
		char *cut = malloc(len + 1);

		memcpy(cut, a, len);
		ck_assert_msg(llvm_open(&f, cut, len, &err) != MP_OK,
			      "%zu of %zu bytes accepted", len, n);
		free(cut);
	}
	for (size_t i = 0; i < n; i++)
		for (int bit = 0; bit < 8; bit += 3) {
			char *m = malloc(n);
			size_t allocs = 0;

			memcpy(m, a, n);
			m[i] ^= (char)(1 << bit);
			if (llvm_open(&f, m, n, &err) == MP_OK) {
				accepted++;
				ck_assert_int_eq(llvm_foreach_context(&f, count_ctx,
								      &allocs, &err),
						 MP_OK);
			}
			free(m);
		}
	ck_assert_uint_gt(accepted, 0);	/* MIB values, say, are free */
	free(a);
}
END_TEST

static void put_le64(char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (char)(v >> 8 * i);
}

/*
 * A version 12 file given a temporal trace section (one trace of three
 * names), which we never write but LLVM may: read while whole, refused
 * as truncated when the file ends inside it.
 */
START_TEST(temporal_traces_must_fit)
{
	size_t n, len;
	char *a = write_mp(0, 12, 3, &n);
	char *b = malloc(n + 56);
	struct mp_err err = { 0 };
	struct llvm_file f;

	memcpy(b, a, n);
	put_le64(b + 56, n);		/* TemporalProfTracesOffset */
	put_le64(b + n, 1);		/* NumTraces */
	put_le64(b + n + 8, 40);	/* the stream's size */
	put_le64(b + n + 16, 1);	/* weight */
	put_le64(b + n + 24, 3);	/* NumFunctions */
	memset(b + n + 32, 7, 24);	/* three names */
	ck_assert_int_eq(llvm_open(&f, b, n + 56, &err), MP_OK);
	for (len = n; len < n + 56; len++)
		ck_assert_int_eq(llvm_open(&f, b, len, &err), MP_E_TRUNCATED);
	ck_assert_ptr_nonnull(strstr(err.detail, "past the end of the file"));
	/* A count of names no file holds: refused, not read past. */
	put_le64(b + n + 24, UINT64_MAX / 4);
	ck_assert_int_eq(llvm_open(&f, b, n + 56, &err), MP_E_TRUNCATED);
	free(a);
	free(b);
}
END_TEST

/* Names by address: one number per content, whichever address it is
 * met at; an address met again is not hashed again (its id stands). */
START_TEST(names_by_address)
{
	struct exp_names t = { 0 };
	char a[] = "std::vector<int>::push_back", b[] = "std::vector<int>::push_back";
	bool added;

	ck_assert_int_eq(exp_name_id(&t, a, &added), 0);
	ck_assert(added);
	ck_assert_int_eq(exp_name_id(&t, "main", &added), 1);
	ck_assert(added);
	ck_assert_int_eq(exp_name_id(&t, b, &added), 0);	/* a copy */
	ck_assert(!added);
	ck_assert_int_eq(exp_name_id(&t, a, &added), 0);
	ck_assert(!added);
	ck_assert_uint_eq(t.text.n, 2);
	ck_assert_uint_eq(t.n, 3);	/* three addresses */
	ck_assert_str_eq(t.text.keys[0], a);
	exp_names_release(&t);
	ck_assert_uint_eq(t.n, 0);
}
END_TEST

START_TEST(bad_header_version)
{
	struct exp_llvm_opts o = { .header_version = 10, .memprof_version = 3 };
	struct exp_llvm x;
	struct mp_err err = { 0 };

	exp_llvm_init(&x);
	ck_assert_int_eq(exp_llvm_write(&x, &o, stdout, &err), MP_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.detail, "8 or 12"));
	exp_llvm_release(&x);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("export");
	TCase *tc = tcase_create("llvm");

	tcase_add_test(tc, guids_are_md5_of_the_canonical_name);
	tcase_add_test(tc, canonical_names);
	tcase_add_test(tc, layout_and_determinism);
	tcase_add_test(tc, class_frames_keep_records_apart);
	tcase_add_test(tc, bad_header_version);
	tcase_add_test(tc, names_by_address);
	tcase_add_test(tc, read_back);
	tcase_add_test(tc, radix_stacks_read_back);
	tcase_add_loop_test(tc, truncation_and_mutation_sweeps, 0, 4);
	tcase_add_test(tc, temporal_traces_must_fit);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
