// cxx.cc - every replaceable operator new/delete against libmemprof: the
// result's alignment, nothrow NULLs, std::bad_alloc, the new-handler loop,
// and the contexts the profile gets (checked by run.sh with
// memprof-data show: new_site 11 x 20 bytes, array_site 4 x 200, ...).
// Prints "ok - ..." / "not ok - ..." lines; exits 1 on a failure.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

static int failures;

static void check(bool ok, const char *what)
{
	std::printf("%s - c++: %s\n", ok ? "ok" : "not ok", what);
	if (!ok)
		failures++;
}

static bool aligned(const void *p, std::size_t a)
{
	return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0;
}

struct Obj {
	char b[20];
};

struct alignas(128) Wide {
	char b[300];
};

volatile int n11 = 11, n4 = 4;
void *volatile sink;

__attribute__((noinline)) void new_site()
{
	for (int i = 0; i < n11; i++) {
		Obj *o = new Obj();
		sink = o;
		delete o;	// sized delete
	}
}

__attribute__((noinline)) void array_site()
{
	for (int i = 0; i < n4; i++) {
		int *a = new int[50];
		sink = a;
		delete[] a;
	}
}

__attribute__((noinline)) void aligned_site()
{
	Wide *w = new Wide();
	check(aligned(w, 128), "new of an alignas(128) type is 128-aligned");
	delete w;
	Wide *v = new Wide[3];
	check(aligned(v, 128), "new[] of an alignas(128) type is 128-aligned");
	delete[] v;
}

__attribute__((noinline)) void vector_site()
{
	std::vector<int> v;
	for (int i = 0; i < 1000; i++)
		v.push_back(i);
	sink = v.data();
}

static int handler_calls;

static void handler()
{
	// Gives up on the second call: the next failure throws.
	if (++handler_calls == 2)
		std::set_new_handler(nullptr);
}

int main()
{
	const std::size_t huge = SIZE_MAX / 4;

	new_site();
	array_site();
	aligned_site();
	vector_site();

	// Every variant, called directly.
	void *p = ::operator new(10);
	check(p && aligned(p, 16), "operator new(size_t)");
	::operator delete(p);
	p = ::operator new[](10);
	check(p && aligned(p, 16), "operator new[](size_t)");
	::operator delete[](p);
	p = ::operator new(10, std::nothrow);
	check(p != nullptr, "operator new(size_t, nothrow_t)");
	::operator delete(p, std::nothrow);
	p = ::operator new[](10, std::nothrow);
	check(p != nullptr, "operator new[](size_t, nothrow_t)");
	::operator delete[](p, std::nothrow);
	p = ::operator new(10, std::align_val_t(256));
	check(p && aligned(p, 256), "operator new(size_t, align_val_t(256))");
	::operator delete(p, std::align_val_t(256));
	p = ::operator new[](10, std::align_val_t(4096));
	check(p && aligned(p, 4096), "operator new[](size_t, align_val_t(4096))");
	::operator delete[](p, std::align_val_t(4096));
	p = ::operator new(10, std::align_val_t(64), std::nothrow);
	check(p && aligned(p, 64), "operator new(size_t, align_val_t, nothrow_t)");
	::operator delete(p, std::align_val_t(64), std::nothrow);
	p = ::operator new[](10, std::align_val_t(64), std::nothrow);
	check(p && aligned(p, 64), "operator new[](size_t, align_val_t, nothrow_t)");
	::operator delete[](p, std::align_val_t(64), std::nothrow);
	p = ::operator new(24);
	::operator delete(p, std::size_t(24));
	p = ::operator new[](24);
	::operator delete[](p, std::size_t(24));
	p = ::operator new(24, std::align_val_t(64));
	::operator delete(p, std::size_t(24), std::align_val_t(64));
	p = ::operator new[](24, std::align_val_t(64));
	::operator delete[](p, std::size_t(24), std::align_val_t(64));
	check(true, "sized and sized-aligned deletes");
	::operator delete(nullptr);
	::operator delete[](nullptr);
	check(true, "delete of nullptr");

	// Failure.
	check(::operator new(huge, std::nothrow) == nullptr,
	      "nothrow new of SIZE_MAX/4 returns nullptr");
	check(::operator new[](huge, std::nothrow) == nullptr,
	      "nothrow new[] of SIZE_MAX/4 returns nullptr");
	check(::operator new(huge, std::align_val_t(64), std::nothrow) == nullptr,
	      "aligned nothrow new of SIZE_MAX/4 returns nullptr");
	bool threw = false;
	try {
		sink = ::operator new(huge);
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	check(threw, "new of SIZE_MAX/4 throws std::bad_alloc");
	threw = false;
	try {
		sink = ::operator new[](huge, std::align_val_t(64));
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	check(threw, "aligned new[] of SIZE_MAX/4 throws std::bad_alloc");
	std::set_new_handler(handler);
	threw = false;
	try {
		sink = ::operator new(huge);
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	check(threw && handler_calls == 2,
	      "new calls the new-handler until it is removed, then throws");
	return failures ? 1 : 0;
}
