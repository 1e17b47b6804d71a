/*
 * exits.c - the ways a process ends, each of which must leave exactly one
 * complete profile with main_site's 12 x 64 bytes in it:
 *
 *	exits return        main returns
 *	exits exit          exit(0) from a nested function
 *	exits thread-exit   a second thread calls exit(0) while main waits
 *	exits running       main returns while 4 threads keep allocating
 *	exits no-dump       memprof_set_dump_at_exit(0): no profile at all
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprof/memprof.h"

#define NOINLINE __attribute__((noinline))

void *volatile sink;
volatile int n12 = 12;

static NOINLINE void main_site(void)
{
	for (int i = 0; i < n12; i++) {
		sink = malloc(64);
		free(sink);
	}
}

static NOINLINE void *busy_site(void)
{
	return malloc(32);
}

static NOINLINE void leave(void)
{
	exit(0);
}

static void *exiter(void *arg)
{
	(void)arg;
	usleep(10000);
	leave();
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = busy_site();

		sink = p;
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "return";
	pthread_t t;

	main_site();
	if (strcmp(mode, "exit") == 0) {
		leave();
	} else if (strcmp(mode, "thread-exit") == 0) {
		if (pthread_create(&t, NULL, exiter, NULL))
			return 1;
		pthread_join(t, NULL);	/* never returns: the thread exits */
		return 2;
	} else if (strcmp(mode, "running") == 0) {
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t, NULL, busy, NULL))
				return 1;
		usleep(20000);
	} else if (strcmp(mode, "no-dump") == 0) {
		memprof_set_dump_at_exit(0);
	}
	return 0;
}
