/*
 * cli_compare.c - the options and the run that `overlap` and `diff`
 * share (cli_compare.h).
 */
#include "cli_compare.h"

#include <stdlib.h>
#include <string.h>

#include "common/mp_file.h"
#include "export/export.h"
#include "profile/compare.h"
#include "profile/view.h"

int cmp_cli_option(struct cmp_cli *co, const struct cli_command *cmd,
		   int c, const char *arg)
{
	unsigned long long n;
	float *thr = NULL;

	if (cli_sym_option(&co->so, c, arg))
		return 1;
	switch (c) {
	case OPT_FORMAT:
		if (!emit_format_parse(arg, &co->fmt))
			return -cli_usage_error(cmd, "unknown format '%s'", arg);
		return 1;
	case OPT_MATCH:
		if (!cmp_match_parse(arg, &co->ro.match))
			return -cli_usage_error(cmd, "unknown match key '%s'", arg);
		return 1;
	case OPT_PREFIX_MAP: {
		int rc = cli_prefix_map_option(cmd, &co->paths, arg);

		return rc == EXIT_OK ? 1 : -rc;
	}
	case OPT_FUNCTION:
		co->ro.function = arg;
		return 1;
	case OPT_TOP:
		if (!cli_parse_uint(arg, 0, SIZE_MAX, &n))
			return -cli_usage_error(cmd, "--top wants a number, not '%s'",
						arg);
		co->ro.top = (size_t)n;
		return 1;
	case OPT_COLD_DENSITY:
		thr = &co->ro.thresholds.cold_density;
		break;
	case OPT_COLD_LIFETIME:
		thr = &co->ro.thresholds.cold_lifetime;
		break;
	case OPT_HOT_DENSITY:
		thr = &co->ro.thresholds.hot_density;
		break;
	case OPT_NO_DEMANGLE:
		co->demangle = false;
		return 1;
	default:
		return 0;
	}
	if (!cli_parse_threshold(arg, thr))
		return -cli_usage_error(cmd, "a threshold wants a number >= 0, "
					"not '%s'", arg);
	return 1;
}

void cmp_cli_init(struct cmp_cli *co)
{
	static const struct mib_thresholds t = MIB_THRESHOLDS_DEFAULT;

	memset(co, 0, sizeof(*co));
	co->ro.thresholds = t;
	co->ro.match = CMP_MATCH_COLUMN;
	co->demangle = true;
	co->fmt = EMIT_TEXT;
	co->value = MIB_TotalSize;
}

/*
 * Load both sides, the two files read at once, then symbolize each
 * through SYM.  An indexed file's stacks are expanded only with EXPAND (a
 * flame graph draws them all); matching needs none of them, and the
 * report expands those it prints.  A failure is told of the first side
 * that failed, as if the sides were loaded one after the other.
 */
static int load_sides(struct view *v[2], const char *path[2],
		      struct sym_ctx *sym, const struct cli_sym *so,
		      bool expand, struct emit *e)
{
	struct mp_err err[2] = { { 0 }, { 0 } };
	enum mp_errcode rc[2];
	int i;

	v[0]->read.max_size = v[1]->read.max_size = so->max_input;
	view_add_file_pair(v, path, rc, err);
	for (i = 0; i < 2; i++) {
		if (rc[i])
			goto fail;
		view_set_frame_rules(v[i], &so->alloc, so->keep_runtime);
		if ((v[i]->nraws || v[i]->nllvm) &&
		    view_symbolize(v[i], sym, cli_sym_stack_flags(so), NULL,
				   &err[i]))
			goto fail;
		if (expand && view_expand_all(v[i], &err[i]))
			goto fail;
	}
	return EXIT_OK;
fail:
	emit_error(e, path[i], mp_errmsg(&err[i]));
	return cli_fail(path[i], &err[i]);
}

/*
 * Say so when the comparison can hardly mean anything: an LLVM indexed
 * profile against one of ours or a raw one by line or column (LLVM keeps
 * each frame's line as an offset in its function, and no file name),
 * two builds whose files differ by a leading directory (fewer than half
 * the contexts matched: the --prefix-map that would match them), or
 * two sides with contexts of which none match.  Reports are not changed:
 * a 0 % overlap may be the truth.
 */
static void warn_unmatched(const struct cmp *c, const char *path[2],
			   enum cmp_match m)
{
	struct cmp_prefix_hint h;
	size_t matched = 0, fewer;
	bool llvm[2];

