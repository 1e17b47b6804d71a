/*
 * fname.c - a program that names its profile the way clang
 * -fmemory-profile=DIR does, through __memprof_profile_filename.  Run
 * without MEMPROF_OPTIONS it writes fname-test.profraw.<pid> in the current
 * directory; with log_path set, the option wins.
 */
#include <stdlib.h>

const char __memprof_profile_filename[] = "fname-test.profraw";
void *volatile sink;

int main(void)
{
	sink = malloc(10);
	free(sink);
	return 0;
}
