/*
 * memprof-data diff: what changed between two profiles, with CI gates.
 *
 * Loads and matches BASE and TEST as overlap does, prints the changes per
 * context or function, and exits 3 when a --fail-if gate is crossed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_compare.h"
#include "profile/compare.h"

/* "N%" (N a number from 0 to 100) into *OUT; false if malformed. */
static bool parse_share(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || strcmp(end, "%") != 0 || errno || !(v >= 0 && v <= 100))
		return false;
	*out = v;
	return true;
}

const struct cli_command cli_cmd_diff = {
	.name = "diff",
	.run = cmd_diff,
	.summary = "what changed between two profiles; gate CI on it",
	.synopsis = "memprof-data diff [--format=text|yaml|json|svg] "
		    "[-o OUT] [--value=bytes|allocs|accesses|lifetime] "
		    "[--match=column|line|function] [--by=context|function] "
		    "[--metrics=M,...] [--sort=METRIC] [--top=N] "
		    "[--function=NAME] [--fail-if=METRIC:+N%|+ABS]... "
		    "[--per-context] [--fail-on-flip[=N%]] [--cold-density=X] "
		    "[--cold-lifetime=S] [--hot-density=X] [--prefix-map=OLD=NEW]... [--binary=PATH]... "
		    "[--binary-dir=DIR]... [--debug-dir=DIR]... [--strict] [--keep-runtime] "
		    "[--alloc-function=GLOB]... [--max-input-size=SIZE] [--keep-bad-frames] [--no-symbol-cache] [--no-system-libraries] "
		    "[--no-demangle] BASE TEST",
};

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "by", required_argument, NULL, OPT_BY },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "fail-if", required_argument, NULL, OPT_FAIL_IF },
		{ "per-context", no_argument, NULL, OPT_PER_CONTEXT },
		{ "fail-on-flip", optional_argument, NULL, OPT_FAIL_ON_FLIP },
		{ "output", required_argument, NULL, 'o' },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ NULL, 0, NULL, 0 },
	};
	static const enum mib_field default_metrics[] = {
		MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount,
		MIB_TotalLifetime,
	};
	enum mib_field metrics[MIB__COUNT];
	struct report_diff_opts d = { 0 };
	struct cmp_gate *gates = NULL;
	size_t agates = 0;
	struct cmp_cli co;
	int c, r, f;

	cmp_cli_init(&co);
	memcpy(metrics, default_metrics, sizeof(default_metrics));
	d.metrics = metrics;
	d.nmetrics = sizeof(default_metrics) / sizeof(default_metrics[0]);
	d.sort = MIB_TotalSize;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		/* svg is diff's alone: a picture, not a document. */
		co.svg = c == OPT_FORMAT ? !strcmp(optarg, "svg") : co.svg;
		if (c == OPT_FORMAT && co.svg)
			continue;
		if ((r = cmp_cli_option(&co, &cli_cmd_diff, c, optarg)) < 0)
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
			if (!cmp_gate_parse(optarg, &gates[d.ngates])) {
				const char *colon = strrchr(optarg, ':');
				int len = colon ? (int)(colon - optarg) : -1;

				if (colon && len > 0 && len < 64 &&
				    !cmp_metric_known(optarg, (size_t)len))
					r = cli_usage_error(&cli_cmd_diff,
						"--fail-if: unknown metric '%.*s' (a MIB "
						"field name, or allocs, bytes, accesses, "
						"lifetime)", len, optarg);
				else
					r = cli_usage_error(&cli_cmd_diff,
						"--fail-if wants METRIC:+N%% or "
						"METRIC:+ABS (or -), not '%s'", optarg);
				goto usage;
			}
			d.ngates++;
			break;
		case OPT_PER_CONTEXT:
			d.per_context = true;
			break;
		case 'o':
			co.output = optarg;
			break;
		case OPT_VALUE:
			if ((f = cmp_metric_parse(optarg)) < 0) {
				r = cli_usage_error(&cli_cmd_diff, "--value wants "
					"bytes, allocs, accesses, lifetime or a MIB "
					"field, not '%s'", optarg);
				goto usage;
			}
			co.value = (enum mib_field)f;
			break;
		case OPT_FAIL_ON_FLIP:
			d.fail_on_flip = true;
			if (optarg && !parse_share(optarg, &d.flip_share)) {
				r = cli_usage_error(&cli_cmd_diff, "--fail-on-flip "
					"wants a share of the bytes such as 1%%, "
					"not '%s'", optarg);
				goto usage;
			}
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
			       "  --fail-on-flip=N%%  ... only if the contexts that "
			       "changed hold N%% of\n"
			       "                 a side's bytes or more\n"
			       "  --format=svg   a differential flame graph instead: "
			       "widths from TEST,\n"
			       "                 red where the value grew, blue where "
			       "it shrank\n"
			       "  -o, --output=OUT  svg: the file to write (default: "
			       "standard output)\n"
			       "  --value=V      svg: bytes (default), allocs, "
			       "accesses or lifetime\n"
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
	if (co.output && !co.svg) {
		r = cli_usage_error(&cli_cmd_diff, "-o is for --format=svg; the "
				    "report goes to standard output");
		goto usage;
	}
	d.gates = gates;
	r = cmp_cli_run(&co, &cli_cmd_diff, argc, argv, &d);
	free(gates);
	return r;
usage:
	free(gates);
	cli_sym_release(&co.so);
	return r < 0 ? -r : r;
}
