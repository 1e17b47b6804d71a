// An allocation whose wrapper is inlined into its caller in the profiled
// build (-DPROFILED) and is a function of its own in the build that uses
// the profile: the caller's call of the wrapper is a call site only
// through the inline frames of the allocation's own return address.
// tests/cli/test_llvm_export.sh builds it both ways.
#include <cstddef>
#include <cstring>

#ifdef PROFILED
#define WRAPPER __attribute__((always_inline)) inline
#else
#define WRAPPER __attribute__((noinline))
#endif

static char *held[2048];

WRAPPER char *make_buffer(std::size_t size, int fill)
{
	char *p = new char[size];

	std::memset(p, fill, size);
	return p;
}

__attribute__((noinline)) char *make_record(std::size_t size)
{
	return make_buffer(size, 1);
}

int main()
{
	for (int i = 0; i < 2048; i++)
		held[i] = make_record(48 + (i % 5) * 8);
	for (int i = 0; i < 2048; i++)
		delete[] held[i];
	return 0;
}