	for (int i = 0; i < 2; i++)
		llvm[i] = c->views[i]->nllvm > 0 &&
			  c->views[i]->nllvm == c->views[i]->ninputs;
	if (llvm[0] != llvm[1] && m != CMP_MATCH_FUNCTION) {
		cli_warning(path[llvm[0] ? 0 : 1], "an LLVM indexed profile, "
			    "whose frames keep line offsets and no file names: "
			    "by %s none can match a frame of '%s' (--match=function "
			    "compares them by function)", cmp_match_name(m),
			    path[llvm[0] ? 1 : 0]);
		return;
	}
	for (size_t i = 0; i < c->n; i++)
		matched += c->e[i].present[CMP_BASE] && c->e[i].present[CMP_TEST];
	fewer = c->contexts[CMP_BASE] < c->contexts[CMP_TEST]
		? c->contexts[CMP_BASE] : c->contexts[CMP_TEST];
	if (m != CMP_MATCH_FUNCTION && matched < (fewer + 1) / 2 &&
	    cmp_prefix_hint(c, &h)) {
		cli_warning(NULL, "%zu of %zu contexts of '%s' match one of "
			    "'%s' by %s: their files differ by a leading part "
			    "(%s, %s); --prefix-map=%s=%s matches them", matched,
			    c->contexts[CMP_BASE], path[0], path[1],
			    cmp_match_name(m), h.base_file, h.test_file, h.old,
			    h.new);
		return;
	}
	if (!matched && c->contexts[CMP_BASE] && c->contexts[CMP_TEST])
		cli_warning(NULL, "no context of '%s' matches one of '%s' by %s: "
			    "%s", path[0], path[1], cmp_match_name(m),
			    llvm[0] != llvm[1] ? "an LLVM profile's functions are "
			    "named by --binary (guid:HEX without), and it keeps "
			    "only the profiled binary's frames" :
			    "different programs or builds?");
}

/*
 * diff --format=svg: a differential flame graph of BASE and TEST, written
 * to co->output (through a temporary file) or to standard output.
 */
static int write_svg(struct cmp_cli *co, struct view *base, struct view *test)
{
	struct exp_flame_opts fo = {
		.value = co->value, .thresholds = co->ro.thresholds,
		.dm = co->ro.demangler, .width = 1200,
	};
	struct mp_outfile of = { 0 };
	struct mp_err err = { 0 };
	struct exp_flame *f;
	char subtitle[512];
	FILE *out = stdout;
	int rc = EXIT_ERROR;

	snprintf(subtitle, sizeof(subtitle), "base %s, test %s: hover over a "
		 "frame, click to zoom, Ctrl-F to search", co->ro.base_path,
		 co->ro.test_path);
	fo.subtitle = subtitle;
	if (!(f = exp_flame_new(&fo))) {
		cli_error(NULL, "out of memory");
		return EXIT_ERROR;
	}
	if (exp_flame_add_view(f, test, EXP_FLAME_TEST, &err) ||
	    exp_flame_add_view(f, base, EXP_FLAME_BASE, &err)) {
		cli_fail(NULL, &err);
		goto out;
	}
	if (co->output) {
		if (mp_outfile_open(&of, co->output, &err)) {
			cli_fail(co->output, &err);
			goto out;
		}
		out = of.fp;
	}
	if (exp_flame_write_svg(f, &fo, out, &err) ||
	    (co->output && mp_outfile_commit(&of, &err))) {
		cli_fail(co->output, &err);
		goto out;
	}
	if (!co->output && fflush(stdout)) {
		cli_error(NULL, "cannot write to standard output");
		goto out;
	}
	rc = EXIT_OK;
out:
	mp_outfile_abort(&of);
	exp_flame_free(f);
	return rc;
}

/* The first input of either side that does not keep MIB field F (an
 * LLVM file whose schema lacks it), or NULL. */
static const char *lacking(struct view *const sides[2], enum mib_field f)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < sides[s]->ninputs; i++)
			if (!(sides[s]->inputs[i].mib_mask >> f & 1))
				return sides[s]->inputs[i].path;
	return NULL;
}

/*
 * A side with no access count at all (a profile of code not
 * instrumented, as under libmemprof_preload.so) against one with: its
 * contexts' hot and cold classes, decided by accesses per byte, and its
 * TotalAccessCount read as changes.  Said, not changed.
 */
static void warn_no_accesses(const struct cmp *c, struct view *const sides[2],
			     const char *path[2])
{
	/* An input without the field at all has had its note already. */
	if (lacking(sides, MIB_TotalAccessCount))
		return;
	for (int s = 0; s < 2; s++)
		if (c->contexts[s] && !c->total[s][MIB_TotalAccessCount] &&
		    c->total[!s][MIB_TotalAccessCount])
			cli_warning(path[s], "holds no access counts (a profile "
				    "of code not instrumented?): its hot and "
				    "cold classes and TotalAccessCount do not "
				    "compare with those of '%s'", path[!s]);
}

/*
 * Diff's metrics that an input does not keep are left out, with a note:
 * their zeros would read as a drop to nothing (our LLVM files keep the
 * four fields clang uses).  A gate on one cannot be judged: an error.
 * Returns EXIT_OK or EXIT_ERROR.
 */
static int keep_metrics(struct report_diff_opts *d, enum mib_field *metrics,
			struct view *const sides[2])
{
	size_t n = 0;

