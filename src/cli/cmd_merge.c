/*
 * memprof-data merge: fold raw and indexed profiles into one indexed
 * profile (memprof-data-format(5)).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/mp_file.h"
#include "export/export.h"
#include "merge/merge.h"
#include "profile/compare.h"
#include "profile/view.h"
#include "symbolize/sym.h"

const struct cli_command cli_cmd_merge = {
	.name = "merge",
	.run = cmd_merge,
	.summary = "fold raw and indexed profiles into one indexed profile",
	.synopsis = "memprof-data merge -o OUT [--binary=PATH]... "
		    "[--binary-dir=DIR]... [--debug-dir=DIR]... [--weight=W,FILE]... "
		    "[--input-files=LIST]... [-j N] "
		    "[--failure-mode=any|all|warn] [--strict] "
		    "[--keep-runtime] [--alloc-function=GLOB]... "
		    "[--max-input-size=SIZE] [--keep-bad-frames] [--no-symbol-cache] [--no-system-libraries] [--no-progress] "
		    "[--format=memprof|llvm|pprof|folded|svg] [--llvm-header=8|12] "
		    "[--llvm-memprof-version=3|0] [--llvm-full-schema] "
		    "[--keep-types] [--cold-density=X] [--cold-lifetime=S] "
		    "[--hot-density=X] [--value=bytes|allocs|accesses|lifetime] "
		    "[--no-demangle] [--prefix-map=OLD=NEW]... "
		    "INPUT...",
};

static void help(void)
{
	printf("usage: %s\n"
	       "\n"
	       "Symbolize every context of the inputs, fold contexts with equal "
	       "call stacks\ninto one (MIBs merged field by field), and write "
	       "an indexed profile.\n"
	       "\n"
	       "  -o, --output=OUT  the indexed profile to write (\".zst\": "
	       "compressed);\n"
	       "                 written to a temporary file and renamed into "
	       "place\n"
	       CLI_SYM_HELP
	       "  --weight=W,FILE  merge FILE with counts multiplied by W "
	       "(repeatable)\n"
	       "  --input-files=LIST  read more inputs from LIST, one per line,\n"
	       "                 FILE or W,FILE; blank lines and #comments "
	       "ignored\n"
	       "  -j, --jobs=N   read and fold inputs with N threads (default: "
	       "the number\n                 of CPUs)\n"
	       "  --failure-mode=MODE  any (default): a bad input fails the "
	       "merge;\n"
	       "                 all: fail only if every input is bad; warn: "
	       "never fail\n"
	       "                 on bad inputs\n"
	       "  --no-progress  no progress line on a terminal\n"
	       "  --format=FMT   memprof (default): our indexed profile; llvm: "
	       "LLVM's indexed\n"
	       "                 profile with MemProf, for clang "
	       "-fmemory-profile-use;\n"
	       "                 pprof: gzip'ed profile.proto for pprof; "
	       "folded: folded\n"
	       "                 stacks for flame graph tools; svg: a flame "
	       "graph\n"
	       "  --value=V      folded, svg: bytes (default), allocs, accesses "
	       "or lifetime\n"
	       "  --no-demangle  pprof, folded, svg: C++ names as linkage names\n"
	       "  --prefix-map=OLD=NEW  frames' file paths under OLD as under "
	       "NEW, so that\n"
	       "                 builds in other directories fold (as "
	       "-ffile-prefix-map;\n"
	       "                 repeatable, the last that applies wins)\n"
	       "  --llvm-header=V  LLVM header version 8 (default, the RFC's) "
	       "or 12\n"
	       "                 (llvm-profdata-19's)\n"
	       "  --llvm-memprof-version=V  MemProf section version 3 (default; "
	       "clang 19 and\n"
	       "                 later) or 0 (the RFC's; clang 19 only)\n"
	       "  --llvm-full-schema  every MIB field, not only the hot/cold "
	       "ones\n"
	       "  --cold-density=X, --cold-lifetime=S, --hot-density=X  llvm: "
	       "the hot and\n"
	       "                 cold thresholds clang will use (defaults 0.05, "
	       "200, 1000,\n"
	       "                 as its own): records of one context with "
	       "different types\n"
	       "                 under them stay apart, as llvm-profdata keeps "
	       "them\n"
	       "  --keep-types   memprof: keep them apart in our format too, "
	       "for a later\n"
	       "                 --format=llvm of this file (a fleet's shards)\n"
	       "  -h, --help     this text\n"
	       "\n"
	       "INPUT is a raw profile (versions 1 to 5, plain or zstd) or an "
	       "indexed profile.\nExit status: 0 ok, 1 error, 2 usage.\n",
	       cli_cmd_merge.synopsis);
}

struct inputs {
	struct merge_input *v;
	size_t n, alloc;
	char **lines;		/* owned strings from --input-files */
	size_t nlines, alines;
};

