/*
 * The indexed format: what goes in comes back; the bytes do not depend on
 * the order or grouping of merges; weights scale; a damaged file is
 * rejected cleanly, never followed.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check_run.h"
#include "hashtable/ht.h"
#include "indexed/idx.h"
#include "indexed/idx_format.h"	/* struct idx_rec: the builder's trie */
#include "indexed/idx_varint.h"

/* Three small contexts sharing prefixes, one inlined, one unsymbolized. */
#define FRAME(fn, f, l, c) { .function = fn, .file = f, .line = l, .column = c }
static const struct mp_frame stack_a[] = {
	FRAME("_Z9hot_allocv", "/src/app/basic.c", 26, 15),
	FRAME("main", "/src/app/main.c", 98, 3),
};
static const struct mp_frame stack_b[] = {
	{ .function = "inl_alloc", .file = "/src/app/inl.h", .line = 51,
	  .column = 10, .flags = MP_FRAME_INLINED },
	{ .function = "use_inline", .file = "/src/app/basic.c", .line = 58,
	  .column = 15, .discriminator = 2 },
	FRAME("main", "/src/app/main.c", 104, 3),
};
static const uint8_t deadbeef[] = { 0xde, 0xad, 0xbe, 0xef };
static const struct mp_frame stack_c[] = {
	{ .build_id = deadbeef, .build_id_size = 4, .offset = 0x123456789aULL },
	FRAME("main", "/src/app/main.c", 110, 3),
};

static void mib_of(struct mp_mib *m, uint64_t count, uint64_t size,
		   uint64_t ts)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < MIB__COUNT; i++)
		m->v[i] = ts + (uint64_t)i;	/* every field distinct */
	m->v[MIB_AllocCount] = count;
	m->v[MIB_TotalSize] = count * size;
	m->v[MIB_MinSize] = size;
	m->v[MIB_MaxSize] = size;
	m->v[MIB_AccessHistogramSize] = 0;
}

/* Build from contexts in the given order; return the file's bytes. */
struct input {
	const struct mp_frame *frames;
	uint32_t n;
	uint64_t count, size, ts, weight;
	uint64_t hist[3];
	uint32_t nhist;
};

static const struct input inputs[] = {
	{ stack_a, 2, 1000, 100, 10, 1, { 5, 0, 7 }, 3 },
	{ stack_b, 3, 5, 64, 20, 1, { 0 }, 0 },
	{ stack_c, 2, 9, 300, 30, 1, { 1 }, 1 },
	{ stack_a, 2, 3, 100, 40, 1, { 1, 1 }, 2 },
};
#define NINPUTS (sizeof(inputs) / sizeof(inputs[0]))

/*
 * Give D, changed after it was written, the checksum of its new bytes (when
 * it carries one), as a writer of such bytes would: the checks behind the
 * checksum then see the change.
 */
static void reseal(unsigned char *d, size_t size)
{
	if (size >= 64 && (mp_le32(d + 28) & 1))
		mp_put_le32(d + 56, idx_checksum(d, size));
}

/* What B writes, in memory (malloc'ed): *SIZE bytes. */
static unsigned char *written(struct idx_builder *b, size_t *size)
{
	struct mp_err err = { 0 };
	char *data = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&data, &len);

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(idx_builder_write(b, fp, &err), MP_OK);
	ck_assert_int_eq(fclose(fp), 0);
	*size = len;
	return (unsigned char *)data;
}

/* Intern frames named NAMES[0..N-1] into an empty B: ids 0 to N - 1. */
static void intern_names(struct idx_builder *b, const char *const *names,
			 uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct mp_frame fr = FRAME(names[i], "/src/x.c", 10 + i, 1);
		uint32_t id;

		ck_assert_int_eq(idx_builder_frame(b, &fr, &id), MP_OK);
		ck_assert_uint_eq(id, i);
	}
}

static unsigned char *build(const int *order, size_t n, uint64_t weight,
			    size_t *size)
{
	struct idx_builder b;
	struct mp_err err = { 0 };
	unsigned char *data;

	idx_builder_init(&b);
	for (size_t i = 0; i < n; i++) {
		const struct input *in = &inputs[order[i]];
		struct mp_mib m;

		mib_of(&m, in->count, in->size, in->ts);
		ck_assert_int_eq(idx_builder_add(&b, in->frames, in->n, &m,
						 in->hist, in->nhist,
						 weight, &err), MP_OK);
	}
	idx_builder_count_inputs(&b, n);
	data = written(&b, size);
	idx_builder_release(&b);
	return data;
}

/* Feed every context of an indexed file into a builder (a re-merge). */
struct remerge {
	struct idx_builder *b;
};

static int add_back(void *arg, const struct idx_file *f,
		    const struct idx_context *c)
{
	struct remerge *r = arg;
	struct mp_frame fr[16];
	struct idx_frame_buf bufs[16];
	uint32_t d = idx_stack_depth(f, c->stack_id);
	struct mp_err err = { 0 };

	ck_assert_uint_le(d, 16);
	for (uint32_t k = 0; k < d; k++)
		idx_stack_frame(f, c->stack_id, k, &fr[k], &bufs[k]);
	ck_assert_int_eq(idx_builder_add(r->b, fr, d, &c->mib, c->hist, c->nhist,
					 1, &err), MP_OK);
	return 0;
}

static unsigned char *remerge(unsigned char *const *files, const size_t *sizes,
			      size_t nfiles, size_t *size)
{
	struct idx_builder b;
	struct remerge r = { &b };
	struct mp_err err = { 0 };
	unsigned char *data;

	idx_builder_init(&b);
	for (size_t i = 0; i < nfiles; i++) {
		struct idx_file f;

		ck_assert_int_eq(idx_open(&f, files[i], sizes[i], &err), MP_OK);
		ck_assert_int_eq(idx_foreach_context(&f, add_back, &r), 0);
		idx_builder_count_inputs(&b, f.ninputs);
	}
	data = written(&b, size);
	idx_builder_release(&b);
	return data;
}

struct collected {
	size_t n;
	uint64_t alloc[8], size[8], hist0[8];
	uint32_t depth[8], nhist[8];
	struct idx_frame_buf leaf_buf[8];
	struct mp_frame leaf[8];
	const char *function[8];
};

static int collect(void *arg, const struct idx_file *f,
		   const struct idx_context *c)
{
	struct collected *s = arg;
	size_t i = s->n++;

	ck_assert_uint_lt(i, 8);
	s->alloc[i] = c->mib.v[MIB_AllocCount];
	s->size[i] = c->mib.v[MIB_TotalSize];
	s->nhist[i] = c->nhist;
	s->hist0[i] = c->nhist ? c->hist[0] : 0;
	s->depth[i] = idx_stack_depth(f, c->stack_id);
	s->function[i] = c->function;
	idx_stack_frame(f, c->stack_id, 0, &s->leaf[i], &s->leaf_buf[i]);
	return 0;
}

