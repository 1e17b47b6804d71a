#include "mp_thread.h"

#include <sched.h>

int mp_thread_beside(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int cpu = sched_getcpu(), rc;
	cpu_set_t allowed, others;
	pthread_attr_t attr;

	if (cpu < 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
	    !CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2)
		return pthread_create(t, NULL, fn, arg);
	others = allowed;
	CPU_CLR(cpu, &others);
	if (pthread_attr_init(&attr) != 0)
		return pthread_create(t, NULL, fn, arg);
	if (pthread_attr_setaffinity_np(&attr, sizeof(others), &others) != 0) {
		pthread_attr_destroy(&attr);
		return pthread_create(t, NULL, fn, arg);
	}
	rc = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	/*
	 * Started (glibc applies the affinity before the thread runs): it
	 * stays where it is unless the scheduler has a reason to move it,
	 * which it may now have, to any CPU the process may use.
	 */
	if (rc == 0)
		pthread_setaffinity_np(*t, sizeof(allowed), &allowed);
	return rc;
}
