/*
 * test_sym.c - the symbolizer on the committed fixtures (run from the
 * repository root): allocation sites of every fixture profile against
 * tests/fixtures/expected.tsv, build-id mismatches and missing binaries
 * (warnings, strict errors), stripped binaries, separate debug files, v1
 * profiles, and the runtime-frame rule.
 *
 * Some tests make stripped copies with objcopy (binutils) in a temporary
 * directory.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "raw/raw.h"
#include "symbolize/sym.h"

#define FIX "tests/fixtures/"
#define MAX_WARN 64
#define MAX_FRAMES 512

struct warnings {
	int n;
	char msg[MAX_WARN][512];
};

static void collect(void *arg, const char *msg)
{
	struct warnings *w = arg;

	if (w->n < MAX_WARN)
		snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	w->n++;
}

/* How many warnings contain all of A, B (B may be NULL). */
static int count_warn(const struct warnings *w, const char *a, const char *b)
{
	int n = 0;

	for (int i = 0; i < w->n && i < MAX_WARN; i++)
		if (strstr(w->msg[i], a) && (!b || strstr(w->msg[i], b)))
			n++;
	return n;
}

static void init(struct sym_ctx *sym, struct warnings *w, bool strict,
		 bool default_dir)
{
	struct sym_options opt = {
		.warn = collect, .warn_arg = w, .strict = strict,
		.no_default_debug_dir = !default_dir,
	};

	memset(w, 0, sizeof(*w));
	sym_init(sym, &opt);
}

static void add(struct sym_ctx *sym, const char *path)
{
	struct mp_err err = { 0 };

	ck_assert_msg(sym_add_binary(sym, path, &err) == MP_OK, "%s: %s", path,
		      mp_errmsg(&err));
}

static void load(struct raw_file *rf, const char *path)
{
	struct mp_err err = { 0 };

	raw_file_init(rf);
	ck_assert_msg(raw_load(rf, path, &err) == MP_OK, "%s: %s", path,
		      mp_errmsg(&err));
}

/*
 * The logical frames of context C, leaf first, NULL for a PC that maps to
 * no module or symbolizes to nothing.  MODS[i] is the frame's module.
 */