START_TEST(round_trip)
{
	static const int order[] = { 0, 1, 2, 3 };
	struct mp_err err = { 0 };
	struct collected s = { 0 };
	struct idx_file f;
	unsigned char *d;
	size_t size;

	d = build(order, 4, 1, &size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_uint_eq(f.ncontexts, 3);	/* stack_a twice: folded */
	ck_assert_uint_eq(f.nfunctions, 3);
	ck_assert_uint_eq(f.ninputs, 4);
	ck_assert_int_eq(idx_foreach_context(&f, collect, &s), 0);
	ck_assert_uint_eq(s.n, 3);
	/* Records in name order: _Z9hot_allocv, deadbeef, inl_alloc. */
	ck_assert_str_eq(s.function[0], "_Z9hot_allocv");
	ck_assert_uint_eq(s.alloc[0], 1003);
	ck_assert_uint_eq(s.size[0], 100300);
	ck_assert_uint_eq(s.nhist[0], 3);
	ck_assert_uint_eq(s.hist0[0], 6);
	ck_assert_uint_eq(s.depth[0], 2);
	ck_assert_str_eq(s.leaf[0].file, "/src/app/basic.c");
	ck_assert_uint_eq(s.leaf[0].line, 26);
	ck_assert_uint_eq(s.leaf[0].column, 15);
	ck_assert_str_eq(s.function[1], "deadbeef");
	ck_assert(!mp_frame_symbolized(&s.leaf[1]));
	ck_assert_uint_eq(s.leaf[1].build_id_size, 4);
	ck_assert_mem_eq(s.leaf[1].build_id, deadbeef, 4);
	ck_assert_uint_eq(s.leaf[1].offset, 0x123456789aULL);
	ck_assert_str_eq(s.function[2], "inl_alloc");
	ck_assert(mp_frame_inlined(&s.leaf[2]));
	ck_assert_uint_eq(s.depth[2], 3);
	free(d);
}
END_TEST

START_TEST(lookup_by_function)
{
	static const int order[] = { 0, 1, 2 };
	struct mp_err err = { 0 };
	struct collected s = { 0 };
	struct idx_file f;
	unsigned char *d;
	size_t size;

	d = build(order, 3, 1, &size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_int_eq(idx_find_function(&f, "inl_alloc", collect, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.alloc[0], 5);
	ck_assert_int_eq(idx_find_function(&f, "main", collect, &s), -2);
	ck_assert_int_eq(idx_find_function(&f, "", collect, &s), -2);
	free(d);
}
END_TEST

START_TEST(order_does_not_matter)
{
	static const int fwd[] = { 0, 1, 2, 3 }, rev[] = { 3, 2, 1, 0 },
			 mix[] = { 2, 0, 3, 1 };
	unsigned char *a, *b, *c;
	size_t na, nb, nc;

	a = build(fwd, 4, 1, &na);
	b = build(rev, 4, 1, &nb);
	c = build(mix, 4, 1, &nc);
	ck_assert_uint_eq(na, nb);
	ck_assert_uint_eq(na, nc);
	ck_assert_mem_eq(a, b, na);
	ck_assert_mem_eq(a, c, na);
	free(a);
	free(b);
	free(c);
}
END_TEST

START_TEST(grouping_does_not_matter)
{
	static const int x[] = { 0 }, y[] = { 1, 3 }, z[] = { 2 };
	unsigned char *fx, *fy, *fz, *xy, *yz, *l, *r, *files[2];
	size_t nx, ny, nz, nxy, nyz, nl, nr, sizes[2];

	fx = build(x, 1, 1, &nx);
	fy = build(y, 2, 1, &ny);
	fz = build(z, 1, 1, &nz);
	files[0] = fx; files[1] = fy; sizes[0] = nx; sizes[1] = ny;
	xy = remerge(files, sizes, 2, &nxy);
	files[0] = xy; files[1] = fz; sizes[0] = nxy; sizes[1] = nz;
	l = remerge(files, sizes, 2, &nl);		/* (x + y) + z */
	files[0] = fy; files[1] = fz; sizes[0] = ny; sizes[1] = nz;
	yz = remerge(files, sizes, 2, &nyz);
	files[0] = fx; files[1] = yz; sizes[0] = nx; sizes[1] = nyz;
	r = remerge(files, sizes, 2, &nr);		/* x + (y + z) */
	ck_assert_uint_eq(nl, nr);
	ck_assert_mem_eq(l, r, nl);
	/* And b + a == a + b. */
	files[0] = fy; files[1] = fx; sizes[0] = ny; sizes[1] = nx;
	free(l);
	l = remerge(files, sizes, 2, &nl);
	ck_assert_uint_eq(nl, nxy);
	ck_assert_mem_eq(l, xy, nl);
	free(fx); free(fy); free(fz); free(xy); free(yz); free(l); free(r);
}
END_TEST

START_TEST(weight_scales_counts)
{
	static const int order[] = { 0 };
	struct mp_err err = { 0 };
	struct collected s = { 0 };
	struct idx_file f;
	unsigned char *d;
	size_t size;

	d = build(order, 1, 2, &size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, collect, &s), 0);
	ck_assert_uint_eq(s.alloc[0], 2000);
	ck_assert_uint_eq(s.size[0], 200000);
	ck_assert_uint_eq(s.hist0[0], 10);
	free(d);
}
END_TEST

START_TEST(empty_profile)
{
	struct idx_builder b;
	struct mp_err err = { 0 };
	struct idx_file f;
	unsigned char *buf;
	size_t len;

	idx_builder_init(&b);
	buf = written(&b, &len);
	idx_builder_release(&b);
	ck_assert_int_eq(idx_open(&f, buf, len, &err), MP_OK);
	ck_assert_uint_eq(f.ncontexts, 0);
	free(buf);
}
END_TEST

/* Sweep 0: a file built here; sweep 1: the committed fixture. */
static unsigned char *sweep_input(int which, size_t *size)
{
	static const int order[] = { 0, 1, 2, 3 };
	const char *dir = getenv("FIXTURES");
	char path[4096];
	unsigned char *d;
	FILE *fp;
	long n;

	if (which == 0)
		return build(order, 4, 1, size);
	snprintf(path, sizeof(path), "%s/basic.memprof", dir ? dir : "tests/fixtures");
	fp = fopen(path, "rb");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	d = malloc((size_t)n);
	ck_assert_uint_eq(fread(d, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*size = (size_t)n;
	return d;
}

static const char *const sweep_names[] = { "built here", "basic.memprof" };

START_TEST(every_truncation_is_rejected)
{
	unsigned char *d;
	size_t size;

	d = sweep_input(_i, &size);
	for (size_t len = 0; len < size; len++) {
		unsigned char *copy = malloc(len ? len : 1);
		struct mp_err err = { 0 };
		struct idx_file f;

		memcpy(copy, d, len);
		ck_assert_msg(idx_open(&f, copy, len, &err) != MP_OK,
			      "prefix of %zu bytes accepted", len);
		ck_assert(err.detail[0]);
		free(copy);
	}
	printf("indexed (%s): %zu truncations rejected\n", sweep_names[_i], size);
	free(d);
}
END_TEST

static int visit_all(void *arg, const struct idx_file *f,
		     const struct idx_context *c)
{
	struct mp_frame fr;
	struct idx_frame_buf fb;
	uint32_t d = idx_stack_depth(f, c->stack_id);

	for (uint32_t k = 0; k < d; k++)
		idx_stack_frame(f, c->stack_id, k, &fr, &fb);
	(*(size_t *)arg)++;
	return 0;
}

/*
 * Every byte: 0x00, 0xff, +-1 and each bit flipped.  Each mutant must be
 * rejected, or pass validation and then be walked completely (all
 * records, all stacks, every function looked up) without a fault.
 */
START_TEST(every_byte_mutation_is_safe)
{
	size_t size, cases = 0, rejected = 0;
	unsigned char *d = sweep_input(_i, &size);
	bool sealed = mp_le32(d + 28) & 1;

	for (size_t i = 0; i < size; i++) {
		unsigned char orig = d[i];
		int muts[12] = { 0x00, 0xff, (orig + 1) & 0xff, (orig - 1) & 0xff };

		for (int bit = 0; bit < 8; bit++)
			muts[4 + bit] = orig ^ (1 << bit);
		for (int m = 0; m < 12; m++) {
			struct mp_err err = { 0 };
			struct idx_file f;
			size_t visited = 0;

			if (muts[m] == orig)
				continue;
			d[i] = orig;	/* and the checksum of its bytes */
			reseal(d, size);
			d[i] = (unsigned char)muts[m];
			cases++;
			/* The checksum catches every change of one byte; made
			 * to hold again, the structure's checks must. */
			if (sealed) {
				ck_assert_msg(idx_open(&f, d, size, &err) != MP_OK,
					      "byte %zu changed to 0x%02x accepted",
					      i, muts[m]);
				reseal(d, size);
			}
			if (idx_open(&f, d, size, &err) != MP_OK) {
				ck_assert(err.detail[0]);
				rejected++;
				continue;
			}
			ck_assert_int_eq(idx_foreach_context(&f, visit_all, &visited), 0);
			idx_find_function(&f, "inl_alloc", visit_all, &visited);
			idx_find_function(&f, "_Z9hot_allocv", visit_all, &visited);
		}
		d[i] = orig;
		reseal(d, size);
	}
	printf("indexed (%s): %zu single-byte mutations%s, %zu rejected%s, "
	       "the rest read and walked cleanly\n", sweep_names[_i], cases,
	       sealed ? " all refused by the checksum" : "", rejected,
	       sealed ? " with the checksum made to hold" : "");
	free(d);
}
END_TEST

/*
 * A MIB stores only the fields that differ from the MIB before it in its
 * record: a field that changes back, a histogram that goes away and comes
 * back, and a field that drops to 0 must all read back as written.
 */
struct carry {
	const char *caller;
	uint64_t alloc, size, lifetime;
	uint64_t hist[2];
	uint32_t nhist;
	int seen;
};

static struct carry carries[] = {
	{ "a_caller", 7, 700, 5, { 1, 2 }, 2, 0 },
	{ "b_caller", 7, 0, 5, { 0 }, 0, 0 },
	{ "c_caller", 7, 700, 0, { 1, 2 }, 2, 0 },
	{ "d_caller", 7, 700, 0, { 1, 3 }, 2, 0 },
	{ "e_caller", 8, 700, 0, { 0 }, 0, 0 },
};
#define NCARRIES (sizeof(carries) / sizeof(carries[0]))

static int check_carry(void *arg, const struct idx_file *f,
		       const struct idx_context *c)
{
	struct mp_frame caller;
	struct idx_frame_buf fb;
	size_t i;

	(void)arg;
	ck_assert_uint_eq(idx_stack_depth(f, c->stack_id), 2);
	idx_stack_frame(f, c->stack_id, 1, &caller, &fb);
	for (i = 0; i < NCARRIES; i++)
		if (strcmp(carries[i].caller, caller.function) == 0)
			break;
	ck_assert_uint_lt(i, NCARRIES);
	carries[i].seen++;
	ck_assert_uint_eq(c->mib.v[MIB_AllocCount], carries[i].alloc);
	ck_assert_uint_eq(c->mib.v[MIB_TotalSize], carries[i].size);
	ck_assert_uint_eq(c->mib.v[MIB_TotalLifetime], carries[i].lifetime);
	ck_assert_uint_eq(c->mib.v[MIB_AccessHistogramSize], carries[i].nhist);
	ck_assert_uint_eq(c->nhist, carries[i].nhist);
	for (uint32_t k = 0; k < c->nhist; k++)
		ck_assert_uint_eq(c->hist[k], carries[i].hist[k]);
	return 0;
}

START_TEST(fields_carry_over_within_a_record)
{
	struct idx_builder b;
	struct mp_err err = { 0 };
	struct idx_file f;
	unsigned char *buf;
	size_t len;

	idx_builder_init(&b);
	for (size_t i = 0; i < NCARRIES; i++) {
		struct mp_frame st[2] = {
			FRAME("leaf", "/src/leaf.c", 3, 1),
			FRAME(carries[i].caller, "/src/c.c", 10 + (uint32_t)i, 1),
		};
		struct mp_mib m;

		memset(&m, 0, sizeof(m));
		m.v[MIB_AllocCount] = carries[i].alloc;
		m.v[MIB_TotalSize] = carries[i].size;
		m.v[MIB_TotalLifetime] = carries[i].lifetime;
		ck_assert_int_eq(idx_builder_add(&b, st, 2, &m, carries[i].hist,
						 carries[i].nhist, 1, &err), MP_OK);
	}
	buf = written(&b, &len);
	idx_builder_release(&b);
	ck_assert_int_eq(idx_open(&f, buf, len, &err), MP_OK);
	ck_assert_uint_eq(f.ncontexts, NCARRIES);
	ck_assert_uint_eq(f.nfunctions, 1);
	ck_assert_int_eq(idx_foreach_context(&f, check_carry, NULL), 0);
	ck_assert_int_eq(idx_find_function(&f, "leaf", check_carry, NULL), 0);
	for (size_t i = 0; i < NCARRIES; i++)
		ck_assert_int_eq(carries[i].seen, 2);
	free(buf);
}
END_TEST

/*
 * A trie big enough for multi-byte varints everywhere: frame indices over
 * 127, parents more than 127 bytes back, stacks 60 deep, stack-id steps
 * of several bytes.  Every stack must read back frame for frame, the
 * same whatever order the contexts came in.
 */
#define BIG_FRAMES 400
#define BIG_CONTEXTS 300
#define BIG_DEPTH 60

static uint32_t big_stack(uint32_t ctx, uint32_t *ids)
{
	/* Deterministic, with shared prefixes: an LCG seeded per context. */
	uint32_t x = ctx * 2654435761u + 1, depth = 1 + ctx % BIG_DEPTH;

	for (uint32_t k = 0; k < depth; k++) {
		uint32_t outer = depth - 1 - k;	/* distance from the root */

		x = x * 1103515245u + 12345u;
		/* Outer frames vary little, so stacks share prefixes. */
		ids[k] = outer < 3 ? outer * 7 + ctx % 3
				   : (x >> 8) % BIG_FRAMES;
	}
	/*
	 * A leaf of its own makes every stack distinct (none fold); its
	 * function is one of 7, so records hold many contexts.
	 */
	ids[0] = BIG_FRAMES + ctx;
	return depth;
}

static void big_frame(uint32_t id, struct mp_frame *fr, char *name,
		      size_t size)
{
	if (id >= BIG_FRAMES)
		snprintf(name, size, "leaf%u", id % 7);
	else
		snprintf(name, size, "fn%03u", id);
	memset(fr, 0, sizeof(*fr));
	fr->function = name;
	fr->file = id % 2 ? "/src/odd.c" : "/src/even/even.c";
	fr->line = 1000 + id;
	fr->column = id % 13;
}

static unsigned char *build_big(bool reverse, size_t *size)
{
	struct idx_builder b;
	struct mp_err err = { 0 };
	char names[BIG_DEPTH][16];
	unsigned char *data;

	idx_builder_init(&b);
	for (uint32_t i = 0; i < BIG_CONTEXTS; i++) {
		uint32_t ctx = reverse ? BIG_CONTEXTS - 1 - i : i, ids[BIG_DEPTH];
		uint32_t d = big_stack(ctx, ids);
		struct mp_frame fr[BIG_DEPTH];
		struct mp_mib m;
		uint64_t hist[2] = { ctx, ctx % 3 };

		for (uint32_t k = 0; k < d; k++)
			big_frame(ids[k], &fr[k], names[k], sizeof(names[k]));
		memset(&m, 0, sizeof(m));
		m.v[MIB_AllocCount] = 1;
		m.v[MIB_TotalSize] = (uint64_t)ctx << 20 | d;
		m.v[MIB_MinSize] = ctx % 5;
		ck_assert_int_eq(idx_builder_add(&b, fr, d, &m, hist, ctx % 3,
						 1, &err), MP_OK);
	}
	data = written(&b, size);
	idx_builder_release(&b);
	return data;
}

struct big_seen {
	uint32_t count[BIG_CONTEXTS];
	uint64_t n;
};

static int check_big(void *arg, const struct idx_file *f,
		     const struct idx_context *c)
{
	struct big_seen *s = arg;
	uint64_t v = c->mib.v[MIB_TotalSize];
	uint32_t ctx = (uint32_t)(v >> 20), d = (uint32_t)(v & 0xfffff);
	uint32_t ids[BIG_DEPTH], node = c->stack_id;
	struct idx_frame_buf fb;
	char name[16];

	ck_assert_uint_lt(ctx, BIG_CONTEXTS);
	ck_assert_uint_lt(c->stack_id, f->trie_size);
	ck_assert_uint_eq(big_stack(ctx, ids), d);
	ck_assert_uint_eq(idx_stack_depth(f, c->stack_id), d);
	ck_assert_uint_eq(c->mib.v[MIB_MinSize], ctx % 5);
	ck_assert_uint_eq(c->nhist, ctx % 3);
	if (c->nhist)
		ck_assert_uint_eq(c->hist[0], ctx);
	for (uint32_t k = 0; k < d; k++) {
		struct mp_frame fr, want;
		uint32_t parent1 = idx_node_parent1(f, node);

		idx_stack_frame(f, node, 0, &fr, &fb);
		big_frame(ids[k], &want, name, sizeof(name));
		ck_assert_str_eq(fr.function, want.function);
		ck_assert_str_eq(fr.file, want.file);
		ck_assert_uint_eq(fr.line, want.line);
		ck_assert_uint_eq(fr.column, want.column);
		/* Parents lie before their children; the walk ends at D. */
		ck_assert_uint_le(parent1, node);
		ck_assert_int_eq(parent1 == 0, k == d - 1);
		node = parent1 - 1;
	}
	s->count[ctx]++;
	s->n++;
	return 0;
}

START_TEST(big_trie_round_trip)
{
	struct mp_err err = { 0 };
	struct idx_file f;
	struct big_seen *s = calloc(1, sizeof(*s));
	unsigned char *a, *r;
	size_t na, nr;

	a = build_big(false, &na);
	r = build_big(true, &nr);
	ck_assert_uint_eq(na, nr);
	ck_assert_mem_eq(a, r, na);
	ck_assert_int_eq(idx_open(&f, a, na, &err), MP_OK);
	ck_assert_uint_gt(f.nframes, 127);
	ck_assert_uint_gt(f.trie_size, 1u << 14);
	ck_assert_int_eq(idx_foreach_context(&f, check_big, s), 0);
	ck_assert_uint_eq(f.ncontexts, BIG_CONTEXTS);
	ck_assert_uint_eq(f.nfunctions, 7);
	ck_assert_uint_eq(s->n, BIG_CONTEXTS);
	for (uint32_t i = 0; i < BIG_CONTEXTS; i++)
		ck_assert_uint_eq(s->count[i], 1);
	free(s);
	free(a);
	free(r);
}
END_TEST

/*
 * The trie's nodes are the distinct prefixes of the stacks, whichever
 * way a node was found or made (the prefix shared with the stack before,
 * the frame's last use, a parent's first child, the map of the others):
 * 3000 random stacks of up to 9 frames over 6 frame ids, so that nodes
 * have one child, several, or none, added forward then backward.  Each
 * stack's node is the same both times and its records spell the stack;
 * the count of nodes is the count of distinct prefixes.
 */
static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;

	return a < c ? -1 : a > c;
}

START_TEST(trie_nodes_are_the_distinct_prefixes)
{
	enum { N = 3000, DEPTH = 9, NF = 6 };
	static const char *names[NF] = { "m", "a", "b", "c", "d", "e" };
	static uint32_t stack[N][DEPTH], len[N], node[N];
	/* Each prefix as a number in base NF + 1 (digits 1..NF), outermost
	 * frame most significant: distinct prefixes, distinct numbers. */
	static uint64_t prefix[N * DEPTH];
	struct mp_err err = { 0 };
	struct idx_builder b;
	uint32_t x = 12345, got;
	size_t nprefix = 0, distinct = 0;

	idx_builder_init(&b);
	intern_names(&b, names, NF);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t p = 0;

		x = x * 1103515245u + 12345u;
		len[i] = 1 + (x >> 16) % DEPTH;
		for (uint32_t k = 0; k < len[i]; k++) {
			/* Outer frames from fewer ids: shared prefixes. */
			x = x * 1103515245u + 12345u;
			stack[i][len[i] - 1 - k] = (x >> 16) % (k < 2 ? 2 : NF);
			p = p * (NF + 1) + stack[i][len[i] - 1 - k] + 1;
			prefix[nprefix++] = p;
		}
	}
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(idx_builder_node(&b, stack[i], len[i], &node[i],
						  &err), MP_OK);
	for (uint32_t i = N; i-- > 0;) {
		uint32_t n = node[i];

		ck_assert_int_eq(idx_builder_node(&b, stack[i], len[i], &got,
						  &err), MP_OK);
		ck_assert_uint_eq(got, n);
		/* Leaf first, up the parents to a root. */
		for (uint32_t k = 0; k < len[i]; k++) {
			ck_assert_uint_lt(n, b.ntrie);
			ck_assert_uint_eq(b.trie[n].a, stack[i][k]);
			ck_assert_int_eq(b.trie[n].b == 0, k == len[i] - 1);
			n = b.trie[n].b - 1;
		}
	}
	qsort(prefix, nprefix, sizeof(prefix[0]), cmp_u64);
	for (size_t i = 0; i < nprefix; i++)
		distinct += i == 0 || prefix[i] != prefix[i - 1];
	ck_assert_uint_eq(b.ntrie, distinct);
	idx_builder_release(&b);
}
END_TEST

/*
 * A trie big enough to be grouped on a thread of its own (given two jobs)
 * while the sections before it are written, and written by one while the
 * records' order is made, gives the bytes one thread does, whichever
 * order the stacks came in.  The
 * stacks are big_stack()'s, 1200 of them, 36,000 nodes at many depths.
 */
static unsigned char *build_deep(bool reverse, unsigned jobs, size_t *size)
{
	enum { N = 1200 };
	struct idx_builder b;
	struct mp_err err = { 0 };
	char names[BIG_DEPTH][16];
	unsigned char *data;

	idx_builder_init(&b);
	idx_builder_set_jobs(&b, jobs);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t ctx = reverse ? N - 1 - i : i, ids[BIG_DEPTH];
		uint32_t d = big_stack(ctx, ids);
		struct mp_frame fr[BIG_DEPTH];
		struct mp_mib m;

		for (uint32_t k = 0; k < d; k++)
			big_frame(ids[k], &fr[k], names[k], sizeof(names[k]));
		mib_of(&m, 1 + ctx % 5, 8 + ctx % 64, ctx);
		ck_assert_int_eq(idx_builder_add(&b, fr, d, &m, NULL, 0, 1, &err),
				 MP_OK);
	}
	ck_assert_uint_gt(b.ntrie, 16384);	/* idx_write.c's TRIE_BESIDE */
	data = written(&b, size);
	idx_builder_release(&b);
	return data;
}

START_TEST(trie_grouped_beside_is_the_same_bytes)
{
	size_t n1, n2, nr;
	unsigned char *one = build_deep(false, 1, &n1);
	unsigned char *two = build_deep(false, 2, &n2);
	unsigned char *rev = build_deep(true, 2, &nr);
	struct mp_err err = { 0 };
	struct idx_file f;

	ck_assert_int_eq(idx_open(&f, one, n1, &err), MP_OK);
	ck_assert_uint_eq(f.ncontexts, 1200);
	ck_assert_uint_eq(n2, n1);
	ck_assert_mem_eq(two, one, n1);
	ck_assert_uint_eq(nr, n1);
	ck_assert_mem_eq(rev, one, n1);
	free(one);
	free(two);
	free(rev);
}
END_TEST

/* A file of another format version is refused, naming both versions. */
/* COUNTS[i] += AllocCount of the contexts of function "main", "mid"... */
static int count_by_function(void *arg, const struct idx_file *f,
			     const struct idx_context *c)
{
	static const char *names[] = { "main", "mid", "leaf1", "leaf2" };
	uint64_t *counts = arg;

	(void)f;
	for (int i = 0; i < 4; i++)
		if (!strcmp(c->function, names[i]))
			counts[i] += c->mib.v[MIB_AllocCount];
	return 0;
}

/*
 * The builder reuses the nodes of the prefix a stack shares with the one
 * before it: a stack that is a prefix of the previous one, a repeat, a
 * sibling, each lands on the node it would have without that shortcut.
 */
START_TEST(prefix_path_reuse)
{
	static const char *names[] = { "main", "mid", "leaf1", "leaf2" };
	/* Leaf first; frame ids as interned: 0 main, 1 mid, 2 leaf1, 3 leaf2. */
	static const uint32_t s1[] = { 2, 1, 0 }, s2[] = { 1, 0 },
			      s3[] = { 3, 1, 0 }, s4[] = { 0 };
	static const struct { const uint32_t *f; uint32_t n; } seq[] = {
		{ s1, 3 }, { s2, 2 }, { s1, 3 }, { s3, 3 }, { s2, 2 },
		{ s4, 1 }, { s1, 3 },
	};
	struct mp_err err = { 0 };
	struct idx_builder b;
	struct idx_stats st;
	struct idx_file f;
	struct mp_mib m;
	uint64_t counts[4] = { 0 };
	unsigned char *data;
	size_t size;

	idx_builder_init(&b);
	intern_names(&b, names, 4);
	mib_of(&m, 1, 8, 1);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		ck_assert_int_eq(idx_builder_add_stack(&b, seq[i].f, seq[i].n, &m,
						       NULL, 0, 1, &err), MP_OK);
	idx_builder_stats(&b, &st);
	ck_assert_uint_eq(st.trie_nodes, 4);	/* main, mid, leaf1, leaf2 */
	ck_assert_uint_eq(st.contexts, 4);	/* s1, s2, s3, s4 */
	data = written(&b, &size);
	ck_assert_int_eq(idx_open(&f, data, size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, count_by_function, counts), 0);
	/* By leaf: s1 (leaf1) came three times, s2 (mid) twice. */
	ck_assert_uint_eq(counts[0], 1);
	ck_assert_uint_eq(counts[1], 2);
	ck_assert_uint_eq(counts[2], 3);
	ck_assert_uint_eq(counts[3], 1);
	free(data);
	idx_builder_release(&b);
}
END_TEST

/* Each context's AllocCount, by order of appearance (at most 8). */
struct counts8 {
	size_t n;
	uint64_t alloc[8];
};

static int count_each(void *arg, const struct idx_file *f,
		      const struct idx_context *c)
{
	struct counts8 *s = arg;

	(void)f;
	ck_assert_uint_lt(s->n, 8);
	s->alloc[s->n++] = c->mib.v[MIB_AllocCount];
	return 0;
}

/*
 * A frame met again under another parent than last time gets that
 * parent's node, not the one the builder remembers the frame by: f under
 * a, then under b, then under a again lands where it did first.
 */
START_TEST(last_use_keeps_nodes)
{
	static const char *names[] = { "main", "a", "b", "f" };
	/* Leaf first; frame ids 0 main, 1 a, 2 b, 3 f. */
	static const uint32_t fa[] = { 3, 1, 0 }, fb[] = { 3, 2, 0 };
	static const uint32_t *seq[] = { fa, fb, fa, fb, fa };
	struct mp_err err = { 0 };
	struct counts8 got = { 0 };
	struct idx_builder b;
	struct idx_stats st;
	struct idx_file f;
	struct mp_mib m;
	unsigned char *data;
	size_t size;

	idx_builder_init(&b);
	intern_names(&b, names, 4);
	mib_of(&m, 1, 8, 1);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		ck_assert_int_eq(idx_builder_add_stack(&b, seq[i], 3, &m, NULL, 0,
						       1, &err), MP_OK);
	idx_builder_stats(&b, &st);
	ck_assert_uint_eq(st.trie_nodes, 5);	/* main, a, b, f@a, f@b */
	ck_assert_uint_eq(st.contexts, 2);
	data = written(&b, &size);
	ck_assert_int_eq(idx_open(&f, data, size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, count_each, &got), 0);
	ck_assert_uint_eq(got.n, 2);
	/* In stack id order: main/a/f first (a < b), three times. */
	ck_assert_uint_eq(got.alloc[0], 3);
	ck_assert_uint_eq(got.alloc[1], 2);
	free(data);
	idx_builder_release(&b);
}
END_TEST

/* A sample entry of interval R with every estimate E. */
static struct mp_samp samp_of(uint64_t r, uint64_t n, double e)
{
	struct mp_samp x = { .interval = r, .n = n, .u = n * 3 };

	for (int k = 0; k < MP_SAMP_NFIELDS; k++)
		ck_assert(mp_samp_set(&x, k, e + k, e));
	return x;
}

/*
 * Lending a context to the builder gives the bytes copying it gives:
 * three stacks, two of them on one node, with histograms of different
 * lengths (the second lent one longer, so the builder must copy before it
 * grows it) and sample entries.  The lent memory is the caller's to free.
 */
static unsigned char *build_lent(bool lend, size_t *size)
{
	static const uint32_t s0[] = { 1, 0 }, s1[] = { 2, 0 };
	struct mp_err err = { 0 };
	struct idx_builder b;
	struct mp_mib mib[3];
	uint64_t hist[3][4] = { { 1, 2 }, { 3, 4, 5, 6 }, { 7 } };
	uint32_t nhist[3] = { 2, 4, 1 };
	struct mp_samp samp[3][1];
	static const char *names[] = { "main", "x", "y" };
	uint32_t node[3];
	unsigned char *data;

	idx_builder_init(&b);
	intern_names(&b, names, 3);
	ck_assert_int_eq(idx_builder_node(&b, s0, 2, &node[0], &err), MP_OK);
	ck_assert_int_eq(idx_builder_node(&b, s0, 2, &node[1], &err), MP_OK);
	ck_assert_int_eq(idx_builder_node(&b, s1, 2, &node[2], &err), MP_OK);
	ck_assert_uint_eq(node[0], node[1]);
	for (int i = 0; i < 3; i++) {
		mib_of(&mib[i], 10 + i, 16, 100 * (i + 1));
		mib[i].v[MIB_AccessHistogramSize] = nhist[i];
		samp[i][0] = samp_of(4096, 3 + i, 1000.0 * (i + 1));
		if (lend)
			ck_assert_int_eq(idx_builder_lend_node(&b, node[i], &mib[i],
							       hist[i], nhist[i],
							       samp[i], 1, &err),
					 MP_OK);
		else
			ck_assert(idx_builder_add_node(&b, node[i], &mib[i], hist[i],
						       nhist[i], 1, &err) == MP_OK &&
				  idx_builder_add_samples(&b, samp[i], 1, 1,
							  &err) == MP_OK);
	}
	idx_builder_count_inputs(&b, 3);
	data = written(&b, size);
	idx_builder_release(&b);
	return data;
}

/* The sample entries read back from a file. */
static int first_samples(void *arg, const struct idx_file *f,
			 const struct idx_context *c)
{
	struct mp_samp *out = arg;

	(void)f;
	ck_assert_uint_eq(c->nsamp, 1);
	*out = c->samp[0];
	return 0;
}

/*
 * Version 13 keeps the sample sums exact: sums past 2^53 units, which
 * binary64 (versions 11 and 12) rounded, so that merging a merged file
 * gave other bytes than merging its inputs, read back as they were.
 */
START_TEST(sample_sums_are_exact)
{
	static const uint32_t s0[] = { 1, 0 };
	static const char *names[] = { "main", "x" };
	struct mp_samp e = { .interval = 4096, .n = 3, .u = 9 }, got;
	struct mp_err err = { 0 };
	struct idx_builder b;
	struct idx_file f;
	struct mp_mib mib;
	unsigned char *d;
	uint32_t node;
	size_t size;

	for (int k = 0; k < MP_SAMP_NFIELDS; k++) {
		e.est[k] = ((mp_fixed)1 << 60) + 1 + k;
		e.var[k] = ((mp_fixed)1 << 100) + 3 + k;
	}
	ck_assert((double)e.est[0] == (double)(e.est[0] - 1));	/* rounds */
	idx_builder_init(&b);
	intern_names(&b, names, 2);
	ck_assert_int_eq(idx_builder_node(&b, s0, 2, &node, &err), MP_OK);
	mib_of(&mib, 3, 16, 100);
	ck_assert_int_eq(idx_builder_add_node(&b, node, &mib, NULL, 0, 1, &err),
			 MP_OK);
	ck_assert_int_eq(idx_builder_add_samples(&b, &e, 1, 1, &err), MP_OK);
	d = written(&b, &size);
	idx_builder_release(&b);
	ck_assert_uint_eq(d[8], IDX_VERSION);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, first_samples, &got), 0);
	ck_assert_uint_eq(got.interval, 4096);
	ck_assert_uint_eq(got.n, 3);
	ck_assert_uint_eq(got.u, 9);
	for (int k = 0; k < MP_SAMP_NFIELDS; k++)
		ck_assert(got.est[k] == e.est[k] && got.var[k] == e.var[k]);
	free(d);
}
END_TEST

