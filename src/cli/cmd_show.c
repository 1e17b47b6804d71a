/*
 * memprof-data show: print raw or indexed profiles as text, YAML or JSON.
 */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "emit.h"
#include "report.h"
#include "view.h"

const struct cli_command cli_cmd_show = {
	.name = "show",
	.run = cmd_show,
	.summary = "print raw or indexed profiles (text, YAML, JSON)",
	.synopsis = "memprof-data show [--format=text|yaml|json] [--top=N] "
		    "[--sort=allocs|bytes|accesses|lifetime] FILE...",
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
	       "  --sort=KEY     order contexts by allocs (AllocCount, the "
	       "default),\n"
	       "                 bytes (TotalSize), accesses "
	       "(TotalAccessCount) or\n"
	       "                 lifetime (TotalLifetime)\n"
	       "  -h, --help     this text\n"
	       "\n"
	       "FILE may be a raw profile (versions 1 to 5, plain or zstd) or "
	       "'-' for\nstandard input.  Exit status: 0 ok, 1 error, 2 usage.\n",
	       cli_cmd_show.synopsis);
}

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 't' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_show_opts opts = { SORT_ALLOCS, 0, true };
	enum emit_format fmt = EMIT_TEXT;
	struct mp_err err = { 0 };
	struct emit *e = NULL;
	struct view v;
	unsigned long long n;
	int c, rc = EXIT_ERROR;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!emit_format_parse(optarg, &fmt))
				return cli_usage_error(&cli_cmd_show,
					"unknown format '%s'", optarg);
			break;
		case 't':
			if (!cli_parse_uint(optarg, 0, SIZE_MAX, &n))
				return cli_usage_error(&cli_cmd_show,
					"--top wants a number, not '%s'", optarg);
			opts.top = (size_t)n;
			break;
		case 's':
			if (!report_sort_parse(optarg, &opts.sort))
				return cli_usage_error(&cli_cmd_show,
					"unknown sort key '%s'", optarg);
			break;
		case 'h':
			help();
			return EXIT_OK;
		case ':':
			return cli_usage_error(&cli_cmd_show,
				"option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(&cli_cmd_show,
				"unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(&cli_cmd_show, "no input file");

	view_init(&v);
	for (int i = optind; i < argc; i++) {
		if (view_add_file(&v, argv[i], &err)) {
			rc = cli_fail(argv[i], &err);
			goto out;
		}
	}
	e = emit_open(fmt, stdout);
	if (!e || !report_show(e, &v, &opts)) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	rc = EXIT_OK;
out:
	/* A write error is reported once, by cli_finish_stdout(). */
	if (e && !emit_close(e) && rc == EXIT_OK)
		rc = EXIT_ERROR;
	view_release(&v);
	return rc;
}
