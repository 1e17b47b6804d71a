/*
 * sampled_sites.c - allocations of known sizes and counts, for the test of
 * sampled profiles (tests/cli/test_sampling.sh) and bench/sampling/.
 *
 *	sampled_sites [SCALE [fork]]
 *
 * Each site is a function of its own that allocates COUNT x SCALE objects
 * of SIZE bytes and frees each at once; site_mixed's sizes come from a
 * fixed sequence.  Prints the truth, one line per site: name, objects,
 * bytes.  Run under libmemprof with MEMPROF_OPTIONS=sample_interval=R the
 * profile estimates each line.  With "fork" the program forks first and
 * both processes run the sites (the child's output goes to /dev/null).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

static void one(size_t n)
{
	sink = malloc(n);
	free(sink);
}

#define SITE(name, size, count)                                          \
	static NOINLINE void name(long scale)                             \
	{                                                                 \
		for (long i = 0; i < (count) * scale; i++)                \
			one(size);                                        \
		printf("%s %ld %ld\n", #name, (long)(count) * scale,     \
		       (long)(count) * scale * (long)(size));             \
	}

SITE(site_16x20000, 16, 20000)
SITE(site_24x3000, 24, 3000)
SITE(site_64x1000, 64, 1000)
SITE(site_100x400, 100, 400)
SITE(site_256x200, 256, 200)
SITE(site_512x50, 512, 50)
SITE(site_1000x30, 1000, 30)
SITE(site_4096x10, 4096, 10)
SITE(site_4096x100, 4096, 100)
SITE(site_10000x5, 10000, 5)
SITE(site_65536x3, 65536, 3)
SITE(site_1Mx1, 1 << 20, 1)
SITE(site_1x50, 1, 50)

static NOINLINE void site_mixed(long scale)
{
	uint64_t s = 12345;
	long bytes = 0;

	for (long i = 0; i < 2000 * scale; i++) {
		size_t n;

		s = s * 6364136223846793005ull + 1442695040888963407ull;
		n = 16 + (size_t)((s >> 33) % 497);	/* 16..512 */
		one(n);
		bytes += (long)n;
	}
	printf("site_mixed %ld %ld\n", 2000 * scale, bytes);
}

int main(int argc, char **argv)
{
	static char outbuf[8192];
	long scale = argc > 1 ? atol(argv[1]) : 1;
	pid_t child = -1;

	/* stdio's own buffer would be malloc'ed with a size that depends on
	 * where stdout goes, shifting every later draw: runs of one seed
	 * must allocate the same bytes in the same order. */
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	if (argc > 2 && strcmp(argv[2], "fork") == 0) {
		fflush(stdout);
		child = fork();
		if (child == 0 && !freopen("/dev/null", "w", stdout))
			return 1;
	}

	site_16x20000(scale);
	site_24x3000(scale);
	site_64x1000(scale);
	site_100x400(scale);
	site_256x200(scale);
	site_512x50(scale);
	site_1000x30(scale);
	site_4096x10(scale);
	site_4096x100(scale);
	site_10000x5(scale);
	site_65536x3(scale);
	site_1Mx1(scale);
	site_1x50(scale);
	site_mixed(scale);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