START_TEST(lending_gives_the_copies_bytes)
{
	size_t nc, nl;
	unsigned char *c = build_lent(false, &nc), *l = build_lent(true, &nl);
	struct mp_err err = { 0 };
	struct collected got = { 0 };
	struct idx_file f;

	ck_assert_uint_eq(nc, nl);
	ck_assert_mem_eq(c, l, nc);
	ck_assert_int_eq(idx_open(&f, l, nl, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, collect, &got), 0);
	ck_assert_uint_eq(got.n, 2);
	/* The node of two: 10 + 11 allocations, the histograms added. */
	ck_assert_uint_eq(got.alloc[0] + got.alloc[1], 10 + 11 + 12);
	ck_assert(got.nhist[0] == 4 || got.nhist[1] == 4);
	ck_assert_uint_eq(got.hist0[got.nhist[0] == 4 ? 0 : 1], 1 + 3);
	free(c);
	free(l);
}
END_TEST

/*
 * The records encoded in parts, a thread each, are the bytes of one
 * thread's: 40,000 contexts over functions of very different sizes (one
 * holds half of them, so parts end where a function starts, not at
 * their share).
 */
static void count_push(void *arg)
{
	(*(int *)arg)++;
}

/*
 * B written as idx_write_push() has it, to a file as it goes: its bytes,
 * and in *PUSHES how many times the write said a part was out.
 */
