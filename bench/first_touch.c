/*
 * first_touch.c - what touching memory costs on this machine: the first
 * write to fresh pages against a second write to the same pages, for a
 * block of MB megabytes, with huge pages asked for or refused, four times
 * over (each block freed before the next is taken).
 *
 *	cc -O2 -o first_touch bench/first_touch.c
 *	./first_touch 64 1	# 64 MB, transparent huge pages
 *	./first_touch 64 0	# 64 MB, 4 KiB pages
 *
 * On a virtual machine whose host backs guest memory lazily (and takes
 * freed pages back), the first touch of a page the guest has not used
 * lately costs the host's fault too: bench/RESULTS.md, Analysis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mb, size;
	int huge;

	if (argc != 3 || (mb = strtoul(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: first_touch MB 0|1\n");
		return 2;
	}
	huge = atoi(argv[2]);
	size = mb << 20;
	for (int round = 1; round <= 4; round++) {
		char *p = aligned_alloc(2 << 20, size);
		double t0, t1, t2;

		if (!p) {
			fprintf(stderr, "first_touch: out of memory\n");
			return 1;
		}
		madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		t0 = now();
		memset(p, 1, size);
		t1 = now();
		memset(p, 2, size);
		t2 = now();
		printf("round %d, %zu MB, huge pages %s: first touch %.1f ms "
		       "(%.3f ms/MB), second %.1f ms\n", round, mb,
		       huge ? "asked" : "refused", (t1 - t0) * 1e3,
		       (t1 - t0) * 1e3 / (double)mb, (t2 - t1) * 1e3);
		free(p);
	}
	return 0;
}
