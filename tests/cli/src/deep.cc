// A C++ program whose allocation stack carries long template names (the
// innermost demangles to about 1500 bytes): tests/cli/test_show_cxx.sh.
#include <cstdlib>
template <typename A, typename B> struct Pair {};
template <int N, typename T> struct Deep {
	__attribute__((noinline)) static void *go(int k)
	{
		void *p = Deep<N - 1, Pair<T, T>>::go(k);
		asm volatile("" ::: "memory");
		return p;
	}
};
template <typename T> struct Deep<0, T> {
	__attribute__((noinline)) static void *go(int k) { return malloc(16 + k); }
};
int main()
{
	for (int i = 0; i < 5; i++)
		free(Deep<7, int>::go(i));
	return 0;
}
