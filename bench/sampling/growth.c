/*
 * growth.c - one allocation site whose sizes lie far apart, as a string
 * or vector growing by doubling makes them: objects of 100 * 2^k + 1
 * bytes, k = 0 .. K-1 (default 15: 101 bytes to 1.6 MB), each freed at
 * once, the whole repeated REPEAT times (default 1).  Prints the truth as
 * sampled_sites.c does: "grow OBJECTS BYTES".
 *
 *	growth [K [REPEAT]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

static __attribute__((noinline)) void grow(size_t n)
{
	sink = malloc(n);
	memset(sink, 1, n);
	free(sink);
}

int main(int argc, char **argv)
{
	static char outbuf[4096];
	int k = argc > 1 ? atoi(argv[1]) : 15;
	long repeat = argc > 2 ? atol(argv[2]) : 1, bytes = 0;

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	for (long r = 0; r < repeat; r++)
		for (int i = 0; i < k; i++) {
			grow(100 * ((size_t)1 << i) + 1);
			bytes += 100 * (1L << i) + 1;
		}
	printf("grow %ld %ld\n", k * repeat, bytes);
	return 0;
}
