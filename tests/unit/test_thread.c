/*
 * mp_thread_beside(): the helper runs its function, starts on another CPU
 * than its creator's when the process may use several, and is then free
 * to run on any of them.
 */
#include <check.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "common/mp_thread.h"

struct start {
	int arg;		/* what the helper was given */
	int cpu;		/* where it first ran */
	int seen;		/* ARG as the helper read it */
};

static void *helper(void *p)
{
	struct start *s = p;

	s->seen = s->arg;
	__atomic_store_n(&s->cpu, sched_getcpu(), __ATOMIC_RELEASE);
	return s;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

START_TEST(helper_starts_beside_and_is_then_free)
{
	cpu_set_t allowed, got;
	int moved = 0;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	for (int i = 0; i < 20; i++) {
		struct start s = { 1000 + i, -1, 0 };
		int before = sched_getcpu(), after;
		pthread_t t;
		void *ret;

		double t0;

		/* The CPUs idle a moment, as after a merge's workers end: a
		 * scheduler that packs threads then keeps the helper with
		 * its creator. */
		usleep(3000);
		t0 = now_ms();

		ck_assert_int_eq(mp_thread_beside(&t, helper, &s), 0);
		/* Busy, as a creator that works beside its helper: a helper
		 * queued behind it would not run until the creator's turn
		 * ends (or 100 ms, not to hang). */
		while (__atomic_load_n(&s.cpu, __ATOMIC_ACQUIRE) < 0 &&
		       now_ms() - t0 < 100)
			;
		after = sched_getcpu();
		ck_assert_int_eq(pthread_getaffinity_np(t, sizeof(got), &got), 0);
		ck_assert(CPU_EQUAL(&got, &allowed));
		ck_assert_int_eq(pthread_join(t, &ret), 0);
		ck_assert_ptr_eq(ret, &s);
		ck_assert_int_eq(s.seen, 1000 + i);
		ck_assert_int_ge(s.cpu, 0);
		/* Where the creator stayed put meanwhile, and could have
		 * company, the helper started elsewhere. */
		if (CPU_COUNT(&allowed) >= 2 && before == after) {
			ck_assert_int_ne(s.cpu, before);
			moved++;
		}
	}
	if (CPU_COUNT(&allowed) >= 2)
		ck_assert_int_gt(moved, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("thread");
	TCase *tc = tcase_create("thread");

	tcase_add_test(tc, helper_starts_beside_and_is_then_free);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
