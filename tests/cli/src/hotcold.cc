// hotcold.cc - tests/cli/test_llvm_export.sh: allocation sites whose
// contexts the compiler classifies cold (held past a sleep, with
// -mllvm -memprof-ave-lifetime-cold-threshold=1), notcold, and mixed (one
// site reached from a cold and a notcold caller), some through inlined
// frames, one in a shared library (hotcold_lib.cc).
#include <unistd.h>

char *lib_alloc(unsigned n);

char *volatile sink;

// Inlined into its callers: its frames are inline frames.
static inline __attribute__((always_inline)) char *make(unsigned n)
{
	char *p = new char[n];
	p[0] = 2;
	return p;
}

// Short-lived: freed at once, touched once.
__attribute__((noinline)) void churn()
{
	for (int i = 0; i < 1000; i++) {
		char *p = make(64);
		sink = p;
		delete[] p;
	}
}

// The mixed site: one allocation call, two callers.
__attribute__((noinline)) char *shared_site(unsigned n)
{
	char *p = new char[n];
	p[0] = 1;
	return p;
}

__attribute__((noinline)) char *keep_long() { return shared_site(1 << 20); }
__attribute__((noinline)) void drop_fast()
{
	for (int i = 0; i < 100; i++) {
		char *p = shared_site(128);
		sink = p;
		delete[] p;
	}
}

int main()
{
	// Large, touched once, held past the sleep: cold.  Each escapes
	// through SINK, so that the compiler cannot elide new and delete.
	char *held = make(1 << 20);
	char *held2 = keep_long();		// cold side of the mixed site
	char *held3 = lib_alloc(1 << 20);	// in the library
	sink = held;
	sink = held2;
	sink = held3;
	churn();
	drop_fast();				// notcold side of the mixed site
	sleep(2);
	delete[] held;
	delete[] held2;
	delete[] held3;
	return 0;
}
