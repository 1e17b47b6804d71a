/*
 * memprof-data show: print raw or indexed profiles as text, YAML or JSON.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "report.h"
#include "profile/view.h"

const struct cli_command cli_cmd_show = {
	.name = "show",
	.run = cmd_show,
	.summary = "print raw or indexed profiles (text, YAML, JSON)",
	.synopsis = "memprof-data show [--format=text|yaml|json] [--top=N] "
		    "[--max-frames=N] "
		    "[--sort=allocs|bytes|accesses|lifetime] [--binary=PATH]... "
		    "[--binary-dir=DIR]... [--debug-dir=DIR]... [--strict] [--keep-runtime] "
		    "[--alloc-function=GLOB]... [--max-input-size=SIZE] [--keep-bad-frames] [--no-symbol-cache] [--no-system-libraries] "
		    "[--no-demangle] [--function=NAME] [--stats] [--frame-table] "
		    "FILE...",
};

static void help(void)
{
	printf("usage: %s\n"
	       "\n"
	       "Print a summary of each profile, its memory map and its "
	       "allocation contexts.\n"
	       "\n"
	       "  --format=FMT   text (default), yaml or json\n"
	       "  --top=N        only the N largest contexts (default: all)\n"
	       "  --max-frames=N  of a deeper context, only the N/2 innermost "
	       "and N/2\n"
	       "                 outermost frames, and how many were left out\n"
	       "  --sort=KEY     order contexts by allocs (AllocCount, the "
	       "default),\n"
	       "                 bytes (TotalSize), accesses "
	       "(TotalAccessCount) or\n"
	       "                 lifetime (TotalLifetime)\n"
	       CLI_SYM_HELP
	       "  --no-demangle  show C++ names as linkage names\n"
	       "  --function=NAME  of an indexed profile, only the contexts of "
	       "function NAME:\n"
	       "                 its linkage name, found through the hash "
	       "table, or its\n"
	       "                 demangled name, with or without parameters; "
	       "the closest\n"
	       "                 names are suggested when none matches (of "
	       "an LLVM\n"
	       "                 file, demangled names need --binary)\n"
	       "  --stats        table sizes of indexed profiles\n"
	       "  --frame-table  each distinct frame once, in frame_table, and "
	       "each context's\n"
	       "                 frames as indices into it (deep stacks: "
	       "far less output)\n"
	       "  -h, --help     this text\n"
	       "\n"
	       "FILE may be a raw profile (versions 1 to 5, plain or zstd), an "
	       "indexed\nprofile written by 'memprof-data merge', or '-' for "
	       "standard input.\nWith --binary, raw stacks are symbolized.  "
	       "Exit status: 0 ok, 1 error, 2 usage.\n",
	       cli_cmd_show.synopsis);
}

/* The first raw input whose stacks stop a few addresses deep, named;
 * the others counted (as merge does). */
static void note_shallow(const struct view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->ninputs; i++) {
		const struct view_input *in = &v->inputs[i];

		if (strcmp(in->kind, "raw") ||
		    !cli_shallow(in->deepest, in->ncontexts) || n++)
			continue;
		cli_note_shallow(in->path, in->deepest, in->ncontexts);
	}
	if (n > 1)
		cli_note(NULL, "%zu more input%s of stacks as shallow", n - 1,
			 n == 2 ? "" : "s");
}

/* The binaries given that no raw input maps, while a map had a build id
 * no binary has: other builds of them? */
static void unmapped_binaries(const struct view *v, const struct sym_ctx *sym)
{
	struct sym_module_info mi;

	if (!sym_binary_missing(sym))
		return;
	for (int32_t k = 0; sym_module_info(sym, k, &mi); k++)
		if (!mi.from_debug_dir && mi.build_id_size &&
		    !view_maps_build_id(v, mi.build_id, mi.build_id_size))
			cli_warn_unmapped(mi.path, mi.build_id, mi.build_id_size);
}

