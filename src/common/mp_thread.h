/*
 * mp_thread.h - starting a helper thread that works beside its creator.
 */
#ifndef MP_THREAD_H
#define MP_THREAD_H

#include <pthread.h>

/*
 * pthread_create(T, NULL, FN, ARG), the thread started on another CPU than
 * the calling thread's when the process may run on more than one, then
 * free to move as any thread.  For a helper that works while its creator
 * goes on working: a scheduler that packs threads (as on virtual machines
 * that keep vCPUs idle) may otherwise queue it behind its creator until it
 * balances, one to five milliseconds later (bench/RESULTS.md), which is
 * the length of the helper's whole task in a merge's tail.  Returns
 * pthread_create()'s result.
 */
int mp_thread_beside(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
