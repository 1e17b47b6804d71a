/*
 * rt_strdup.c - strdup and strndup, and glibc's __strdup and __strndup:
 * compiler-rt intercepts them, so that their stacks start at their
 * caller.  The C library's call malloc and are built without frame
 * pointers: under unwind=fp a context through one held the one frame
 * __GI___strdup, its callers lost; under backtrace() it took one of
 * malloc_context_size's frames for itself (a check of PostgreSQL: 124
 * contexts one program frame short of compiler-rt's).
 *
 * A member of the archive of its own: a program that defines strdup
 * itself does not pull it in, and links as before.
 */
#include "rt.h"

#include <string.h>

char *__strdup(const char *s);		/* glibc's names, no header's */
char *__strndup(const char *s, size_t max);

static char *dup_n(const char *s, size_t n, uintptr_t frame)
{
	char *p = memprof_rt_alloc(n + 1, 0, frame, 0);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *strdup(const char *s)
{
	return dup_n(s, strlen(s), RT_FRAME);
}

char *__strdup(const char *s)
{
	return dup_n(s, strlen(s), RT_FRAME);
}

char *strndup(const char *s, size_t max)
{
	return dup_n(s, strnlen(s, max), RT_FRAME);
}

char *__strndup(const char *s, size_t max)
{
	return dup_n(s, strnlen(s, max), RT_FRAME);
}
