/*
 * rt_init.c - the runtime's composition root: start-up, exit and fork.
 * Options (rt_options.c) and the clock (rt_clock.c) are leaves it uses.
 *
 * Two stages.  memprof_rt_init() runs at the first allocation, which can
 * come from ld.so before any constructor: it only sets up what the
 * allocator needs (a TLS key, the main thread's stack bounds).  Objects
 * allocated that early are profiled with timestamp 0 and CPU id
 * 0xffffffff, as compiler-rt does before its init.  memprof_rt_init_late()
 * runs from our constructor (priority 101) or from __memprof_init() (the
 * instrumented modules' priority-1 constructors), whichever is first, when
 * the environment and the vDSO are usable: it starts the clock and the
 * sampler, and registers the exit and fork handlers.  The shadow, when
 * instrumented code is linked in, is reserved earlier still, from
 * .preinit_array (rt_preinit below).
 *
 * MEMPROF_OPTIONS is read as early as it can be, for shared libraries'
 * constructors run before ours and allocate (libstdc++'s emergency pool):
 * their stacks must be unwound as the options say.  Linked into the
 * executable, from .preinit_array, which runs before any library's
 * constructor and is handed the environment; as libmemprof.so or
 * preloaded, at the first allocation made once the C library has set
 * environ up (its constructor runs before other libraries'); else at the
 * late stage.
 */
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic int memprof_rt_profiling = 1;
uintptr_t memprof_rt_main_stack_size = 8u << 20;

static _Atomic int init_state;		/* 0, 1 running, 2 done */
static _Atomic int late_state;
static _Atomic int options_state;	/* 0, 1 read */

/* Symbols an instrumented program or the user may define. */
extern const unsigned char __memprof_histogram __attribute__((weak));
const char *__memprof_default_options(void) __attribute__((weak));

/*
 * Read the options once: __memprof_default_options() and then
 * MEMPROF_OPTIONS, whose value ENV is (NULL: unset).  Early callers cannot
 * use getenv(), so each finds ENV its own way.
 */
static void read_options(const char *env)
{
	int expect = 0;

	if (!atomic_compare_exchange_strong(&options_state, &expect, 1))
		return;
	memprof_rt_tls.in_rt++;
	if (__memprof_default_options)
		memprof_rt_parse_options(__memprof_default_options(),
					 "__memprof_default_options");
	memprof_rt_parse_options(env, "MEMPROF_OPTIONS");
	memprof_rt_tls.in_rt--;
}

/* MEMPROF_OPTIONS's value in ENVP, a NULL-terminated environment. */
static const char *options_in(char **envp)
{
	static const char name[] = "MEMPROF_OPTIONS=";

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, sizeof(name) - 1) == 0)
			return *envp + sizeof(name) - 1;
	return NULL;
}

void memprof_rt_init(void)
{
	int expect = 0;
	struct rlimit rl;

	if (atomic_load_explicit(&init_state, memory_order_acquire) == 2)
		return;
	if (!atomic_compare_exchange_strong(&init_state, &expect, 1)) {
		/* Another thread is in here; this one may not allocate yet. */
		while (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
			sched_yield();
		return;
	}
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur >= RT_PAGE)
		memprof_rt_main_stack_size = rl.rlim_cur;
	else
		memprof_rt_main_stack_size = (uintptr_t)1 << 30;
	memprof_rt_alloc_init();
	atomic_store_explicit(&init_state, 2, memory_order_release);
#ifdef RT_SHARED
	/* NULL until the C library's constructor, after ld.so's first
	 * allocations; the late stage reads the options then. */
	if (environ)
		read_options(options_in(environ));
#endif
}

/* ------------------------------------------------------------ exit, fork */

static void at_exit(void)
{
	if (memprof_rt_opts.dump_at_exit)
		memprof_rt_dump(1);
	else
		atomic_store(&memprof_rt_profiling, 0);
}

static void fork_prepare(void)
{
	memprof_rt_dump_lock();
	memprof_rt_depot_lock_all();
	memprof_rt_alloc_lock_all();
	memprof_rt_ialloc_lock();
	memprof_rt_sample_prefork();
}

static void fork_parent(void)
{
	memprof_rt_ialloc_unlock();
	memprof_rt_alloc_unlock_all();
	memprof_rt_depot_unlock_all();
	memprof_rt_dump_unlock();
}

static void fork_child(void)
{
	/* Objects inherited from the parent are the parent's to report. */
	memprof_rt_gen++;
	memprof_rt_ialloc_child();
	memprof_rt_alloc_child();
	memprof_rt_depot_child();
	memprof_rt_dump_child();
	memprof_rt_sample_child();
}

void memprof_rt_init_late(void)
{
	int expect = 0;

	memprof_rt_init();
	if (!atomic_compare_exchange_strong(&late_state, &expect, 1))
		return;
	read_options(getenv("MEMPROF_OPTIONS"));
	memprof_rt_tls.in_rt++;
	memprof_rt_clock_start();
	memprof_rt_sample_init(memprof_rt_opts.sample_seed_set,
			       memprof_rt_opts.sample_seed);
	memprof_rt_sample_set(memprof_rt_opts.sample_interval);
	/* Done by rt_preinit already unless the runtime arrived otherwise;
	 * an instrumented library loaded later asks from __memprof_init. */
	if (&__memprof_histogram)
		memprof_rt_need_shadow();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
	memprof_rt_tls.in_rt--;
}

void memprof_rt_need_shadow(void)
{
	if (memprof_rt_shadow_init() < 0)
		memprof_rt_die("cannot reserve %lu bytes of shadow memory: %s",
			       (unsigned long)1 << 44, strerrordesc_np(errno));
}

/*
 * Shared libraries' constructors run before the executable's, and may call
 * its instrumented code: reserve the shadow before any of them, from the
 * executable's .preinit_array (compiler-rt does the same), which also
 * reads the options from ENVP, as glibc hands it to .preinit_array
 * functions.  Only mmap is used; everything else waits for the
 * constructor.
 */
static void rt_preinit(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	memprof_rt_init();
	if (&__memprof_histogram)
		memprof_rt_need_shadow();
	read_options(options_in(envp));
}

#ifndef RT_SHARED
__attribute__((section(".preinit_array"), used))
static void (*const rt_preinit_entry)(int, char **, char **) = rt_preinit;
#endif

/*
 * libmemprof.so (RT_SHARED) may not have a .preinit_array: its own
 * constructor, which runs before the executable's as a library's does,
 * reserves the shadow first.
 */
__attribute__((constructor(101))) static void rt_constructor(void)
{
#ifdef RT_SHARED
	rt_preinit(0, NULL, environ);
#endif
	memprof_rt_init_late();
}
