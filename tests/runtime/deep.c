/*
 * tests/runtime/deep.c - one malloc 300 calls deep, past the 255 frames
 * compiler-rt's runtime keeps at most (malloc_context_size=255; more is a
 * CHECK failure there): built against ours and against compiler-rt's, the
 * two profiles must keep the same frames.  And strdup and strndup as
 * deep: compiler-rt intercepts them, and so does ours now; through the C
 * library's, built without frame pointers, our frame-pointer unwinder
 * kept one frame, __GI___strdup, and backtrace() one frame too few.
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

NOINLINE void *dup_site(void)
{
	return strdup("a string copied 300 calls deep");
}

NOINLINE void *ndup_site(void)
{
	return strndup("a string cut 300 calls deep", 12);
}

NOINLINE void *descend(int depth, void *(*site)(void))
{
	void *p = depth ? descend(depth - 1, site) : site();

	depth_counter++;	/* not a tail call */
	return p;
}

int main(void)
{
	free(descend(300, deep_site));
	free(descend(300, dup_site));
	free(descend(300, ndup_site));
	return 0;
}
