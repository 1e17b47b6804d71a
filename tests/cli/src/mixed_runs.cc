// mixed_runs.cc - one allocation context whose type changes from run to
// run (tests/cli/test_llvm_export.sh): `cold` holds 1000 objects for 2 s
// untouched, `hot` writes 10 objects over and over, `brief` frees 10
// untouched objects at once.  llvm-profdata-19 keeps a record per run,
// so clang sees the context as both cold and not cold when runs differ,
// and hints it not cold; folded into one record, the runs' sums would
// make it cold or hot.
#include <cstring>
#include <unistd.h>

__attribute__((noinline)) char *make(unsigned n)
{
	char *p = new char[n];

	asm volatile("" ::: "memory");	// a frame of its own, no tail call
	return p;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "brief";
	bool cold = strcmp(mode, "cold") == 0, hot = strcmp(mode, "hot") == 0;
	unsigned n = cold ? 1000 : 10;
	static char *keep[1000];

	for (unsigned i = 0; i < n; i++)
		keep[i] = make(64);
	if (cold)
		sleep(2);
	for (unsigned k = 0; hot && k < 1000; k++)
		for (unsigned i = 0; i < n; i++)
			memset(keep[i], (int)k, 64);
	for (unsigned i = 0; i < n; i++)
		delete[] keep[i];
	return 0;
}
