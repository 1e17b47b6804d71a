/* The helpers every subcommand shares; the only code that prints errors. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/mp_file.h"
#include "common/mp_util.h"
#include "symbolize/sym.h"

const char *cli_progname = "memprof-data";

static void vreport(const char *kind, const char *file, const char *fmt,
		    va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s", cli_progname, kind);
	if (file)
		fprintf(stderr, "'%s': ", file);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", file, fmt, ap);
	va_end(ap);
}

void cli_warning(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", file, fmt, ap);
	va_end(ap);
}

void cli_note(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("note: ", file, fmt, ap);
	va_end(ap);
}

int cli_fail(const char *file, const struct mp_err *err)
{
	cli_error(file, "%s", mp_errmsg(err));
	return EXIT_ERROR;
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", NULL, fmt, ap);
	va_end(ap);
	fprintf(stderr, "usage: %s\n", cmd->synopsis);
	fprintf(stderr, "Try '%s %s --help' for more information.\n",
		cli_progname, cmd->name);
	return EXIT_USAGE;
}

bool cli_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		return false;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	if (*end && (u = strchr(units, toupper((unsigned char)*end)))) {
		for (int i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return false;
			v *= 1024;
		}
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end || v < 1024 || v > MP_FILE_MAX_SIZE)
		return false;
	*out = v;
	return true;
}

bool cli_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	/* Digits only: strtoull would take leading blanks and a sign. */
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_threshold(const char *s, float *out)
{
	char *end;
	float v = strtof(s, &end);

	if (end == s || *end || !(v >= 0) || v > 1e30f)
		return false;
	*out = v;
	return true;
}

int cli_finish_stdout(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error(NULL, "write error on standard output: %s",
			  strerror(errno ? errno : EIO));
		return rc ? rc : EXIT_ERROR;
	}
	return rc;
}

bool cli_shallow(uint32_t deepest, uint64_t contexts)
{
	return contexts >= 16 && deepest && deepest <= 4;
}

void cli_note_shallow(const char *path, uint32_t deepest, uint64_t contexts)
{
	cli_note(path, "no stack deeper than %" PRIu32 " address%s in its "
		 "%" PRIu64 " contexts: a program built without frame pointers, "
		 "which the runtime follows? (build it with "
		 "-fno-omit-frame-pointer, or run it with "
		 "MEMPROF_OPTIONS=fast_unwind_on_malloc=0)", deepest,
		 deepest == 1 ? "" : "es", contexts);
}

void cli_warn_unmapped(const char *path, const uint8_t *id, uint32_t n)
{
	char hex[2 * RAW_BUILD_ID_MAX + 1];

	mp_hex(id, n, hex, sizeof(hex));
	cli_warning(path, "its build id %s is in no input's memory map, where "
		    "a build id no binary has is: another build of the file? "
		    "(libtool relinks a library as it installs it: give the "
		    "installed one)", hex);
}

int cli_prefix_map_option(const struct cli_command *cmd,
			  struct mp_prefix_map *m, const char *arg)
{
	bool nomem;

	if (mp_prefix_map_add(m, arg, &nomem))
		return EXIT_OK;
	if (nomem) {
		cli_error(NULL, "out of memory");
		return EXIT_ERROR;
	}
	return cli_usage_error(cmd, "--prefix-map wants OLD=NEW with OLD not "
			       "empty, not '%s'", arg);
}

/*
 * Append ARG to the list V of *N (room *A); out of memory is reported by
 * cli_sym_setup() (O->nomem), not dropped.
 */
static void keep_arg(struct cli_sym *o, const char ***v, size_t *n, size_t *a,
		     const char *arg)
{
	if (MP_GROW(*v, *a, *n + 1))
		(*v)[(*n)++] = arg;
	else
		o->nomem = true;
}

bool cli_sym_option(struct cli_sym *o, int c, const char *arg)
{
	switch (c) {
	case OPT_BINARY:
		keep_arg(o, &o->binaries, &o->nbinaries, &o->abinaries, arg);
		return true;
	case OPT_BINARY_DIR:
		keep_arg(o, &o->binary_dirs, &o->nbinary_dirs, &o->abinary_dirs,
			 arg);
		return true;
	case OPT_DEBUG_DIR:
		keep_arg(o, &o->debug_dirs, &o->ndebug_dirs, &o->adebug_dirs, arg);
		return true;
	case OPT_ALLOC_FUNCTION:
		keep_arg(o, &o->alloc_globs, &o->nalloc_globs, &o->aalloc_globs,
			 arg);
		return true;
	case OPT_STRICT:
		o->strict = true;
		return true;
	case OPT_KEEP_RUNTIME:
		o->keep_runtime = true;
		return true;
	case OPT_KEEP_BAD_FRAMES:
		o->keep_bad_frames = true;
		return true;
	case OPT_NO_SYSTEM_LIBRARIES:
		o->no_system_libs = true;
		return true;
	case OPT_NO_SYMBOL_CACHE:
		o->no_symbol_cache = true;
		return true;
	case OPT_MAX_INPUT_SIZE:
		if (!cli_parse_size(arg, &o->max_input))
			o->bad_max_input = arg;
		return true;
	default:
		return false;
	}
}

static void print_warning(void *arg, const char *msg)
{
	struct cli_sym *o = arg;

	o->warnings++;
	cli_warning(NULL, "%s", msg);
}

