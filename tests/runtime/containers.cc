/*
 * containers.cc - allocation through libstdc++ containers from many call
 * sites (issue 17: garbage frames after code without frame pointers).
 *
 * Three sites, each called from three callers (9 real contexts per
 * runtime, whatever the iteration): vector_site and map_site allocate in
 * header templates instantiated here, with frame pointers; string_site
 * allocates inside libstdc++.so (std::string::reserve is an explicit
 * instantiation there), which Debian builds without frame pointers, so a
 * frame-pointer unwinder reads garbage after it.  Callers end with work of
 * their own so that no site call is a tail call.
 */
#include <map>
#include <string>
#include <vector>

static volatile int sink;

__attribute__((noinline)) void vector_site(int n)
{
	std::vector<int> v;

	for (int i = 0; i < n; i++)
		v.push_back(i);
	sink += (int)v.size();
}

__attribute__((noinline)) void map_site(int n)
{
	std::map<int, int> m;

	for (int i = 0; i < n; i++)
		m[i] = i;
	sink += (int)m.size();
}

__attribute__((noinline)) void string_site(int n)
{
	std::string s;

	s.reserve(64 + (size_t)n);
	sink += (int)s.capacity();
}

#define CALLER(name)                                            \
	__attribute__((noinline)) void name(int n)              \
	{                                                       \
		vector_site(n);                                 \
		map_site(n);                                    \
		string_site(n);                                 \
		sink += n;                                      \
	}
CALLER(caller_one)
CALLER(caller_two)
CALLER(caller_three)

int main()
{
	for (int i = 0; i < 300; i++) {
		caller_one(20 + i % 7);
		caller_two(30 + i % 5);
		caller_three(40 + i % 3);
	}
	return sink == 42;
}
