#include "report_cmp.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const enum mib_field report_overlap_fields[] = {
	MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount, MIB_TotalLifetime,
};
const size_t report_noverlap_fields =
	sizeof(report_overlap_fields) / sizeof(report_overlap_fields[0]);

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static void emit_header(struct emit *e, const char *schema,
			const struct report_cmp_opts *o)
{
	emit_str(e, "schema", schema);
	emit_str(e, "base", o->base_path);
	emit_str(e, "test", o->test_path);
	emit_str(e, "match", cmp_match_name(o->match));
}

/* How much of each side found a partner. */
static void emit_matching(struct emit *e, const struct cmp *c)
{
	struct cmp_matching m;
	uint64_t common;
	char display[256];

	cmp_matching(c, &m);
	common = m.common;
	emit_object(e, "matching");
	snprintf(display, sizeof(display),
		 "%" PRIu64 " common, %zu base only, %zu test only",
		 common, c->contexts[0] - (size_t)common,
		 c->contexts[1] - (size_t)common);
	emit_row(e, "contexts", display);
	emit_u64(e, "base", c->contexts[0]);
	emit_u64(e, "test", c->contexts[1]);
	emit_u64(e, "common", common);
	emit_u64(e, "base_only", c->contexts[0] - common);
	emit_u64(e, "test_only", c->contexts[1] - common);
	emit_end(e);
	for (int s = 0; s < 2; s++) {
		double a = share(m.allocs[s], c->total[s][MIB_AllocCount]);
		double b = share(m.bytes[s], c->total[s][MIB_TotalSize]);

		snprintf(display, sizeof(display),
			 "%.1f%% of AllocCount, %.1f%% of TotalSize matched",
			 100 * a, 100 * b);
		emit_row(e, s ? "test" : "base", display);
		emit_f64(e, "AllocCount", a, 6);
		emit_f64(e, "TotalSize", b, 6);
		emit_end(e);
	}
	emit_end(e);
}

/*
 * A frame's text, by its indexed file and stack entry: a diff prints the
 * same few thousand frames hundreds of thousands of times.  The texts
 * are in the printer's arena, next to each other.
 */
struct frame_text {
	const char *s;		/* NULL: not made yet */
	uint32_t len;
	bool plain;		/* emit_is_plain() */
};

struct frame_texts {
	const struct idx_file *f;
	struct frame_text *text;	/* by stack entry */
};

/* What printing stacks reuses from one to the next. */
struct stack_printer {
	struct view_scratch scratch;
	struct sym_demangler *dm;	/* NULL: linkage names */
	struct frame_texts *files;
	size_t nfiles, afiles;
	struct mp_arena arena;
};

static void printer_release(struct stack_printer *sp)
{
	for (size_t i = 0; i < sp->nfiles; i++)
		free(sp->files[i].text);
	free(sp->files);
	mp_arena_release(&sp->arena);
	view_scratch_release(&sp->scratch);
}

/* F's texts (made empty the first time); NULL when out of memory. */
static struct frame_texts *texts_of(struct stack_printer *sp,
				    const struct idx_file *f)
{
	struct frame_texts *t;

	for (size_t i = 0; i < sp->nfiles; i++)
		if (sp->files[i].f == f)
			return &sp->files[i];
	if (!MP_GROW(sp->files, sp->afiles, sp->nfiles + 1))
		return NULL;
	t = &sp->files[sp->nfiles];
	t->f = f;
	t->text = calloc(f->nframes ? f->nframes : 1, sizeof(*t->text));
	if (!t->text)
		return NULL;
	sp->nfiles++;
	return t;
}

/* Frame F as a list item of text. */
static bool emit_frame_text(struct emit *e, const struct mp_frame *f,
			    struct sym_demangler *dm)
{
	size_t len;
	char *s = report_frame_string(f, dm, &len);

	if (!s)
		return false;
	emit_strn(e, NULL, s, len);
	free(s);
	return true;
}

static void emit_frame_cached(struct emit *e, const struct frame_text *ft)
{
	if (ft->plain)
		emit_plain(e, NULL, ft->s, ft->len);
	else
		emit_strn(e, NULL, ft->s, ft->len);
}