unsigned cli_sym_stack_flags(const struct cli_sym *o)
{
	return (o->keep_runtime ? SYM_STACK_KEEP_RUNTIME : 0) |
	       (o->keep_bad_frames ? SYM_STACK_KEEP_BAD : 0);
}

int cli_sym_usage(const struct cli_command *cmd, const struct cli_sym *o)
{
	if (!o->bad_max_input)
		return EXIT_OK;
	return cli_usage_error(cmd, "--max-input-size wants a size in bytes "
			       "(suffixes K, M, G, T) from 1K to 1T, not '%s'",
			       o->bad_max_input);
}

/*
 * The symbol cache's directory, as the XDG base directory specification
 * places caches: $XDG_CACHE_HOME, else ~/.cache (a relative
 * $XDG_CACHE_HOME is ignored, as the specification says).  NULL when
 * there is no home to put it in, or out of memory: then no cache.
 */
static char *symbol_cache_dir(void)
{
	static const char sub[] = "/memprof-data/symbols";
	const char *base = getenv("XDG_CACHE_HOME"), *dot = "";
	size_t n;
	char *s;

	if (!base || base[0] != '/') {
		base = getenv("HOME");
		dot = "/.cache";
		if (!base || base[0] != '/')
			return NULL;
	}
	n = strlen(base) + strlen(dot) + sizeof(sub);
	s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s", base, dot, sub);
	return s;
}

/*
 * Where the runtime's preload library is when this command is the one
 * built beside it (build/) or installed with it (PREFIX/bin and
 * PREFIX/lib): a preloaded run's stacks hold its PCs, which are the
 * runtime's frames only if its file is found.  Returns how many of OUT
 * it filled (their paths may not exist).
 */
static size_t runtime_libs(char *out[2])
{
	static const char *const rel[2] = {
		"/libmemprof_preload.so", "/../lib/libmemprof_preload.so",
	};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t filled = 0;
	char *slash;

	if (n <= 0)
		return 0;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return 0;
	*slash = '\0';
	for (int i = 0; i < 2; i++) {
		size_t len = strlen(exe) + strlen(rel[i]) + 1;

		if ((out[filled] = malloc(len)))
			snprintf(out[filled++], len, "%s%s", exe, rel[i]);
	}
	return filled;
}

int cli_sym_setup(struct cli_sym *o, struct sym_ctx *sym)
{
	struct sym_options opt = { 0 };
	struct mp_err err = { 0 };

	if (o->nomem) {
		cli_error(NULL, "out of memory");
		return EXIT_ERROR;
	}

	/*
	 * Without any --binary the user expects unsymbolized frames: say
	 * nothing about each module that has none (--strict still fails).
	 */
	opt.warn = o->nbinaries || o->nbinary_dirs || o->strict ? print_warning
								 : NULL;
	opt.warn_arg = o;
	opt.strict = o->strict;
	opt.strict_main = o->strict_main;
	opt.caller_names_others = o->names_others;
	opt.unsymbolized_fate = o->unsymbolized_fate;
	if (!o->no_system_libs)
		opt.libs_cache = "/etc/ld.so.cache";
	if (!o->no_symbol_cache)
		opt.cache_dir = o->cache_dir = symbol_cache_dir();
	opt.nruntime_libs = runtime_libs(o->runtime_libs);
	opt.runtime_libs = (const char *const *)o->runtime_libs;
	if (o->nalloc_globs) {
		o->dm = malloc(sizeof(*o->dm));
		if (!o->dm) {
			cli_error(NULL, "out of memory");
			return EXIT_ERROR;
		}
		sym_demangler_init(o->dm);
		o->alloc_matched = calloc(o->nalloc_globs, sizeof(bool));
		o->alloc = (struct sym_alloc_rules){ o->alloc_globs,
						     o->nalloc_globs, o->dm,
						     o->alloc_matched };
		opt.alloc = &o->alloc;
	}
	sym_init(sym, &opt);
	for (size_t i = 0; i < o->ndebug_dirs; i++)
		if (sym_add_debug_dir(sym, o->debug_dirs[i], &err))
			return cli_fail(o->debug_dirs[i], &err);
	for (size_t i = 0; i < o->nbinaries; i++)
		if (sym_add_binary(sym, o->binaries[i], &err))
			return cli_fail(o->binaries[i], &err);
	for (size_t i = 0; i < o->nbinary_dirs; i++)
		if (sym_add_binary_dir(sym, o->binary_dirs[i], &err))
			return cli_fail(o->binary_dirs[i], &err);
	return EXIT_OK;
}

void cli_sym_unmatched(const struct cli_sym *o)
{
	for (size_t i = 0; o->alloc_matched && i < o->nalloc_globs; i++)
		if (!o->alloc_matched[i])
			cli_warning(NULL, "--alloc-function='%s' matched no "
				    "function of the inputs", o->alloc_globs[i]);
}

void cli_sym_release(struct cli_sym *o)
{
	free(o->binaries);
	free(o->debug_dirs);
	free(o->binary_dirs);
	free(o->alloc_globs);
	free(o->alloc_matched);
	free(o->cache_dir);
	free(o->runtime_libs[0]);
	free(o->runtime_libs[1]);
	sym_demangler_release(o->dm);
	free(o->dm);
	memset(o, 0, sizeof(*o));
}
