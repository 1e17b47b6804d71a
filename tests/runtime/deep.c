/*
 * tests/runtime/deep.c - one malloc 300 calls deep, past the 255 frames
 * compiler-rt's runtime keeps at most (malloc_context_size=255; more is a
 * CHECK failure there): built against ours and against compiler-rt's, the
 * two profiles must keep the same frames.
 */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

volatile int depth_counter;

NOINLINE void *deep_site(void)
{
	char *p = malloc(48);

	memset(p, 1, 48);
	return p;
}

NOINLINE void *descend(int depth)
{
	void *p = depth ? descend(depth - 1) : deep_site();

	depth_counter++;	/* not a tail call */
	return p;
}

int main(void)
{
	free(descend(300));
	return 0;
}
