// foreign_leaf.cc - allocations made inside code the profile is not used
// for (tests/cli/test_llvm_export.sh): the C library's fopen(), whose
// frames libc6-dbg's debug file names, and lib_make() of a library the
// test finds for memprof-data only by build id in a --debug-dir.
// llvm-profdata-19 keeps the profiled binary's frames alone, so neither
// gives open_log() or main a call site; an export that kept the other
// modules' frames would put a !callsite on their calls.
#include <cstdio>
#include <unistd.h>

int *lib_make(unsigned n);

static FILE *files[100];

__attribute__((noinline)) FILE *open_log(const char *path)
{
	FILE *f = fopen(path, "r");

	asm volatile("" ::: "memory");	// no tail call: open_log keeps its frame
	return f;
}

__attribute__((noinline)) int *make(unsigned n)
{
	int *p = new int[n];

	asm volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 100; i++)
		files[i] = open_log(argv[0]);
	int *p = make(100), *q = lib_make(100);
	for (int i = 0; i < 100; i++)
		p[i] = q[i] = i;
	sleep(2);	// long-lived, rarely touched: cold
	for (int i = 0; i < 100; i++)
		fclose(files[i]);
	delete[] p;
	delete[] q;
	return argc > 5;
}
