/*
 * cli.h - what the subcommands of memprof-data share: the command table
 * entry, exit codes, and the only place that prints errors.
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "../common/mp_err.h"

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
/* Print ERR for FILE and return EXIT_ERROR. */
int cli_fail(const char *file, const struct mp_err *err);

/* "usage: SYNOPSIS" and a hint, on stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse a decimal count in [MIN, MAX]; false if not one. */
bool cli_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out);

/* Flush stdout and report a write error (git's run_builtin check). */
int cli_finish_stdout(int rc);

int cmd_show(int argc, char **argv);
extern const struct cli_command cli_cmd_show;

#endif /* CLI_H */
