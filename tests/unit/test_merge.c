/*
 * The merge pipeline (src/cli/merge.c) on synthetic raw profiles: PCs
 * named by module and offset fold across processes whatever their load
 * address; PCs outside every segment, small and beyond 48 bits, keep
 * their address; overlapping segments resolve to the first in the table
 * as sym_map_pc() does; and the output does not depend on -j.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "merge/merge.h"
#include "common/mp_file.h"
#include "rawbuild.h"

static char dir[] = "/tmp/test_merge.XXXXXX";

/* A one-context v4 profile: segments SEG (start, end, bias, build id
 * byte), the stack PCS and an AllocCount of COUNT. */
struct seg {
	uint64_t start, end, bias;
	char id;
};

static const char *write_profile(const char *name, const struct seg *segs,
				 size_t nseg, const uint64_t *pcs, uint32_t npcs,
				 uint64_t count)
{
	static char path[4][256];
	static int next;
	char *p = path[next++ % 4];
	struct mp_mib m;
	struct rb b = { 0 };
	FILE *f;

	memset(&m, 0, sizeof(m));
	m.v[MIB_AllocCount] = count;
	m.v[MIB_TotalSize] = 16 * count;
	m.v[MIB_MinSize] = m.v[MIB_MaxSize] = 16;
	rb_begin(&b, 4);
	for (size_t i = 0; i < nseg; i++) {
		char id[2] = { segs[i].id, segs[i].id };

		rb_segment(&b, segs[i].start, segs[i].end, segs[i].bias, id, 2);
	}
	rb_mibs(&b, 1);
	rb_mib(&b, 7, &m, NULL, 0);
	rb_stacks(&b, 1);
	rb_stack(&b, 7, pcs, npcs);
	rb_end(&b);
	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b.data, 1, b.size, f), b.size);
	fclose(f);
	rb_free(&b);
	return p;
}

/* Merge IN (N inputs) with JOBS threads into DIR/OUT; 0 on success. */
static int merge_opt(const char *const *in, size_t n, unsigned jobs,
		     const char *out, bool keep_bad_frames, uint64_t *cut)
{
	struct merge_opts opts = { .failure_mode = MERGE_FAIL_ANY,
				   .jobs = jobs, .keep_bad_frames = keep_bad_frames,
				   .indexed_output = true };
	struct mp_err err = { 0 };
	struct sym_options so = { .no_default_debug_dir = true };
	struct merge_input mi[8];
	struct sym_ctx sym;
	struct merge m;
	char path[256];
	int rc;

	for (size_t i = 0; i < n; i++)
		mi[i] = (struct merge_input){ in[i], 1 };
	snprintf(path, sizeof(path), "%s/%s", dir, out);
	sym_init(&sym, &so);
	merge_init(&m, &opts, &sym);
	rc = merge_run(&m, mi, n, &err);
	if (rc == 0)
		rc = merge_write(&m, path, &err);
	if (cut)
		*cut = m.cut;
	merge_release(&m);
	sym_release(&sym);
	return rc;
}

static int merge(const char *const *in, size_t n, unsigned jobs,
		 const char *out)
{
	return merge_opt(in, n, jobs, out, false, NULL);
}

/* The contexts of DIR/NAME, frame by frame. */
struct ctx {
	uint64_t count;
	uint32_t depth;
	char function[4][64];
	uint64_t offset[4];
};

struct got {
	struct ctx c[8];
	size_t n;
};

static int collect(void *arg, const struct idx_file *f,
		   const struct idx_context *c)
{
	struct got *g = arg;
	struct ctx *x = &g->c[g->n++];
	uint32_t node = c->stack_id;
	struct idx_frame_buf fb;

	x->count = c->mib.v[MIB_AllocCount];
	x->depth = idx_stack_depth(f, c->stack_id);
	for (uint32_t k = 0; k < x->depth && k < 4; k++) {
		struct mp_frame fr;
		char hex[2 * IDX_BUILD_ID_MAX + 1];

		idx_stack_frame(f, node, 0, &fr, &fb);
		/* An unsymbolized frame: its module's build id. */
		snprintf(x->function[k], sizeof(x->function[k]), "%s",
			 fr.function ? fr.function
				     : mp_frame_build_id_hex(&fr, hex, sizeof(hex)));
		x->offset[k] = fr.offset;
		node = idx_node_parent1(f, node) - 1;
	}
	return g->n == 8;
}

