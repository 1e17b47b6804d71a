/*
 * ctorlib.c - a shared library whose constructor allocates, as
 * libstdc++'s does (its 72704-byte emergency pool): it runs before the
 * executable's constructors and before libmemprof.so's or the preloaded
 * runtime's.  Built without frame pointers, so that only a DWARF unwind
 * (unwind=backtrace) gets past it into ld.so.
 */
#include <stdlib.h>

void *volatile ctorlib_keep;

__attribute__((constructor)) static void ctorlib_init(void)
{
	ctorlib_keep = malloc(4242);
}
