/*
 * known.c - a program whose allocations are known exactly.
 *
 * Every allocation site is a function of its own (NOINLINE); check_known.py
 * holds, per site, the MIB fields this program implies, and compares them
 * field by field with `memprof-data show --format=json --binary=PROGRAM`.
 * Built once without instrumentation (mode B: access fields 0) and once
 * with clang-19 -fmemory-profile (mode A: every access below is a
 * volatile one-byte store, so each object's access count is known too).
 * No stdio: its buffers would be allocations of libc's own.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink;
void *live[7];
volatile int depth_counter;
/* Loop bounds the compiler cannot see, so that no loop is unrolled into
 * several call sites (several contexts). */
volatile int n2 = 2, n3 = 3, n4 = 4, n5 = 5, n6 = 6, n7 = 7, n25 = 25,
	     n50 = 50, n100 = 100;
volatile size_t n4096 = 4096;

/* N one-byte stores at offsets 0..N-1: N accesses in mode A. */
static NOINLINE void touch(void *p, size_t n)
{
	volatile char *c = p;

	for (size_t i = 0; i < n; i++)
		c[i] = (char)i;
}

/* 100 x malloc(24), 24 accesses each. */
NOINLINE void small_site(void)
{
	for (int i = 0; i < n100; i++) {
		char *p = malloc(24);
		touch(p, 24);
		sink = p;
		free(p);
	}
}

/* 50 x calloc(10, 12) = 120 bytes, 120 accesses each. */
NOINLINE void calloc_site(void)
{
	for (int i = 0; i < n50; i++) {
		char *p = calloc(10, 12);
		touch(p, 120);
		sink = p;
		free(p);
	}
}

/* 3 x malloc(16), each grown by realloc to 32, 64, ..., 4096 (8 steps,
 * each a new object at grow_realloc, 8 accesses after each step). */
NOINLINE char *grow_start(void)
{
	return malloc(16);
}

NOINLINE char *grow_realloc(char *p, size_t n)
{
	p = realloc(p, n);
	touch(p, 8);
	return p;
}

NOINLINE void grow_site(void)
{
	for (int i = 0; i < n3; i++) {
		char *p = grow_start();
		for (size_t n = 32; n <= n4096; n *= 2)
			p = grow_realloc(p, n);
		sink = p;
		free(p);
	}
}

/* 3 x malloc(1 MB) (an mmap'd block), 1000 accesses each. */
NOINLINE void large_site(void)
{
	for (int i = 0; i < n3; i++) {
		char *p = malloc(1 << 20);
		touch(p, 1000);
		sink = p;
		free(p);
	}
}

/* 7 x malloc(333), 10 accesses each, never freed: live at exit. */
NOINLINE void live_site(void)
{
	for (int i = 0; i < n7; i++) {
		live[i] = malloc(333);
		touch(live[i], 10);
	}
}

/* 4 threads x 25 x malloc(48), 48 accesses each: one context. */
NOINLINE void thread_site(void)
{
	for (int i = 0; i < n25; i++) {
		char *p = malloc(48);
		touch(p, 48);
		sink = p;
		free(p);
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_site();
	return NULL;
}

/* The aligned entry points, 16 accesses per object. */
NOINLINE void posix_site(void)
{
	for (int i = 0; i < n5; i++) {
		void *p;
		if (posix_memalign(&p, 64, 200))
			abort();
		touch(p, 16);
		free(p);
	}
}

NOINLINE void aligned_site(void)
{
	for (int i = 0; i < n3; i++) {
		void *p = aligned_alloc(256, 512);
		touch(p, 16);
		free(p);
	}
}

NOINLINE void memalign_site(void)
{
	for (int i = 0; i < n2; i++) {
		void *p = memalign(128, 100);
		touch(p, 16);
		free(p);
	}
}

NOINLINE void valloc_site(void)
{
	void *p = valloc(100);
	touch(p, 16);
	free(p);
}

/* pvalloc(5000) is an 8192-byte object. */
NOINLINE void pvalloc_site(void)
{
	void *p = pvalloc(5000);
	touch(p, 16);
	free(p);
}

/* 3 x malloc(0): 1-byte objects, as compiler-rt counts them. */
NOINLINE void zero_site(void)
{
	for (int i = 0; i < n3; i++) {
		void *p = malloc(0);
		sink = p;
		free(p);
	}
}

/* 2 objects that live about 30 ms each. */
NOINLINE void lifetime_site(void)
{
	for (int i = 0; i < n2; i++) {
		char *p = malloc(77);
		touch(p, 77);
		usleep(30000);
		free(p);
	}
}

/* One site, two callers: two contexts. */
NOINLINE void *common_site(size_t n)
{
	char *p = malloc(n);
	touch(p, 4);
	return p;
}

NOINLINE void caller_a(void)
{
	for (int i = 0; i < n4; i++)
		free(common_site(40));
}

NOINLINE void caller_b(void)
{
	for (int i = 0; i < n6; i++)
		free(common_site(50));
}

/* recurse(5): malloc(56) under six recurse frames. */
NOINLINE void *recurse(int depth)
{
	void *p;

	if (depth == 0) {
		p = malloc(56);
		touch(p, 56);
		return p;
	}
	p = recurse(depth - 1);
	depth_counter++;	/* not a tail call */
	return p;
}

/* malloc(64) 41 calls deep, past what a stack keeps (30 frames, as
 * compiler-rt counts them: its own frame is one). */
NOINLINE void *deep_site(void)
{
	void *p = malloc(64);

	touch(p, 64);
	return p;
}

NOINLINE void *descend(int depth)
{
	void *p = depth ? descend(depth - 1) : deep_site();

	depth_counter++;	/* not a tail call */
	return p;
}

int main(void)
{
	pthread_t t[4];

	small_site();
	calloc_site();
	grow_site();
	large_site();
	live_site();
	for (int i = 0; i < n4; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			abort();
	for (int i = 0; i < n4; i++)
		pthread_join(t[i], NULL);
	posix_site();
	aligned_site();
	memalign_site();
	valloc_site();
	pvalloc_site();
	zero_site();
	lifetime_site();
	caller_a();
	caller_b();
	free(recurse(5));
	free(descend(39));
	usleep(20000);		/* live objects: lifetimes >= 20 ms */
	return 0;
}
