/*
 * rt_clock.c - timestamps (milliseconds since the runtime started), CPU
 * ids, and the fork generation: leaf state every part of the runtime
 * reads.  Before memprof_rt_clock_start() (objects allocated by ld.so and
 * early constructors) times are 0 and CPU ids 0xffffffff, as compiler-rt
 * reports them before its init.
 */
#include "rt.h"

#include <sched.h>
#include <time.h>

_Atomic int memprof_rt_ready;
uint16_t memprof_rt_gen;
static int64_t start_ns;


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

void memprof_rt_clock_start(void)
{
	start_ns = now_ns();
	atomic_store_explicit(&memprof_rt_ready, 1, memory_order_release);
}