static bool add_input(struct inputs *in, const char *path, uint64_t weight)
{
	if (!MP_GROW(in->v, in->alloc, in->n + 1))
		return false;
	in->v[in->n++] = (struct merge_input){ path, weight };
	return true;
}

/*
 * Parse "W,FILE" into IN (W a whole number >= 1); false if malformed.
 * FILE points into S.
 */
static bool parse_weighted(const char *s, struct merge_input *in)
{
	const char *comma = strchr(s, ',');
	char num[32];
	unsigned long long w;
	size_t len;

	if (!comma || comma == s || !comma[1])
		return false;
	len = (size_t)(comma - s);
	if (len >= sizeof(num))
		return false;
	memcpy(num, s, len);
	num[len] = '\0';
	if (!cli_parse_uint(num, 1, UINT64_MAX, &w))
		return false;
	in->weight = w;
	in->path = comma + 1;
	return true;
}

/* Read LIST: "FILE" or "W,FILE" per line. */
static int read_list(struct inputs *in, const char *list)
{
	FILE *fp = strcmp(list, "-") ? fopen(list, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int rc = EXIT_OK;

	if (!fp) {
		cli_error(list, "cannot open: %s", strerror(errno));
		return EXIT_ERROR;
	}
	errno = 0;
	while ((len = getline(&line, &cap, fp)) >= 0) {
		struct merge_input mi;
		char *s = line;

		lineno++;
		if (memchr(line, '\0', (size_t)len)) {
			cli_error(list, "line %u: NUL byte in a file name",
				  lineno);
			rc = EXIT_ERROR;
			break;
		}
		while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' ||
				   s[len - 1] == ' ' || s[len - 1] == '\t'))
			s[--len] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (!MP_GROW(in->lines, in->alines, in->nlines + 1) ||
		    !(s = strdup(s))) {
			cli_error(list, "out of memory");
			rc = EXIT_ERROR;
			break;
		}
		in->lines[in->nlines++] = s;
		mi = (struct merge_input){ s, 1 };
		/* "W,FILE" when what precedes the first comma is a number. */
		if (strchr(s, ',') && s[0] >= '0' && s[0] <= '9' &&
		    !parse_weighted(s, &mi)) {
			cli_error(list, "line %u: bad weight in '%s'", lineno, s);
			rc = EXIT_USAGE;
			break;
		}
		if (!add_input(in, mi.path, mi.weight)) {
			cli_error(list, "out of memory");
			rc = EXIT_ERROR;
			break;
		}
		errno = 0;
	}
	/* getline() says -1 at the end and on an error alike. */
	if (rc == EXIT_OK && (ferror(fp) || errno == ENOMEM)) {
		cli_error(list, "cannot read: %s",
			  strerror(errno ? errno : EIO));
		rc = EXIT_ERROR;
	}
	free(line);
	if (fp != stdin)
		fclose(fp);
	return rc;
}

/*
 * The merge's report: a bad input's message, and on a terminal a progress
 * line at most ten times a second once the merge has run half a second.
 */