/*
 * The frames of entry X's context.  An indexed one is walked as stack
 * entries, each entry's text made once, an LLVM one read again from its
 * file; that fails only when out of memory: every context of a file is
 * printed once at most, within the frames idx_open() and llvm_open()
 * allowed.
 */
static bool emit_frames(struct emit *e, const struct cmp *c,
			const struct cmp_entry *x, struct stack_printer *sp)
{
	struct view *v = cmp_entry_view(c, x);
	const struct mp_frame *frames;
	const uint32_t *entries;
	struct frame_texts *t;
	struct mp_err err = { 0 };
	uint32_t n;

	if (view_stack_scratch(v, x->ctx, &sp->scratch, &frames, &entries,
			       &n, &err))
		return false;
	emit_list(e, "frames");
	if (!entries) {
		for (uint32_t k = 0; k < n; k++)
			if (!emit_frame_text(e, &frames[k], sp->dm))
				return false;
		emit_end(e);
		return true;
	}
	if (!(t = texts_of(sp, x->ctx->idx)))
		return false;
	for (uint32_t k = 0; k < n; k++) {
		struct frame_text *ft = entries[k] < t->f->nframes
					? &t->text[entries[k]] : NULL;
		const struct mp_frame *f;
		size_t len;
		char *s;

		if (ft && ft->s) {
			emit_frame_cached(e, ft);
			continue;
		}
		if (!(f = view_entry_frame(v, x->ctx, entries[k])))
			return false;
		if (!ft) {
			if (!emit_frame_text(e, f, sp->dm))
				return false;
			continue;
		}
		if (!(s = report_frame_string(f, sp->dm, &len)))
			return false;
		ft->s = len <= UINT32_MAX
			? mp_arena_memdup(&sp->arena, s, len + 1) : NULL;
		ft->len = (uint32_t)len;
		ft->plain = emit_is_plain(s, len);
		free(s);
		if (!ft->s)
			return false;
		emit_frame_cached(e, ft);
	}
	emit_end(e);
	return true;
}

/* A row's function: its linkage name, and its demangled one when DM has
 * another, as show gives a frame's. */
static void emit_function(struct emit *e, const char *fn,
			  struct sym_demangler *dm)
{
	const char *pretty = dm && fn ? sym_demangled(dm, fn) : NULL;

	emit_str(e, "function", fn);
	if (pretty && pretty != fn)
		emit_str(e, "demangled", pretty);
}

/*
 * Classes per side, and the matched contexts whose class flips, their
 * counts into *OUT; false when out of memory.
 */
static bool emit_hot_cold(struct emit *e, const struct cmp *c,
			  const struct report_cmp_opts *o, struct cmp_hot_cold *out)
{
	const struct mib_thresholds *t = &o->thresholds;
	struct stack_printer sp = { .dm = o->demangler };
	struct cmp_hot_cold h;
	size_t listed = 0;
	char display[256];

	cmp_hot_cold(c, t, &h);
	*out = h;
	emit_object(e, "hot_cold");
	snprintf(display, sizeof(display),
		 "cold below %g accesses/byte/s with average lifetime >= %g s; "
		 "hot above %g", (double)t->cold_density, (double)t->cold_lifetime,
		 (double)t->hot_density);
	emit_row(e, "thresholds", display);
	emit_f64(e, "cold_density", t->cold_density, 6);
	emit_f64(e, "cold_lifetime_s", t->cold_lifetime, 3);
	emit_f64(e, "hot_density", t->hot_density, 3);
	emit_end(e);
	for (int s = 0; s < 2; s++) {
		const uint64_t *n = h.count[s];

		snprintf(display, sizeof(display),
			 "%" PRIu64 " cold, %" PRIu64 " hot, %" PRIu64 " notcold",
			 n[MIB_COLD], n[MIB_HOT], n[MIB_NOTCOLD]);
		emit_row(e, s ? "test" : "base", display);
		emit_u64(e, "cold", n[MIB_COLD]);
		emit_u64(e, "hot", n[MIB_HOT]);
		emit_u64(e, "notcold", n[MIB_NOTCOLD]);
		emit_end(e);
	}
	emit_u64(e, "flips", h.flips);
	snprintf(display, sizeof(display),
		 "%" PRIu64 " bytes in base, %" PRIu64 " in test",
		 h.flipped_bytes[0], h.flipped_bytes[1]);
	emit_row(e, "flipped_bytes", display);
	emit_u64(e, "base", h.flipped_bytes[0]);
	emit_u64(e, "test", h.flipped_bytes[1]);
	emit_end(e);
	emit_list(e, "flipped");
	for (size_t i = 0; i < c->n && (!o->top || listed < o->top); i++) {
		const struct cmp_entry *x = &c->e[i];
		enum mib_type k[2];

		if (!cmp_flips(x, t, k))
			continue;
		listed++;
		emit_object(e, NULL);
		emit_function(e, c->functions[x->function], o->demangler);
		emit_str(e, "base", mib_type_name(k[0]));
		emit_str(e, "test", mib_type_name(k[1]));
		emit_u64(e, "base_TotalSize", x->mib[0]->v[MIB_TotalSize]);
		emit_u64(e, "test_TotalSize", x->mib[1]->v[MIB_TotalSize]);
		if (!emit_frames(e, c, x, &sp)) {
			printer_release(&sp);
			return false;
		}
		emit_end(e);
	}
	emit_end(e);
	emit_end(e);
	printer_release(&sp);
	return true;
}

