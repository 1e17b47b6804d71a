/*
 * check_run.h - what every unit suite's main() ends with: its suite run
 * with Check's normal output, and the count of tests that failed.
 */
#ifndef CHECK_RUN_H
#define CHECK_RUN_H

#include <check.h>

static inline int check_failures(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

#endif /* CHECK_RUN_H */