struct progress {
	bool show;
	double start, shown;
	size_t unclassed;	/* inputs with merge_result's unclassed */
	size_t unresolved;	/* inputs with merge_result's unresolved */
	uint64_t unresolved_more;	/* their frames, but the first's */
	size_t others;		/* inputs with merge_result's other_program */
	size_t others_skipped;	/* inputs skipped: a binary does not match */
	size_t shallow;		/* raw inputs of stacks a few addresses deep */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_line(struct progress *p, size_t done, size_t n,
			  size_t contexts, bool last)
{
	double t = now();

	if (!p->show || t - p->start < 0.5 || (!last && t - p->shown < 0.1))
		return;
	p->shown = t;
	fprintf(stderr, "\r%s merge: %zu/%zu inputs, %zu contexts%s",
		cli_progname, done, n, contexts, last ? "\n" : "");
}

static void report(void *arg, const struct merge_result *r)
{
	struct progress *p = arg;
	bool last = r->fatal || r->index + 1 == r->ninputs;

	if (r->rc != MP_OK && p->shown > 0)
		fputc('\n', stderr);	/* off the progress line */
	if (r->rc != MP_OK && r->fatal)
		cli_error(r->path, "%s", mp_errmsg(r->err));
	else if (r->rc == MP_E_BUILD_ID && p->others_skipped++)
		;	/* a fleet's other programs: the first named, the
			 * others counted at the end */
	else if (r->rc != MP_OK)
		cli_warning(r->path, "%s; input skipped", mp_errmsg(r->err));
	/* The first named, the others counted (unresolved_note()). */
	if (r->rc == MP_OK && r->unresolved && p->unresolved++)
		p->unresolved_more += r->unresolved;
	else if (r->rc == MP_OK && r->unresolved) {
		char bid[2 * RAW_BUILD_ID_MAX + 1];

		if (p->shown > 0)
			fputc('\n', stderr);
		mp_hex(r->unresolved_bid, r->unresolved_bid_size, bid, sizeof(bid));
		cli_note(r->path, "%" PRIu64 " unsymbolized frame%s (build id%s "
			 "%s%s) with no binary here: stacks through them match "
			 "only unsymbolized ones; --binary with %s build id "
			 "symbolizes those it has symbols for", r->unresolved,
			 r->unresolved == 1 ? "" : "s",
			 r->unresolved_more_bids ? "s" : "", bid,
			 r->unresolved_more_bids ? " and others" : "",
			 r->unresolved_more_bids ? "each" : "that");
	}
	/* A fleet's other programs: the first named, the others counted. */
	if (r->rc == MP_OK && r->other_program && !p->others++) {
		char bid[2 * RAW_BUILD_ID_MAX + 1];

		if (p->shown > 0)
			fputc('\n', stderr);
		mp_hex(r->other_bid, r->other_bid_size, bid, sizeof(bid));
		cli_warning(r->path, "a profile of another program than the "
			    "first --binary's (build id %s, which no binary "
			    "here has): its own frames stay unsymbolized", bid);
	}
	/* Named once, as the next: a fleet repeats it. */
	if (r->rc == MP_OK && cli_shallow(r->deepest, r->records) &&
	    !p->shallow++) {
		if (p->shown > 0)
			fputc('\n', stderr);
		cli_note_shallow(r->path, r->deepest, r->records);
	}
	/* Named once: a fleet's shards would repeat it a thousand times. */
	if (r->rc == MP_OK && r->unclassed && !p->unclassed++) {
		if (p->shown > 0)
			fputc('\n', stderr);
		cli_note(r->path, "merged from several runs without --keep-types: "
			 "a context's records of different allocation classes "
			 "were folded, and it takes the class of their sums "
			 "(merge the runs, or shards merged with --keep-types)");
	}
	progress_line(p, r->index + 1, r->ninputs, r->contexts, last);
}

/* After the merge: the inputs with unresolved frames report() did not
 * name, counted. */
static void unresolved_note(const struct progress *p)
{
	if (p->unresolved < 2)
		return;
	cli_note(NULL, "%zu more input%s with %" PRIu64 " unsymbolized "
		 "frame%s in all that no binary here symbolizes",
		 p->unresolved - 1, p->unresolved == 2 ? "" : "s",
		 p->unresolved_more, p->unresolved_more == 1 ? "" : "s");
}

static void inputs_release(struct inputs *in)
{
	for (size_t i = 0; i < in->nlines; i++)
		free(in->lines[i]);
	free(in->lines);
	free(in->v);
}

/* The formats merge writes besides its own. */
enum out_format { OUT_MEMPROF, OUT_LLVM, OUT_PPROF, OUT_FOLDED, OUT_SVG };

struct export_opts {
	enum out_format format;
	struct exp_llvm_opts llvm;
	enum mib_field value;	/* folded, svg: the value of a context */
	bool demangle;
};

/*
 * Say which contexts the LLVM export left out: those without a frame it
 * keeps (debug information's function and file, in a binary given, not
 * the runtime's), which llvm-profdata drops too.  With none left the
 * file would be of no use to the compiler, and, as llvm-profdata, the
 * merge fails: a stripped binary is the usual cause.
 */
static int llvm_kept(const struct exp_llvm *x, const struct view *v)
{
	uint64_t dropped = x->dropped_contexts;

	if (x->nctxs == 0 && v->ncontexts > 0) {
		cli_error(NULL, "none of the %zu context%s has a frame LLVM's "
			  "format can hold (a function of a --binary with "
			  "debug information: file and line); is the binary "
			  "stripped? Give the one with DWARF, or --debug-dir "
			  "with its debug file", v->ncontexts,
			  v->ncontexts == 1 ? "" : "s");
		return EXIT_ERROR;
	}
	if (dropped)
		cli_note(NULL, "%" PRIu64 " of %zu context%s left out of the LLVM "
			 "profile: no frame with debug information in a "
			 "--binary outside the runtime (llvm-profdata leaves "
			 "them out too)", dropped, v->ncontexts,
			 v->ncontexts == 1 ? "" : "s");
	return EXIT_OK;
}

/*
 * merge --format=llvm|pprof|folded|svg: the merged profile, in our format in
 * memory (with every allocator-library frame and start line, which the
 * LLVM export needs), exported through a temporary file.
 */
static int write_export(struct merge *m, const struct export_opts *xo,
			const char *out, size_t ninputs)
{
	static const struct mib_thresholds t = MIB_THRESHOLDS_DEFAULT;
	struct exp_flame_opts fo = {
		.value = xo->value, .thresholds = t, .width = 1200,
	};
	struct exp_flame *fl = NULL;
	char subtitle[128];
	struct mp_outfile of = { 0 };
	struct mp_err err = { 0 };
	struct sym_demangler dm;
	struct mp_buf buf;
	struct exp_llvm x;
	struct view v;
	int rc = EXIT_ERROR;

	view_init(&v);
	exp_llvm_init(&x);
	sym_demangler_init(&dm);
	snprintf(subtitle, sizeof(subtitle), "memprof-data merge of %zu input%s: "
		 "hover over a frame, click to zoom, Ctrl-F to search", ninputs,
		 ninputs == 1 ? "" : "s");
	fo.dm = xo->demangle ? &dm : NULL;
	fo.subtitle = subtitle;
	if (xo->format == OUT_SVG && !(fl = exp_flame_new(&fo))) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	if (merge_bytes(m, &buf, &err) ||
	    view_add_buf(&v, out, &buf, NULL, &err) ||
	    (xo->format == OUT_LLVM && exp_llvm_add_view(&x, &v, NULL, &err)) ||
	    (fl && exp_flame_add_view(fl, &v, EXP_FLAME_TEST, &err))) {
		cli_fail(NULL, &err);
		goto out;
	}
	if (xo->format == OUT_LLVM && (rc = llvm_kept(&x, &v)) != EXIT_OK)
		goto out;
	if (mp_outfile_open(&of, out, &err)) {
		rc = cli_fail(out, &err);
		goto out;
	}
	switch (xo->format) {
	case OUT_LLVM:
		rc = exp_llvm_write(&x, &xo->llvm, of.fp, &err);
		break;
	case OUT_PPROF:
		rc = exp_pprof_write(&v, xo->demangle ? &dm : NULL,
				     m->modules, m->nmodules, m->program,
				     of.fp, &err);
		break;
	case OUT_SVG:
		rc = exp_flame_write_svg(fl, &fo, of.fp, &err);
		break;
	default:
		rc = exp_folded_write(&v, xo->value, xo->demangle ? &dm : NULL,
				      of.fp, &err);
		break;
	}
	if (rc || mp_outfile_commit(&of, &err)) {
		rc = cli_fail(err.code == MP_E_IO || err.code == MP_E_NOMEM
			      ? out : NULL, &err);
		goto out;
	}
	rc = EXIT_OK;
out:
	mp_outfile_abort(&of);
	exp_flame_free(fl);
	sym_demangler_release(&dm);
	exp_llvm_release(&x);
	view_release(&v);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	enum { OPT_WEIGHT = OPT__NEXT, OPT_INPUT_FILES, OPT_FAILURE_MODE,
	       OPT_NO_PROGRESS, OPT_FORMAT, OPT_LLVM_HEADER, OPT_COLD_DENSITY,
	       OPT_COLD_LIFETIME, OPT_HOT_DENSITY, OPT_KEEP_TYPES,
	       OPT_LLVM_FULL_SCHEMA, OPT_LLVM_MEMPROF_VERSION, OPT_VALUE,
	       OPT_PREFIX_MAP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "input-files", required_argument, NULL, OPT_INPUT_FILES },
		{ "jobs", required_argument, NULL, 'j' },
		{ "failure-mode", required_argument, NULL, OPT_FAILURE_MODE },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "llvm-header", required_argument, NULL, OPT_LLVM_HEADER },
		{ "llvm-full-schema", no_argument, NULL, OPT_LLVM_FULL_SCHEMA },
		{ "llvm-memprof-version", required_argument, NULL,
		  OPT_LLVM_MEMPROF_VERSION },
		{ "keep-types", no_argument, NULL, OPT_KEEP_TYPES },
		{ "cold-density", required_argument, NULL, OPT_COLD_DENSITY },
		{ "cold-lifetime", required_argument, NULL, OPT_COLD_LIFETIME },
		{ "hot-density", required_argument, NULL, OPT_HOT_DENSITY },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "prefix-map", required_argument, NULL, OPT_PREFIX_MAP },
		{ "help", no_argument, NULL, 'h' },
		CLI_SYM_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct merge_opts opts = { .failure_mode = MERGE_FAIL_ANY,
				   .report = report };
	struct progress prog = { .show = true };
	struct mp_err err = { 0 };
	struct inputs in = { 0 };
	struct cli_sym so = { 0 };
	struct sym_ctx sym = { 0 };
	struct merge m = { 0 };
	struct export_opts xo = {
		.format = OUT_MEMPROF, .value = MIB_TotalSize, .demangle = true,
		.llvm = { .header_version = 8, .memprof_version = 3 },
	};
	struct mib_thresholds types = MIB_THRESHOLDS_DEFAULT;
	struct mp_prefix_map paths = { 0 };
	bool types_given = false, keep_types = false;
	const char *out = NULL;
	unsigned long long n;
	int c, rc = EXIT_USAGE;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	optind = 1;
	opterr = 0;
	opts.jobs = cpus > 0 ? (unsigned)cpus : 1;
	while ((c = getopt_long(argc, argv, ":ho:j:", longopts, NULL)) != -1) {
		struct merge_input mi;

		if (cli_sym_option(&so, c, optarg))
			continue;
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_WEIGHT:
			if (!parse_weighted(optarg, &mi)) {
				cli_usage_error(&cli_cmd_merge,
					"--weight wants W,FILE with W >= 1, not '%s'",
					optarg);
				goto out;
			}
			if (!add_input(&in, mi.path, mi.weight))
				goto nomem;
			break;
		case OPT_PREFIX_MAP:
			if ((rc = cli_prefix_map_option(&cli_cmd_merge, &paths,
							optarg)) != EXIT_OK)
				goto out;
			rc = EXIT_USAGE;
			break;
		case OPT_INPUT_FILES:
			if ((rc = read_list(&in, optarg)) != EXIT_OK)
				goto out;
			rc = EXIT_USAGE;
			break;
		case 'j':
			if (!cli_parse_uint(optarg, 1, 256, &n)) {
				cli_usage_error(&cli_cmd_merge,
					"-j wants a number from 1 to 256, not '%s'",
					optarg);
				goto out;
			}
			opts.jobs = (unsigned)n;
			break;
		case OPT_FAILURE_MODE:
			if (!strcmp(optarg, "any"))
				opts.failure_mode = MERGE_FAIL_ANY;
			else if (!strcmp(optarg, "all"))
				opts.failure_mode = MERGE_FAIL_ALL;
			else if (!strcmp(optarg, "warn"))
				opts.failure_mode = MERGE_FAIL_WARN;
			else {
				cli_usage_error(&cli_cmd_merge,
					"unknown failure mode '%s'", optarg);
				goto out;
			}
			break;
		case OPT_NO_PROGRESS:
			prog.show = false;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "memprof"))
				xo.format = OUT_MEMPROF;
			else if (!strcmp(optarg, "llvm"))
				xo.format = OUT_LLVM;
			else if (!strcmp(optarg, "pprof"))
				xo.format = OUT_PPROF;
			else if (!strcmp(optarg, "folded"))
				xo.format = OUT_FOLDED;
			else if (!strcmp(optarg, "svg"))
				xo.format = OUT_SVG;
			else {
				cli_usage_error(&cli_cmd_merge, "unknown format "
					"'%s' (memprof, llvm, pprof, folded or svg)",
					optarg);
				goto out;
			}
			break;
		case OPT_VALUE: {
			int f = cmp_metric_parse(optarg);

			if (f < 0) {
				cli_usage_error(&cli_cmd_merge, "--value wants bytes, "
					"allocs, accesses, lifetime or a MIB field, "
					"not '%s'", optarg);
				goto out;
			}
			xo.value = (enum mib_field)f;
			break;
		}
		case OPT_NO_DEMANGLE:
			xo.demangle = false;
			break;
		case OPT_LLVM_HEADER:
			if (strcmp(optarg, "8") && strcmp(optarg, "12")) {
				cli_usage_error(&cli_cmd_merge,
					"--llvm-header wants 8 or 12, not '%s'",
					optarg);
				goto out;
			}
			xo.llvm.header_version = (unsigned)atoi(optarg);
			break;
		case OPT_LLVM_FULL_SCHEMA:
			xo.llvm.full_schema = true;
			break;
		case OPT_COLD_DENSITY:
		case OPT_COLD_LIFETIME:
		case OPT_HOT_DENSITY:
			if (!cli_parse_threshold(optarg,
					c == OPT_COLD_DENSITY ? &types.cold_density :
					c == OPT_COLD_LIFETIME ? &types.cold_lifetime :
					&types.hot_density)) {
				cli_usage_error(&cli_cmd_merge, "a threshold wants "
					"a number >= 0, not '%s'", optarg);
				goto out;
			}
			types_given = true;
			break;
		case OPT_KEEP_TYPES:
			keep_types = true;
			break;
		case OPT_LLVM_MEMPROF_VERSION:
			if (strcmp(optarg, "0") && strcmp(optarg, "3")) {
				cli_usage_error(&cli_cmd_merge,
					"--llvm-memprof-version wants 0 or 3, not '%s'",
					optarg);
				goto out;
			}
			xo.llvm.memprof_version = (unsigned)atoi(optarg);
			break;
		case 'h':
			help();
			rc = EXIT_OK;
			goto out;
		case ':':
			cli_usage_error(&cli_cmd_merge, "option '%s' needs a value",
					argv[optind - 1]);
			goto out;
		default:
			cli_usage_error(&cli_cmd_merge, "unknown option '%s'",
					argv[optind - 1]);
			goto out;
		}
	}
	for (int i = optind; i < argc; i++)
		if (!add_input(&in, argv[i], 1))
			goto nomem;
	if (!out) {
		cli_usage_error(&cli_cmd_merge, "no output file (-o OUT)");
		goto out;
	}
	if (in.n == 0) {
		cli_usage_error(&cli_cmd_merge, "no input file");
		goto out;
	}
	/* As zstd: binary bytes are not sent to a terminal. */
	if (!strcmp(out, "-") && xo.format != OUT_FOLDED && xo.format != OUT_SVG &&
	    isatty(STDOUT_FILENO)) {
		cli_usage_error(&cli_cmd_merge, "-o -: standard output is a "
				"terminal, and the profile is binary");
		goto out;
	}
	if (keep_types && xo.format != OUT_MEMPROF && xo.format != OUT_LLVM) {
		cli_usage_error(&cli_cmd_merge, "--keep-types is for our indexed "
				"format (and implied by --format=llvm)");
		goto out;
	}
	keep_types = keep_types || xo.format == OUT_LLVM;
	if (types_given && !keep_types) {
		cli_usage_error(&cli_cmd_merge, "--cold-density, --cold-lifetime "
				"and --hot-density are for --format=llvm or "
				"--keep-types");
		goto out;
	}
	if (cli_sym_usage(&cli_cmd_merge, &so))
		goto out;
	/* A missing or read-only directory is known now, not after the
	 * merge of every input. */
	if (mp_outfile_check(out, &err)) {
		cli_fail(out, &err);
		rc = EXIT_ERROR;
		goto out;
	}
	opts.keep_runtime = so.keep_runtime;
	/*
	 * llvm-profdata keeps the frames past a PC in no segment (an
	 * unwinder's garbage past code without frame pointers), dropping
	 * only the PCs it cannot symbolize: where some of them are the
	 * program's, clang gives their calls call sites, so an export that
	 * cut the stack there gave other IR (cppcheck, libstdc++'s frames).
	 * And it looks such a PC up in the program's binary as it is, often
	 * finding a function there (merge_opts.bad_in_main).  So do
	 * --keep-types merges, made for a later export.
	 */
	opts.keep_bad_frames = so.keep_bad_frames || keep_types;
	opts.bad_in_main = keep_types;
	opts.read.max_size = so.max_input;
	prog.show = prog.show && isatty(STDERR_FILENO);
	prog.start = now();
	opts.report_arg = &prog;

	/* As llvm-profdata: an LLVM export needs the program's binary. */
	so.strict_main = xo.format == OUT_LLVM;
	if (xo.format == OUT_LLVM)
		so.unsymbolized_fate = "its frames are left out of the LLVM "
				       "profile, as llvm-profdata leaves them";
	so.names_others = true;	/* report() does, with the input's name */
	if ((rc = cli_sym_setup(&so, &sym)) != EXIT_OK)
		goto out;
	opts.alloc = &so.alloc;
	opts.prefix_map = &paths;
	opts.need_start_lines = xo.format == OUT_LLVM;
	/* Records of one context stay apart by the type clang will see. */
	opts.llvm_types = keep_types ? &types : NULL;
	/* Every format is made from the indexed bytes (the exports read
	 * them back through a view). */
	opts.indexed_output = true;
	merge_init(&m, &opts, &sym);
	rc = EXIT_ERROR;
	xo.llvm.jobs = opts.jobs;
	if (merge_run(&m, in.v, in.n, &err)) {
		/* An input that stopped the merge has had its message. */
		if (!m.failed_input)
			cli_fail(NULL, &err);
		goto out;
	}
	unresolved_note(&prog);
	cli_sym_unmatched(&so);
	for (size_t k = 0; k < m.nunmapped; k++)
		cli_warn_unmapped(m.unmapped[k].path, m.unmapped[k].build_id,
				  m.unmapped[k].build_id_size);
	if (prog.others_skipped > 1)
		cli_warning(NULL, "%zu more input%s skipped for a binary that "
			    "does not match, as the first (profiles of other "
			    "programs or builds)", prog.others_skipped - 1,
			    prog.others_skipped == 2 ? "" : "s");
	if (prog.others > 1)
		cli_warning(NULL, "%zu more input%s of other programs, their "
			    "own frames unsymbolized", prog.others - 1,
			    prog.others == 2 ? "" : "s");
	if (prog.unclassed > 1)
		cli_note(NULL, "%zu more input%s merged from several runs without "
			 "--keep-types", prog.unclassed - 1,
			 prog.unclassed == 2 ? "" : "s");
	if (prog.shallow > 1)
		cli_note(NULL, "%zu more input%s of stacks as shallow",
			 prog.shallow - 1, prog.shallow == 2 ? "" : "s");
	if (m.cut)
		cli_note(NULL, "%" PRIu64 " raw stack%s cut at a PC in no segment "
			 "(garbage past code without frame pointers; "
			 "--keep-bad-frames keeps them)", m.cut,
			 m.cut == 1 ? "" : "s");
	if (m.unmapped_code)
		cli_note(NULL, "%" PRIu64 " raw stack%s through code unmapped "
			 "before the profile was written (a library closed with "
			 "dlclose?), kept: its frames as addresses, its callers "
			 "symbolized", m.unmapped_code,
			 m.unmapped_code == 1 ? "" : "s");
	if (m.kept_bad)
		cli_note(NULL, "%" PRIu64 " raw stack%s with a PC in no segment "
			 "past the leaf (garbage past code without frame "
			 "pointers), kept whole%s", m.kept_bad,
			 m.kept_bad == 1 ? "" : "s", so.keep_bad_frames ? "" :
			 ", as llvm-profdata keeps them (--format=llvm, "
			 "--keep-types)");
	if (m.stale)
		cli_note(NULL, "%" PRIu64 " return address%s in the profiling "
			 "runtime's code left out of stacks past their first "
			 "frame, counted once per distinct stack (show counts "
			 "them per profile; its interceptors' frames, or stale "
			 "ones met past code without frame pointers; "
			 "llvm-profdata leaves them out too; --keep-runtime keeps "
			 "them)", m.stale, m.stale == 1 ? "" : "es");
	if (m.resymbolized)
		cli_note(NULL, "%" PRIu64 " unsymbolized frame%s of indexed inputs "
			 "symbolized with the binaries given (they merge with "
			 "the same frames of raw inputs)", m.resymbolized,
			 m.resymbolized == 1 ? "" : "s");
	/* A helper's check of glslang: exported at the defaults and
	 * compiled under a 1 s cold lifetime, 6 hint lines differed from
	 * llvm-profdata's file (the same with --cold-lifetime=1). */
	if (xo.format == OUT_LLVM && !types_given && m.good > 1)
		cli_note(NULL, "records of one context from several inputs are "
			 "folded by the type clang gives them at its default "
			 "thresholds; if clang is given others (-mllvm "
			 "-memprof-ave-lifetime-cold-threshold and the like), "
			 "give them here too (--cold-lifetime, --cold-density, "
			 "--hot-density)");
	if (xo.format != OUT_MEMPROF)
		rc = write_export(&m, &xo, out, in.n);
	else if (merge_write(&m, out, &err))
		cli_fail(out, &err);
	else
		rc = EXIT_OK;
	/* Known once the records are written. */
	if (rc == EXIT_OK && m.saturated)
		cli_warning(NULL, "%zu context%s reached 2^64 - 1 in a field and "
			    "stopped there (weights too large?): those sums are "
			    "not exact", m.saturated, m.saturated == 1 ? "" : "s");
	goto out;
nomem:
	cli_error(NULL, "out of memory");
	rc = EXIT_ERROR;
out:
	merge_release(&m);
	sym_release(&sym);
	cli_sym_release(&so);
	inputs_release(&in);
	mp_prefix_map_release(&paths);
	return rc;
}