int cmd_show(int argc, char **argv)
{
	enum { OPT_FORMAT = OPT__NEXT, OPT_TOP, OPT_SORT, OPT_FUNCTION,
	       OPT_STATS, OPT_MAX_FRAMES, OPT_FRAME_TABLE };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
		{ "frame-table", no_argument, NULL, OPT_FRAME_TABLE },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "function", required_argument, NULL, OPT_FUNCTION },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "help", no_argument, NULL, 'h' },
		CLI_SYM_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct report_show_opts opts = { .sort = REPORT_SORT_ALLOCS };
	struct sym_demangler dm;
	bool demangle = true;
	enum emit_format fmt = EMIT_TEXT;
	struct cli_sym so = { 0 };
	struct sym_ctx sym = { 0 };
	struct sym_stack_stats sstats = { 0 };
	const char *function = NULL;
	struct mp_err err = { 0 };
	struct emit *e = NULL;
	struct view v;
	unsigned long long n;
	int c, rc = EXIT_ERROR;

	optind = 1;
	opterr = 0;
	view_init(&v);
	sym_demangler_init(&dm);
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (cli_sym_option(&so, c, optarg))
			continue;
		switch (c) {
		case OPT_FORMAT:
			if (!emit_format_parse(optarg, &fmt)) {
				rc = cli_usage_error(&cli_cmd_show,
					"unknown format '%s'", optarg);
				goto out;
			}
			break;
		case OPT_TOP:
			if (!cli_parse_uint(optarg, 0, SIZE_MAX, &n)) {
				rc = cli_usage_error(&cli_cmd_show,
					"--top wants a number, not '%s'", optarg);
				goto out;
			}
			opts.top = (size_t)n;
			break;
		case OPT_FRAME_TABLE:
			opts.frame_table = true;
			break;
		case OPT_MAX_FRAMES:
			if (!cli_parse_uint(optarg, 0, SIZE_MAX, &n)) {
				rc = cli_usage_error(&cli_cmd_show,
					"--max-frames wants a number, not '%s'",
					optarg);
				goto out;
			}
			opts.max_frames = (size_t)n;
			break;
		case OPT_SORT:
			if (!report_sort_parse(optarg, &opts.sort)) {
				rc = cli_usage_error(&cli_cmd_show,
					"unknown sort key '%s'", optarg);
				goto out;
			}
			break;
		case OPT_NO_DEMANGLE:
			demangle = false;
			break;
		case OPT_FUNCTION:
			function = optarg;
			break;
		case OPT_STATS:
			opts.stats = true;
			break;
		case 'h':
			help();
			rc = EXIT_OK;
			goto out;
		case ':':
			rc = cli_usage_error(&cli_cmd_show,
				"option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			rc = cli_usage_error(&cli_cmd_show,
				"unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		rc = cli_usage_error(&cli_cmd_show, "no input file");
		goto out;
	}
	if ((rc = cli_sym_usage(&cli_cmd_show, &so)))
		goto out;
	v.read.max_size = so.max_input;
	/* Only the contexts printed are kept of an indexed input. */
	view_keep_top(&v, report_sort_field(opts.sort), opts.top);

	e = emit_open(fmt, stdout);
	if (!e) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	/* Raw stacks always go through the symbolizer, as in merge: with
	 * no binary it still maps each PC to its module's build id.  Set up
	 * first: --function finds an LLVM file's function by the demangled
	 * names of the binaries' functions. */
	if ((rc = cli_sym_setup(&so, &sym)) != EXIT_OK)
		goto out;
	rc = EXIT_ERROR;
	if (function && so.nbinaries)
		view_set_function_names(&v, &sym);
	/* Before the files: --function takes the contexts whose first
	 * frame shown, past those the rules hide, is the function's. */
	view_set_frame_rules(&v, &so.alloc, so.keep_runtime);
	for (int i = optind; i < argc; i++) {
		if (view_add_file(&v, argv[i], function, &err)) {
			rc = cli_fail(argv[i], &err);
			emit_error(e, argv[i], mp_errmsg(&err));
			goto out;
		}
	}
	note_shallow(&v);
	if (v.nraws || v.nllvm) {
		if (view_symbolize(&v, &sym, cli_sym_stack_flags(&so), &sstats,
				   &err)) {
			rc = cli_fail(NULL, &err);
			emit_error(e, NULL, mp_errmsg(&err));
			goto out;
		}
		if (v.nraws) {
			opts.sym = &sym;
			opts.sym_stats = &sstats;
		}
	}
	unmapped_binaries(&v, &sym);
	opts.demangler = demangle ? &dm : NULL;
	if (report_show(e, &v, &opts, &err)) {
		/* The input whose stacks could not be expanded, by name. */
		const char *path = err.code == MP_E_TOO_LARGE && v.ninputs == 1
				   ? v.inputs[0].path : NULL;

		rc = cli_fail(path, &err);
		emit_error(e, path, mp_errmsg(&err));
		goto out;
	}
	/* As merge does: a misspelt pattern hides nothing, without a word
	 * otherwise.  Every function is looked at, printed or not. */
	if (so.nalloc_globs && view_match_functions(&v, &so.alloc))
		cli_sym_unmatched(&so);
	rc = EXIT_OK;
out:
	/* A write error is reported once, by cli_finish_stdout(). */
	if (e && !emit_close(e) && rc == EXIT_OK)
		rc = EXIT_ERROR;
	sym_demangler_release(&dm);
	view_release(&v);
	sym_release(&sym);
	cli_sym_release(&so);
	return rc;
}