static size_t frames_of(struct sym_ctx *sym, const struct raw_file *rf,
			const struct raw_context *c,
			const struct sym_frame **out, int32_t *mods)
{
	struct mp_err err = { 0 };
	const struct sym_frames *fr;
	struct sym_addr a;
	size_t n = 0;

	for (uint32_t k = 0; k < c->npcs && n < MAX_FRAMES; k++) {
		ck_assert_int_eq(sym_map_pc(sym, &rf->profiles[c->profile],
					    c->pcs[k], &a, &err), MP_OK);
		ck_assert_int_eq(sym_lookup(sym, a.module, a.addr, &fr, &err), MP_OK);
		if (fr->n == 0) {
			mods[n] = a.module;
			out[n++] = NULL;
		}
		for (uint32_t i = 0; i < fr->n && n < MAX_FRAMES; i++) {
			mods[n] = a.module;
			out[n++] = &fr->f[i];
		}
	}
	return n;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ---- allocation sites of the fixtures, from expected.tsv --------------- */

struct site {
	char profile[64], function[128], module[64], file[64];
	unsigned line, column, disc, inlined;
	unsigned long long alloc_count;
};

static size_t read_sites(const char *profile, struct site *out, size_t max)
{
	FILE *f = fopen(FIX "expected.tsv", "r");
	char line[1024], *fld[32], *p;
	size_t n = 0;
	int nf;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		for (nf = 0, p = line; nf < 32; nf++) {
			fld[nf] = p;
			p = strchr(p, '\t');
			if (!p) {
				nf++;
				break;
			}
			*p++ = '\0';
		}
		/* site profile index name role function module file line col
		 * disc inlined num_mibs alloc_count ... */
		if (nf < 14 || strcmp(fld[0], "site") || strcmp(fld[4], "leaf") ||
		    strcmp(fld[1], profile) || n == max)
			continue;
		snprintf(out[n].profile, sizeof(out[n].profile), "%s", fld[1]);
		snprintf(out[n].function, sizeof(out[n].function), "%s", fld[5]);
		snprintf(out[n].module, sizeof(out[n].module), "%s", fld[6]);
		snprintf(out[n].file, sizeof(out[n].file), "/fixtures/%s", fld[7]);
		out[n].line = (unsigned)atoi(fld[8]);
		out[n].column = (unsigned)atoi(fld[9]);
		out[n].disc = (unsigned)atoi(fld[10]);
		out[n].inlined = (unsigned)atoi(fld[11]);
		out[n].alloc_count = strtoull(fld[13], NULL, 10);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * Every leaf site of PROFILE (expected.tsv's rows for ROWS): the innermost frame from the fixture sources
 * of the contexts, summed over contexts, must equal expected.tsv's.  Sites
 * in LIB_UNMAPPED (a shared library of a v1/v2 profile, which has no build
 * ids) must instead stay unsymbolized.
 */
static void check_sites(const char *profile, const char *rows,
			const char *const *bins, const char *lib_unmapped)
{
	const struct sym_frame *fr[MAX_FRAMES];
	int32_t mods[MAX_FRAMES];
	struct site sites[32];
	unsigned long long got[32] = { 0 };
	struct warnings w;
	struct sym_ctx sym;
	struct raw_file rf;
	char path[256];
	size_t nsites;

	nsites = read_sites(rows, sites, 32);
	ck_assert_uint_gt(nsites, 0);
	init(&sym, &w, false, false);
	for (size_t i = 0; bins[i]; i++)
		add(&sym, bins[i]);
	snprintf(path, sizeof(path), FIX "%s", profile);
	load(&rf, path);
	for (size_t i = 0; i < rf.ncontexts; i++) {
		const struct raw_context *c = &rf.contexts[i];
		size_t n = frames_of(&sym, &rf, c, fr, mods), k;
		struct sym_module_info mi;

		for (k = 0; k < n; k++)
			if (fr[k] && fr[k]->file &&
			    strncmp(fr[k]->file, "/fixtures/src/", 14) == 0)
				break;
		if (k == n)
			continue;
		ck_assert(sym_module_info(&sym, mods[k], &mi));
		for (size_t s = 0; s < nsites; s++) {
			const struct site *e = &sites[s];

			if (strcmp(sym_pretty_name(&sym, fr[k]->function),
				   e->function) == 0 &&
			    strcmp(base(mi.path), e->module) == 0 &&
			    strcmp(fr[k]->file, e->file) == 0 &&
			    fr[k]->line == e->line && fr[k]->column == e->column &&
			    fr[k]->discriminator == e->disc &&
			    fr[k]->inlined == (e->inlined != 0))
				got[s] += c->mib.v[MIB_AllocCount];
		}
	}
	for (size_t s = 0; s < nsites; s++) {
		const struct site *e = &sites[s];

		if (lib_unmapped && strcmp(e->module, lib_unmapped) == 0) {
			ck_assert_uint_eq(got[s], 0);
			continue;
		}
		/* A file of several profiles folds contexts across them. */
		if (rf.nprofiles == 1)
			ck_assert_msg(got[s] == e->alloc_count,
				      "%s: %s %s:%u:%u: %llu allocations, expected %llu",
				      profile, e->function, e->file, e->line,
				      e->column, got[s], e->alloc_count);
		else
			ck_assert_msg(got[s] >= e->alloc_count, "%s: %s not found",
				      profile, e->function);
	}
	raw_file_release(&rf);
	sym_release(&sym);
}

START_TEST(sites_v4)
{
	static const char *const pie[] = { FIX "basic.pie", FIX "libfixture.so", NULL };
	static const char *const nopie[] = { FIX "basic.nopie", FIX "libfixture.so", NULL };
	static const char *const hist[] = { FIX "basic.hist", FIX "libfixture-hist.so", NULL };
	static const char *const cxx[] = { FIX "cxx.pie", NULL };
	static const char *const dump2[] = { FIX "dump2", NULL };

	check_sites("basic.pie.v4.profraw", "basic.pie.v4.profraw", pie, NULL);
	check_sites("basic.pie.v4.profraw.zst", "basic.pie.v4.profraw", pie, NULL);
	check_sites("basic.nopie.v4.profraw", "basic.nopie.v4.profraw", nopie, NULL);
	check_sites("basic.hist.v4.profraw", "basic.hist.v4.profraw", hist, NULL);
	check_sites("cxx.v4.profraw", "cxx.v4.profraw", cxx, NULL);
	check_sites("dump2.v4.profraw", "dump2.v4.profraw", dump2, NULL);
}
END_TEST

START_TEST(sites_v1_v2)
{
	static const char *const v1[] = { FIX "basic.clang14", FIX "libfixture-clang14.so", NULL };
	static const char *const v2[] = { FIX "basic.clang16", FIX "libfixture-clang16.so", NULL };

	check_sites("basic.clang14.v1.profraw", "basic.clang14.v1.profraw", v1,
		    "libfixture-clang14.so");
	check_sites("basic.clang16.v2.profraw", "basic.clang16.v2.profraw", v2,
		    "libfixture-clang16.so");
}
END_TEST

/* The context whose frames include FUNCTION (linkage name). */
static size_t find_context(struct sym_ctx *sym, const struct raw_file *rf,
			   const char *function, const struct sym_frame **fr,
			   int32_t *mods)
{
	for (size_t i = 0; i < rf->ncontexts; i++) {
		size_t n = frames_of(sym, rf, &rf->contexts[i], fr, mods);

		for (size_t k = 0; k < n; k++)
			if (fr[k] && fr[k]->function &&
			    strcmp(fr[k]->function, function) == 0)
				return n;
	}
	ck_abort_msg("no context with %s", function);
	return 0;
}

START_TEST(inline_chain_and_cache)
{
	const struct sym_frame *fr[MAX_FRAMES];
	int32_t mods[MAX_FRAMES];
	const struct sym_frames *a1, *a2;
	struct mp_err err = { 0 };
	struct sym_module_info mi;
	struct sym_addr a;
	struct warnings w;
	struct sym_ctx sym;
	struct raw_file rf;
	size_t n, u;

	init(&sym, &w, false, false);
	add(&sym, FIX "basic.pie");
	add(&sym, FIX "libfixture.so");
	load(&rf, FIX "basic.pie.v4.profraw");
	n = find_context(&sym, &rf, "inl_alloc", fr, mods);
	u = sym_user_start(fr, n);
	ck_assert_uint_eq(u, 1);	/* after the malloc interceptor */
	ck_assert_ptr_nonnull(fr[0]);
	ck_assert(fr[0]->runtime);
	ck_assert_str_eq(fr[u]->function, "inl_alloc");
	ck_assert(fr[u]->inlined);
	ck_assert_uint_eq(fr[u]->line, 51);
	ck_assert_uint_eq(fr[u]->column, 10);
	ck_assert_str_eq(fr[u + 1]->function, "use_inline");
	ck_assert(!fr[u + 1]->inlined);
	ck_assert_str_eq(fr[u + 1]->file, "/fixtures/src/basic.c");
	ck_assert_uint_eq(fr[u + 1]->line, 58);
	ck_assert_uint_eq(fr[u + 1]->column, 15);
	ck_assert_uint_gt(fr[u + 1]->start_line, 0);
	ck_assert_uint_le(fr[u + 1]->start_line, 58);

	/* The same (module, address) again: the same frames, from the cache. */
	ck_assert_int_eq(sym_map_pc(&sym, &rf.profiles[0], rf.contexts[0].pcs[1],
				    &a, &err), MP_OK);
	ck_assert_int_ge(a.module, 0);
	ck_assert_int_eq(sym_lookup(&sym, a.module, a.addr, &a1, &err), MP_OK);
	ck_assert_int_eq(sym_lookup(&sym, a.module, a.addr, &a2, &err), MP_OK);
	ck_assert_ptr_eq(a1, a2);
	/* A PIE's PC maps to PC - load bias = the ELF address. */
	ck_assert_uint_eq(a.addr, rf.contexts[0].pcs[1] -
			  rf.profiles[0].segments[a.segment].offset);
	ck_assert_uint_eq(a.offset, a.addr);
	ck_assert(sym_module_info(&sym, a.module, &mi));
	ck_assert_uint_eq(mi.build_id_size, 20);
	ck_assert_uint_eq(a.build_id_size, 20);
	ck_assert_mem_eq(a.build_id, mi.build_id, 20);
	ck_assert(mi.has_dwarf);
	ck_assert_uint_gt(mi.with_line, 0);
	ck_assert_uint_gt(mi.symtab_only, 0);	/* the interceptor */
	ck_assert_int_eq(count_warn(&w, "no DWARF", NULL), 0);
	raw_file_release(&rf);
	sym_release(&sym);
}
END_TEST

START_TEST(cxx_user_start)
{
	const struct sym_frame *fr[MAX_FRAMES];
	int32_t mods[MAX_FRAMES];
	struct warnings w;
	struct sym_ctx sym;
	struct raw_file rf;
	size_t n, u;

	init(&sym, &w, false, false);
	add(&sym, FIX "cxx.pie");
	load(&rf, FIX "cxx.v4.profraw");
	/* operator new, then std::__new_allocator<int>::allocate and
	 * allocator_traits::allocate inlined: all three are dropped. */
	n = find_context(&sym, &rf, "_ZNSt12_Vector_baseIiSaIiEE11_M_allocateEm",
			 fr, mods);
	u = sym_user_start(fr, n);
	ck_assert_uint_eq(u, 3);
	ck_assert_str_eq(fr[0]->function, "_Znwm");
	ck_assert_str_eq(fr[1]->function, "_ZNSt15__new_allocatorIiE8allocateEmPKv");
	ck_assert_str_eq(fr[u]->function, "_ZNSt12_Vector_baseIiSaIiEE11_M_allocateEm");
	ck_assert_uint_eq(fr[u]->discriminator, 2);
	ck_assert_str_eq(sym_pretty_name(&sym, fr[u]->function),
			 "std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)");

	n = find_context(&sym, &rf, "_Z9array_newv", fr, mods);
	u = sym_user_start(fr, n);
	ck_assert_str_eq(fr[0]->function, "_Znam");
	ck_assert_str_eq(fr[u]->function, "_Z9array_newv");
	ck_assert_str_eq(sym_pretty_name(&sym, fr[u]->function), "array_new()");
	raw_file_release(&rf);
	sym_release(&sym);
}
END_TEST

/* ---- build ids: mismatch, missing binaries, strict --------------------- */

static void hex_of(struct sym_ctx *sym, int32_t module, char *buf, size_t size)
{
	struct sym_module_info mi;

	ck_assert(sym_module_info(sym, module, &mi));
	mp_hex(mi.build_id, mi.build_id_size, buf, size);
}

START_TEST(build_id_mismatch)
{
	char want[80], have[80], seg[64];
	const struct raw_segment *s0;
	struct mp_err err = { 0 };
	struct sym_addr a;
	struct warnings w;
	struct sym_ctx sym;
	struct raw_file rf;

	init(&sym, &w, false, false);
	add(&sym, FIX "cxx.pie");	/* the wrong program */
	hex_of(&sym, 0, have, sizeof(have));
	load(&rf, FIX "basic.pie.v4.profraw");
	s0 = &rf.profiles[0].segments[0];
	mp_hex(s0->build_id, s0->build_id_size, want, sizeof(want));
	/* Checking the profile says nothing yet: the first PC mapped will. */
	ck_assert_int_eq(sym_check_profile(&sym, &rf.profiles[0], &err), MP_OK);
	ck_assert_int_eq(count_warn(&w, "has build id", have), 0);

	/* Every main-segment PC stays unsymbolized; one warning in all. */
	for (size_t i = 0; i < rf.ncontexts; i++) {
		const struct raw_context *c = &rf.contexts[i];

		ck_assert_int_eq(sym_map_pc(&sym, &rf.profiles[0], c->pcs[0], &a,
					    &err), MP_OK);
		ck_assert_int_eq(a.segment, 0);
		ck_assert_int_eq(a.module, -1);
		ck_assert_uint_eq(a.offset, c->pcs[0] - s0->offset);
	}
	snprintf(seg, sizeof(seg), "0x%llx-0x%llx",
		 (unsigned long long)s0->start, (unsigned long long)s0->end);
	/* One warning naming both build ids and the segment. */
	ck_assert_int_eq(count_warn(&w, "'" FIX "cxx.pie' has build id", have), 1);
	ck_assert_int_eq(count_warn(&w, "the profile's main segment", seg), 1);
	ck_assert_int_eq(count_warn(&w, "its frames stay unsymbolized", want), 1);
	raw_file_release(&rf);
	sym_release(&sym);

	/* Strict: the same is an error. */
	init(&sym, &w, true, false);
	add(&sym, FIX "cxx.pie");
	load(&rf, FIX "basic.pie.v4.profraw");
	ck_assert_int_eq(sym_check_profile(&sym, &rf.profiles[0], &err),
			 MP_E_BUILD_ID);
	ck_assert_ptr_nonnull(strstr(err.detail, want));
	ck_assert_int_eq(sym_map_pc(&sym, &rf.profiles[0], rf.contexts[0].pcs[0],
				    &a, &err), MP_E_BUILD_ID);
	ck_assert_int_eq(w.n, 0);
	raw_file_release(&rf);
	sym_release(&sym);
}
END_TEST

/* sym_other_program(): another program's profile, told from a library's. */
START_TEST(other_program)
{
	struct sym_options opt = { .no_default_debug_dir = true,
				   .caller_names_others = true };
	uint8_t bid[RAW_BUILD_ID_MAX];
	const struct raw_segment *s0;
	struct mp_err err = { 0 };
	struct warnings w = { 0 };
	struct sym_ctx sym;
	struct sym_addr a;
	struct raw_file rf;
	uint32_t n = 0;
	bool other;

	opt.warn = collect;
	opt.warn_arg = &w;
	sym_init(&sym, &opt);
	load(&rf, FIX "basic.pie.v4.profraw");
	s0 = &rf.profiles[0].segments[0];
	/* No main binary: nothing to be another program than. */
	ck_assert_int_eq(sym_other_program(&sym, &rf.profiles[0], &other, bid,
					   &n, &err), MP_OK);
	ck_assert(!other);
	/* The profile's library alone is no main binary of another program. */
	add(&sym, FIX "libfixture.so");
	ck_assert_int_eq(sym_other_program(&sym, &rf.profiles[0], &other, bid,
					   &n, &err), MP_OK);
	ck_assert(!other);
	sym_release(&sym);

	/* The wrong program: its build id out, and the caller's to say. */
	sym_init(&sym, &opt);
	add(&sym, FIX "cxx.pie");
	ck_assert_int_eq(sym_other_program(&sym, &rf.profiles[0], &other, bid,
					   &n, &err), MP_OK);
	ck_assert(other);
	ck_assert_uint_eq(n, s0->build_id_size);
	ck_assert_mem_eq(bid, s0->build_id, n);
	ck_assert_int_eq(sym_map_pc(&sym, &rf.profiles[0], rf.contexts[0].pcs[0],
				    &a, &err), MP_OK);
	ck_assert_int_eq(a.module, -1);
	ck_assert_int_eq(count_warn(&w, "has build id", NULL), 0);
	sym_release(&sym);

	/* Both programs given: it is one of them. */
	sym_init(&sym, &opt);
	add(&sym, FIX "cxx.pie");
	add(&sym, FIX "basic.pie");
	ck_assert_int_eq(sym_other_program(&sym, &rf.profiles[0], &other, bid,
					   &n, &err), MP_OK);
	ck_assert(!other);
	raw_file_release(&rf);
	sym_release(&sym);
}
END_TEST

START_TEST(missing_library)
{
	const struct raw_profile *p;
	struct mp_err err = { 0 };
	struct sym_stats st;
	struct sym_addr a;
	struct warnings w;
	struct sym_ctx sym;
	struct raw_file rf;
	size_t lib = 0, mapped = 0;
	char hex[80], seg[64];

	/* Only the executable: libfixture's PCs have no binary. */
	init(&sym, &w, false, false);
	add(&sym, FIX "basic.pie");
	load(&rf, FIX "basic.pie.v4.profraw");
	p = &rf.profiles[0];
	for (size_t i = 0; i < rf.ncontexts; i++)
		for (uint32_t k = 0; k < rf.contexts[i].npcs; k++) {
			ck_assert_int_eq(sym_map_pc(&sym, p, rf.contexts[i].pcs[k],
						    &a, &err), MP_OK);
			mapped += a.module >= 0;
			if (a.module < 0) {
				const struct raw_segment *s = &p->segments[a.segment];

				mp_hex(s->build_id, s->build_id_size,
						    hex, sizeof(hex));
				snprintf(seg, sizeof(seg), "0x%llx-0x%llx",
					 (unsigned long long)s->start,
					 (unsigned long long)s->end);
				ck_assert_int_eq(count_warn(&w, hex, seg), 1);
				lib++;
			}
		}
	ck_assert_uint_gt(mapped, 0);
	ck_assert_uint_gt(lib, 0);
	/* Once per build id, not once per PC: libfixture, libc, ld.so. */
	ck_assert_int_le(w.n, 3);
	ck_assert_int_eq(count_warn(&w, "no binary with build id", "its frames stay unsymbolized"), w.n);
	sym_get_stats(&sym, &st);
	ck_assert_uint_gt(st.no_binary, 0);
	ck_assert_uint_eq(st.unmapped, 0);
	raw_file_release(&rf);
	sym_release(&sym);

	/* Strict: a library without binary is an error naming its build id. */
	init(&sym, &w, true, false);
	add(&sym, FIX "basic.pie");
	load(&rf, FIX "basic.pie.v4.profraw");
	{
		enum mp_errcode rc = MP_OK;

		for (size_t i = 0; i < rf.ncontexts && !rc; i++)
			for (uint32_t k = 0; k < rf.contexts[i].npcs && !rc; k++)
				rc = sym_map_pc(&sym, &rf.profiles[0],
						rf.contexts[i].pcs[k], &a, &err);
		ck_assert_int_eq(rc, MP_E_NO_BINARY);
		ck_assert_ptr_nonnull(strstr(err.detail, "no binary with build id"));
	}
	raw_file_release(&rf);
	sym_release(&sym);
}
END_TEST

START_TEST(unmapped_and_errors)
{
	struct raw_segment seg = { .start = 0x1000, .end = 0x2000, .offset = 0,
				   .build_id_size = 20 };
	struct raw_profile prof = { .version = 4, .segments = &seg, .nsegments = 1 };
	const struct sym_frames *fr;
	struct mp_err err = { 0 };
	struct sym_ctx sym, zero;
	struct sym_addr a;
	struct warnings w;
	struct mp_arena arena = MP_ARENA_INIT;

	ck_assert_int_eq(raw_profile_index(&prof, &arena, &err), MP_OK);
	init(&sym, &w, false, false);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(sym_map_pc(&sym, &prof, 0x5000 + i, &a, &err), MP_OK);
		ck_assert_int_eq(a.module, -1);
		ck_assert_int_eq(a.segment, -1);
	}
	ck_assert_int_eq(count_warn(&w, "lies in no segment", NULL), 1);
	ck_assert_int_eq(sym_lookup(&sym, a.module, a.addr, &fr, &err), MP_OK);
	ck_assert_uint_eq(fr->n, 0);
	a.module = 7;
	ck_assert_int_eq(sym_lookup(&sym, a.module, a.addr, &fr, &err), MP_E_INVALID);

	ck_assert_int_eq(sym_add_binary(&sym, FIX "no-such-file", &err), MP_E_IO);
	ck_assert_ptr_nonnull(strstr(err.detail, "cannot open: No such file"));
	ck_assert_int_eq(sym_add_binary(&sym, FIX "expected.tsv", &err), MP_E_ELF);
	ck_assert_int_eq(sym_add_debug_dir(&sym, "a:b", &err), MP_E_INVALID);
	ck_assert_int_eq(sym_add_debug_dir(&sym, FIX "no-such-dir", &err), MP_E_IO);

	/* The same binary twice: the second is ignored, with a warning. */
	add(&sym, FIX "basic.pie");
	add(&sym, FIX "./basic.pie");
	ck_assert_int_eq(count_warn(&w, "has the same build id", NULL), 1);
	ck_assert(!sym_module_info(&sym, 1, &(struct sym_module_info){ 0 }));
	sym_release(&sym);
	sym_release(&sym);		/* released twice: harmless */
	memset(&zero, 0, sizeof(zero));
	sym_release(&zero);
	mp_arena_release(&arena);
}
END_TEST

/* ---- v1: no build ids ----------------------------------------------------- */

START_TEST(v1_main_only)
{
	struct raw_segment seg[2];
	struct raw_profile prof = { .version = 1, .segments = seg, .nsegments = 2 };
	const struct sym_frames *fr;
	struct mp_err err = { 0 };
	struct sym_addr a;
	struct warnings w;
	struct sym_ctx sym;
	struct raw_file rf;
	struct mp_arena arena = MP_ARENA_INIT;
	size_t unmapped_lib = 0;

	init(&sym, &w, false, false);
	add(&sym, FIX "basic.clang14");
	add(&sym, FIX "libfixture-clang14.so");
	load(&rf, FIX "basic.clang14.v1.profraw");
	ck_assert_int_eq(sym_check_profile(&sym, &rf.profiles[0], &err), MP_OK);
	ck_assert_int_eq(w.n, 0);
	for (size_t i = 0; i < rf.ncontexts; i++)
		for (uint32_t k = 0; k < rf.contexts[i].npcs; k++) {
			ck_assert_int_eq(sym_map_pc(&sym, &rf.profiles[0],
						    rf.contexts[i].pcs[k], &a,
						    &err), MP_OK);
			if (a.segment == 0)
				ck_assert_int_eq(a.module, 0);
			else
				unmapped_lib += a.module < 0;
			ck_assert_uint_eq(a.build_id_size, 0);
		}
	ck_assert_uint_gt(unmapped_lib, 0);
	ck_assert_int_ge(count_warn(&w, "a version 1 profile has no build ids", NULL), 1);
	raw_file_release(&rf);

	/* A main segment the executable does not fit: warned, not mapped. */
	memcpy(seg, &(struct raw_segment){ .start = 0x400000, .end = 0x401000,
					   .offset = 0x7000 }, sizeof(seg[0]));
	memcpy(&seg[1], &(struct raw_segment){ .start = 0x7f0000, .end = 0x7f1000,
					       .offset = 0x1000 }, sizeof(seg[0]));
	ck_assert_int_eq(raw_profile_index(&prof, &arena, &err), MP_OK);
	ck_assert_int_eq(sym_map_pc(&sym, &prof, 0x400010, &a, &err), MP_OK);
	ck_assert_int_eq(a.module, -1);
	ck_assert_int_eq(a.segment, 0);
	ck_assert_uint_eq(a.offset, 0x7010);
	ck_assert_int_eq(count_warn(&w, "does not fit the profile's main segment 0x400000-0x401000", NULL), 1);
	ck_assert_int_eq(sym_lookup(&sym, a.module, a.addr, &fr, &err), MP_OK);
	ck_assert_uint_eq(fr->n, 0);
	sym_release(&sym);

	/* Strict: only the main segment can be an error in v1/v2. */
	init(&sym, &w, true, false);
	add(&sym, FIX "basic.clang14");
	ck_assert_int_eq(sym_map_pc(&sym, &prof, 0x400010, &a, &err), MP_E_BUILD_ID);
	ck_assert_ptr_nonnull(strstr(err.detail, "does not fit"));
	ck_assert_int_eq(sym_check_profile(&sym, &prof, &err), MP_E_BUILD_ID);
	ck_assert_int_eq(sym_map_pc(&sym, &prof, 0x7f0010, &a, &err), MP_OK);
	ck_assert_int_eq(a.module, -1);
	ck_assert_uint_eq(a.offset, 0x1010);
	sym_release(&sym);
	mp_arena_release(&arena);
}
END_TEST

/* ---- stripped binaries and separate debug files ----------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_sym.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static void run(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* Map the hot site's PC of basic.pie.v4.profraw; *FR its frames. */
static void hot_frames(struct sym_ctx *sym, const struct sym_frames **out)
{
	const struct sym_frame *fr[MAX_FRAMES];
	int32_t mods[MAX_FRAMES];
	const struct sym_frames *all;
	struct mp_err err = { 0 };
	struct sym_addr a;
	struct raw_file rf;

	load(&rf, FIX "basic.pie.v4.profraw");
	*out = NULL;
	for (size_t i = 0; i < rf.ncontexts && !*out; i++) {
		const struct raw_context *c = &rf.contexts[i];
		size_t n = frames_of(sym, &rf, c, fr, mods);

		/* The hot site allocated 1000 times. */
		if (c->mib.v[MIB_AllocCount] != 1000)
			continue;
		ck_assert_uint_ge(n, 2);
		ck_assert_int_eq(sym_map_pc(sym, &rf.profiles[0], c->pcs[1], &a,
					    &err), MP_OK);
		ck_assert_int_eq(sym_lookup(sym, a.module, a.addr, &all, &err), MP_OK);
		*out = all;
	}
	ck_assert_ptr_nonnull(*out);
	raw_file_release(&rf);
}

START_TEST(stripped_binary)
{
	const struct sym_frames *fr;
	struct sym_module_info mi;
	struct warnings w;
	struct sym_ctx sym;
	char cmd[512], bin[128];

	make_tmpdir();
	snprintf(bin, sizeof(bin), "%s/basic.pie", tmpdir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug " FIX "basic.pie '%s'", bin);
	run(cmd);
	init(&sym, &w, false, false);
	add(&sym, bin);
	hot_frames(&sym, &fr);
	ck_assert(fr->from_symtab);
	ck_assert_uint_eq(fr->n, 1);
	ck_assert_str_eq(fr->f[0].function, "hot_alloc");
	ck_assert_ptr_null(fr->f[0].file);
	ck_assert_uint_eq(fr->f[0].line, 0);
	ck_assert_int_eq(count_warn(&w, "no DWARF in '", "basic.pie'; using ELF symbols"), 1);
	ck_assert_int_eq(w.n, count_warn(&w, "no DWARF", NULL) +
			 count_warn(&w, "no binary with build id", NULL));
	ck_assert(sym_module_info(&sym, 0, &mi));
	ck_assert(!mi.has_dwarf);
	ck_assert_uint_eq(mi.with_line, 0);
	sym_release(&sym);
	remove_tmpdir();
}
END_TEST

/*
 * A binary cut short keeps its ELF header and build id note: refused as
 * truncated, whether the cut takes its section headers (at the end), the
 * end of a section or the end of the first loadable segment, instead of
 * passing for a stripped copy of the right binary.
 */
START_TEST(truncated_binary)
{
	struct warnings w;
	struct sym_ctx sym;
	struct mp_err err = { 0 };
	char cmd[512], bin[128];
	static const char *const cut[] = { "-c 1000", "-c -1", "-c 2000" };

	make_tmpdir();
	snprintf(bin, sizeof(bin), "%s/cut", tmpdir);
	init(&sym, &w, false, false);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		snprintf(cmd, sizeof(cmd), "head %s " FIX "basic.pie >'%s'",
			 cut[i], bin);
		run(cmd);
		ck_assert_int_eq(sym_add_binary(&sym, bin, &err), MP_E_TRUNCATED);
		ck_assert_msg(strstr(err.detail, "truncated: ") &&
			      strstr(err.detail, " past the file's "), "%s: %s",
			      cut[i], err.detail);
	}
	/* The whole file is fine. */
	snprintf(cmd, sizeof(cmd), "cp " FIX "basic.pie '%s'", bin);
	run(cmd);
	ck_assert_int_eq(sym_add_binary(&sym, bin, &err), MP_OK);
	sym_release(&sym);
	remove_tmpdir();
}
END_TEST

static void check_hot_dwarf(const struct sym_frames *fr)
{
	ck_assert(!fr->from_symtab);
	ck_assert_uint_eq(fr->n, 1);
	ck_assert_str_eq(fr->f[0].function, "hot_alloc");
	ck_assert_str_eq(fr->f[0].file, "/fixtures/src/basic.c");
	ck_assert_uint_eq(fr->f[0].line, 26);
	ck_assert_uint_eq(fr->f[0].column, 15);
}

START_TEST(debuglink)
{
	const struct sym_frames *fr;
	struct warnings w;
	struct sym_ctx sym;
	char cmd[2048], bin[128], cwd[512];

	make_tmpdir();
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(bin, sizeof(bin), "%s/basic.pie", tmpdir);
	/* The debug file in .debug/ beside the binary, named by its link. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && objcopy --only-keep-debug '%s/" FIX "basic.pie' basic.pie.dbg && "
		 "objcopy --strip-debug --add-gnu-debuglink=basic.pie.dbg "
		 "'%s/" FIX "basic.pie' basic.pie && mkdir .debug && "
		 "mv basic.pie.dbg .debug/",
		 tmpdir, cwd, cwd);
	run(cmd);
	init(&sym, &w, false, false);
	add(&sym, bin);
	hot_frames(&sym, &fr);
	check_hot_dwarf(fr);
	ck_assert_int_eq(count_warn(&w, "no DWARF", NULL), 0);
	sym_release(&sym);
	remove_tmpdir();
}
END_TEST

START_TEST(build_id_debug_dir)
{
	const struct sym_frames *fr;
	struct sym_module_info mi;
	struct mp_err err = { 0 };
	struct warnings w;
	struct sym_ctx sym;
	char cmd[2048], bin[128], hex[80], bhex[80], dir[128];

	make_tmpdir();
	/* A stripped executable without debuglink, its debug file under
	 * DIR/.build-id, and libfixture.so only there, not registered. */
	init(&sym, &w, false, false);
	add(&sym, FIX "libfixture.so");
	add(&sym, FIX "basic.pie");
	hex_of(&sym, 0, hex, sizeof(hex));
	hex_of(&sym, 1, bhex, sizeof(bhex));
	sym_release(&sym);
	snprintf(dir, sizeof(dir), "%s/dbg", tmpdir);
	snprintf(bin, sizeof(bin), "%s/basic.pie", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/.build-id/%.2s' '%s/.build-id/%.2s' && "
		 "objcopy --only-keep-debug " FIX "basic.pie '%s/.build-id/%.2s/%s.debug' && "
		 "objcopy --strip-debug " FIX "basic.pie '%s' && "
		 "cp " FIX "libfixture.so '%s/.build-id/%.2s/%s.debug'",
		 dir, bhex, dir, hex, dir, bhex, bhex + 2, bin, dir, hex, hex + 2);
	run(cmd);

	init(&sym, &w, false, false);
	ck_assert_int_eq(sym_add_debug_dir(&sym, dir, &err), MP_OK);
	add(&sym, bin);
	hot_frames(&sym, &fr);
	check_hot_dwarf(fr);
	{
		const struct sym_frame *all[MAX_FRAMES];
		int32_t mods[MAX_FRAMES];
		struct raw_file rf;

		load(&rf, FIX "basic.pie.v4.profraw");
		find_context(&sym, &rf, "fixturelib_alloc", all, mods);
		raw_file_release(&rf);
	}
	/* libfixture.so was found by build id: a module of its own. */
	ck_assert(sym_module_info(&sym, 1, &mi));
	ck_assert(mi.from_debug_dir);
	ck_assert_ptr_nonnull(strstr(mi.path, hex + 2));
	ck_assert_int_eq(count_warn(&w, "no DWARF", NULL), 0);
	ck_assert_int_eq(count_warn(&w, hex, NULL), 0);
	sym_release(&sym);
	remove_tmpdir();
}
END_TEST

/* ---- the persistent symbol cache ----------------------------------------- */

/* Every frame of every context of PROFILE, as text, into a new string. */
static char *all_frames(struct sym_ctx *sym, const char *profile)
{
	const struct sym_frame *fr[MAX_FRAMES];
	int32_t mods[MAX_FRAMES];
	struct raw_file rf;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ck_assert_ptr_nonnull(f);
	load(&rf, profile);
	for (size_t i = 0; i < rf.ncontexts; i++) {
		size_t n = frames_of(sym, &rf, &rf.contexts[i], fr, mods);

		for (size_t k = 0; k < n; k++)
			if (!fr[k])
				fprintf(f, "%d ?\n", mods[k]);
			else
				fprintf(f, "%d %s %s %u:%u d%u s%u i%d r%d l%d\n",
					mods[k], fr[k]->function ? fr[k]->function : "-",
					fr[k]->file ? fr[k]->file : "-", fr[k]->line,
					fr[k]->column, fr[k]->discriminator,
					fr[k]->start_line, fr[k]->inlined,
					fr[k]->runtime, fr[k]->alloc_lib);
		fprintf(f, "--\n");
	}
	raw_file_release(&rf);
	fclose(f);
	return buf;
}

/*
 * Symbolize every frame of PROFILE with BINS (NULL-terminated) and cache
 * directory CACHE (NULL: none); *CACHED gets how many addresses came from
 * the cache, *ADDRS how many were looked up, *W the warnings.
 */
static char *cached_run(const char *cache, const char *const *bins,
			const char *debug_dir, const char *profile,
			uint64_t *cached, uint64_t *addrs, struct warnings *w)
{
	struct sym_options opt = { .warn = collect, .warn_arg = w,
				   .no_default_debug_dir = debug_dir != NULL,
				   .cache_dir = cache };
	struct mp_err err = { 0 };
	struct sym_stats st;
	struct sym_ctx sym;
	char *text;

	memset(w, 0, sizeof(*w));
	sym_init(&sym, &opt);
	if (debug_dir)
		ck_assert_int_eq(sym_add_debug_dir(&sym, debug_dir, &err), MP_OK);
	for (size_t i = 0; bins[i]; i++)
		add(&sym, bins[i]);
	text = all_frames(&sym, profile);
	sym_get_stats(&sym, &st);
	*cached = st.cached;
	*addrs = st.addrs;
	sym_release(&sym);
	return text;
}

static void *open_beside(void *m)
{
	sym_open_dwarf(m);
	return NULL;
}

/* Look up every PC of PROFILE that lies in MODULE; how many there are. */
static size_t lookup_module(struct sym_ctx *sym, const char *profile,
			    int32_t module)
{
	struct mp_err err = { 0 };
	const struct sym_frames *fr;
	struct raw_file rf;
	struct sym_addr a;
	size_t n = 0;

	load(&rf, profile);
	for (size_t i = 0; i < rf.ncontexts; i++) {
		const struct raw_context *c = &rf.contexts[i];

		for (uint32_t k = 0; k < c->npcs; k++) {
			ck_assert_int_eq(sym_map_pc(sym, &rf.profiles[c->profile],
						    c->pcs[k], &a, &err), MP_OK);
			if (a.module != module)
				continue;
			ck_assert_int_eq(sym_lookup(sym, a.module, a.addr, &fr,
						    &err), MP_OK);
			n++;
		}
	}
	raw_file_release(&rf);
	return n;
}

/* Modules 0 and 1 of SYM are read (or answered by the cache), and
 * PROFILE's frames are REF; then SYM is released. */
static void assert_all_read(struct sym_ctx *sym, const char *profile,
			    const char *ref)
{
	char *got;

	ck_assert_ptr_null(sym_dwarf_to_open(sym, 0));
	ck_assert_ptr_null(sym_dwarf_to_open(sym, 1));
	got = all_frames(sym, profile);
	ck_assert_str_eq(got, ref);
	free(got);
	sym_release(sym);
}

/*
 * A module's DWARF read on another thread (sym_open_dwarf()) while the
 * context looks up another module's addresses gives the frames of a
 * context that read it at its first lookup; a module read already, or
 * whose cache entry may answer, is not offered again; a module without
 * DWARF read beside is still told about, once, at its first lookup.
 */
START_TEST(dwarf_read_beside)
{
	static const char *const bins[] = { FIX "basic.pie", FIX "libfixture.so", NULL };
	const char *prof = FIX "basic.pie.v4.profraw";
	struct sym_options opt = { .warn = collect };
	const struct sym_frames *fr;
	char cache[128], bin[160], cmd[512], *ref;
	struct sym_module *x0, *x1;
	uint64_t cached, addrs;
	struct warnings w;
	struct sym_ctx sym;
	pthread_t t;

	make_tmpdir();
	ref = cached_run(NULL, bins, NULL, prof, &cached, &addrs, &w);
	init(&sym, &w, false, true);
	add(&sym, bins[0]);
	add(&sym, bins[1]);
	ck_assert_ptr_null(sym_dwarf_to_open(&sym, 2));
	x0 = sym_dwarf_to_open(&sym, 0);
	x1 = sym_dwarf_to_open(&sym, 1);
	ck_assert_ptr_nonnull(x0);
	ck_assert_ptr_nonnull(x1);
	ck_assert_int_eq(pthread_create(&t, NULL, open_beside, x1), 0);
	ck_assert_uint_gt(lookup_module(&sym, prof, 0), 0);	/* meanwhile */
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	assert_all_read(&sym, prof, ref);

	/* With a cache entry for each module, none is offered. */
	snprintf(cache, sizeof(cache), "%s/symbols", tmpdir);
	free(cached_run(cache, bins, NULL, prof, &cached, &addrs, &w));
	opt.warn_arg = &w;
	opt.cache_dir = cache;
	sym_init(&sym, &opt);
	add(&sym, bins[0]);
	add(&sym, bins[1]);
	assert_all_read(&sym, prof, ref);

	/* No DWARF, read beside: said at the first lookup, once. */
	snprintf(bin, sizeof(bin), "%s/basic.pie", tmpdir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug " FIX "basic.pie '%s'", bin);
	run(cmd);
	init(&sym, &w, false, false);
	add(&sym, bin);
	x0 = sym_dwarf_to_open(&sym, 0);
	ck_assert_ptr_nonnull(x0);
	sym_open_dwarf(x0);
	ck_assert_int_eq(count_warn(&w, "no DWARF", NULL), 0);
	hot_frames(&sym, &fr);
	ck_assert(fr->from_symtab);
	ck_assert_str_eq(fr->f[0].function, "hot_alloc");
	hot_frames(&sym, &fr);
	ck_assert_int_eq(count_warn(&w, "no DWARF in '", "basic.pie'; using ELF symbols"), 1);
	sym_release(&sym);
	free(ref);
	remove_tmpdir();
}
END_TEST

/* ---- libraries found through the loader's cache ------------------------- */

/* Write a glibc-ld.so.cache1.1 file listing PATHS (values and keys). */
static void write_ld_cache(const char *file, const char *const *paths,
			   size_t n, uint32_t nlibs_field, uint32_t bad_value)
{
	unsigned char head[48] = "glibc-ld.so.cache1.1";
	size_t strs = 48 + 24 * n, off = strs;
	FILE *f = fopen(file, "wb");

	ck_assert_ptr_nonnull(f);
	memcpy(head + 20, &nlibs_field, 4);
	fwrite(head, 1, sizeof(head), f);
	for (size_t i = 0; i < n; i++) {
		int32_t flags = 0x303;
		uint32_t v = bad_value ? bad_value : (uint32_t)off, zero = 0;
		uint64_t hwcap = 0;

		fwrite(&flags, 4, 1, f);
		fwrite(&v, 4, 1, f);	/* key: the same string will do */
		fwrite(&v, 4, 1, f);
		fwrite(&zero, 4, 1, f);
		fwrite(&hwcap, 8, 1, f);
		off += strlen(paths[i]) + 1;
	}
	for (size_t i = 0; i < n; i++)
		fwrite(paths[i], 1, strlen(paths[i]) + 1, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The PCs of basic.pie.v4.profraw in libfixture: how many map, and where. */
static void lib_pcs(const char *cache, size_t *mapped, size_t *unmapped,
		    char *path, size_t size)
{
	struct sym_options opt = { .no_default_debug_dir = true,
				   .libs_cache = cache };
	struct sym_module_info info;
	struct mp_err err = { 0 };
	struct sym_ctx sym;
	struct sym_addr a;
	struct raw_file rf;

	uint8_t id[RAW_BUILD_ID_MAX];
	uint32_t id_size;

	/* libfixture.so's build id, to know its segment by. */
	sym_init(&sym, NULL);
	add(&sym, FIX "libfixture.so");
	ck_assert(sym_module_info(&sym, 0, &info));
	id_size = info.build_id_size;
	ck_assert_uint_ge(id_size, 2);
	memcpy(id, info.build_id, id_size);
	sym_release(&sym);

	*mapped = *unmapped = 0;
	sym_init(&sym, &opt);
	add(&sym, FIX "basic.pie");
	load(&rf, FIX "basic.pie.v4.profraw");
	for (size_t i = 0; i < rf.ncontexts; i++)
		for (uint32_t k = 0; k < rf.contexts[i].npcs; k++) {
			const struct raw_segment *s;

			ck_assert_int_eq(sym_map_pc(&sym, &rf.profiles[0],
						    rf.contexts[i].pcs[k], &a,
						    &err), MP_OK);
			if (a.segment < 0)
				continue;
			s = &rf.profiles[0].segments[a.segment];
			if (s->build_id_size != id_size ||
			    memcmp(s->build_id, id, id_size) != 0)
				continue;
			if (a.module > 0) {
				ck_assert(sym_module_info(&sym, a.module, &info));
				snprintf(path, size, "%s", info.path);
				(*mapped)++;
			} else {
				(*unmapped)++;
			}
		}
	raw_file_release(&rf);
	sym_release(&sym);
}

START_TEST(loader_cache)
{
	char cache[128], lib[128], fifo[128], junk[128], dir[128], cmd[1024];
	char path[PATH_MAX] = "";
	size_t mapped, unmapped;

	make_tmpdir();
	snprintf(cache, sizeof(cache), "%s/ld.so.cache", tmpdir);
	snprintf(lib, sizeof(lib), "%s/libfixture.so", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.so", tmpdir);
	snprintf(junk, sizeof(junk), "%s/junk.so", tmpdir);
	snprintf(dir, sizeof(dir), "%s/dir.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp " FIX "libfixture.so '%s' && mkfifo '%s' "
		 "&& mkdir '%s' && echo not ELF >'%s'", lib, fifo, dir, junk);
	run(cmd);
	/* A FIFO (must not block), a directory and a text file first. */
	{
		const char *paths[] = { fifo, dir, junk, "relative/lib.so", lib, lib };

		write_ld_cache(cache, paths, 6, 6, 0);
		lib_pcs(cache, &mapped, &unmapped, path, sizeof(path));
		ck_assert_uint_gt(mapped, 0);
		ck_assert_uint_eq(unmapped, 0);
		ck_assert_str_eq(path, lib);
	}
	/* Without the cache: those PCs have no binary. */
	lib_pcs(NULL, &mapped, &unmapped, path, sizeof(path));
	ck_assert_uint_eq(mapped, 0);
	ck_assert_uint_gt(unmapped, 0);
	/* Hostile caches find nothing and break nothing. */
	{
		const char *paths[] = { lib };
		const uint32_t nlibs[] = { 1, 0xffffffffu, 1, 1 };
		const uint32_t value[] = { 0, 0, 70000, 12 };

		for (size_t i = 0; i < 4; i++) {
			write_ld_cache(cache, paths, 1, nlibs[i], value[i]);
			if (i == 0) {	/* the path's NUL cut off */
				snprintf(cmd, sizeof(cmd), "truncate -s -1 '%s'", cache);
				run(cmd);
			}
			lib_pcs(cache, &mapped, &unmapped, path, sizeof(path));
			ck_assert_msg(mapped == 0 && unmapped > 0, "case %zu", i);
		}
		write_ld_cache(cache, paths, 1, 1, 0);
		snprintf(cmd, sizeof(cmd), "truncate -s 40 '%s'", cache);
		run(cmd);
		lib_pcs(cache, &mapped, &unmapped, path, sizeof(path));
		ck_assert(mapped == 0 && unmapped > 0);
		lib_pcs(tmpdir, &mapped, &unmapped, path, sizeof(path));
		ck_assert(mapped == 0 && unmapped > 0);
	}
	remove_tmpdir();
}
END_TEST

START_TEST(persistent_cache)
{
	static const char *const bins[] = { FIX "basic.pie", FIX "libfixture.so", NULL };
	static const char *const cxx[] = { FIX "cxx.pie", NULL };
	char cache[128], *off, *cold, *warm;
	uint64_t cached, addrs;
	struct warnings w;

	make_tmpdir();
	for (int k = 0; k < 2; k++) {
		const char *const *b = k ? cxx : bins;
		const char *prof = k ? FIX "cxx.v4.profraw" : FIX "basic.pie.v4.profraw";

		/* A cache of its own: both programs share libc's entry. */
		snprintf(cache, sizeof(cache), "%s/cache%d/symbols", tmpdir, k);

		off = cached_run(NULL, b, NULL, prof, &cached, &addrs, &w);
		ck_assert_uint_eq(cached, 0);
		cold = cached_run(cache, b, NULL, prof, &cached, &addrs, &w);
		ck_assert_uint_eq(cached, 0);
		ck_assert_str_eq(cold, off);
		warm = cached_run(cache, b, NULL, prof, &cached, &addrs, &w);
		ck_assert_uint_gt(addrs, 0);
		ck_assert_uint_eq(cached, addrs);	/* no DWARF read */
		ck_assert_str_eq(warm, off);
		free(off);
		free(cold);
		free(warm);
	}
	/*
	 * A copy of the binary (another inode, an older time): the entry,
	 * keyed by the original's status alone, misses and is rewritten with
	 * the contents' fingerprint; then the copy and the original both hit,
	 * the original by its contents.
	 */
	{
		char cmd[512], copy[128];
		const char *cbins[] = { copy, FIX "libfixture.so", NULL };
		const char *prof = FIX "basic.pie.v4.profraw";
		uint64_t c2, a2;

		snprintf(cache, sizeof(cache), "%s/cache0/symbols", tmpdir);
		snprintf(copy, sizeof(copy), "%s/copy.pie", tmpdir);
		snprintf(cmd, sizeof(cmd), "cp " FIX "basic.pie '%s' && "
			 "touch -d '1 hour ago' '%s'", copy, copy);
		run(cmd);
		off = cached_run(NULL, bins, NULL, prof, &cached, &addrs, &w);
		cold = cached_run(cache, cbins, NULL, prof, &cached, &addrs, &w);
		ck_assert_uint_lt(cached, addrs);
		ck_assert_str_eq(cold, off);
		free(cold);
		cold = cached_run(cache, cbins, NULL, prof, &cached, &addrs, &w);
		ck_assert_uint_eq(cached, addrs);
		ck_assert_str_eq(cold, off);
		warm = cached_run(cache, bins, NULL, prof, &c2, &a2, &w);
		ck_assert_uint_eq(c2, a2);
		ck_assert_str_eq(warm, off);
		free(off);
		free(cold);
		free(warm);
	}
	remove_tmpdir();
}
END_TEST

/*
 * A stripped binary symbolizes from its symbol table, and that answer is
 * cached; once its debug file is installed, the entry no longer holds and
 * the frames come from the DWARF.
 */
START_TEST(persistent_cache_debug_file_later)
{
	const char *bins[2] = { NULL, NULL };
	char cmd[2048], cache[128], bin[128], dir[128], hex[80], *text;
	uint64_t cached, addrs;
	struct warnings w;
	struct sym_ctx sym;

	make_tmpdir();
	init(&sym, &w, false, false);
	add(&sym, FIX "basic.pie");
	hex_of(&sym, 0, hex, sizeof(hex));
	sym_release(&sym);
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	snprintf(dir, sizeof(dir), "%s/dbg", tmpdir);
	snprintf(bin, sizeof(bin), "%s/basic.pie", tmpdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.build-id/%.2s' && "
		 "objcopy --strip-debug " FIX "basic.pie '%s'",
		 dir, hex, bin);
	run(cmd);
	bins[0] = bin;
	for (int k = 0; k < 2; k++) {
		text = cached_run(cache, bins, dir, FIX "basic.pie.v4.profraw",
				  &cached, &addrs, &w);
		ck_assert_ptr_nonnull(strstr(text, " hot_alloc - 0:0 "));
		ck_assert_ptr_null(strstr(text, "basic.c"));
		ck_assert_uint_eq(cached, k ? addrs : 0);
		/* The warning is said from the cache too. */
		ck_assert_int_eq(count_warn(&w, "no DWARF in '", "basic.pie'; using ELF symbols"), 1);
		free(text);
	}
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug " FIX "basic.pie "
		 "'%s/.build-id/%.2s/%s.debug'", dir, hex, hex + 2);
	run(cmd);
	for (int k = 0; k < 2; k++) {
		text = cached_run(cache, bins, dir, FIX "basic.pie.v4.profraw",
				  &cached, &addrs, &w);
		ck_assert_ptr_nonnull(strstr(text, " hot_alloc /fixtures/src/basic.c 26:15 "));
		ck_assert_uint_eq(cached, k ? addrs : 0);
		ck_assert_int_eq(count_warn(&w, "no DWARF", NULL), 0);
		free(text);
	}
	remove_tmpdir();
}
END_TEST

/* ---- the runtime rule, demangling ---------------------------------------- */

START_TEST(runtime_rule)
{
	static const char *const rt[] = {
		"malloc", "calloc", "realloc", "free", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc",
		"reallocarray", "strdup", "__libc_malloc", "__libc_calloc",
		"__GI___strdup", "__GI___strndup", "__GI___libc_malloc",
		"__interceptor_malloc", "___interceptor_malloc",
		"__interceptor_trampoline_malloc", "__memprof_malloc",
		"memprof_rt_alloc", "__sanitizer_print_stack_trace",
		"_ZN8__memprof9Allocator8AllocateEmmPN11__sanitizer18BufferedStackTraceENS_9AllocTypeE",
		"_ZN11__sanitizer18BufferedStackTrace6UnwindEjmmPvmmb",
		"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t",
		"_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv", "_ZdaPvm",
		"_ZNSt15__new_allocatorIiE8allocateEmPKv",
		"_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
		"_ZNSt16allocator_traitsISaIiEE8allocateERS0_m",
		"_ZNSaIiE8allocateEm",
		"_ZN9__gnu_cxx14__alloc_traitsISaIcEcE8allocateERS1_m",
		"_ZNSt3__19allocatorIiE8allocateB8ne180100Em",
		"_ZNSt3__116allocator_traitsINS_9allocatorIiEEE8allocateB8ne180100ERS2_m",
		"_ZNSt3__117__libcpp_allocateB8ne180100Emm",
		"_ZSt18__allocate_guardedISaISt23_Sp_counted_ptr_inplaceIiSaIiELN9__gnu_cxx12_Lock_policyE2EEEESt15__allocated_ptrIT_ERS8_",
		/* Qualified names of GCC's functions without linkage name. */
		"std::__new_allocator<leveldb::(anonymous namespace)::Item>::allocate",
		"std::allocator_traits<std::allocator<(anonymous namespace)::X> >::allocate",
		"__gnu_cxx::new_allocator<(anonymous namespace)::X>::deallocate",
		NULL,
	};
	static const char *const user[] = {
		"main", "mallocx", "my_malloc", "xmalloc", "freeze",
		"__GI_main", "__GI___open", "__GI_",
		"_ZNSt12_Vector_baseIiSaIiEE11_M_allocateEm",
		"_ZNSt6vectorIiSaIiEE9push_backERKi",
		"_ZNSt15__new_allocatorIiE10constructIiJEEEvPT_DpOT0_",
		"_ZNSaIiEC2Ev", "_Z8allocatev", "_ZN5Arena8allocateEm",
		"_Z9array_newv",
		"std::__new_allocator<(anonymous namespace)::X>::construct<int>",
		"std::_Vector_base<(anonymous namespace)::X, std::allocator<(anonymous namespace)::X> >::_M_allocate",
		"(anonymous namespace)::Arena::allocate", NULL,
	};

	for (size_t i = 0; rt[i]; i++)
		ck_assert_msg(sym_is_runtime(rt[i], NULL), "%s", rt[i]);
	for (size_t i = 0; user[i]; i++)
		ck_assert_msg(!sym_is_runtime(user[i], NULL), "%s", user[i]);
	ck_assert(sym_is_runtime("foo", "/b/llvm/compiler-rt/lib/memprof/memprof_allocator.cpp"));
	ck_assert(sym_is_runtime(NULL, "src/runtime/rt_alloc.c"));
	ck_assert(sym_is_runtime(NULL, "/work/main/src/runtime/rt_alloc.c"));
	ck_assert(!sym_is_runtime("foo", "/fixtures/src/basic.c"));
	/* A program's own src/runtime/ is not ours. */
	ck_assert(!sym_is_runtime(NULL, "/home/u/game/src/runtime/physics.c"));
	ck_assert(!sym_is_runtime(NULL, "/home/u/game/src/runtime/rt_x/a.c"));
	ck_assert(!sym_is_runtime(NULL, "/home/u/lib/mysrc/runtime/rt_a.c"));
	ck_assert(!sym_is_runtime(NULL, NULL));
}
END_TEST

START_TEST(user_start)
{
	struct sym_frame rt = { .function = "malloc", .runtime = true };
	struct sym_frame rt2 = { .function = "_Znwm", .runtime = true };
	struct sym_frame usr = { .function = "main" };
	const struct sym_frame *a[] = { &rt, &rt2, &usr, &rt };
	const struct sym_frame *b[] = { &rt, NULL, &usr };
	const struct sym_frame *c[] = { &rt, &rt2 };
	const struct sym_frame *d[] = { &usr, &rt };

	ck_assert_uint_eq(sym_user_start(a, 4), 2);
	ck_assert_uint_eq(sym_user_start(b, 3), 1);	/* unknown: kept */
	ck_assert_uint_eq(sym_user_start(c, 2), 2);	/* all runtime */
	ck_assert_uint_eq(sym_user_start(d, 2), 0);
	ck_assert_uint_eq(sym_user_start(a, 0), 0);
}
END_TEST

START_TEST(demangle)
{
	struct sym_ctx sym;
	struct warnings w;
	char buf[16];
	const char *p1, *p2;
	size_t n;

	n = sym_demangle("_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv", buf,
			 sizeof(buf));
	ck_assert_uint_eq(n, strlen("__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)"));
	ck_assert_str_eq(buf, "__gnu_cxx::new_");	/* truncated */
	ck_assert_uint_eq(sym_demangle("main", buf, sizeof(buf)), 4);
	ck_assert_str_eq(buf, "main");
	ck_assert_uint_eq(sym_demangle("_Zbogus", buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "_Zbogus");

	init(&sym, &w, false, false);
	p1 = sym_pretty_name(&sym, "_Znwm");
	p2 = sym_pretty_name(&sym, "_Znwm");
	ck_assert_str_eq(p1, "operator new(unsigned long)");
	ck_assert_ptr_eq(p1, p2);
	ck_assert_str_eq(sym_pretty_name(&sym, "hot_alloc"), "hot_alloc");
	ck_assert_ptr_null(sym_pretty_name(&sym, NULL));
	sym_release(&sym);
}
END_TEST

/*
 * Nested substitutions: a<int, int>, then a<S, S> of the one before, K
 * times: 10 bytes a level name a type that doubles each level (30
 * levels: 300 bytes, 17 GB demangled, a minute of __cxa_demangle).
 */
static char *doubling_name(int k)
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char *s = malloc(16 + (size_t)k * 16), *p = s;

	ck_assert_ptr_nonnull(s);
	p += sprintf(p, "_Z1f1aIiiE");
	for (int j = 1; j < k; j++) {
		char seq[8];
		int n = j - 1, len = 0;

		do
			seq[len++] = digits[n % 36];
		while ((n /= 36));
		p += sprintf(p, "S_IS");
		for (int i = len; i--;)
			*p++ = seq[i];
		p += sprintf(p, "_S");
		for (int i = len; i--;)
			*p++ = seq[i];
		p += sprintf(p, "_E");
	}
	*p = '\0';
	return s;
}

START_TEST(demangle_bounded)
{
	/* libLLVM 19's longest name for its length: 20 times as long. */
	static const char llvm[] = "_ZSt11swap_rangesIN9__gnu_cxx17__normal_"
		"iteratorIPSt5tupleIJPN4llvm11InstructionESt6vectorImSaImEEPKN"
		"S3_8FunctionENS3_8DenseSetIjNS3_12DenseMapInfoIjvEEEEEES6_ISG_"
		"SaISG_EEEESK_ET0_T_SM_SL_";
	struct sym_demangler dm;
	char *name = doubling_name(30), *small = doubling_name(6), *d;
	int status = 0;

	d = sym_demangle_alloc(llvm, &status);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(strlen(d), 3760);	/* c++filt's */
	ck_assert(strncmp(d, "__gnu_cxx::__normal_iterator<std::tuple<llvm::"
			  "Instruction*, ", 54) == 0);
	free(d);
	/* The short name that grows the most for its length (10 times). */
	d = sym_demangle_alloc("_ZNSsD1Ev", &status);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d, "std::basic_string<char, std::char_traits<char>, "
			 "std::allocator<char> >::~basic_string()");
	free(d);
	/* Six levels: c++filt's 1048 bytes. */
	d = sym_demangle_alloc(small, &status);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(strlen(d), 1048);
	ck_assert(strncmp(d, "f(a<int, int>, a<a<int, int>, a<int, int> >, ",
			  45) == 0);
	free(d);
	/* Twelve levels: 120 bytes, 68 KB demangled (c++filt); past the bound,
	 * though within the 64 KiB of slack it once had, which let a file
	 * of short names keep 16000 times their bytes. */
	free(small);
	small = doubling_name(12);
	ck_assert_uint_eq(strlen(small), 120);
	ck_assert_ptr_null(sym_demangle_alloc(small, &status));
	ck_assert_int_eq(status, -2);
	/* Stopped at the bound, in well under Check's timeout. */
	d = sym_demangle_alloc(name, &status);
	ck_assert_ptr_null(d);
	ck_assert_int_eq(status, -2);
	sym_demangler_init(&dm);
	ck_assert_ptr_eq(sym_demangled(&dm, name), name);
	ck_assert_uint_eq(dm.failed, 1);
	sym_demangler_release(&dm);
	free(small);
	free(name);
}
END_TEST

/* Where a demangled function name's name starts: past a function
 * template's return type, never inside an operator's name, an anonymous
 * namespace or template arguments. */
START_TEST(name_start)
{
	static const struct {
		const char *pretty, *name;
	} cases[] = {
		{ "main", "main" },
		{ "f(int)", "f(int)" },
		{ "int* my_alloc<int>(unsigned long)", "my_alloc<int>(unsigned long)" },
		{ "unsigned long const* g<int, long>(int)", "g<int, long>(int)" },
		{ "std::_MakeUniq<Obj>::__single_object std::make_unique<Obj, "
		  "char const (&) [37]>(char const (&) [37])",
		  "std::make_unique<Obj, char const (&) [37]>(char const (&) [37])" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "(anonymous namespace)::h(int)", "(anonymous namespace)::h(int)" },
		{ "void (anonymous namespace)::k<int>(int)",
		  "(anonymous namespace)::k<int>(int)" },
		{ "operator new(unsigned long)", "operator new(unsigned long)" },
		{ "operator delete[](void*)", "operator delete[](void*)" },
		{ "bool operator< <int>(X<int> const&, X<int> const&)",
		  "operator< <int>(X<int> const&, X<int> const&)" },
		{ "X::operator int() const", "X::operator int() const" },
		{ "X::operator char const*() const",
		  "X::operator char const*() const" },
		{ "X::operator std::vector<int, std::allocator<int> >() const",
		  "X::operator std::vector<int, std::allocator<int> >() const" },
		{ "void* operator new[](unsigned long)", "operator new[](unsigned long)" },
		{ "auto main::$_0::operator()<int>(int) const",
		  "main::$_0::operator()<int>(int) const" },
		{ "ns::S::operator<<(int)", "ns::S::operator<<(int)" },
		{ "decltype (({parm#1}.begin)()) std::begin<V>(V&)",
		  "std::begin<V>(V&)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(cases[i].pretty + sym_name_start(cases[i].pretty),
				 cases[i].name);
}
END_TEST

START_TEST(build_id_format)
{
	const uint8_t id[4] = { 0x3f, 0x2a, 0x00, 0xff };
	char buf[9], small[4], empty[1] = "x";
	uint8_t back[4];

	mp_hex(id, 4, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3f2a00ff");
	mp_hex(id, 4, small, sizeof(small));
	ck_assert_str_eq(small, "3f");
	mp_hex(id, 0, empty, sizeof(empty));
	ck_assert_str_eq(empty, "");
	ck_assert_int_eq(mp_unhex("3F2a00ff", back, sizeof(back)), 4);
	ck_assert_mem_eq(back, id, 4);
	ck_assert_int_eq(mp_unhex("3f2", back, sizeof(back)), -1);
	ck_assert_int_eq(mp_unhex("3f2a00ff00", back, sizeof(back)), -1);
	ck_assert_int_eq(mp_unhex("zz", back, sizeof(back)), -1);
	ck_assert_int_eq(mp_unhex("", back, sizeof(back)), 0);
}
END_TEST

static Suite *sym_suite(void)
{
	Suite *s = suite_create("sym");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, sites_v4);
	tcase_add_test(t, sites_v1_v2);
	tcase_add_test(t, inline_chain_and_cache);
	tcase_add_test(t, cxx_user_start);
	tcase_add_test(t, build_id_mismatch);
	tcase_add_test(t, other_program);
	tcase_add_test(t, missing_library);
	tcase_add_test(t, unmapped_and_errors);
	tcase_add_test(t, v1_main_only);
	tcase_add_test(t, stripped_binary);
	tcase_add_test(t, truncated_binary);
	tcase_add_test(t, debuglink);
	tcase_add_test(t, build_id_debug_dir);
	tcase_add_test(t, loader_cache);
	tcase_add_test(t, persistent_cache);
	tcase_add_test(t, dwarf_read_beside);
	tcase_add_test(t, persistent_cache_debug_file_later);
	tcase_add_test(t, runtime_rule);
	tcase_add_test(t, user_start);
	tcase_add_test(t, demangle);
	tcase_add_test(t, demangle_bounded);
	tcase_add_test(t, build_id_format);
	tcase_add_test(t, name_start);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	/* Never ask debuginfod: these tests must not reach the network. */
	unsetenv("DEBUGINFOD_URLS");
	return check_failures(sym_suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
