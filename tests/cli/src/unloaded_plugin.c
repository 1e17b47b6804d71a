/* The plugin of unloaded_host.c: two frames of its own above malloc. */
#include <stdlib.h>

__attribute__((noinline)) static void *plugin_inner(size_t n)
{
	char *p = malloc(n);

	if (p)
		p[0] = 1;	/* no tail call: this frame stays */
	return p;
}

__attribute__((noinline)) void *plugin_alloc(size_t n)
{
	void *p = plugin_inner(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
