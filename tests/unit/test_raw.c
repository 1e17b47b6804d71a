/*
 * The raw reader: real profiles from clang 14, 16 and 19 decode to the
 * counts their programs imply; synthetic profiles cover the merge rules
 * and v5; every truncation and header mutation is rejected cleanly.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "common/mp_file.h"
#include "raw/raw.h"
#include "rawbuild.h"
#include "rawcheck.h"

static const char *fixtures(void)
{
	const char *d = getenv("FIXTURES");

	return d ? d : "tests/fixtures";
}

static char *fixture_path(const char *name)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", fixtures(), name);
	return buf;
}

static void load_ok(struct raw_file *rf, const char *name)
{
	struct mp_err err = { 0 };
	enum mp_errcode rc;

	raw_file_init(rf);
	rc = raw_load(rf, fixture_path(name), &err);
	ck_assert_msg(rc == MP_OK, "%s: %s", name, mp_errmsg(&err));
}

/* The context whose MIB has AllocCount N, or NULL. */
static const struct raw_context *by_count(const struct raw_file *rf, uint64_t n)
{
	for (size_t i = 0; i < rf->ncontexts; i++)
		if (rf->contexts[i].mib.v[MIB_AllocCount] == n)
			return &rf->contexts[i];
	return NULL;
}

/* hot_alloc: 1000 x malloc(100), freed (basic.c). */
static void check_hot_alloc(const struct raw_file *rf)
{
	const struct raw_context *c = by_count(rf, 1000);

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->mib.v[MIB_TotalSize], 100000);
	ck_assert_uint_eq(c->mib.v[MIB_MinSize], 100);
	ck_assert_uint_eq(c->mib.v[MIB_MaxSize], 100);
	ck_assert_uint_ge(c->npcs, 3);
}

START_TEST(v4_pie)
{
	struct raw_file rf;

	load_ok(&rf, "basic.pie.v4.profraw");
	ck_assert_uint_eq(rf.nprofiles, 1);
	ck_assert_uint_eq(rf.profiles[0].version, 4);
	ck_assert_uint_ge(rf.profiles[0].nsegments, 2);
	/* Main executable first, with its 20-byte GNU build id and a PIE bias. */
	ck_assert_uint_eq(rf.profiles[0].segments[0].build_id_size, 20);
	ck_assert_uint_ne(rf.profiles[0].segments[0].offset, 0);
	ck_assert_uint_eq(rf.ncontexts, rf.profiles[0].nrecords);
	check_hot_alloc(&rf);
	ck_assert(!rf.compressed);
	raw_file_release(&rf);
}
END_TEST

START_TEST(v4_nopie)
{
	struct raw_file rf;

	load_ok(&rf, "basic.nopie.v4.profraw");
	ck_assert_uint_eq(rf.profiles[0].version, 4);
	/* ET_EXEC: no load bias. */
	ck_assert_uint_eq(rf.profiles[0].segments[0].offset, 0);
	check_hot_alloc(&rf);
	raw_file_release(&rf);
}
END_TEST

START_TEST(v1_clang14)
{
	struct raw_file rf;

	load_ok(&rf, "basic.clang14.v1.profraw");
	ck_assert_uint_eq(rf.profiles[0].version, 1);
	ck_assert_uint_eq(rf.profiles[0].segments[0].build_id_size, 0);
	check_hot_alloc(&rf);
	for (size_t i = 0; i < rf.ncontexts; i++) {
		ck_assert_uint_eq(rf.contexts[i].mib.v[MIB_DataTypeId], 0);
		ck_assert_uint_eq(rf.contexts[i].mib.v[MIB_TotalAccessDensity], 0);
		ck_assert_uint_eq(rf.contexts[i].nhist, 0);
	}
	raw_file_release(&rf);
}
END_TEST

START_TEST(v2_clang16)
{
	struct raw_file rf;

	load_ok(&rf, "basic.clang16.v2.profraw");
	ck_assert_uint_eq(rf.profiles[0].version, 2);
	check_hot_alloc(&rf);
	/* v2 has densities: hot_alloc's objects are accessed. */
	ck_assert_uint_gt(by_count(&rf, 1000)->mib.v[MIB_TotalAccessDensity], 0);
	raw_file_release(&rf);
}
END_TEST

