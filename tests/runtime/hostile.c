/*
 * hostile.c - what issue 16 asks of the runtime, one case per argument:
 *
 *   symlink VICTIM   plant LOG.PID.tmp (the name a predictable temporary
 *                    would have) as a symbolic link to VICTIM, allocate,
 *                    exit: VICTIM must be left alone, the profile written.
 *   interior         free() a pointer 16 bytes into a block: must abort
 *                    with a message.
 *   forged           free() a pointer into a block whose bytes in front
 *                    of it were made to look like a live header (state
 *                    byte, size class 0, offset 0): must abort too.
 *   plain            allocate and exit (for MEMPROF_OPTIONS cases).
 *
 * log_path comes from MEMPROF_OPTIONS, as the test runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprof/memprof.h"

static void *volatile keep;

static __attribute__((noinline)) void some_allocations(void)
{
	for (int i = 0; i < 10; i++) {
		keep = malloc(48);
		free(keep);
	}
	keep = malloc(100);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "plain";

	some_allocations();
	if (!strcmp(what, "symlink") && argc > 2) {
		char path[4096];
		size_t n = memprof_output_path(path, sizeof(path));

		if (n == 0 || n + 8 >= sizeof(path))
			return 2;
		strcat(path, ".tmp");
		if (symlink(argv[2], path) != 0) {
			perror(path);
			return 2;
		}
		return 0;
	}
	if (!strcmp(what, "interior")) {
		char *p = malloc(64);

		free(p + 16);
		return 0;	/* not reached */
	}
	if (!strcmp(what, "forged")) {
		unsigned char *p = malloc(200);

		/* A fake 32-byte header at p + 16: link 0, class 0, LIVE. */
		memset(p, 0, 200);
		p[16 + 28] = 0;		/* cls */
		p[16 + 29] = 0xa5;	/* state: LIVE */
		free(p + 48);
		return 0;	/* not reached */
	}
	return 0;
}
