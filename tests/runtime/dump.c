/*
 * dump.c - the memprof.h API.  Run with MEMPROF_OPTIONS=log_path=DIR/env
 * and one argument, DIR:
 *
 *	memprof_output_path() is DIR/env.<pid> (the option), then, after
 *	memprof_set_output(DIR/api), DIR/api.<pid>;
 *	discarded_site (3 x 48) is dropped by memprof_discard();
 *	profile 1 (memprof_dump): before_site 10 x 32, kept_site 1 x 1000;
 *	profile 2 (at exit):      after_site 5 x 64, kept_site 1 x 1000 again;
 *	__memprof_profile_dump() twice with __memprof_profile_reset() between
 *	leaves one profile in DIR/scratch.<pid>.
 *
 * Prints "ok - ..." lines for what it can check itself; run.sh reads
 * DIR/api.<pid> for the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprof/memprof.h"

#define NOINLINE __attribute__((noinline))

void *volatile sink;
void *kept;
volatile int n3 = 3, n5 = 5, n10 = 10;
static int failures;

static void check(int ok, const char *what)
{
	printf("%s - api: %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

static NOINLINE void discarded_site(void)
{
	for (int i = 0; i < n3; i++) {
		sink = malloc(48);
		free(sink);
	}
}

static NOINLINE void before_site(void)
{
	for (int i = 0; i < n10; i++) {
		sink = malloc(32);
		free(sink);
	}
}

static NOINLINE void kept_site(void)
{
	kept = malloc(1000);
}

static NOINLINE void after_site(void)
{
	for (int i = 0; i < n5; i++) {
		sink = malloc(64);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	char want[4096], got[4096], small[4];
	size_t n;

	if (argc != 2)
		return 2;
	snprintf(want, sizeof(want), "%s/env.%d", argv[1], (int)getpid());
	n = memprof_output_path(got, sizeof(got));
	check(n == strlen(want) && strcmp(got, want) == 0,
	      "output path follows MEMPROF_OPTIONS=log_path");
	n = memprof_output_path(small, sizeof(small));
	check(n == strlen(want) && small[0] == '\0',
	      "output path reports the length needed when the buffer is short");

	/* compiler-rt's names: two dumps with a reset between leave one
	 * profile in DIR/scratch.<pid> (run.sh counts them). */
	snprintf(got, sizeof(got), "%s/scratch", argv[1]);
	memprof_set_output(got);
	check(__memprof_profile_dump() == 0, "__memprof_profile_dump returns 0");
	__memprof_profile_reset();
	check(__memprof_profile_dump() == 0, "__memprof_profile_dump after reset");

	snprintf(want, sizeof(want), "%s/api", argv[1]);
	check(memprof_set_output(want) == 0, "memprof_set_output");
	snprintf(want, sizeof(want), "%s/api.%d", argv[1], (int)getpid());
	memprof_output_path(got, sizeof(got));
	check(strcmp(got, want) == 0, "memprof_set_output overrides log_path");
	{
		static char longp[5000];

		memset(longp, 'x', sizeof(longp) - 1);
		errno = 0;
		check(memprof_set_output(longp) == -1 && errno == ENAMETOOLONG,
		      "memprof_set_output rejects an over-long prefix");
	}

	discarded_site();
	memprof_discard();
	before_site();
	kept_site();
	check(memprof_dump() == 0, "memprof_dump returns 0");
	check(access(want, R_OK) == 0, "memprof_dump wrote the file");
	after_site();
	return failures ? 1 : 0;	/* profile 2 is appended at exit */
}