START_TEST(v4_histogram)
{
	struct raw_file rf;
	uint64_t sum = 0;
	const struct raw_context *c;

	load_ok(&rf, "basic.hist.v4.profraw");
	c = by_count(&rf, 1000);
	ck_assert_ptr_nonnull(c);
	/* 100-byte objects: ceil(100 / 8) entries. */
	ck_assert_uint_eq(c->nhist, 13);
	ck_assert_uint_eq(c->mib.v[MIB_AccessHistogramSize], 13);
	for (uint32_t i = 0; i < c->nhist; i++)
		sum += c->hist[i];
	ck_assert_uint_gt(sum, 0);
	raw_file_release(&rf);
}
END_TEST

START_TEST(zstd_equals_plain)
{
	struct raw_file a, b;

	load_ok(&a, "basic.pie.v4.profraw");
	load_ok(&b, "basic.pie.v4.profraw.zst");
	ck_assert(b.compressed);
	ck_assert_uint_eq(a.ncontexts, b.ncontexts);
	for (size_t i = 0; i < a.ncontexts; i++) {
		ck_assert_uint_eq(a.contexts[i].stack_id, b.contexts[i].stack_id);
		ck_assert_mem_eq(&a.contexts[i].mib, &b.contexts[i].mib,
				 sizeof(struct mp_mib));
	}
	raw_file_release(&a);
	raw_file_release(&b);
}
END_TEST

/*
 * raw_unmapped_run_end(): a run of PCs in no segment is code unmapped
 * before the profile was written only when RAW_RETURN_MIN PCs or more
 * follow it, all in segments; garbage to the root, one PC back in a
 * segment (protoc's garbage) or garbage again after mapped PCs is not.
 */
START_TEST(unmapped_run_needs_a_return_for_good)
{
	struct raw_segment seg[2] = {
		{ .start = 0x1000, .end = 0x2000 },
		{ .start = 0x7000, .end = 0x8000 },
	};
	struct raw_profile prof = { .version = 4, .segments = seg, .nsegments = 2 };
	struct mp_arena arena = MP_ARENA_INIT;
	struct mp_err err = { 0 };
	static const uint64_t plugin[] = { 0x1010, 0x5000, 0x5010, 0x1100, 0x7100, 0x7200 },
			      garbage[] = { 0x1010, 0x7010, 0xaaaa, 0x10 },
			      one_back[] = { 0x1010, 0x7010, 0xaaaa, 0x1200 },
			      again[] = { 0x1010, 0x5000, 0x1100, 0x1200, 0x33 },
			      at_root[] = { 0x1010, 0x5000, 0x1100, 0x7000 };
	unsigned char le[sizeof(plugin)];
	size_t hint = 0;

	ck_assert_int_eq(raw_profile_index(&prof, &arena, &err), MP_OK);
	ck_assert_uint_eq(raw_unmapped_run_end(&prof, plugin, false, 6, 1, &hint), 3);
	ck_assert_uint_eq(raw_unmapped_run_end(&prof, garbage, false, 4, 2, &hint), 0);
	ck_assert_uint_eq(raw_unmapped_run_end(&prof, one_back, false, 4, 2, &hint), 0);
	ck_assert_uint_eq(raw_unmapped_run_end(&prof, again, false, 5, 1, &hint), 0);
	ck_assert_uint_eq(raw_unmapped_run_end(&prof, at_root, false, 4, 1, &hint), 2);
	/* The PCs as a raw file holds them. */
	for (size_t i = 0; i < 6; i++)
		mp_put_le64(le + 8 * i, plugin[i]);
	ck_assert_uint_eq(raw_unmapped_run_end(&prof, le, true, 6, 1, &hint), 3);
	mp_arena_release(&arena);
}
END_TEST

