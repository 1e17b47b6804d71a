/*
 * An allocation on a line above its function's first line, as #line
 * directives put yacc's actions: LLVM's line offset from the function's
 * start is negative there (a uint32 that wraps), here -2.
 */
#include <stdlib.h>

__attribute__((noinline)) static char *make(size_t n)
{
	char *p;

#line 7
	p = malloc(n);
	if (p)
		p[n - 1] = 0;	/* no tail call: make() stays on the stack */
	return p;
}

int main(void)
{
	char *p = make(64);

	p[0] = 1;
	free(p);
	return 0;
}
