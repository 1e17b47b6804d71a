/*
 * shlib.c - a shared library that allocates, for shlib_main.c: all of the
 * program's allocations happen here, none in the executable (issue 17:
 * the static runtime is then never linked in, and profiles nothing).
 */
#include <stdlib.h>

void *volatile shlib_sink;

__attribute__((noinline)) void shlib_work(int n)
{
	for (int i = 0; i < n; i++) {
		shlib_sink = malloc(48);
		free(shlib_sink);
	}
}