START_TEST(two_profiles_fold)
{
	struct raw_file rf;
	uint64_t records = 0;

	load_ok(&rf, "dump2.v4.profraw");
	ck_assert_uint_eq(rf.nprofiles, 2);
	ck_assert_uint_eq(rf.profiles[1].file_offset, rf.profiles[0].total_size);
	/* Same process: one memory map, and each stack a single context. */
	ck_assert_uint_eq(rf.profiles[0].layout, rf.profiles[1].layout);
	for (size_t p = 0; p < rf.nprofiles; p++)
		records += rf.profiles[p].nrecords;
	ck_assert_uint_lt(rf.ncontexts, records);
	raw_file_release(&rf);
}
END_TEST

/* ---- synthetic profiles ---- */

static enum mp_errcode parse(struct rb *b, struct raw_file *rf,
			     struct mp_err *err)
{
	raw_file_init(rf);
	return raw_parse(rf, b->data, b->size, err);
}

static void one_mib(struct mp_mib *m, uint64_t count, uint64_t size,
		    uint64_t alloc_ts, uint64_t dealloc_ts, uint64_t cpu)
{
	memset(m, 0, sizeof(*m));
	m->v[MIB_AllocCount] = count;
	m->v[MIB_TotalSize] = size * count;
	m->v[MIB_MinSize] = m->v[MIB_MaxSize] = size;
	m->v[MIB_AllocTimestamp] = alloc_ts;
	m->v[MIB_DeallocTimestamp] = dealloc_ts;
	m->v[MIB_AllocCpuId] = m->v[MIB_DeallocCpuId] = cpu;
	m->v[MIB_NumMigratedCpu] = 1;
}

START_TEST(duplicate_stack_ids_merge)
{
	static const uint64_t pcs[] = { 0x1010, 0x1020 };
	struct mp_mib m1, m2;
	struct raw_file rf;
	struct mp_err err = { 0 };
	struct rb b = { 0 };
	const struct raw_context *c;

	one_mib(&m1, 2, 16, 5, 20, 1);
	one_mib(&m2, 3, 64, 10, 30, 1);
	rb_begin(&b, 4);
	rb_segment(&b, 0x1000, 0x2000, 0, "\xaa\xbb", 2);
	rb_mibs(&b, 2);
	rb_mib(&b, 9, &m1, NULL, 0);
	rb_mib(&b, 9, &m2, NULL, 0);
	rb_stacks(&b, 1);
	rb_stack(&b, 9, pcs, 2);
	rb_end(&b);
	ck_assert_int_eq(parse(&b, &rf, &err), MP_OK);
	ck_assert_uint_eq(rf.ncontexts, 1);
	c = &rf.contexts[0];
	ck_assert_uint_eq(c->npcs, 2);
	ck_assert_uint_eq(c->pcs[1], 0x1020);
	ck_assert_uint_eq(c->mib.v[MIB_AllocCount], 5);
	ck_assert_uint_eq(c->mib.v[MIB_TotalSize], 2 * 16 + 3 * 64);
	ck_assert_uint_eq(c->mib.v[MIB_MinSize], 16);
	ck_assert_uint_eq(c->mib.v[MIB_MaxSize], 64);
	ck_assert_uint_eq(c->mib.v[MIB_NumMigratedCpu], 2);
	ck_assert_uint_eq(c->mib.v[MIB_NumLifetimeOverlaps], 1);	/* 10 < 20 */
	ck_assert_uint_eq(c->mib.v[MIB_NumSameAllocCpu], 1);
	ck_assert_uint_eq(c->mib.v[MIB_DeallocTimestamp], 30);
	raw_file_release(&rf);
	rb_free(&b);
}
END_TEST

static enum mp_errcode count_record(void *arg, const struct raw_record *r,
				    struct mp_err *err)
{
	(void)r;
	(void)err;
	++*(size_t *)arg;
	return MP_OK;
}

/*
 * raw_walk() hands records over only when each context is one record:
 * a one-profile compiler-rt dump yes; two dumps, or two records of one
 * stack id, no (they need the runtime's merge first).
 */