static unsigned char *written_as_it_goes(struct idx_builder *b, size_t *size,
					 int *pushes)
{
	struct mp_err err = { 0 };
	struct idx_write *w = idx_write_begin(b, b->nctxs);
	FILE *fp = tmpfile();
	unsigned char *data;
	long len;

	ck_assert_ptr_nonnull(fp);
	*pushes = 0;
	idx_write_push(w, count_push, pushes);
	ck_assert_int_eq(idx_write_end(w, fp, &err), MP_OK);
	idx_write_free(w);
	/* The stream is left at the end of the file, its size. */
	len = ftell(fp);
	ck_assert_int_gt(len, 0);
	data = malloc((size_t)len);
	ck_assert_ptr_nonnull(data);
	rewind(fp);
	ck_assert_uint_eq(fread(data, 1, (size_t)len, fp), (size_t)len);
	ck_assert_int_eq(fgetc(fp), EOF);
	fclose(fp);
	*size = (size_t)len;
	return data;
}

static unsigned char *build_parts(unsigned jobs, size_t *size, int *pushes)
{
	struct mp_err err = { 0 };
	struct idx_builder b;
	uint32_t main_id, id, stack[2];
	unsigned char *data;
	struct mp_frame top = FRAME("main", "/src/p.c", 1, 1);

	idx_builder_init(&b);
	idx_builder_set_jobs(&b, jobs);
	ck_assert_int_eq(idx_builder_frame(&b, &top, &main_id), MP_OK);
	for (uint32_t i = 0; i < 40000; i++) {
		char name[32];
		struct mp_frame fr = FRAME(name, "/src/p.c", 10 + i, 1 + i % 7);
		struct mp_mib m;

		snprintf(name, sizeof(name), "fn%u",
			 i % 2 ? 0 : 1 + (i / 2) % 37);
		ck_assert_int_eq(idx_builder_frame(&b, &fr, &id), MP_OK);
		stack[0] = id;
		stack[1] = main_id;
		mib_of(&m, 1 + i % 13, 8 + i % 100, i);
		ck_assert_int_eq(idx_builder_add_stack(&b, stack, 2, &m, NULL, 0,
						       1, &err), MP_OK);
	}
	data = pushes ? written_as_it_goes(&b, size, pushes) : written(&b, size);
	idx_builder_release(&b);
	return data;
}

