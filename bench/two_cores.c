/*
 * two_cores.c - what a second core adds on this machine, by working set:
 * the same loop run once alone, then twice at once (two processes, one
 * pinned to each of CPUs 0 and 1), for working sets from L1-sized to
 * DRAM-sized.  A throughput of 2.00 means two cores did twice the work of
 * one; 1.00 that the second added nothing.
 *
 *	cc -O2 -o two_cores bench/two_cores.c
 *	./two_cores		# the whole table, about a minute
 *
 * Three loops, each about 0.3 s alone:
 *   alu     a chain of multiplications, no memory: what the cores give
 *           when nothing but the execution units is shared;
 *   chase   a dependent walk of a random cycle through the working set
 *           (one load waits for the one before: latency-bound);
 *   gather  independent random loads from the working set (addresses from
 *           a generator, several in flight: what a fold's hash probes do).
 * Two vCPUs that are two threads of one physical core share its L1 and
 * L2 caches and execution units: there, "alu" still scales (a multiply
 * chain leaves the units idle most cycles), but a working set that fits
 * one core's caches alone no longer fits once both run, and "gather" at
 * L1 and L2 sizes falls towards 1.0.  Separate cores share only the L3
 * and memory.  bench/RESULTS.md, Analysis, gives what this host did.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t next(uint64_t *x)
{
	*x = *x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return *x >> 17;
}

/* The loop KIND over N words at P, ITERS steps; its result, so that the
 * compiler keeps the work. */
static uint64_t run(const char *kind, uint64_t *p, size_t n, long iters)
{
	uint64_t x = 1, s = 0;

	if (!strcmp(kind, "alu")) {
		for (long i = 0; i < iters; i++)
			s = s * UINT64_C(6364136223846793005) + 1;
	} else if (!strcmp(kind, "chase")) {
		uint64_t at = 0;

		for (long i = 0; i < iters; i++)
			at = p[at];
		s = at;
	} else {
		for (long i = 0; i < iters; i++)
			s += p[next(&x) % n];
	}
	return s;
}

/* N words holding one random cycle through all of them (Sattolo). */
static uint64_t *make_cycle(size_t n)
{
	uint64_t *p = malloc(n * sizeof(*p)), x = 7;

	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		p[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = next(&x) % i, t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Seconds for COPIES processes (1 or 2, on CPUs 0 and 1) to run the loop
 * each; the slowest's.  -1 when a child failed. */
static double timed(const char *kind, size_t words, long iters, int copies)
{
	int go[2], ready[2], res[2][2];
	double worst = 0;

	if (pipe(go) || pipe(ready))
		return -1;
	for (int c = 0; c < copies; c++) {
		if (pipe(res[c]))
			return -1;
		if (fork() == 0) {
			uint64_t *p = make_cycle(words);
			volatile uint64_t sink;
			double t0, t;
			char g;

			pin(c);
			if (!p)
				_exit(1);
			sink = run(kind, p, words, iters / 8);	/* warm */
			if (write(ready[1], "r", 1) != 1 ||
			    read(go[0], &g, 1) != 1)
				_exit(1);
			t0 = now();
			sink = run(kind, p, words, iters);
			t = now() - t0;
			(void)sink;
			_exit(write(res[c][1], &t, sizeof(t)) != sizeof(t));
		}
	}
	for (int c = 0; c < copies; c++) {	/* every child built and warm */
		char r;

		if (read(ready[0], &r, 1) != 1)
			return -1;
	}
	if (write(go[1], "gg", (size_t)copies) != copies)
		return -1;
	for (int c = 0; c < copies; c++) {
		double t;
		int st;

		wait(&st);
		if (read(res[c][0], &t, sizeof(t)) != sizeof(t))
			return -1;
		worst = t > worst ? t : worst;
		close(res[c][0]);
		close(res[c][1]);
	}
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	return worst;
}

int main(void)
{
	static const struct {
		const char *kind;
		size_t kib;
		long iters;
	} rows[] = {
		{ "alu", 0, 300000000 },
		{ "gather", 16, 150000000 },
		{ "gather", 256, 150000000 },
		{ "gather", 768, 120000000 },
		{ "gather", 4096, 80000000 },
		{ "gather", 65536, 20000000 },
		{ "chase", 16, 200000000 },
		{ "chase", 768, 40000000 },
		{ "chase", 65536, 4000000 },
	};

	printf("| loop | working set | one alone | two at once | two cores give |\n");
	printf("|---|---:|---:|---:|---:|\n");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		size_t words = rows[r].kib ? rows[r].kib * 1024 / 8 : 1;
		double best1 = 1e9, best2 = 1e9;

		/* Three tries each, the fastest: the host's other tenants only
		 * ever slow a run down. */
		for (int k = 0; k < 3; k++) {
			double t1 = timed(rows[r].kind, words, rows[r].iters, 1);
			double t2 = timed(rows[r].kind, words, rows[r].iters, 2);

			if (t1 < 0 || t2 < 0) {
				fprintf(stderr, "two_cores: a child failed\n");
				return 1;
			}
			best1 = t1 < best1 ? t1 : best1;
			best2 = t2 < best2 ? t2 : best2;
		}
		printf("| %s | %zu KiB | %.3f s | %.3f s | %.2f× |\n",
		       rows[r].kind, rows[r].kib, best1, best2,
		       2 * best1 / best2);
		fflush(stdout);
	}
	return 0;
}