START_TEST(walk_only_single_record_contexts)
{
	static const uint64_t pcs[] = { 0x1010, 0x1020 };
	static const struct { const char *name; bool walks; } files[] = {
		{ "basic.pie.v4.profraw", true }, { "basic.clang14.v1.profraw", true },
		{ "basic.hist.v4.profraw", true }, { "dump2.v4.profraw", false },
	};
	struct raw_file rf;
	struct mp_err err = { 0 };
	struct mp_buf buf;
	struct mp_mib m1;
	struct rb b = { 0 };
	size_t n;
	bool walked;

	raw_file_init(&rf);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ck_assert_int_eq(mp_file_read(&buf, fixture_path(files[i].name), NULL,
					      &err), MP_OK);
		n = 0;
		ck_assert_int_eq(raw_walk(&rf, buf.data, buf.size, count_record,
					  &n, &walked, &err), MP_OK);
		ck_assert_msg(walked == files[i].walks, "%s", files[i].name);
		if (walked)
			ck_assert_uint_eq(n, rf.profiles[0].nrecords);
		else
			ck_assert_uint_eq(n, 0);
		mp_buf_release(&buf);
	}
	one_mib(&m1, 2, 16, 5, 20, 1);
	rb_begin(&b, 4);
	rb_segment(&b, 0x1000, 0x2000, 0, "\xaa\xbb", 2);
	rb_mibs(&b, 2);
	rb_mib(&b, 9, &m1, NULL, 0);
	rb_mib(&b, 9, &m1, NULL, 0);
	rb_stacks(&b, 1);
	rb_stack(&b, 9, pcs, 2);
	rb_end(&b);
	n = 0;
	ck_assert_int_eq(raw_walk(&rf, b.data, b.size, count_record, &n,
				  &walked, &err), MP_OK);
	ck_assert(!walked);
	ck_assert_uint_eq(n, 0);
	raw_file_release(&rf);
	rb_free(&b);
}
END_TEST

START_TEST(v5_histogram_decoding)
{
	static const uint64_t pcs[] = { 0x1010 };
	/* m=5,e=0 -> 5; m=3,e=4 -> 48; m=0xfff,e=15 -> 0xfff << 15. */
	static const uint64_t enc[] = { 0x0005, 0x4003, 0xffff };
	struct mp_mib m;
	struct raw_file rf;
	struct mp_err err = { 0 };
	struct rb b = { 0 };

	one_mib(&m, 1, 24, 1, 2, 0);
	rb_begin(&b, 5);
	rb_segment(&b, 0x1000, 0x2000, 0, "\x01", 1);
	rb_mibs(&b, 1);
	rb_mib(&b, 1, &m, enc, 3);
	rb_stacks(&b, 1);
	rb_stack(&b, 1, pcs, 1);
	rb_end(&b);
	ck_assert_int_eq(parse(&b, &rf, &err), MP_OK);
	ck_assert_uint_eq(rf.contexts[0].nhist, 3);
	ck_assert_uint_eq(rf.contexts[0].hist[0], 5);
	ck_assert_uint_eq(rf.contexts[0].hist[1], 48);
	ck_assert_uint_eq(rf.contexts[0].hist[2], (uint64_t)0xfff << 15);
	raw_file_release(&rf);
	rb_free(&b);
}
END_TEST

/* Build a one-context v4 profile for the error cases below. */
static void small_profile(struct rb *b)
{
	static const uint64_t pcs[] = { 0x1010, 0x1020, 0x1030 };
	struct mp_mib m;

	one_mib(&m, 1, 8, 1, 2, 0);
	memset(b, 0, sizeof(*b));
	rb_begin(b, 4);
	rb_segment(b, 0x1000, 0x2000, 0, "\x01\x02", 2);
	rb_mibs(b, 1);
	rb_mib(b, 1, &m, NULL, 0);
	rb_stacks(b, 1);
	rb_stack(b, 1, pcs, 3);
	rb_end(b);
}

static void expect_error(struct rb *b, enum mp_errcode code, const char *text)
{
	struct raw_file rf;
	struct mp_err err = { 0 };
	enum mp_errcode rc = parse(b, &rf, &err);

	ck_assert_msg(rc == code, "got %d (%s), want %d", rc, mp_errmsg(&err),
		      code);
	ck_assert_msg(strstr(mp_errmsg(&err), text), "'%s' lacks '%s'",
		      mp_errmsg(&err), text);
	raw_file_release(&rf);
}

