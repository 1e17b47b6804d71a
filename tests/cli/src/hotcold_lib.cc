// hotcold_lib.cc - the shared library of tests/cli/test_llvm_export.sh:
// an allocation site in a library, whose frames llvm-profdata-19 drops
// (it symbolizes the main binary only) and memprof-data keeps.
__attribute__((noinline)) char *lib_alloc(unsigned n)
{
	char *p = new char[n];
	p[0] = 1;
	return p;
}