START_TEST(records_in_parts_are_the_same_bytes)
{
	static const unsigned jobs[] = { 2, 3, 4, 16 };
	size_t n1, n;
	unsigned char *one = build_parts(1, &n1, NULL);
	struct mp_err err = { 0 };
	struct idx_file f;

	ck_assert_int_eq(idx_open(&f, one, n1, &err), MP_OK);
	ck_assert_uint_eq(f.ncontexts, 40000);
	ck_assert_uint_eq(f.nfunctions, 38);
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		unsigned char *p = build_parts(jobs[i], &n, NULL);

		ck_assert_uint_eq(n, n1);
		ck_assert_mem_eq(p, one, n1);
		free(p);
	}
	free(one);
}
END_TEST

/*
 * Written to a file as it goes (idx_write_push()): the stacks' sections,
 * the first part of the records while the others' threads finish, then
 * the rest and the header at the start; the same bytes as at once.
 */
START_TEST(written_as_it_goes_is_the_same_bytes)
{
	size_t n1, n;
	int pushes;
	unsigned char *one = build_parts(1, &n1, NULL);
	unsigned char *p = build_parts(1, &n, &pushes);

	ck_assert_uint_eq(n, n1);
	ck_assert_mem_eq(p, one, n1);
	ck_assert_int_eq(pushes, 2);
	free(p);
	p = build_parts(2, &n, &pushes);
	ck_assert_uint_eq(n, n1);
	ck_assert_mem_eq(p, one, n1);
	ck_assert_int_eq(pushes, 3);
	free(p);
	free(one);
}
END_TEST