START_TEST(errors_are_precise)
{
	struct rb b;

	small_profile(&b);
	mp_put_le64(b.data + 8, 6);
	expect_error(&b, MP_E_BAD_VERSION, "unsupported raw profile version 6");
	rb_free(&b);

	small_profile(&b);
	b.data[0] ^= 1;
	expect_error(&b, MP_E_BAD_MAGIC, "bad magic");
	rb_free(&b);

	small_profile(&b);
	mp_put_le64(b.data + RAW_HDR_TOTAL_SIZE, 0);
	expect_error(&b, MP_E_CORRUPT, "TotalSize 0");
	rb_free(&b);

	small_profile(&b);
	mp_put_le64(b.data + RAW_HDR_TOTAL_SIZE, b.size + 8);
	expect_error(&b, MP_E_TRUNCATED, "past the end of the file");
	rb_free(&b);

	small_profile(&b);
	/* The MIB's stack id names no stack. */
	mp_put_le64(b.data + mp_le64(b.data + RAW_HDR_MIB_OFFSET) + 8, 77);
	expect_error(&b, MP_E_CORRUPT, "stack id 77, which has no stack");
	rb_free(&b);

	small_profile(&b);
	/* A huge MIB count. */
	mp_put_le64(b.data + mp_le64(b.data + RAW_HDR_MIB_OFFSET), 1ULL << 60);
	expect_error(&b, MP_E_CORRUPT, "MIB section at offset");
	rb_free(&b);

	small_profile(&b);
	/* A huge PC count. */
	mp_put_le64(b.data + mp_le64(b.data + RAW_HDR_STACK_OFFSET) + 16,
		    UINT64_MAX);
	expect_error(&b, MP_E_CORRUPT, "claims 18446744073709551615 PCs");
	rb_free(&b);

	small_profile(&b);
	/* Sections out of order. */
	mp_put_le64(b.data + RAW_HDR_MIB_OFFSET, 8);
	expect_error(&b, MP_E_CORRUPT, "sections out of order");
	rb_free(&b);

	small_profile(&b);
	rb_put(&b, 8);	/* trailing zeros after the last profile */
	expect_error(&b, MP_E_BAD_MAGIC, "trailing data after the last profile");
	rb_free(&b);

	/*
	 * Bytes that no section holds: a damaged offset or count, whose
	 * records were dropped without a word (a MIB offset one byte off
	 * read as an empty profile).  Sections lie back to back, padded to
	 * 8 bytes.
	 */
	small_profile(&b);
	mp_put_le64(b.data + RAW_HDR_MIB_OFFSET,
		    mp_le64(b.data + RAW_HDR_MIB_OFFSET) + 8);
	expect_error(&b, MP_E_CORRUPT, "the segments of the profile at offset "
		     "0x0 end at 0x78, 8 bytes before the MIBs at 0x80 (a "
		     "damaged section offset?)");
	rb_free(&b);

	small_profile(&b);
	mp_put_le64(b.data + mp_le64(b.data + RAW_HDR_MIB_OFFSET), 0);
	expect_error(&b, MP_E_CORRUPT, "the MIBs of the profile at offset 0x0 "
		     "end at 0x80");
	rb_free(&b);

	small_profile(&b);
	mp_put_le64(b.data + mp_le64(b.data + RAW_HDR_STACK_OFFSET), 0);
	expect_error(&b, MP_E_CORRUPT, "40 bytes before the end of the profile");
	rb_free(&b);
}
END_TEST

/* ---- sweeps over the real fixtures ---- */

static const char *const sweep_files[] = {
	"basic.pie.v4.profraw", "basic.nopie.v4.profraw",
	"basic.hist.v4.profraw", "basic.clang14.v1.profraw",
	"basic.clang16.v2.profraw", "cxx.v4.profraw", "dump2.v4.profraw",
};

/* What raw_walk() handed over, checked against raw_parse()'s contexts. */
struct walk_check {
	const struct raw_file *parsed;
	size_t n;
	bool mismatch;
};

static enum mp_errcode walk_one(void *arg, const struct raw_record *r,
				struct mp_err *err)
{
	struct walk_check *w = arg;
	const struct raw_context *c;

