/*
 * memprof-data overlap: how much two profiles agree, metric by metric.
 *
 * Loads BASE and TEST (raw with their binaries, or indexed), matches their
 * contexts (profile/compare.h) and prints the overlap document
 * (report_cmp.h).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_compare.h"
#include "profile/compare.h"

const struct cli_command cli_cmd_overlap = {
	.name = "overlap",
	.run = cmd_overlap,
	.summary = "how much two profiles agree, metric by metric",
	.synopsis = "memprof-data overlap [--format=text|yaml|json] "
		    "[--match=column|line|function] [--function=NAME] [--top=N] "
		    "[--cold-density=X] [--cold-lifetime=S] [--hot-density=X] "
		    "[--prefix-map=OLD=NEW]... "
		    "[--binary=PATH]... [--binary-dir=DIR]... [--debug-dir=DIR]... [--strict] "
		    "[--keep-runtime] [--alloc-function=GLOB]... [--max-input-size=SIZE] [--keep-bad-frames] [--no-symbol-cache] [--no-system-libraries] [--no-demangle] BASE TEST",
};

int cmd_overlap(int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cmp_cli co;
	int c, r;

	cmp_cli_init(&co);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if ((r = cmp_cli_option(&co, &cli_cmd_overlap, c, optarg)) < 0)
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
	return cmp_cli_run(&co, &cli_cmd_overlap, argc, argv, NULL);
usage:
	cli_sym_release(&co.so);
	return -r;
}