/*
 * The write in two steps, its first on a thread of its own while the
 * contexts come in, gives the bytes of idx_builder_write() after them:
 * 20,000 stacks under two functions, every tenth context sampled (the
 * version and schema depend on the contexts, which the first step must
 * not have read).
 */
struct two_steps {
	struct idx_builder b;
	uint32_t node[20000];
	struct idx_write *w;
};

static void two_steps_stacks(struct two_steps *t)
{
	struct mp_err err = { 0 };
	struct mp_frame top = FRAME("main", "/src/t.c", 1, 1);
	uint32_t main_id, stack[2];

	idx_builder_init(&t->b);
	idx_builder_set_jobs(&t->b, 2);
	ck_assert_int_eq(idx_builder_frame(&t->b, &top, &main_id), MP_OK);
	for (uint32_t i = 0; i < 20000; i++) {
		struct mp_frame fr = FRAME(i % 3 ? "f" : "g", "/src/t.c",
					   10 + i, 1);

		ck_assert_int_eq(idx_builder_frame(&t->b, &fr, &stack[0]), MP_OK);
		stack[1] = main_id;
		ck_assert_int_eq(idx_builder_node(&t->b, stack, 2, &t->node[i],
						  &err), MP_OK);
	}
}

static void two_steps_contexts(struct two_steps *t)
{
	struct mp_err err = { 0 };

	for (uint32_t i = 0; i < 20000; i++) {
		struct mp_mib m;
		struct mp_samp s = samp_of(4096, 1 + i % 5, 10.0 * i);

		mib_of(&m, 1 + i % 11, 16 + i % 90, i);
		ck_assert_int_eq(idx_builder_add_node(&t->b, t->node[i], &m, NULL,
						      0, 1, &err), MP_OK);
		if (i % 10 == 0)
			ck_assert_int_eq(idx_builder_add_samples(&t->b, &s, 1, 1,
								 &err), MP_OK);
	}
	idx_builder_count_inputs(&t->b, 1);
}

static void *two_steps_begin(void *arg)
{
	struct two_steps *t = arg;

	t->w = idx_write_begin(&t->b, 20000);
	return NULL;
}

/* _i == 0: the first step before any context; 1: on a thread meanwhile. */
START_TEST(write_in_two_steps_is_the_same_bytes)
{
	struct two_steps *one = calloc(1, sizeof(*one)),
			 *two = calloc(1, sizeof(*two));
	struct mp_err err = { 0 };
	char *data = NULL;
	size_t len = 0, n1;
	unsigned char *want;
	pthread_t th;
	FILE *fp;

	ck_assert(one && two);
	two_steps_stacks(one);
	two_steps_contexts(one);
	want = written(&one->b, &n1);
	two_steps_stacks(two);
	ck_assert_int_eq(idx_builder_reserve(&two->b, 20000), MP_OK);
	if (_i == 0) {
		two_steps_begin(two);
		two_steps_contexts(two);
	} else {
		ck_assert_int_eq(pthread_create(&th, NULL, two_steps_begin, two), 0);
		two_steps_contexts(two);
		ck_assert_int_eq(pthread_join(th, NULL), 0);
	}
	ck_assert_ptr_nonnull(two->w);
	fp = open_memstream(&data, &len);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(idx_write_end(two->w, fp, &err), MP_OK);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_uint_eq(want[8], IDX_VERSION);	/* sampled */
	ck_assert_uint_eq(len, n1);
	ck_assert_mem_eq(data, want, n1);
	idx_write_free(two->w);
	idx_builder_release(&one->b);
	idx_builder_release(&two->b);
	free(want);
	free(data);
	free(one);
	free(two);
}
END_TEST

/* A stack added between the two steps fails the write: the trie's
 * section is already laid out. */
START_TEST(write_end_refuses_changed_stacks)
{
	struct two_steps *t = calloc(1, sizeof(*t));
	/* main called by the second frame: a root and a node, new. */
	static const uint32_t stack[] = { 0, 2 };
	struct mp_err err = { 0 };
	struct idx_write *w;
	uint32_t node;
	FILE *fp = fopen("/dev/null", "wb");

	ck_assert(t && fp);
	two_steps_stacks(t);
	two_steps_contexts(t);
	w = idx_write_begin(&t->b, t->b.nctxs);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(idx_builder_node(&t->b, stack, 2, &node, &err), MP_OK);
	ck_assert_int_eq(idx_write_end(w, fp, &err), MP_E_INVALID);
	ck_assert_msg(strstr(err.detail, "stacks changed"), "message '%s'",
		      err.detail);
	idx_write_free(w);
	idx_write_free(NULL);
	ck_assert_int_eq(idx_write_end(NULL, fp, &err), MP_E_NOMEM);
	fclose(fp);
	idx_builder_release(&t->b);
	free(t);
}
END_TEST

/*
 * The write counts the contexts with a field stopped at 2^64 - 1, in
 * every part of the records (two): 20 of the 20,000, each with another
 * field at the top, and none before the write has ended.
 */
START_TEST(write_counts_saturated_contexts)
{
	struct two_steps *t = calloc(1, sizeof(*t));
	struct mp_err err = { 0 };
	struct idx_write *w;
	FILE *fp = fopen("/dev/null", "wb");

	ck_assert(t && fp);
	two_steps_stacks(t);
	for (uint32_t i = 0; i < 20000; i++) {
		struct mp_mib m;

		int f = i / 1000 % MIB__COUNT;

		mib_of(&m, 1 + i % 11, 16 + i % 90, i);
		if (f == MIB_AccessHistogramSize)	/* tells the histogram */
			f = MIB_TotalSize;
		if (i % 1000 == 999)
			m.v[f] = UINT64_MAX;
		ck_assert_int_eq(idx_builder_add_node(&t->b, t->node[i], &m, NULL,
						      0, 1, &err), MP_OK);
	}
	w = idx_write_begin(&t->b, t->b.nctxs);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(idx_write_saturated(w), 0);
	ck_assert_int_eq(idx_write_end(w, fp, &err), MP_OK);
	ck_assert_uint_eq(idx_write_saturated(w), 20);
	ck_assert_uint_eq(idx_write_saturated(NULL), 0);
	idx_write_free(w);
	fclose(fp);
	idx_builder_release(&t->b);
	free(t);
}
END_TEST