	(void)err;
	if (w->n >= w->parsed->ncontexts) {
		w->mismatch = true;
		return MP_OK;
	}
	c = &w->parsed->contexts[w->n++];
	if (!raw_record_is_context(r, c))
		w->mismatch = true;
	return MP_OK;
}

/*
 * raw_walk() on DATA (reusing RF from an earlier call) must fail exactly
 * as raw_parse() did (PARSE_RC, PARSE_ERR), and when it walks, hand over
 * raw_parse()'s contexts (PARSED) one record each, in order.
 */
static void walk_agrees(struct raw_file *rf, const void *data, size_t len,
			enum mp_errcode parse_rc, const struct mp_err *parse_err,
			const struct raw_file *parsed, const char *what)
{
	struct walk_check w = { parsed, 0, false };
	struct mp_err err = { 0 };
	enum mp_errcode rc;
	bool walked;

	rc = raw_walk(rf, data, len, walk_one, &w, &walked, &err);
	ck_assert_msg(rc == parse_rc, "%s: raw_walk %d, raw_parse %d", what,
		      rc, parse_rc);
	if (rc) {
		ck_assert_msg(!strcmp(mp_errmsg(&err), mp_errmsg(parse_err)),
			      "%s: raw_walk says '%s', raw_parse '%s'", what,
			      mp_errmsg(&err), mp_errmsg(parse_err));
		return;
	}
	ck_assert_uint_eq(rf->nprofiles, parsed->nprofiles);
	if (walked)
		ck_assert_msg(!w.mismatch && w.n == parsed->ncontexts,
			      "%s: walked records differ from the contexts", what);
	else
		ck_assert_msg(w.n == 0, "%s: not walked, yet records came", what);
}

/* True when LEN is the end of one of RF's profiles. */
static bool at_profile_end(const struct raw_file *rf, size_t len)
{
	for (size_t p = 0; p < rf->nprofiles; p++)
		if (rf->profiles[p].file_offset + rf->profiles[p].total_size == len)
			return true;
	return false;
}

START_TEST(every_truncation_is_rejected)
{
	const char *name = sweep_files[_i];
	struct mp_buf buf;
	struct mp_err err = { 0 };
	struct raw_file whole, rf, walked;
	size_t cases = 0;

	ck_assert_int_eq(mp_file_read(&buf, fixture_path(name), NULL, &err), MP_OK);
	raw_file_init(&whole);
	raw_file_init(&walked);
	ck_assert_int_eq(raw_parse(&whole, buf.data, buf.size, &err), MP_OK);
	walk_agrees(&walked, buf.data, buf.size, MP_OK, &err, &whole, name);
	for (size_t len = 0; len < buf.size; len++) {
		unsigned char *copy = malloc(len ? len : 1);
		enum mp_errcode rc;

		/* A copy of exactly LEN bytes, so ASan sees any overread. */
		memcpy(copy, buf.data, len);
		raw_file_init(&rf);
		memset(&err, 0, sizeof(err));
		rc = raw_parse(&rf, copy, len, &err);
		if (at_profile_end(&whole, len))
			ck_assert_int_eq(rc, MP_OK);
		else
			ck_assert_msg(rc != MP_OK && err.detail[0],
				      "%s: prefix of %zu bytes accepted", name, len);
		walk_agrees(&walked, copy, len, rc, &err, &rf, name);
		raw_file_release(&rf);
		free(copy);
		cases++;
	}
	printf("%s: %zu truncations checked, raw_walk agreeing\n", name, cases);
	raw_file_release(&walked);
	raw_file_release(&whole);
	mp_buf_release(&buf);
}
END_TEST

