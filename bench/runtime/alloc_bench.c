/*
 * alloc_bench.c - an allocation-heavy program for bench/runtime/run.sh.
 *
 *	alloc_bench [ITERATIONS [THREADS]]     (default 4000000 1)
 *
 * Each thread keeps a ring of 4096 live objects; every iteration frees one
 * slot and refills it from one of 8 call sites (different sizes and stack
 * depths, mostly 16..512 bytes, a few 4..64 KB), then reads and writes a
 * few bytes of the object.  That is the profiler's worst case: nearly all
 * the time goes to malloc, free and the profiling done in them.  Prints a
 * checksum so that nothing is optimised away.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 4096
#define NOINLINE __attribute__((noinline))

static long iterations = 4000000;

struct state {
	uint64_t seed;
	uint64_t sum;
	char *ring[RING];
};

static inline uint64_t next(struct state *s)
{
	s->seed = s->seed * 6364136223846793005ull + 1442695040888963407ull;
	return s->seed >> 33;
}

static NOINLINE char *site0(size_t n) { return malloc(n); }
static NOINLINE char *site1(size_t n) { return calloc(1, n); }
static NOINLINE char *site2(size_t n) { return site0(n); }
static NOINLINE char *site3(size_t n) { return site2(n); }
static NOINLINE char *site4(size_t n) { return site3(n); }
static NOINLINE char *site5(size_t n) { return site4(n); }
static NOINLINE char *site6(size_t n) { return malloc(n); }
static NOINLINE char *site7(size_t n) { return site6(n); }

static NOINLINE char *make(struct state *s)
{
	uint64_t r = next(s);
	size_t n = 16 + (r & 511);

	if ((r >> 9) % 64 == 0)
		n = 4096 + (r >> 15) % 61440;	/* 1 in 64: 4..64 KB */
	switch ((r >> 20) & 7) {
	case 0: return site0(n);
	case 1: return site1(n);
	case 2: return site2(n);
	case 3: return site3(n);
	case 4: return site4(n);
	case 5: return site5(n);
	case 6: return site6(n);
	default: return site7(n);
	}
}

static void *run(void *arg)
{
	struct state *s = arg;

	for (long i = 0; i < iterations; i++) {
		unsigned k = (unsigned)(next(s) % RING);
		char *p;

		free(s->ring[k]);
		p = make(s);
		p[0] = (char)i;
		p[15] = (char)(i >> 8);
		s->sum += (unsigned char)p[0] + (unsigned char)p[15];
		s->ring[k] = p;
	}
	for (unsigned k = 0; k < RING; k++)
		free(s->ring[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1;
	struct state *st;
	pthread_t *t;
	uint64_t sum = 0;

	if (argc > 1)
		iterations = atol(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (iterations <= 0 || threads <= 0)
		return 2;
	st = calloc((size_t)threads, sizeof(*st));
	t = calloc((size_t)threads, sizeof(*t));
	if (!st || !t)
		return 1;
	for (int i = 0; i < threads; i++) {
		st[i].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		if (pthread_create(&t[i], NULL, run, &st[i]))
			return 1;
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		sum += st[i].sum;
	}
	printf("%llu\n", (unsigned long long)sum);
	free(st);
	free(t);
	return 0;
}
