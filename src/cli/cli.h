/*
 * cli.h - what the subcommands of memprof-data share: the command table
 * entry, exit codes, and the only place that prints errors.
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/mp_err.h"

/* Exit codes, documented in memprof-data(1). */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,		/* bad input, I/O error, ... */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_THRESHOLD = 3,	/* diff: a --fail-if threshold was crossed */
};

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;	/* one line for "memprof-data --help" */
	const char *synopsis;	/* the SYNOPSIS line(s) of the man page */
};

extern const char *cli_progname;	/* "memprof-data" */

/* "memprof-data: 'FILE': MESSAGE" on stderr; FILE may be NULL. */
void cli_error(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_warning(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "memprof-data: note: ...": what was done that the user may want to know. */
void cli_note(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print ERR for FILE and return EXIT_ERROR. */
int cli_fail(const char *file, const struct mp_err *err);

/* "usage: SYNOPSIS" and a hint, on stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse a decimal count in [MIN, MAX]; false if not one. */
/* A size in bytes, with an optional K, M, G or T (powers of 1024). */
bool cli_parse_size(const char *s, uint64_t *out);
bool cli_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out);
/* A hot/cold threshold (--cold-density and kin): a number >= 0. */
bool cli_parse_threshold(const char *s, float *out);

struct mp_prefix_map;

/*
 * Add --prefix-map's rule ARG to M: EXIT_OK, or an exit status with the
 * error printed (a usage error of CMD for a malformed rule).
 */
int cli_prefix_map_option(const struct cli_command *cmd,
			  struct mp_prefix_map *m, const char *arg);

/* Flush stdout and report a write error (git's run_builtin check). */
int cli_finish_stdout(int rc);

/*
 * A raw input of at least 16 contexts whose stacks are none deeper than
 * 4 addresses (DEEPEST, CONTEXTS): what a runtime that follows frame
 * pointers (compiler-rt's by default, ours) gives of a program built
 * without them.  cli_note_shallow() says so, naming PATH.
 */
bool cli_shallow(uint32_t deepest, uint64_t contexts);
void cli_note_shallow(const char *path, uint32_t deepest, uint64_t contexts);

/* Say that the --binary PATH, of build id ID (N bytes), is in no raw
 * input's memory map, where some build id has no binary. */
void cli_warn_unmapped(const char *path, const uint8_t *id, uint32_t n);

/*
 * The options every symbolizing command shares: --binary (repeatable),
 * --debug-dir (repeatable), --strict and --keep-runtime.  Their
 * getopt_long entries use the codes below; cli_sym_option() takes one.
 */
enum {
	OPT_BINARY = 0x100, OPT_DEBUG_DIR, OPT_STRICT, OPT_KEEP_RUNTIME,
	OPT_ALLOC_FUNCTION, OPT_NO_DEMANGLE, OPT_MAX_INPUT_SIZE,
	OPT_KEEP_BAD_FRAMES, OPT_NO_SYMBOL_CACHE, OPT_NO_SYSTEM_LIBRARIES,
	OPT_BINARY_DIR, OPT__NEXT
};
#define CLI_SYM_LONGOPTS                                                  \
	{ "binary", required_argument, NULL, OPT_BINARY },                \
	{ "binary-dir", required_argument, NULL, OPT_BINARY_DIR },        \
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },          \
	{ "strict", no_argument, NULL, OPT_STRICT },                      \
	{ "keep-runtime", no_argument, NULL, OPT_KEEP_RUNTIME },          \
	{ "alloc-function", required_argument, NULL, OPT_ALLOC_FUNCTION }, \
	{ "max-input-size", required_argument, NULL, OPT_MAX_INPUT_SIZE }, \
	{ "keep-bad-frames", no_argument, NULL, OPT_KEEP_BAD_FRAMES },    \
	{ "no-symbol-cache", no_argument, NULL, OPT_NO_SYMBOL_CACHE },    \
	{ "no-system-libraries", no_argument, NULL, OPT_NO_SYSTEM_LIBRARIES }
#define CLI_SYM_HELP                                                      \
	"  --binary=PATH  an executable or shared library of the profiled\n" \
	"                 process, matched by build id (repeatable)\n"       \
	"  --binary-dir=DIR  the files under DIR, taken by build id for a\n" \
	"                 module no --binary is for (repeatable)\n"         \
	"  --debug-dir=DIR  a tree with .build-id/xx/rest.debug files\n"    \
	"                 (repeatable; /usr/lib/debug is always searched)\n" \
	"  --strict       a missing or mismatched binary is an error\n"      \
	"  --keep-runtime keep the allocator's own frames\n"                \
	"  --alloc-function=GLOB  frames of functions matching GLOB (linkage\n" \
	"                 or demangled name, or the name without its\n" \
	"                 parameters; fnmatch) are allocator frames too:\n" \
	"                 the program's own wrappers (repeatable)\n" \
	"  --max-input-size=SIZE  read no input (decompressed) larger than\n" \
	"                 SIZE bytes (K, M, G, T suffixes; default 1G)\n" \
	"  --keep-bad-frames  do not cut raw stacks at their first PC in no\n" \
	"                 segment (garbage past code without frame pointers)\n" \
	"  --no-symbol-cache  neither read nor write the symbol cache\n"     \
	"                 ($XDG_CACHE_HOME/memprof-data/symbols, else\n"    \
	"                 ~/.cache/memprof-data/symbols)\n"                \
	"  --no-system-libraries  do not look for a module's build id among\n" \
	"                 the libraries /etc/ld.so.cache lists\n"

#include "symbolize/sym.h"

struct cli_sym {
	const char **binaries;
	size_t nbinaries, abinaries;
	const char **debug_dirs;
	size_t ndebug_dirs, adebug_dirs;
	const char **binary_dirs;	/* --binary-dir */
	size_t nbinary_dirs, abinary_dirs;
	const char **alloc_globs;	/* --alloc-function */
	size_t nalloc_globs, aalloc_globs;
	struct sym_demangler *dm;	/* for demangled names in patterns */
	struct sym_alloc_rules alloc;	/* what cli_sym_setup() made */
	bool *alloc_matched;		/* its matched flags */
	bool strict, keep_runtime;
	bool strict_main;	/* the main segment needs its binary */
	/* The command names inputs of another program itself
	 * (sym_options.caller_names_others). */
	bool names_others;
	const char *unsymbolized_fate;	/* sym_options' */
	bool keep_bad_frames;	/* --keep-bad-frames */
	bool no_symbol_cache;	/* --no-symbol-cache */
	bool no_system_libs;	/* --no-system-libraries */
	char *cache_dir;	/* the symbol cache's directory, or NULL */
	/* The runtime's preload library beside this command, and where
	 * make install puts it (sym_options.runtime_libs). */
	char *runtime_libs[2];
	uint64_t max_input;	/* --max-input-size; 0: the default */
	const char *bad_max_input;	/* an unreadable --max-input-size */
	bool nomem;		/* an option could not be kept */
	unsigned warnings;	/* warnings printed so far */
};

struct sym_ctx;

/* Take option C with argument ARG if it is one of ours; false if not. */
bool cli_sym_option(struct cli_sym *o, int c, const char *arg);
/* After option parsing: a usage error (printed) for a bad value, or 0. */
int cli_sym_usage(const struct cli_command *cmd, const struct cli_sym *o);
/* O's view_symbolize() flags (SYM_STACK_*). */
unsigned cli_sym_stack_flags(const struct cli_sym *o);
/* Set SYM up from O: binaries and debug directories, warnings to stderr. */
int cli_sym_setup(struct cli_sym *o, struct sym_ctx *sym);
/* After a merge, which sees every frame: warn of each --alloc-function
 * pattern that matched no function (a typo hides nothing). */
void cli_sym_unmatched(const struct cli_sym *o);
void cli_sym_release(struct cli_sym *o);

int cmd_show(int argc, char **argv);
extern const struct cli_command cli_cmd_show;
int cmd_merge(int argc, char **argv);
extern const struct cli_command cli_cmd_merge;
int cmd_overlap(int argc, char **argv);
extern const struct cli_command cli_cmd_overlap;
int cmd_diff(int argc, char **argv);
extern const struct cli_command cli_cmd_diff;

#endif /* CLI_H */