static void emit_overlaps(struct emit *e, const struct cmp *c,
			  const struct report_cmp_opts *o, long fn)
{
	const enum mib_field *fields = o->fields ? o->fields
						 : report_overlap_fields;
	size_t nf = o->fields ? o->nfields : report_noverlap_fields;
	char display[512] = "";
	int n = 0;

	for (size_t k = 0; k < nf; k++)
		n += snprintf(display + n, sizeof(display) - (size_t)n, "%s%s %.6f",
			      k ? ", " : "", mib_fields[fields[k]].name,
			      cmp_overlap(c, fields[k], fn));
	emit_row(e, "overlap", display);
	for (size_t k = 0; k < nf; k++)
		emit_f64(e, mib_fields[fields[k]].name,
			 cmp_overlap(c, fields[k], fn), 6);
	emit_end(e);
}

bool report_overlap(struct emit *e, const struct cmp *c,
		    const struct report_cmp_opts *o)
{
	struct cmp_hot_cold h;
	long *fns;
	size_t nf;

	if (cmp_functions_ranked(c, o->function, &fns, &nf))
		return false;
	if (o->top && nf > o->top)
		nf = o->top;

	emit_object(e, NULL);
	emit_header(e, "memprof-data/overlap/1", o);
	emit_matching(e, c);
	emit_overlaps(e, c, o, -1);
	if (!emit_hot_cold(e, c, o, &h)) {
		free(fns);
		return false;
	}
	emit_list(e, "functions");
	for (size_t i = 0; i < nf; i++) {
		uint64_t a[2], s[2];

		cmp_totals(c, MIB_AllocCount, fns[i], a);
		cmp_totals(c, MIB_TotalSize, fns[i], s);
		emit_object(e, NULL);
		emit_function(e, c->functions[fns[i]], o->demangler);
		emit_f64(e, "base_AllocCount_share",
			 share(a[0], c->total[0][MIB_AllocCount]), 6);
		emit_f64(e, "test_AllocCount_share",
			 share(a[1], c->total[1][MIB_AllocCount]), 6);
		emit_f64(e, "base_TotalSize_share",
			 share(s[0], c->total[0][MIB_TotalSize]), 6);
		emit_f64(e, "test_TotalSize_share",
			 share(s[1], c->total[1][MIB_TotalSize]), 6);
		emit_overlaps(e, c, o, fns[i]);
		emit_end(e);
	}
	emit_end(e);
	emit_end(e);
	free(fns);
	return true;
}

/* ---- diff ---- */

static const char *status_of(const struct cmp_row *r, enum mib_field f)
{
	if (!r->present[0])
		return "new";
	if (!r->present[1])
		return "vanished";
	return r->v[0][f] == r->v[1][f] ? "same" : "changed";
}