	for (size_t g = 0; g < d->ngates; g++) {
		const char *path = lacking(sides, d->gates[g].field);

		if (path) {
			cli_error(path, "keeps no %s (its MIB schema lacks it): "
				  "--fail-if=%s cannot be judged",
				  mib_fields[d->gates[g].field].name,
				  d->gates[g].text);
			return EXIT_ERROR;
		}
	}
	for (size_t k = 0; k < d->nmetrics; k++) {
		const char *path = lacking(sides, d->metrics[k]);

		if (path)
			cli_note(path, "keeps no %s (its MIB schema lacks it): "
				 "left out of the diff",
				 mib_fields[d->metrics[k]].name);
		else
			metrics[n++] = d->metrics[k];
	}
	if (!n) {
		cli_error(NULL, "no metric left to compare: every one asked for "
			  "is missing from an input");
		return EXIT_ERROR;
	}
	d->metrics = metrics;
	d->nmetrics = n;
	return EXIT_OK;
}

/*
 * The same for overlap's fields: one that an input does not keep is left
 * out, with a note, where its measure would read as no agreement at all.
 */
static void keep_overlap_fields(struct report_cmp_opts *o,
				enum mib_field *fields,
				struct view *const sides[2])
{
	size_t n = 0;

	for (size_t k = 0; k < report_noverlap_fields; k++) {
		enum mib_field f = report_overlap_fields[k];
		const char *path = lacking(sides, f);

		if (path)
			cli_note(path, "keeps no %s (its MIB schema lacks it): "
				 "left out of the overlap", mib_fields[f].name);
		else
			fields[n++] = f;
	}
	o->fields = fields;
	o->nfields = n;
}

/*
 * Everything after option parsing, for both commands: load, match, emit.
 * DIFF is NULL for overlap.
 */
int cmp_cli_run(struct cmp_cli *co, const struct cli_command *cmd,
		   int argc, char **argv, struct report_diff_opts *diff)
{
	enum mib_field metrics[MIB__COUNT];
	struct sym_ctx sym = { 0 };
	struct view base, test, *sides[2] = { &base, &test };
	const char *paths[2];
	struct cmp c = { 0 };
	struct mp_err err = { 0 };
	struct emit *e = NULL;
	bool crossed = false, svg = diff && co->svg, ok;
	int rc;

	view_init(&base);
	view_init(&test);
	sym_demangler_init(&co->dm);
	co->ro.demangler = co->demangle ? &co->dm : NULL;
	if (argc - optind != 2) {
		rc = cli_usage_error(cmd, "wants two profiles, BASE and TEST");
		goto out;
	}
	if ((rc = cli_sym_usage(cmd, &co->so)))
		goto out;
	if (co->output && mp_outfile_check(co->output, &err)) {
		cli_fail(co->output, &err);
		rc = EXIT_ERROR;
		goto out;
	}
	co->ro.base_path = paths[0] = argv[optind];
	co->ro.test_path = paths[1] = argv[optind + 1];
	e = emit_open(co->fmt, stdout);
	if (!e) {
		rc = EXIT_ERROR;
		cli_error(NULL, "out of memory");
		goto out;
	}
	if ((rc = cli_sym_setup(&co->so, &sym)) ||
	    (rc = load_sides(sides, paths, &sym, &co->so, svg, e)) ||
	    (diff && (rc = keep_metrics(diff, metrics, sides))))
		goto out;
	if (!diff)
		keep_overlap_fields(&co->ro, metrics, sides);
	rc = EXIT_ERROR;
	if (cmp_build(&c, &base, &test, co->ro.match, &co->paths, &err)) {
		cli_fail(NULL, &err);
		goto out;
	}
	warn_unmatched(&c, paths, co->ro.match);
	warn_no_accesses(&c, sides, paths);
	/* The matching looked at every distinct frame of both sides (of
	 * one function's contexts with --function: no word then). */
	if (!co->ro.function)
		cli_sym_unmatched(&co->so);
	if (diff && co->svg) {
		diff->cmp = co->ro;
		if ((rc = write_svg(co, &base, &test)))
			goto out;
		rc = EXIT_ERROR;
		ok = report_diff_crossed(&c, diff, &crossed);
	} else if (diff) {
		diff->cmp = co->ro;
		ok = e && report_diff(e, &c, diff, &crossed);
	} else {
		ok = e && report_overlap(e, &c, &co->ro);
	}
	if (!ok) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	rc = crossed ? EXIT_THRESHOLD : EXIT_OK;
out:
	if (e && !emit_close(e) && rc != EXIT_USAGE)
		rc = EXIT_ERROR;
	cmp_release(&c);
	sym_demangler_release(&co->dm);
	view_release(&base);
	view_release(&test);
	sym_release(&sym);
	cli_sym_release(&co->so);
	mp_prefix_map_release(&co->paths);
	return rc;
}