/*
 * Sealed stacks: the trie's index is gone, a new stack is refused, the
 * nodes there are still take contexts, and the file is the same.
 */
START_TEST(sealed_stacks_keep_their_nodes)
{
	struct two_steps *one = calloc(1, sizeof(*one)),
			 *two = calloc(1, sizeof(*two));
	static const uint32_t stack[] = { 0, 2 };
	struct mp_err err = { 0 };
	unsigned char *a, *b;
	size_t na, nb;
	uint32_t node;

	ck_assert(one && two);
	two_steps_stacks(one);
	two_steps_contexts(one);
	a = written(&one->b, &na);
	two_steps_stacks(two);
	idx_builder_seal_stacks(&two->b);
	ck_assert_int_eq(idx_builder_node(&two->b, stack, 2, &node, &err),
			 MP_E_INVALID);
	ck_assert_msg(strstr(err.detail, "sealed"), "message '%s'", err.detail);
	two_steps_contexts(two);
	b = written(&two->b, &nb);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(a, b, na);
	idx_builder_release(&one->b);
	idx_builder_release(&two->b);
	free(a);
	free(b);
	free(one);
	free(two);
}
END_TEST

/*
 * Every file written carries the checksum flag and CRC-32 (zlib's) of its
 * bytes with the checksum field as zero.  A changed byte, the flag alone
 * cleared, a flag not defined, and the checksum's reserved high half are
 * each refused; a file of a writer before the checksum (flags and field
 * zero) is read unchecked.
 */
START_TEST(checksum_guards_the_bytes)
{
	static const int order[] = { 0, 1, 2, 3 };
	struct mp_err err = { 0 };
	struct idx_file f;
	unsigned char *d, keep[8];
	size_t size;
	uLong crc;

	d = build(order, 4, 1, &size);
	ck_assert_uint_eq(mp_le32(d + 28), 1);
	memcpy(keep, d + 56, 8);
	memset(d + 56, 0, 8);
	crc = crc32(crc32(0L, Z_NULL, 0), d, (uInt)size);
	memcpy(d + 56, keep, 8);
	ck_assert_uint_eq(mp_le64(d + 56), crc);
	ck_assert_uint_eq(idx_checksum(d, size), crc);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert(f.checksum);

	d[size - 1] ^= 0x10;
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_CORRUPT);
	ck_assert_msg(strstr(err.detail, "checksum mismatch"), "'%s'", err.detail);
	d[size - 1] ^= 0x10;

	d[28] = 0;	/* flag cleared, checksum left */
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_CORRUPT);
	ck_assert_msg(strstr(err.detail, "no flag"), "'%s'", err.detail);
	d[28] = 1 | 4;
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_BAD_VERSION);
	ck_assert_msg(strstr(err.detail, "header flags 0x5"), "'%s'", err.detail);
	d[28] = 1;
	d[63] = 1;
	reseal(d, size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_CORRUPT);
	d[63] = 0;

	/* As written before the checksum: read, unchecked, and damage past
	 * the checksum's reach is left to the structure's checks. */
	d[28] = 0;
	memset(d + 56, 0, 8);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert(!f.checksum);
	free(d);
}
END_TEST

START_TEST(old_version_is_rejected)
{
	static const int order[] = { 0, 1 };
	struct mp_err err = { 0 };
	struct idx_file f;
	unsigned char *d;
	size_t size;
	char want[64];

	/* Exact contexts only: written as version 10. */
	d = build(order, 2, 1, &size);
	/* No sampled context: written as version 10, as before 11. */
	ck_assert_uint_eq(d[8], IDX_VERSION_EXACT);
	d[8] = IDX_VERSION_MIN - 1;
	reseal(d, size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_BAD_VERSION);
	snprintf(want, sizeof(want), "version %d (supported: %d to %d)",
		 IDX_VERSION_MIN - 1, IDX_VERSION_MIN, IDX_VERSION);
	ck_assert_msg(strstr(err.detail, want), "message '%s'", err.detail);
	d[8] = IDX_VERSION + 1;
	reseal(d, size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_BAD_VERSION);
	/* Version 9 has a reserved byte where version 10 has the width of
	 * the start lines: 0 for these frames, which have none, so the
	 * same bytes read as version 9; with a start line, they do not. */
	d[8] = IDX_VERSION_MIN;
	reseal(d, size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_uint_eq(f.version, 9);
	free(d);
	{
		struct mp_frame fr = { .function = "f", .file = "/a.c",
				       .line = 12, .start_line = 10 };
		struct idx_builder b;
		struct mp_mib m = { { 0 } };

		idx_builder_init(&b);
		m.v[MIB_AllocCount] = 1;
		ck_assert_int_eq(idx_builder_add(&b, &fr, 1, &m, NULL, 0, 1, &err),
				 MP_OK);
		d = written(&b, &size);
		idx_builder_release(&b);
	}
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	d[8] = IDX_VERSION_MIN;
	reseal(d, size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err.detail, "reserved byte"));
	free(d);
}
END_TEST

/*
 * A frame of a file found by build id (MP_FRAME_FOUND) makes the file
 * version 12 and reads back with its flag; the same bytes as version 11
 * or 10 are refused (unknown flags), as is the flag on an unsymbolized
 * frame, which has no file to be found.
 */
START_TEST(found_frames_are_version_12)
{
	struct mp_frame fr[2] = {
		/* No file: setting bit 1 then fails on the flags alone. */
		{ .function = "__fopen_internal", .line = 65,
		  .flags = MP_FRAME_FOUND },
		{ .function = "main", .file = "/a.c", .line = 12 },
	};
	struct mp_err err = { 0 };
	struct mp_mib m = { { 0 } };
	struct idx_builder b;
	struct idx_file f;
	struct collected s = { 0 };
	unsigned char *d, *flags;
	size_t size;

	idx_builder_init(&b);
	m.v[MIB_AllocCount] = 1;
	ck_assert_int_eq(idx_builder_add(&b, fr, 2, &m, NULL, 0, 1, &err), MP_OK);
	d = written(&b, &size);
	idx_builder_release(&b);
	ck_assert_uint_eq(d[8], 12);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, collect, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.leaf[0].function, "__fopen_internal");
	ck_assert(s.leaf[0].flags & MP_FRAME_FOUND);
	/* In versions 10 and 11, bit 3 is unknown. */
	for (unsigned v = 10; v <= 11; v++) {
		d[8] = (unsigned char)v;
		reseal(d, size);
		ck_assert_int_eq(idx_open(&f, d, size, &err), MP_E_CORRUPT);
		ck_assert_msg(strstr(err.detail, "unknown flags 0x8"), "'%s'",
			      err.detail);
	}
	/* Found and unsymbolized at once: the flags byte is the byte 8
	 * whose change to 0xa is refused for its flags. */
	d[8] = 12;
	flags = NULL;
	for (size_t i = 64; i < size && !flags; i++)
		if (d[i] == 8) {
			d[i] = 8 | 2;
			reseal(d, size);
			if (idx_open(&f, d, size, &err) == MP_E_CORRUPT &&
			    strstr(err.detail, "unknown flags 0xa"))
				flags = &d[i];
			else
				d[i] = 8;
		}
	ck_assert_ptr_nonnull(flags);
	free(d);
}
END_TEST

/* The stack iterator: frames leaf first, and the expansion budget. */
struct iter_check {
	uint64_t budget;
	size_t contexts, frames;
	uint32_t stack_id;	/* the last context's */
	enum mp_errcode rc;
};

