/*
 * cli_compare.h - what `overlap` and `diff` share on the command line:
 * options, their help text, and the run after option parsing (load both
 * profiles, match them, emit the document).  Used by cmd_overlap.c and
 * cmd_diff.c only.
 */
#ifndef CLI_COMPARE_H
#define CLI_COMPARE_H

#include <getopt.h>

#include "cli.h"
#include "emit.h"
#include "report_cmp.h"
#include "symbolize/sym.h"

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
	"  --prefix-map=OLD=NEW  match files under OLD as under NEW (builds\n" \
	"                 in other directories; repeatable, as merge's)\n"  \
	CLI_SYM_HELP                                                          \
	"  --no-demangle  show C++ names as linkage names\n"                  \
	"  -h, --help     this text\n"

/* What both commands parse. */
struct cmp_cli {
	struct cli_sym so;
	struct report_cmp_opts ro;
	bool demangle;
	struct sym_demangler dm;	/* ro.demangler, when demangle */
	enum emit_format fmt;
	bool svg;			/* diff --format=svg */
	const char *output;		/* diff -o */
	enum mib_field value;		/* diff --value: the graph's widths */
	struct mp_prefix_map paths;	/* --prefix-map, for the matching */
};

enum {
	OPT_FORMAT = OPT__NEXT, OPT_MATCH, OPT_FUNCTION, OPT_TOP,
	OPT_COLD_DENSITY, OPT_COLD_LIFETIME, OPT_HOT_DENSITY,
	OPT_BY, OPT_METRICS, OPT_SORT, OPT_FAIL_IF, OPT_PER_CONTEXT,
	OPT_FAIL_ON_FLIP, OPT_VALUE, OPT_PREFIX_MAP,
};

#define COMMON_LONGOPTS                                                   \
	{ "format", required_argument, NULL, OPT_FORMAT },                \
	{ "match", required_argument, NULL, OPT_MATCH },                  \
	{ "function", required_argument, NULL, OPT_FUNCTION },            \
	{ "top", required_argument, NULL, OPT_TOP },                      \
	{ "cold-density", required_argument, NULL, OPT_COLD_DENSITY },    \
	{ "cold-lifetime", required_argument, NULL, OPT_COLD_LIFETIME },  \
	{ "hot-density", required_argument, NULL, OPT_HOT_DENSITY },      \
	{ "prefix-map", required_argument, NULL, OPT_PREFIX_MAP },        \
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },            \
	{ "help", no_argument, NULL, 'h' },                               \
	CLI_SYM_LONGOPTS

void cmp_cli_init(struct cmp_cli *co);

/*
 * Take option C if it is common to both commands: 1 taken, 0 not ours,
 * or an exit status (usage error, printed) as a negative number.
 */
int cmp_cli_option(struct cmp_cli *co, const struct cli_command *cmd, int c,
		   const char *optarg);

/*
 * Everything after option parsing: load BASE and TEST (argv[optind] and
 * the next), match, emit.  DIFF is NULL for overlap.  Returns the exit
 * status.
 */
int cmp_cli_run(struct cmp_cli *co, const struct cli_command *cmd,
		int argc, char **argv, struct report_diff_opts *diff);

#endif /* CLI_COMPARE_H */
