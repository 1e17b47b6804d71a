// An inline constructor that two files emit, each its own way: a.cc
// defines S::init() and inlines it, b.cc only calls it.  The linker keeps
// the first object's copy and (GNU ld, copies of one size) points the
// other's DWARF at the same code (tests/cli/test_comdat.sh).
void g(struct S *);
struct S {
	__attribute__((noinline)) S()
	{
		init();
		x = 1;
	}
	void init();
	int *p;
	int x;
};
S *make_b();