static int iterate(void *arg, const struct idx_file *f,
		   const struct idx_context *c)
{
	struct iter_check *ic = arg;
	struct mp_err err = { 0 };
	struct idx_stack_iter it;
	struct mp_frame fr, want;
	struct idx_frame_buf fb, want_fb;
	uint32_t k = 0;

	ic->rc = idx_stack_begin(&it, f, c->stack_id, &ic->budget, &err);
	if (ic->rc)
		return 1;
	ck_assert_uint_eq(it.depth, idx_stack_depth(f, c->stack_id));
	while (idx_stack_next(&it, &fr, &fb)) {
		idx_stack_frame(f, c->stack_id, k, &want, &want_fb);
		ck_assert_int_eq(!fr.function, !want.function);
		if (fr.function)
			ck_assert_str_eq(fr.function, want.function);
		ck_assert_uint_eq(fr.build_id_size, want.build_id_size);
		ck_assert_uint_eq(fr.line, want.line);
		ck_assert_uint_eq(fr.flags, want.flags);
		ck_assert_int_eq(!fr.file, !want.file);
		if (fr.file)
			ck_assert_str_eq(fr.file, want.file);
		k++;
	}
	ck_assert_uint_eq(k, it.depth);
	ck_assert(!idx_stack_next(&it, &fr, &fb));
	ic->contexts++;
	ic->frames += k;
	ic->stack_id = c->stack_id;
	return 0;
}

START_TEST(stack_iterator_and_its_budget)
{
	static const int order[] = { 0, 1, 2 };
	struct mp_err err = { 0 };
	struct iter_check ic = { 0 };
	struct idx_stack_iter it;
	struct idx_file f;
	unsigned char *d;
	size_t size;
	uint64_t budget;

	d = build(order, 3, 1, &size);
	ck_assert_int_eq(idx_open(&f, d, size, &err), MP_OK);
	ck_assert_int_eq(idx_foreach_context(&f, iterate, &ic), 0);
	ck_assert_uint_eq(ic.contexts, 3);
	ck_assert_uint_eq(ic.frames, 2 + 3 + 2);
	ck_assert_uint_eq(ic.budget, 7);
	/* A budget already at the file's limit refuses the next stack. */
	budget = IDX_FRAMES_MIN > size * IDX_FRAMES_PER_BYTE
		 ? IDX_FRAMES_MIN : size * IDX_FRAMES_PER_BYTE;
	ck_assert_int_eq(idx_stack_begin(&it, &f, ic.stack_id, &budget, &err),
			 MP_E_TOO_LARGE);
	ck_assert_ptr_nonnull(strstr(err.detail, "expand to more than"));
	free(d);
}
END_TEST

START_TEST(disk_hash_is_fnv1a)
{
	/* Published FNV-1a 64 test vectors. */
	ck_assert_uint_eq(ht_disk_hash("", 0), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(ht_disk_hash("a", 1), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(ht_disk_hash("foobar", 6), 0x85944171f73967e8ULL);
}
END_TEST

/*
 * Checking a record skips its MIB fields 8 bytes at a time; it must end
 * where decoding them one by one ends, and fail where that fails: on
 * varints of every length from 1 to 11 bytes, a tenth byte above 1, runs
 * cut off by the end, and on random bytes, from every start and for
 * every count.
 */
static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static const unsigned char *decode_n(const unsigned char *p,
				     const unsigned char *end, uint64_t k)
{
	uint64_t v;

	while (k-- && p)
		p = next_varint(p, end, &v);
	return p;
}

/*
 * put_varint() writes the shortest LEB128 of every value: each length's
 * first and last values and random values of every bit length; the
 * decoder reads back the value and stops where the writer did.
 */
START_TEST(put_varint_round_trips)
{
	uint64_t seed = 0x243f6a8885a308d3ULL;
	size_t tried = 0;

	for (int bits = 0; bits <= 64; bits++) {
		for (int k = 0; k < 40; k++) {
			unsigned char buf[16];
			const unsigned char *p;
			uint64_t v, got, hi = bits == 64 ? UINT64_MAX
					       : ((uint64_t)1 << bits) - 1;
			size_t n, want = 1;

			v = k == 0 ? hi : k == 1 ? (bits ? (hi >> 1) + 1 : 0)
			    : xorshift(&seed) & hi;
			for (uint64_t w = v >> 7; w; w >>= 7)
				want++;
			memset(buf, 0xa5, sizeof(buf));
			n = put_varint(buf, v);
			ck_assert_uint_eq(n, want);
			for (size_t i = 0; i < n; i++)
				ck_assert_int_eq(buf[i] >> 7, i + 1 < n);
			p = next_varint(buf, buf + n, &got);
			ck_assert_ptr_eq(p, buf + n);
			ck_assert_uint_eq(got, v);
			tried++;
		}
	}
	ck_assert_uint_eq(tried, 65 * 40);
}
END_TEST

START_TEST(skipping_varints_agrees_with_decoding)
{
	unsigned char buf[160];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t checked = 0, failing = 0;

	for (int round = 0; round < 400; round++) {
		size_t n = 0;

		/* Varints of random lengths (1 to 11 bytes); round 3 of 4 random bytes. */
		while (n < sizeof(buf)) {
			uint64_t r = xorshift(&seed);
			size_t len = 1 + r % 11;

			if (round % 4 == 3) {
				buf[n++] = (unsigned char)r;
				continue;
			}
			for (size_t i = 0; i < len && n < sizeof(buf); i++)
				buf[n++] = (unsigned char)((i + 1 < len ? 0x80 : 0) |
					   ((r >> (8 + i)) & 0x7f));
			/* Sometimes a ten-byte varint's last byte is 0 to 3. */
			if (len == 10 && (r & 0x10000) && n >= 1)
				buf[n - 1] = (unsigned char)(r >> 20 & 3);
		}
		for (size_t start = 0; start < 24; start++)
			for (size_t endo = sizeof(buf) - 12; endo <= sizeof(buf);
			     endo += 4)
				for (uint64_t k = 1; k <= 40; k++) {
					const unsigned char *e = buf + endo;
					const unsigned char *want =
						decode_n(buf + start, e, k);

					ck_assert_ptr_eq(skip_varints(buf + start, e, k),
							 want);
					checked++;
					failing += !want;
				}
	}
	/* Both outcomes were reached many times. */
	ck_assert_uint_gt(failing, checked / 20);
	ck_assert_uint_lt(failing, checked - checked / 20);
}
END_TEST

/* A field mask's count (mp_popcount64) is the compiler's popcount. */
START_TEST(popcount_is_the_builtin)
{
	uint64_t seed = 0x2545f4914f6cdd1dULL;

	ck_assert_uint_eq(mp_popcount64(0), 0);
	ck_assert_uint_eq(mp_popcount64(UINT64_MAX), 64);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = xorshift(&seed) >> (i % 64);

		ck_assert_uint_eq(mp_popcount64(v),
				  (unsigned)__builtin_popcountll(v));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("indexed");
	TCase *tc = tcase_create("format");
	TCase *sw = tcase_create("sweeps");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, lookup_by_function);
	tcase_add_test(tc, order_does_not_matter);
	tcase_add_test(tc, grouping_does_not_matter);
	tcase_add_test(tc, weight_scales_counts);
	tcase_add_test(tc, empty_profile);
	tcase_add_test(tc, disk_hash_is_fnv1a);
	tcase_add_test(tc, fields_carry_over_within_a_record);
	tcase_add_test(tc, big_trie_round_trip);
	tcase_add_test(tc, trie_nodes_are_the_distinct_prefixes);
	tcase_add_test(tc, written_as_it_goes_is_the_same_bytes);
	tcase_add_test(tc, trie_grouped_beside_is_the_same_bytes);
	tcase_add_test(tc, prefix_path_reuse);
	tcase_add_test(tc, last_use_keeps_nodes);
	tcase_add_test(tc, lending_gives_the_copies_bytes);
	tcase_add_test(tc, sample_sums_are_exact);
	tcase_add_test(tc, records_in_parts_are_the_same_bytes);
	tcase_add_loop_test(tc, write_in_two_steps_is_the_same_bytes, 0, 2);
	tcase_add_test(tc, write_end_refuses_changed_stacks);
	tcase_add_test(tc, write_counts_saturated_contexts);
	tcase_add_test(tc, sealed_stacks_keep_their_nodes);
	tcase_add_test(tc, checksum_guards_the_bytes);
	tcase_add_test(tc, old_version_is_rejected);
	tcase_add_test(tc, found_frames_are_version_12);
	tcase_add_test(tc, stack_iterator_and_its_budget);
	tcase_add_test(tc, skipping_varints_agrees_with_decoding);
	tcase_add_test(tc, put_varint_round_trips);
	tcase_add_test(tc, popcount_is_the_builtin);
	tcase_add_loop_test(sw, every_truncation_is_rejected, 0, 2);
	tcase_add_loop_test(sw, every_byte_mutation_is_safe, 0, 2);
	tcase_set_timeout(sw, 300);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, sw);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
