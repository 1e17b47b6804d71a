// gcc_names.cc - what GCC's DWARF leaves out, for tests/cli/test_gcc_names.sh.
//
// Members of classes in an anonymous namespace have internal linkage:
// GCC gives them no DW_AT_linkage_name, only "Insert", which A's and B's
// share, and "Put" inlined.  Local classes' members and lambdas' bodies
// are defined inside the enclosing function's DIE (clang puts them at the
// unit's top).
#include <cstdlib>

void *volatile sink;

namespace {
struct A {
	__attribute__((noinline)) void Insert(size_t n) { sink = malloc(n); asm volatile(""); }
};
struct B {	// a body of its own: GCC's -fipa-icf would fold equal ones
	__attribute__((noinline)) void Insert(size_t n) { sink = malloc(n * 2); asm volatile(""); }
};
struct C {
	static inline __attribute__((always_inline)) void Put(size_t n) { sink = malloc(n); asm volatile(""); }
};
} // namespace

__attribute__((noinline)) void use_c(size_t n)
{
	C::Put(n);
	asm volatile("");
}

// A constructor template instantiated on a type of internal linkage: its
// name, "K<(anonymous namespace)::C>", has "::" in its template arguments.
namespace ns {
struct K {
	template <class T> inline __attribute__((always_inline)) K(T)
	{
		sink = malloc(400);
		asm volatile("");
	}
};
} // namespace ns

__attribute__((noinline)) void use_k()
{
	ns::K k{C()};
	asm volatile("");
}

static inline __attribute__((always_inline)) void grab(size_t n)
{
	sink = malloc(n); // SITE:grab
	asm volatile("");
}

__attribute__((noinline)) void run(void (*f)(int), int n)
{
	f(n);
	asm volatile("");
}

__attribute__((noinline)) void outer(int n)
{
	struct Local {
		static __attribute__((noinline)) void Work(int k) { grab(k * 3); asm volatile(""); }
	};
	auto lam = [](int k) { grab(k * 5); asm volatile(""); };
	run(Local::Work, n);
	run(lam, n);
	asm volatile("");
}

int main()
{
	A a;
	B b;
	for (int i = 0; i < 10; i++) {
		a.Insert(100); free(sink);
		b.Insert(100); free(sink);
		outer(16); free(sink);
		use_c(300); free(sink);
		use_k(); free(sink);
	}
	return 0;
}
