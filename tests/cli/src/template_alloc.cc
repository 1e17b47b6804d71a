// An allocation wrapper that is a function template: its demangled names
// start with the return type ("int* my_alloc<int>(unsigned long)"), which
// --function and --alloc-function look past.  And a function returning
// std::string, whose name has an ABI tag:
// "tagged_alloc[abi:cxx11](unsigned long)".
#include <cstdlib>
#include <string>

void *volatile sink;

__attribute__((noinline)) std::string tagged_alloc(size_t n)
{
	sink = malloc(n);
	return std::string(1, 'x');	/* short: no allocation of its own */
}

template <typename T> __attribute__((noinline)) T *my_alloc(size_t n)
{
	T *p = static_cast<T *>(malloc(n * sizeof(T)));

	p[0] = T(1);
	return p;
}

__attribute__((noinline)) int *user_a(int n)
{
	int *p = my_alloc<int>(n);

	p[1] = 2;
	return p;
}

__attribute__((noinline)) double *user_b(int n)
{
	double *p = my_alloc<double>(n);

	p[1] = 2;
	return p;
}

int main()
{
	long s = 0;

	for (int i = 0; i < 100; i++) {
		int *a = user_a(10 + i);
		double *b = user_b(5);

		s += a[0] + (long)b[0];
		free(a);
		free(b);
		s += (long)tagged_alloc(24).size();
		free(sink);
	}
	return (int)(s & 1);
}
