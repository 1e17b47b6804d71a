/*
 * stress.c - 16 threads allocating and freeing (some objects freed by
 * another thread than the one that allocated them), and a fork in the
 * middle of it.  The child allocates 40 x 100 bytes at child_site and
 * exits; the parent joins its workers and returns.
 *
 * Expected (run.sh): exactly two profiles, PREFIX.<parent> and
 * PREFIX.<child>, both valid.  The parent's has worker_site with exactly
 * THREADS x ITERS objects; the child's has child_site with exactly 40
 * objects and nothing of the workers (the child starts clean, and objects
 * inherited from the parent are the parent's).
 * Prints the child's pid on stdout.
 *
 * "stress dumps": no fork; instead the main thread calls memprof_dump()
 * five times while the workers run: one file of six valid profiles, in
 * which every worker object appears at least once (freed objects exactly
 * once, live ones in every dump that finds them).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memprof/memprof.h"

#define THREADS 16
#define ITERS 20000
#define SLOTS 256

#define NOINLINE __attribute__((noinline))

static _Atomic(void *) exchange[SLOTS];	/* cross-thread frees */
static atomic_int started;
static atomic_int forked;

static NOINLINE void *worker_site(size_t n)
{
	return malloc(n);
}

static NOINLINE void *child_site(void)
{
	return malloc(100);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;
	void *ring[64] = {0};

	atomic_fetch_add(&started, 1);
	for (int i = 0; i < ITERS; i++) {
		size_t n;
		char *p;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 8) % 3000 + 1;
		if ((seed & 0xff) == 7)
			n = 200000;	/* now and then a large block */
		p = worker_site(n);
		if (!p)
			abort();
		p[0] = 1;
		p[n - 1] = 2;
		switch ((seed >> 4) % 3) {
		case 0:
			free(p);
			break;
		case 1: {	/* keep it a while */
			unsigned k = (seed >> 12) % 64;

			free(ring[k]);
			ring[k] = p;
			break;
		}
		default:	/* hand it to whoever comes next */
			free(atomic_exchange(&exchange[(seed >> 16) % SLOTS], p));
			break;
		}
		if (i == ITERS / 2 && (uintptr_t)arg == 0)
			while (!atomic_load(&forked))
				usleep(100);
	}
	for (int k = 0; k < 64; k++)
		free(ring[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	pid_t child;
	int status;

	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	while (atomic_load(&started) < THREADS)
		usleep(100);
	usleep(20000);		/* in the thick of it */
	if (argc > 1 && strcmp(argv[1], "dumps") == 0) {
		for (int i = 0; i < 5; i++) {
			if (memprof_dump() != 0)
				return 1;
			usleep(5000);
		}
		atomic_store(&forked, 1);
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		for (int i = 0; i < SLOTS; i++)
			free(atomic_load(&exchange[i]));
		return 0;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		void *keep[40];

		for (int i = 0; i < 40; i++)
			keep[i] = child_site();
		for (int i = 0; i < 40; i++)
			free(keep[i]);
		exit(0);
	}
	atomic_store(&forked, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < SLOTS; i++)
		free(atomic_load(&exchange[i]));
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 1;
	printf("%d\n", (int)child);
	return 0;
}
