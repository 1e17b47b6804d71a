/* The helpers every subcommand shares; the only code that prints errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

bool cli_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
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