static void read_back(const char *name, struct got *g, struct mp_buf *buf)
{
	struct mp_err err = { 0 };
	struct idx_file f;
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(g, 0, sizeof(*g));
	ck_assert_int_eq(mp_file_read(buf, path, NULL, &err), MP_OK);
	ck_assert_int_eq(idx_open(&f, buf->data, buf->size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, collect, g), 0);
}

/*
 * The same stack in two processes that loaded the module at different
 * addresses is one context; with keep_bad_frames, the PCs outside every
 * segment (one beyond 48 bits, which a location key cannot hold inline)
 * keep their address; by default the stack is cut at the first of them.
 */
/*
 * --prefix-map's rules (mp_frame.h): a rule applies at a path component's
 * end only, the last rule that applies wins, NEW may be empty, the result
 * is not mapped again, and a result that does not fit is NULL.
 */
START_TEST(prefix_map_rules)
{
	struct mp_prefix_map m = { 0 };
	char buf[32];
	bool nomem;

	ck_assert(!mp_prefix_map_add(&m, "no-equals", &nomem) && !nomem);
	ck_assert(!mp_prefix_map_add(&m, "=/x", &nomem) && !nomem);
	ck_assert_str_eq(mp_prefix_map_apply(&m, "/ws/a/x.c", buf, sizeof(buf)),
			 "/ws/a/x.c");
	ck_assert(mp_prefix_map_add(&m, "/ws/a=/src", &nomem));
	ck_assert(mp_prefix_map_add(&m, "/ws/b/=", &nomem));
	ck_assert(mp_prefix_map_add(&m, "/ws/a/gen=/gen", &nomem));
	ck_assert(mp_prefix_map_add(&m, "/src=/loop", &nomem));
	ck_assert(mp_prefix_map_add(&m, "k=v=w", &nomem));	/* at the first '=' */
	ck_assert_uint_eq(m.n, 5);
	ck_assert_str_eq(mp_prefix_map_apply(&m, "/ws/a/x.c", buf, sizeof(buf)),
			 "/src/x.c");		/* not mapped again by /src */
	ck_assert_str_eq(mp_prefix_map_apply(&m, "/ws/a", buf, sizeof(buf)),
			 "/src");
	ck_assert_str_eq(mp_prefix_map_apply(&m, "/ws/ab/x.c", buf, sizeof(buf)),
			 "/ws/ab/x.c");		/* not at a component's end */
	ck_assert_str_eq(mp_prefix_map_apply(&m, "/ws/b/x.c", buf, sizeof(buf)),
			 "x.c");		/* OLD ending in '/' */
	ck_assert_str_eq(mp_prefix_map_apply(&m, "/ws/a/gen/y.h", buf, sizeof(buf)),
			 "/gen/y.h");		/* the last rule that applies */
	ck_assert_str_eq(mp_prefix_map_apply(&m, "k/z", buf, sizeof(buf)),
			 "v=w/z");
	ck_assert_ptr_null(mp_prefix_map_apply(&m, "/ws/a/0123456789012345678901234567",
					       buf, sizeof(buf)));
	ck_assert_ptr_null(mp_prefix_map_apply(&m, NULL, buf, sizeof(buf)));
	ck_assert_str_eq(mp_prefix_map_apply(NULL, "/ws/a/x.c", buf, sizeof(buf)),
			 "/ws/a/x.c");
	mp_prefix_map_release(&m);
	ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(processes_fold_by_module_offset)
{
	static const struct seg a[] = { { 0x1000, 0x2000, 0x0, '\xaa' } };
	static const struct seg b[] = { { 0x5000, 0x6000, 0x4000, '\xaa' } };
	const uint64_t pa[] = { 0x1010, 0xffff800000001234ULL, 0x7fff00001000ULL };
	const uint64_t pb[] = { 0x5010, 0xffff800000001234ULL, 0x7fff00001000ULL };
	const char *in[2];
	struct mp_buf buf;
	struct got g;

	uint64_t cut = 0;

	in[0] = write_profile("a.profraw", a, 1, pa, 3, 2);
	in[1] = write_profile("b.profraw", b, 1, pb, 3, 3);
	ck_assert_int_eq(merge_opt(in, 2, 1, "cut.memprof", false, &cut), 0);
	ck_assert_uint_eq(cut, 2);
	read_back("cut.memprof", &g, &buf);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(g.c[0].count, 5);
	ck_assert_uint_eq(g.c[0].depth, 1);
	mp_buf_release(&buf);
	ck_assert_int_eq(merge_opt(in, 2, 1, "ab.memprof", true, NULL), 0);
	read_back("ab.memprof", &g, &buf);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(g.c[0].count, 5);
	ck_assert_uint_eq(g.c[0].depth, 3);
	ck_assert_str_eq(g.c[0].function[0], "aaaa");	/* the build id */
	ck_assert_uint_eq(g.c[0].offset[0], 0x1010);
	ck_assert_str_eq(g.c[0].function[1], "");	/* no module */
	ck_assert_uint_eq(g.c[0].offset[1], 0xffff800000001234ULL);
	ck_assert_uint_eq(g.c[0].offset[2], 0x7fff00001000ULL);
	mp_buf_release(&buf);
}
END_TEST

/* A PC in two overlapping segments belongs to the first of the table. */
START_TEST(overlapping_segments_take_the_first)
{
	static const struct seg s[] = {
		{ 0x1000, 0x3000, 0x0, '\x11' }, { 0x2000, 0x4000, 0x1000, '\x22' },
	};
	const uint64_t pcs[] = { 0x2500, 0x3500 };
	const char *in[1];
	struct mp_buf buf;
	struct got g;

	in[0] = write_profile("o.profraw", s, 2, pcs, 2, 1);
	ck_assert_int_eq(merge(in, 1, 1, "o.memprof"), 0);
	read_back("o.memprof", &g, &buf);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_str_eq(g.c[0].function[0], "1111");
	ck_assert_uint_eq(g.c[0].offset[0], 0x2500);
	ck_assert_str_eq(g.c[0].function[1], "2222");
	ck_assert_uint_eq(g.c[0].offset[1], 0x3500 - 0x1000);
	mp_buf_release(&buf);
}
END_TEST

/*
 * An empty segment starting where another does holds no PC, whichever
 * comes first in the table (the first PC, in a third segment, makes the
 * lookup of the second search rather than hit its last segment again).
 */
START_TEST(empty_segment_at_the_same_start)
{
	static const struct seg s[] = {
		{ 0x1000, 0x1000, 0x0, '\x11' }, { 0x1000, 0x2000, 0x0, '\x22' },
		{ 0x3000, 0x4000, 0x0, '\x33' },
	};
	static const struct seg r[] = {
		{ 0x1000, 0x2000, 0x0, '\x22' }, { 0x1000, 0x1000, 0x0, '\x11' },
		{ 0x3000, 0x4000, 0x0, '\x33' },
	};
	const uint64_t pcs[] = { 0x3500, 0x1500 };
	const char *in[2];
	struct mp_buf buf;
	struct got g;

	in[0] = write_profile("e1.profraw", s, 3, pcs, 2, 1);
	in[1] = write_profile("e2.profraw", r, 3, pcs, 2, 1);
	ck_assert_int_eq(merge(in, 2, 1, "e.memprof"), 0);
	read_back("e.memprof", &g, &buf);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(g.c[0].count, 2);
	ck_assert_str_eq(g.c[0].function[1], "2222");
	ck_assert_uint_eq(g.c[0].offset[1], 0x1500);
	mp_buf_release(&buf);
}
END_TEST

/* Threads fold in any order: the bytes are the same for -j 1 and -j 3. */
START_TEST(jobs_do_not_change_the_output)
{
	static const struct seg a[] = { { 0x1000, 0x2000, 0x0, '\xaa' } };
	static const struct seg b[] = { { 0x9000, 0xa000, 0x8000, '\xaa' } };
	const uint64_t pa[] = { 0x1010, 0x1020 }, pb[] = { 0x9010, 0x9030 };
	const char *in[5];
	struct mp_buf one, three;
	struct mp_err err = { 0 };
	char path[256];

	in[0] = write_profile("j1.profraw", a, 1, pa, 2, 1);
	in[1] = write_profile("j2.profraw", b, 1, pb, 2, 2);
	in[2] = in[0];
	in[3] = in[1];
	in[4] = in[0];
	ck_assert_int_eq(merge(in, 5, 1, "one.memprof"), 0);
	ck_assert_int_eq(merge(in, 5, 3, "three.memprof"), 0);
	snprintf(path, sizeof(path), "%s/one.memprof", dir);
	ck_assert_int_eq(mp_file_read(&one, path, NULL, &err), MP_OK);
	snprintf(path, sizeof(path), "%s/three.memprof", dir);
	ck_assert_int_eq(mp_file_read(&three, path, NULL, &err), MP_OK);
	ck_assert_uint_eq(one.size, three.size);
	ck_assert(memcmp(one.data, three.data, one.size) == 0);
	mp_buf_release(&one);
	mp_buf_release(&three);
}
END_TEST

/* The inputs' outcomes as reported: their indices and paths. */
struct reports {
	size_t index[16];
	const char *path[16];
	size_t n;
};

static void record(void *arg, const struct merge_result *r)
{
	struct reports *rep = arg;

	ck_assert_uint_lt(rep->n, 16);
	rep->index[rep->n] = r->index;
	rep->path[rep->n++] = r->path;
}

/*
 * Workers take the last inputs largest first (ending on small ones): each
 * input is still folded once, the bytes are those of -j 1, and the
 * outcomes are reported in input order.  Ten inputs of different sizes
 * (stack depths) and counts: an input skipped or taken twice changes the
 * counts.
 */
START_TEST(inputs_taken_out_of_order_fold_once)
{
	static const struct seg a[] = { { 0x1000, 0x2000, 0x0, '\xaa' } };
	uint64_t pcs[8];
	char paths[10][256];
	struct merge_input mi[10];
	struct mp_buf out[3];
	struct mp_err err = { 0 };

	for (uint32_t k = 0; k < 8; k++)
		pcs[k] = 0x1010 + 0x10 * k;
	for (size_t i = 0; i < 10; i++) {
		char name[32];

		snprintf(name, sizeof(name), "sized%zu.profraw", i);
		snprintf(paths[i], sizeof(paths[i]), "%s",
			 write_profile(name, a, 1, pcs, 1 + (uint32_t)(i * 3) % 8,
				       i + 1));
		mi[i] = (struct merge_input){ paths[i], 1 };
	}
	for (unsigned jobs = 1; jobs <= 3; jobs++) {
		struct merge_opts opts = { .failure_mode = MERGE_FAIL_ANY,
					   .jobs = jobs, .indexed_output = true };
		struct sym_options so = { .no_default_debug_dir = true };
		struct reports rep = { 0 };
		struct sym_ctx sym;
		struct merge m;

		opts.report = record;
		opts.report_arg = &rep;
		sym_init(&sym, &so);
		merge_init(&m, &opts, &sym);
		ck_assert_int_eq(merge_run(&m, mi, 10, &err), MP_OK);
		ck_assert_int_eq(merge_bytes(&m, &out[jobs - 1], &err), MP_OK);
		merge_release(&m);
		sym_release(&sym);
		ck_assert_uint_eq(rep.n, 10);
		for (size_t i = 0; i < 10; i++) {
			ck_assert_uint_eq(rep.index[i], i);
			ck_assert_str_eq(rep.path[i], paths[i]);
		}
	}
	for (int k = 1; k < 3; k++) {
		ck_assert_uint_eq(out[k].size, out[0].size);
		ck_assert(memcmp(out[k].data, out[0].data, out[0].size) == 0);
	}
	for (int k = 0; k < 3; k++)
		mp_buf_release(&out[k]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("pipeline");
	char cmd[64];
	int failed;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	tcase_add_test(tc, prefix_map_rules);
	tcase_add_test(tc, processes_fold_by_module_offset);
	tcase_add_test(tc, overlapping_segments_take_the_first);
	tcase_add_test(tc, empty_segment_at_the_same_start);
	tcase_add_test(tc, jobs_do_not_change_the_output);
	tcase_add_test(tc, inputs_taken_out_of_order_fold_once);
	suite_add_tcase(s, tc);
	failed = check_failures(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
