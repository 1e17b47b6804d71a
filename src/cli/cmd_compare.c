/*
 * memprof-data overlap and memprof-data diff: compare two profiles.
 *
 * Both load BASE and TEST (raw with their binaries, or indexed), match
 * their contexts (compare.h) and print a report (report_cmp.h); diff can
 * also gate CI with thresholds and exits 3 when one is crossed.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile/compare.h"
#include "report_cmp.h"
#include "profile/stack.h"
#include "profile/view.h"

const struct cli_command cli_cmd_overlap = {
	.name = "overlap",
	.run = cmd_overlap,
	.summary = "how much two profiles agree, metric by metric",
	.synopsis = "memprof-data overlap [--format=text|yaml|json] "
		    "[--match=column|line|function] [--function=NAME] [--top=N] "
		    "[--cold-density=X] [--cold-lifetime=S] [--hot-density=X] "
		    "[--binary=PATH]... [--debug-dir=DIR]... [--strict] "
		    "[--keep-runtime] [--no-demangle] BASE TEST",
};

const struct cli_command cli_cmd_diff = {
	.name = "diff",
	.run = cmd_diff,
	.summary = "what changed between two profiles; gate CI on it",
	.synopsis = "memprof-data diff [--format=text|yaml|json] "
		    "[--match=column|line|function] [--by=context|function] "
		    "[--metrics=M,...] [--sort=METRIC] [--top=N] "
		    "[--function=NAME] [--fail-if=METRIC:+N%|+ABS]... "
		    "[--per-context] [--fail-on-flip] [--cold-density=X] "
		    "[--cold-lifetime=S] [--hot-density=X] [--binary=PATH]... "
		    "[--debug-dir=DIR]... [--strict] [--keep-runtime] "
		    "[--no-demangle] BASE TEST",
};

#define COMMON_HELP                                                        \
	"  --format=FMT   text (default), yaml or json\n"                     \
	"  --match=KEY    match contexts on every frame's function, file,\n"  \
	"                 line and column (column, the default), without the\n" \
	"                 column (line), or on function names only (function)\n" \
	"  --function=NAME  only the contexts of function NAME (linkage name)\n" \
	"  --top=N        list at most N rows (default: all)\n"               \
	"  --cold-density=X  cold below X accesses per byte per lifetime\n"   \
	"                 second (default 0.05, as LLVM's MemProfUse)\n"      \
	"  --cold-lifetime=S  ... and an average lifetime of at least S\n"    \
	"                 seconds (default 200)\n"                            \
	"  --hot-density=X  hot above X (default 1000)\n"                     \
	CLI_SYM_HELP                                                          \
	"  --no-demangle  show C++ names as linkage names\n"                  \
	"  -h, --help     this text\n"

/* What both commands parse. */
struct common {
	struct cli_sym so;
	struct report_cmp_opts ro;
	enum emit_format fmt;
};

enum {
	OPT_FORMAT = OPT__NEXT, OPT_MATCH, OPT_FUNCTION, OPT_TOP,
	OPT_COLD_DENSITY, OPT_COLD_LIFETIME, OPT_HOT_DENSITY,
	OPT_BY, OPT_METRICS, OPT_SORT, OPT_FAIL_IF, OPT_PER_CONTEXT,
	OPT_FAIL_ON_FLIP,
};

#define COMMON_LONGOPTS                                                   \
	{ "format", required_argument, NULL, OPT_FORMAT },                \
	{ "match", required_argument, NULL, OPT_MATCH },                  \
	{ "function", required_argument, NULL, OPT_FUNCTION },            \
	{ "top", required_argument, NULL, OPT_TOP },                      \
	{ "cold-density", required_argument, NULL, OPT_COLD_DENSITY },    \
	{ "cold-lifetime", required_argument, NULL, OPT_COLD_LIFETIME },  \
	{ "hot-density", required_argument, NULL, OPT_HOT_DENSITY },      \
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },            \
	{ "help", no_argument, NULL, 'h' },                               \
	CLI_SYM_LONGOPTS

static bool parse_float(const char *s, float *out)
{
	char *end;
	float v = strtof(s, &end);

	if (end == s || *end || !(v >= 0) || v > 1e30f)
		return false;
	*out = v;
	return true;
}

/*
 * Take option C if it is common to both commands: 1 taken, 0 not ours,
 * or an exit status (usage error) as a negative number.
 */
