/*
 * fork while another thread rebuilds the runtime's code map (the table of
 * executable segments that tells a return address from garbage), holding
 * its lock.  The child must not wait for that lock forever.
 *
 * The program's own dl_iterate_phdr stands in for glibc's, which the
 * runtime calls: on the worker thread its second call (the rebuild, under
 * the lock) is held up until the child has run.  The worker misses the map
 * because its stack runs through a library loaded after the map was made.
 *
 *	forkcode LIB	exit 0, or 1 with a message if the child hung
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int iterate_fn(int (*)(struct dl_phdr_info *, size_t, void *), void *);

static iterate_fn *real_iterate;
static _Thread_local int sleepy;	/* the worker */
static atomic_int worker_calls, child_done;

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	static atomic_int resolving;

	if (!real_iterate) {
		if (atomic_exchange(&resolving, 1))
			return 0;
		real_iterate = (iterate_fn *)dlsym(RTLD_NEXT, "dl_iterate_phdr");
		atomic_store(&resolving, 0);
		if (!real_iterate)
			return 0;
	}
	/* The rebuild: wait until the child is done (at most 10 s). */
	if (sleepy && atomic_fetch_add(&worker_calls, 1) + 1 == 2)
		for (int i = 0; i < 1000 && !atomic_load(&child_done); i++)
			usleep(10000);
	return real_iterate(cb, arg);
}

static void *(*lib_outer)(size_t);

static void *worker(void *arg)
{
	(void)arg;
	sleepy = 1;
	free(lib_outer(40));
	return NULL;
}

/* Two frames of ours: the second return address makes the map. */
static __attribute__((noinline)) void *two_frames(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	pthread_t t;
	pid_t child;
	int st = 0;
	void *h;

	free(two_frames(24));		/* the code map is made */
	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW)) ||
	    !(lib_outer = (void *(*)(size_t))dlsym(h, "lib_outer"))) {
		fprintf(stderr, "forkcode: cannot load the library: %s\n", dlerror());
		return 2;
	}
	sleep_ms(30);			/* past the runtime's 10 ms between asks */
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 1000 && atomic_load(&worker_calls) < 2; i++)
		sleep_ms(5);
	if (atomic_load(&worker_calls) < 2) {
		fprintf(stderr, "forkcode: the worker never rebuilt the code map\n");
		return 2;
	}
	child = fork();
	if (child == 0) {
		sleep_ms(30);
		free(lib_outer(56));	/* misses the map too */
		_exit(0);
	}
	for (int i = 0; i < 500; i++) {
		if (waitpid(child, &st, WNOHANG) == child)
			break;
		sleep_ms(10);
	}
	atomic_store(&child_done, 1);
	pthread_join(t, NULL);
	if (waitpid(child, &st, WNOHANG) == 0) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		fprintf(stderr, "forkcode: the child hung for 5 s\n");
		return 1;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