/* Append V in decimal at P; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char d[MP_U64_DIGITS], *end = d + sizeof(d), *s = mp_u64_digits(end, v);

	memcpy(p, s, (size_t)(end - s));
	return p + (end - s);
}

/* Append V with an explicit sign, as "%+" PRId64 does. */
static char *put_i64(char *p, int64_t v)
{
	*p++ = v < 0 ? '-' : '+';
	return put_u64(p, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/*
 * Append V as "%+.1f" prints it, for |V| < 2^40 (else false): a diff has
 * four per row, and snprintf was a tenth of its time.  The tenths are
 * V * 10 rounded to nearest, ties to even, on V's exact value: fma()
 * gives the product's rounding error, which decides only where the
 * rounded product lies exactly half-way.
 */
static bool put_tenths(char **pp, double v)
{
	double a = fabs(v), p, fl, frac, err;
	uint64_t q;

	if (!(a < 0x1p40))
		return false;
	p = a * 10;
	err = fma(a, 10, -p);
	fl = floor(p);
	frac = p - fl;
	q = (uint64_t)fl;
	if (frac > 0.5 || (frac == 0.5 && (err > 0 || (err == 0 && (q & 1)))))
		q++;
	*(*pp)++ = signbit(v) ? '-' : '+';
	*pp = put_u64(*pp, q / 10);
	*(*pp)++ = '.';
	*(*pp)++ = (char)('0' + q % 10);
	return true;
}

/* SIG: -1 for exact profiles, else whether the change is significant
 * (outside the sampled profiles' intervals, cmp_significant). */
static void emit_change(struct emit *e, const char *key, uint64_t b,
			uint64_t t, int sig)
{
	char display[200], *p = display;
	double rel = b ? ((double)t - (double)b) / (double)b : NAN;
	const char *mark = sig == 0 && b != t ? ", within the 95% intervals" : "";

	/* "B -> T (+D, +R%MARK)", or without ", +R%" when B is 0. */
	p = put_u64(p, b);
	memcpy(p, " -> ", 4);
	p = put_u64(p + 4, t);
	memcpy(p, " (", 2);
	p = put_i64(p + 2, (int64_t)(t - b));
	if (b) {
		memcpy(p, ", ", 2);
		p += 2;
		if (!put_tenths(&p, 100 * rel))
			p += snprintf(p, 64, "%+.1f", 100 * rel);
		*p++ = '%';
	}
	snprintf(p, sizeof(display) - (size_t)(p - display), "%s)", mark);
	emit_row(e, key, display);
	emit_u64(e, "base", b);
	emit_u64(e, "test", t);
	emit_i64(e, "change", (int64_t)(t - b));
	emit_f64(e, "relative", rel, 6);
	if (sig >= 0)
		emit_bool(e, "significant", sig);
	emit_end(e);
}

/* The largest share, in percent, of a side's bytes that flipped class. */
static double flipped_share(const struct cmp *c, const struct cmp_hot_cold *h)
{
	double share = 0;

	for (int s = 0; s < 2; s++)
		if (c->total[s][MIB_TotalSize]) {
			double x = 100.0 * (double)h->flipped_bytes[s] /
				   (double)c->total[s][MIB_TotalSize];

			share = x > share ? x : share;
		}
	return share;
}

/* Does --fail-on-flip fail on these flips? */
static bool flip_fails(const struct cmp *c, const struct report_diff_opts *o,
		       const struct cmp_hot_cold *h)
{
	if (!o->fail_on_flip || !h->flips)
		return false;
	return o->flip_share <= 0 || flipped_share(c, h) >= o->flip_share;
}

bool report_diff(struct emit *e, const struct cmp *c,
		 const struct report_diff_opts *o, bool *crossed)
{
	struct stack_printer sp = { .dm = o->cmp.demangler };
	size_t nrows, listed = 0;
	struct cmp_hot_cold h;
	struct cmp_row *rows;
	bool fail = false, flip_failed;

	if (cmp_rows(c, o->by_function, o->sort, &rows, &nrows))
		return false;

	emit_object(e, NULL);
	emit_header(e, "memprof-data/diff/1", &o->cmp);
	emit_str(e, "by", o->by_function ? "function" : "context");
	emit_matching(e, c);
	emit_bool(e, "sampled", c->sampled);
	emit_object(e, "totals");
	for (size_t m = 0; m < o->nmetrics; m++) {
		enum mib_field f = o->metrics[m];
		struct mp_mib tot[2];

		memcpy(tot[0].v, c->total[0], sizeof(tot[0].v));
		memcpy(tot[1].v, c->total[1], sizeof(tot[1].v));
		emit_change(e, mib_fields[f].name, c->total[0][f], c->total[1][f],
			    !c->sampled ? -1 :
			    cmp_significant(&tot[0], c->tsamp[0], c->ntsamp[0],
					    &tot[1], c->tsamp[1], c->ntsamp[1], f));
	}
	emit_end(e);

	emit_list(e, "rows");
	for (size_t i = 0; i < nrows && (!o->cmp.top || listed < o->cmp.top); i++) {
		const struct cmp_row *r = &rows[i];

		if (o->cmp.function && strcmp(r->function, o->cmp.function))
			continue;
		if (!r->present[0] && !r->present[1])
			continue;
		listed++;
		emit_object(e, NULL);
		emit_str(e, "status", status_of(r, o->sort));
		emit_function(e, r->function, o->cmp.demangler);
		if (r->entry && !emit_frames(e, c, r->entry, &sp)) {
			printer_release(&sp);
			free(rows);
			return false;
		}
		emit_object(e, "metrics");
		for (size_t m = 0; m < o->nmetrics; m++)
			emit_change(e, mib_fields[o->metrics[m]].name,
				    r->v[0][o->metrics[m]], r->v[1][o->metrics[m]],
				    c->sampled ? cmp_row_significant(r, o->metrics[m]) : -1);
		emit_end(e);
		emit_end(e);
	}
	emit_end(e);
	printer_release(&sp);

	if (!emit_hot_cold(e, c, &o->cmp, &h)) {
		free(rows);
		return false;
	}
	flip_failed = flip_fails(c, o, &h);
	fail = flip_failed;

	emit_list(e, "gates");
	for (size_t g = 0; g < o->ngates; g++) {
		const struct cmp_gate *gate = &o->gates[g];
		struct cmp_gate_result gr;
		uint64_t b, t;
		bool whole;
		size_t rows_crossed;
		char display[256];

		cmp_gate_eval(c, rows, nrows, gate, o->per_context, &gr);
		b = gr.base;
		t = gr.test;
		whole = gr.whole;
		rows_crossed = gr.rows_crossed;
		fail = fail || whole || rows_crossed;
		snprintf(display, sizeof(display), "%s: %s%s%s", gate->text,
			 whole ? "CROSSED by the whole profile" : "profile within",
			 !o->per_context ? ""
			 : rows_crossed ? "; crossed by some rows" : "; every row within",
			 c->sampled ? " (sampled: only changes outside the 95% "
				      "intervals count)" : "");
		emit_row(e, NULL, display);
		emit_str(e, "gate", gate->text);
		emit_bool(e, "profile_crossed", whole);
		emit_u64(e, "base", b);
		emit_u64(e, "test", t);
		if (o->per_context)
			emit_u64(e, "rows_crossed", rows_crossed);
		emit_bool(e, "significant_only", c->sampled);
		emit_end(e);
	}
	emit_end(e);
	if (o->fail_on_flip) {
		emit_bool(e, "flip_failed", flip_failed);
		emit_f64(e, "flipped_share", flipped_share(c, &h), 4);
	}
	emit_str(e, "result", fail ? "fail" : "pass");
	emit_end(e);
	free(rows);
	*crossed = fail;
	return true;
}

bool report_diff_crossed(const struct cmp *c, const struct report_diff_opts *o,
			 bool *crossed)
{
	struct cmp_row *rows;
	struct cmp_hot_cold h;
	size_t nrows;

	if (cmp_rows(c, o->by_function, o->sort, &rows, &nrows))
		return false;
	cmp_hot_cold(c, &o->cmp.thresholds, &h);
	*crossed = flip_fails(c, o, &h);
	for (size_t g = 0; g < o->ngates; g++) {
		struct cmp_gate_result gr;

		cmp_gate_eval(c, rows, nrows, &o->gates[g], o->per_context, &gr);
		*crossed = *crossed || gr.whole || gr.rows_crossed;
	}
	free(rows);
	return true;
}