/* Header and section-count bytes: 0x00, 0xff, +-1 and every bit flip. */
START_TEST(header_mutations_never_crash)
{
	const char *name = sweep_files[_i];
	struct mp_buf buf;
	struct mp_err err = { 0 };
	struct raw_file rf, walked;
	size_t cases = 0, rejected = 0;
	size_t spots[RAW_HEADER_SIZE + 24];
	size_t nspots = 0;

	ck_assert_int_eq(mp_file_read(&buf, fixture_path(name), NULL, &err), MP_OK);
	raw_file_init(&walked);
	for (size_t i = 0; i < RAW_HEADER_SIZE; i++)
		spots[nspots++] = i;
	for (int s = 0; s < 3; s++) {
		uint64_t off = mp_le64(buf.data + RAW_HDR_SEGMENT_OFFSET + 8 * s);

		for (size_t k = 0; k < 8 && off + k < buf.size; k++)
			spots[nspots++] = (size_t)off + k;
	}
	for (size_t s = 0; s < nspots; s++) {
		unsigned char orig = buf.data[spots[s]];
		int muts[12] = { 0x00, 0xff, (orig + 1) & 0xff, (orig - 1) & 0xff };

		for (int bit = 0; bit < 8; bit++)
			muts[4 + bit] = orig ^ (1 << bit);
		for (int m = 0; m < 12; m++) {
			buf.data[spots[s]] = (unsigned char)muts[m];
			enum mp_errcode rc;

			raw_file_init(&rf);
			memset(&err, 0, sizeof(err));
			rc = raw_parse(&rf, buf.data, buf.size, &err);
			if (rc) {
				ck_assert(err.detail[0]);
				rejected++;
			}
			walk_agrees(&walked, buf.data, buf.size, rc, &err, &rf,
				    name);
			raw_file_release(&rf);
			cases++;
		}
		buf.data[spots[s]] = orig;
	}
	printf("%s: %zu header mutations, %zu rejected, rest read cleanly, "
	       "raw_walk agreeing\n", name, cases, rejected);
	raw_file_release(&walked);
	mp_buf_release(&buf);
}
END_TEST

