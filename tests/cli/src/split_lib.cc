// The second unit of tests/cli/src/split_main.cc.
#include <vector>

template <typename T> static inline T *fresh(int n)
{
	T *v = new T();
	for (int i = 0; i < n; i++)
		v->push_back(i);
	return v;
}

__attribute__((noinline)) std::vector<int> *grow(int n)
{
	return fresh<std::vector<int>>(n % 40 + 1);
}
