/* The library tests/runtime/forkcode.c loads after the code map is made. */
#include <stdlib.h>

__attribute__((noinline)) void *lib_alloc(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *lib_outer(size_t n)
{
	void *p = lib_alloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