static int common_option(struct common *co, const struct cli_command *cmd,
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
		co->ro.demangle = false;
		return 1;
	default:
		return 0;
	}
	if (!parse_float(arg, thr))
		return -cli_usage_error(cmd, "a threshold wants a number >= 0, "
					"not '%s'", arg);
	return 1;
}

static void common_init(struct common *co)
{
	static const struct cmp_thresholds t = CMP_THRESHOLDS_DEFAULT;

	memset(co, 0, sizeof(*co));
	co->ro.thresholds = t;
	co->ro.match = CMP_MATCH_COLUMN;
	co->ro.demangle = true;
	co->fmt = EMIT_TEXT;
}

/* Load one side: every context of PATH, symbolized through SYM. */
static int load_side(struct view *v, const char *path, struct sym_ctx *sym,
		     bool keep_runtime, struct emit *e)
{
	struct mp_err err = { 0 };

	if (view_add_file(v, path, NULL, &err) ||
	    (v->nraws && view_symbolize(v, sym, keep_runtime, NULL, &err))) {
		emit_error(e, path, mp_errmsg(&err));
		return cli_fail(path, &err);
	}
	return EXIT_OK;
}

/*
 * Everything after option parsing, for both commands: load, match, emit.
 * DIFF is NULL for overlap.
 */