/* tests/fixtures/bad/NAME and NAME.expect: the message must contain it. */
START_TEST(must_fail_files)
{
	char dir[4096], path[8192], expect[512];
	struct dirent *d;
	DIR *dp;
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s/bad", fixtures());
	dp = opendir(dir);
	ck_assert_ptr_nonnull(dp);
	while ((d = readdir(dp))) {
		struct raw_file rf;
		struct mp_err err = { 0 };
		size_t len;
		FILE *f;

		len = strlen(d->d_name);
		if (d->d_name[0] == '.' || (len > 7 &&
		    !strcmp(d->d_name + len - 7, ".expect")) ||
		    strstr(d->d_name, ".py") || !strcmp(d->d_name, "README.md"))
			continue;
		snprintf(path, sizeof(path), "%s/%s.expect", dir, d->d_name);
		f = fopen(path, "r");
		ck_assert_msg(f != NULL, "%s has no .expect file", d->d_name);
		ck_assert(fgets(expect, sizeof(expect), f));
		fclose(f);
		expect[strcspn(expect, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		raw_file_init(&rf);
		ck_assert_msg(raw_load(&rf, path, &err) != MP_OK,
			      "%s was accepted", d->d_name);
		ck_assert_msg(strstr(mp_errmsg(&err), expect),
			      "%s: '%s' does not contain '%s'", d->d_name,
			      mp_errmsg(&err), expect);
		ck_assert_msg(strcmp(mp_errmsg(&err), "malformed"),
			      "%s: message says only 'malformed'", d->d_name);
		raw_file_release(&rf);
		n++;
	}
	closedir(dp);
	ck_assert_uint_ge(n, 10);
	printf("bad/: %zu must-fail files rejected with their messages\n", n);
}
END_TEST

/*
 * mp_file_reread() keeps its buffer from file to file: a buffer grown for
 * a big file under a high cap must not let a later file past a lower one,
 * and a file of exactly the cap is read whole.
 */
static void write_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(reread_keeps_the_cap)
{
	char dir[] = "/tmp/mp-reread-XXXXXX", path[3][64];
	static const size_t sizes[3] = { 100000, 4096, 4097 };
	struct mp_read_opts o = { 200000, NULL };
	struct mp_buf buf = { 0 };
	struct mp_err err = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%d", dir, i);
		write_file(path[i], sizes[i]);
	}
	ck_assert_int_eq(mp_file_reread(&buf, path[0], &o, &err), MP_OK);
	ck_assert_uint_eq(buf.size, sizes[0]);
	ck_assert_uint_gt(buf.alloc, 4097);
	o.max_size = 4096;
	ck_assert_int_eq(mp_file_reread(&buf, path[1], &o, &err), MP_OK);
	ck_assert_uint_eq(buf.size, 4096);
	ck_assert_int_eq(buf.data[4095], 'a' + 4095 % 26);
	ck_assert_int_eq(mp_file_reread(&buf, path[2], &o, &err),
			 MP_E_TOO_LARGE);
	ck_assert_uint_eq(buf.size, 0);
	ck_assert(strstr(err.detail, "4096 bytes"));
	mp_buf_release(&buf);
	for (int i = 0; i < 3; i++)
		remove(path[i]);
	remove(dir);
}
END_TEST

/*
 * With the largest size to come known (expect), the first file takes a
 * buffer that size and larger files up to it are read into the same
 * memory; a hint past the cap is not taken, and a file past the hint is
 * still read whole.
 */
START_TEST(reread_takes_the_expected_size_once)
{
	char dir[] = "/tmp/mp-expect-XXXXXX", path[3][64];
	static const size_t sizes[3] = { 1000, 300000, 600000 };
	struct mp_read_opts o = { 0 };
	struct mp_buf buf = { 0 };
	struct mp_err err = { 0 };
	unsigned char *first;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%d", dir, i);
		write_file(path[i], sizes[i]);
	}
	o.expect = 400000;
	ck_assert_int_eq(mp_file_reread(&buf, path[0], &o, &err), MP_OK);
	ck_assert_uint_eq(buf.size, sizes[0]);
	ck_assert_uint_ge(buf.alloc, 400001);
	first = buf.data;
	ck_assert_int_eq(mp_file_reread(&buf, path[1], &o, &err), MP_OK);
	ck_assert_uint_eq(buf.size, sizes[1]);
	ck_assert_ptr_eq(buf.data, first);
	ck_assert_int_eq(mp_file_reread(&buf, path[2], &o, &err), MP_OK);
	ck_assert_uint_eq(buf.size, sizes[2]);
	ck_assert_int_eq(buf.data[sizes[2] - 1], 'a' + (sizes[2] - 1) % 26);
	mp_buf_release(&buf);

	/* A hint at or past the cap is ignored: the buffer fits the file. */
	o.max_size = 200000;
	o.expect = 200000;
	ck_assert_int_eq(mp_file_reread(&buf, path[0], &o, &err), MP_OK);
	ck_assert_uint_lt(buf.alloc, 200000);
	mp_buf_release(&buf);
	for (int i = 0; i < 3; i++)
		remove(path[i]);
	remove(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("raw");
	TCase *real = tcase_create("fixtures");
	TCase *syn = tcase_create("synthetic");
	TCase *sweep = tcase_create("sweeps");
	int nsweep = sizeof(sweep_files) / sizeof(sweep_files[0]);

	tcase_add_test(real, v4_pie);
	tcase_add_test(real, reread_keeps_the_cap);
	tcase_add_test(real, reread_takes_the_expected_size_once);
	tcase_add_test(real, v4_nopie);
	tcase_add_test(real, v1_clang14);
	tcase_add_test(real, v2_clang16);
	tcase_add_test(real, v4_histogram);
	tcase_add_test(real, zstd_equals_plain);
	tcase_add_test(real, unmapped_run_needs_a_return_for_good);
	tcase_add_test(real, two_profiles_fold);
	tcase_add_test(real, must_fail_files);
	tcase_add_test(syn, duplicate_stack_ids_merge);
	tcase_add_test(syn, walk_only_single_record_contexts);
	tcase_add_test(syn, v5_histogram_decoding);
	tcase_add_test(syn, errors_are_precise);
	tcase_add_loop_test(sweep, every_truncation_is_rejected, 0, nsweep);
	tcase_add_loop_test(sweep, header_mutations_never_crash, 0, nsweep);
	tcase_set_timeout(sweep, 120);
	suite_add_tcase(s, real);
	suite_add_tcase(s, syn);
	suite_add_tcase(s, sweep);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
