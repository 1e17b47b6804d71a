// foreign_leaf_lib.cc - the library of tests/cli/src/foreign_leaf.cc.
__attribute__((noinline)) int *lib_make(unsigned n)
{
	int *p = new int[n];

	asm volatile("" ::: "memory");
	return p;
}