static int compare(struct common *co, const struct cli_command *cmd,
		   int argc, char **argv, struct report_diff_opts *diff)
{
	struct sym_ctx sym = { 0 };
	struct view base, test;
	struct cmp c = { 0 };
	struct mp_err err = { 0 };
	struct emit *e = NULL;
	bool crossed = false, ok;
	int rc;

	view_init(&base);
	view_init(&test);
	if (argc - optind != 2) {
		rc = cli_usage_error(cmd, "wants two profiles, BASE and TEST");
		goto out;
	}
	co->ro.base_path = argv[optind];
	co->ro.test_path = argv[optind + 1];
	e = emit_open(co->fmt, stdout);
	if (!e) {
		rc = EXIT_ERROR;
		cli_error(NULL, "out of memory");
		goto out;
	}
	if ((rc = cli_sym_setup(&co->so, &sym)) ||
	    (rc = load_side(&base, co->ro.base_path, &sym, co->so.keep_runtime, e)) ||
	    (rc = load_side(&test, co->ro.test_path, &sym, co->so.keep_runtime, e)))
		goto out;
	rc = EXIT_ERROR;
	if (cmp_build(&c, &base, &test, co->ro.match, &err)) {
		cli_fail(NULL, &err);
		goto out;
	}
	if (diff) {
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
	view_release(&base);
	view_release(&test);
	sym_release(&sym);
	cli_sym_release(&co->so);
	return rc;
}

int cmd_overlap(int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct common co;
	int c, r;

	common_init(&co);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if ((r = common_option(&co, &cli_cmd_overlap, c, optarg)) < 0)
			goto usage;
		if (r)
			continue;
		if (c == 'h') {
			printf("usage: %s\n\nHow much two profiles agree: the "
			       "normalized overlap of AllocCount,\nTotalSize, "
			       "TotalAccessCount and TotalLifetime over matched "
			       "contexts,\nper profile and per function, and which "
			       "contexts change hot/cold class.\n\n" COMMON_HELP
			       "\nExit status: 0 ok, 1 error, 2 usage.\n",
			       cli_cmd_overlap.synopsis);
			cli_sym_release(&co.so);
			return EXIT_OK;
		}
		r = -cli_usage_error(&cli_cmd_overlap, c == ':'
			? "option '%s' needs a value" : "unknown option '%s'",
			argv[optind - 1]);
		goto usage;
	}
	return compare(&co, &cli_cmd_overlap, argc, argv, NULL);
usage:
	cli_sym_release(&co.so);
	return -r;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "by", required_argument, NULL, OPT_BY },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "fail-if", required_argument, NULL, OPT_FAIL_IF },
		{ "per-context", no_argument, NULL, OPT_PER_CONTEXT },
		{ "fail-on-flip", no_argument, NULL, OPT_FAIL_ON_FLIP },
		{ NULL, 0, NULL, 0 },
	};
	static const enum mib_field default_metrics[] = {
		MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount,
		MIB_TotalLifetime,
	};
	enum mib_field metrics[MIB__COUNT];
	struct report_diff_opts d = { 0 };
	struct diff_gate *gates = NULL;
	size_t agates = 0;
	struct common co;
	int c, r, f;

	common_init(&co);
	memcpy(metrics, default_metrics, sizeof(default_metrics));
	d.metrics = metrics;
	d.nmetrics = sizeof(default_metrics) / sizeof(default_metrics[0]);
	d.sort = MIB_TotalSize;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if ((r = common_option(&co, &cli_cmd_diff, c, optarg)) < 0)
			goto usage;
		if (r)
			continue;
		switch (c) {
		case OPT_BY:
			if (strcmp(optarg, "context") && strcmp(optarg, "function")) {
				r = cli_usage_error(&cli_cmd_diff,
					"--by wants context or function, not '%s'",
					optarg);
				goto usage;
			}
			d.by_function = !strcmp(optarg, "function");
			break;
		case OPT_METRICS: {
			const char *p = optarg;

			d.nmetrics = 0;
			while (*p) {
				const char *comma = strchr(p, ',');
				size_t len = comma ? (size_t)(comma - p) : strlen(p);
				char name[64];

				if (len >= sizeof(name))
					len = sizeof(name) - 1;
				memcpy(name, p, len);
				name[len] = '\0';
				f = cmp_metric_parse(name);
				if (f < 0 || d.nmetrics == MIB__COUNT) {
					r = cli_usage_error(&cli_cmd_diff,
						"unknown metric '%s'", name);
					goto usage;
				}
				metrics[d.nmetrics++] = (enum mib_field)f;
				p += len + (comma != NULL);
			}
			if (!d.nmetrics) {
				r = cli_usage_error(&cli_cmd_diff, "--metrics is empty");
				goto usage;
			}
			break;
		}
		case OPT_SORT:
			if ((f = cmp_metric_parse(optarg)) < 0) {
				r = cli_usage_error(&cli_cmd_diff,
					"unknown metric '%s'", optarg);
				goto usage;
			}
			d.sort = (enum mib_field)f;
			break;
		case OPT_FAIL_IF:
			if (!MP_GROW(gates, agates, d.ngates + 1)) {
				cli_error(NULL, "out of memory");
				r = EXIT_ERROR;
				goto usage;
			}
			if (!diff_gate_parse(optarg, &gates[d.ngates])) {
				r = cli_usage_error(&cli_cmd_diff,
					"--fail-if wants METRIC:+N%% or METRIC:+ABS "
					"(or -), not '%s'", optarg);
				goto usage;
			}
			d.ngates++;
			break;
		case OPT_PER_CONTEXT:
			d.per_context = true;
			break;
		case OPT_FAIL_ON_FLIP:
			d.fail_on_flip = true;
			break;
		case 'h':
			printf("usage: %s\n\nWhat changed between two profiles, "
			       "context by context (or function by\nfunction): "
			       "base and test values, absolute and relative "
			       "change, new and\nvanished contexts, hot/cold flips; "
			       "and gates for CI.\n\n" COMMON_HELP
			       "  --by=ROWS      context (default) or function\n"
			       "  --metrics=M,...  metrics to report (default "
			       "AllocCount,TotalSize,\n"
			       "                 TotalAccessCount,TotalLifetime; "
			       "aliases allocs, bytes,\n"
			       "                 accesses, lifetime)\n"
			       "  --sort=METRIC  rows by largest absolute change of "
			       "METRIC (TotalSize)\n"
			       "  --fail-if=METRIC:+N%%  exit 3 if METRIC grows by "
			       "more than N percent\n"
			       "  --fail-if=METRIC:+ABS  ... by more than ABS; '-' "
			       "for a drop (repeatable)\n"
			       "  --per-context  gates apply to every row as well\n"
			       "  --fail-on-flip exit 3 if any context changes "
			       "hot/cold class\n"
			       "\nExit status: 0 within thresholds, 1 error, 2 "
			       "usage, 3 a threshold crossed.\n",
			       cli_cmd_diff.synopsis);
			free(gates);
			cli_sym_release(&co.so);
			return EXIT_OK;
		default:
			r = cli_usage_error(&cli_cmd_diff, c == ':'
				? "option '%s' needs a value" : "unknown option '%s'",
				argv[optind - 1]);
			goto usage;
		}
	}
	d.gates = gates;
	r = compare(&co, &cli_cmd_diff, argc, argv, &d);
	free(gates);
	return r;
usage:
	free(gates);
	cli_sym_release(&co.so);
	return r < 0 ? -r : r;
}
