/*
 * rt_init.c - start-up, options, time and CPU ids, exit and fork.
 *
 * Two stages.  memprof_rt_init() runs at the first allocation, which can
 * come from ld.so before any constructor: it only sets up what the
 * allocator needs (a TLS key, the main thread's stack bounds).  Objects
 * allocated that early are profiled with timestamp 0 and CPU id
 * 0xffffffff, as compiler-rt does before its init.  memprof_rt_init_late()
 * runs from our constructor (priority 101) or from __memprof_init() (the
 * instrumented modules' priority-1 constructors), whichever is first, when
 * the environment and the vDSO are usable: it reads MEMPROF_OPTIONS, starts
 * the clock, and registers the exit and fork handlers.  The shadow, when
 * instrumented code is linked in, is reserved earlier still, from
 * .preinit_array (rt_preinit below).
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

struct rt_opts memprof_rt_opts = {
	.dump_at_exit = 1,
	.max_frames = 30,	/* compiler-rt's malloc_context_size */
};
_Atomic int memprof_rt_profiling = 1;
_Atomic int memprof_rt_ready;
uint16_t memprof_rt_gen;
uintptr_t memprof_rt_main_stack_size = 8u << 20;

static _Atomic int init_state;		/* 0, 1 running, 2 done */
static _Atomic int late_state;
static int64_t start_ns;

/* Symbols an instrumented program or the user may define. */
extern const unsigned char __memprof_histogram __attribute__((weak));
const char *__memprof_default_options(void) __attribute__((weak));

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
}

/* ------------------------------------------------------------ options */

static int parse_int(const char *v, size_t n, int *out)
{
	long x = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9' || x > 1000000)
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	*out = (int)x;
	return 0;
}

/*
 * NAME=VALUE pairs separated by ':', ',' or blanks, as sanitizers take
 * them.  Unknown names are ignored (reported with verbosity=1), so a
 * MEMPROF_OPTIONS meant for compiler-rt does no harm.
 */
static void parse_options(const char *s, const char *origin)
{
	while (s && *s) {
		const char *name, *val, *end;
		size_t nl, vl;
		int n;

		while (*s == ':' || *s == ',' || *s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		name = s;
		while (*s && *s != '=' && *s != ':' && *s != ',' && *s != ' ')
			s++;
		nl = (size_t)(s - name);
		val = end = s;
		if (*s == '=') {
			val = ++s;
			/* log_path may hold ',' but not ':'. */
			while (*s && *s != ':' && *s != ' ' && *s != '\t' && *s != '\n')
				s++;
			end = s;
		}
		vl = (size_t)(end - val);
#define IS(lit) (nl == sizeof(lit) - 1 && memcmp(name, lit, nl) == 0)
		if (IS("log_path")) {
			if (vl < sizeof(memprof_rt_opts.log_path)) {
				memcpy(memprof_rt_opts.log_path, val, vl);
				memprof_rt_opts.log_path[vl] = '\0';
			} else {
				memprof_rt_log("%s: log_path too long, ignored", origin);
			}
		} else if (IS("dump_at_exit") && parse_int(val, vl, &n) == 0) {
			memprof_rt_opts.dump_at_exit = n != 0;
		} else if (IS("malloc_context_size") && parse_int(val, vl, &n) == 0) {
			memprof_rt_opts.max_frames = n > RT_MAX_FRAMES ? RT_MAX_FRAMES : n;
		} else if (IS("unwind") && vl == 2 && memcmp(val, "fp", 2) == 0) {
			memprof_rt_opts.unwind_backtrace = 0;
		} else if (IS("unwind") && vl == 9 && memcmp(val, "backtrace", 9) == 0) {
			memprof_rt_opts.unwind_backtrace = 1;
		} else if (IS("verbosity") && parse_int(val, vl, &n) == 0) {
			memprof_rt_opts.verbosity = n;
		} else if (memprof_rt_opts.verbosity) {
			char unknown[64];
			size_t k = nl < sizeof(unknown) - 1 ? nl : sizeof(unknown) - 1;

			memcpy(unknown, name, k);
			unknown[k] = '\0';
			memprof_rt_log("%s: ignoring option '%s'", origin, unknown);
		}
#undef IS
	}
}

/* ------------------------------------------------------------ clock, CPU */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint32_t memprof_rt_now_ms(void)
{
	if (!atomic_load_explicit(&memprof_rt_ready, memory_order_relaxed))
		return 0;
	return (uint32_t)((now_ns() - start_ns) / 1000000);
}

uint32_t memprof_rt_cpu(void)
{
	int c;

	if (!atomic_load_explicit(&memprof_rt_ready, memory_order_relaxed))
		return UINT32_MAX;
	c = sched_getcpu();
	return c < 0 ? UINT32_MAX : (uint32_t)c;
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
}

void memprof_rt_init_late(void)
{
	int expect = 0;
	const char *env;

	memprof_rt_init();
	if (!atomic_compare_exchange_strong(&late_state, &expect, 1))
		return;
	memprof_rt_tls.in_rt++;
	if (__memprof_default_options)
		parse_options(__memprof_default_options(), "__memprof_default_options");
	env = getenv("MEMPROF_OPTIONS");
	parse_options(env, "MEMPROF_OPTIONS");
	start_ns = now_ns();
	atomic_store_explicit(&memprof_rt_ready, 1, memory_order_release);
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

__attribute__((constructor(101))) static void rt_constructor(void)
{
	memprof_rt_init_late();
}

/*
 * Shared libraries' constructors run before the executable's, and may call
 * its instrumented code: reserve the shadow before any of them, from the
 * executable's .preinit_array (compiler-rt does the same).  Only mmap is
 * used; everything else waits for the constructor.
 */
static void rt_preinit(void)
{
	memprof_rt_init();
	if (&__memprof_histogram)
		memprof_rt_need_shadow();
}

__attribute__((section(".preinit_array"), used))
static void (*const rt_preinit_entry)(void) = rt_preinit;
