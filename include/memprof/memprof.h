/*
 * memprof.h - libmemprof, a heap profiler runtime that writes MemProf raw
 * profiles (version 4, the bytes clang 19's compiler-rt writes).
 *
 * Link a program with libmemprof.a and it becomes the program's malloc:
 * every allocation is attributed to its calling context, and at exit the
 * process writes memprof.profraw.<pid>, which `memprof-data show`,
 * `llvm-profdata-19 show --memory` and `llvm-profdata-19 merge` read.
 *
 *	cc -g -fno-omit-frame-pointer -c app.c
 *	cc -o app app.o -L/usr/local/lib -lmemprof -pthread     (mode B)
 *	./app && memprof-data show --binary=app memprof.profraw.*
 *
 * Mode A: compile with `clang-19 -fmemory-profile` and link *without* that
 * flag, against libmemprof.a instead of compiler-rt's runtime; then every
 * load and store of the instrumented code is counted and the profile also
 * has access counts and densities (and, with -mllvm -memprof-histogram
 * -mllvm -memprof-use-callbacks, per-8-byte access histograms).  Mode B,
 * any compiler without the flag: allocation counts, sizes, lifetimes and
 * CPU ids only, access fields 0.
 *
 * Without any call to the functions below a program gets one profile at
 * exit.  The calls let it choose the file and take profiles of phases:
 *
 *	memprof_set_output("/tmp/phase");	// /tmp/phase.<pid>
 *	run_phase_1();
 *	memprof_dump();		// profile 1: phase 1, plus what is live now
 *	run_phase_2();
 *	// at exit, profile 2 is appended: phase 2, plus what is still live
 *
 * As with compiler-rt, a dump empties the table of freed objects, and
 * objects live at a dump are reported in it and again in every later dump
 * that finds them live.  Profiles of one process go to one file, back to
 * back; each is written to PATH.tmp and renamed over PATH, so PATH is
 * always a complete set of profiles.
 *
 * The block layout (see man libmemprof(3)): every block is 64-byte aligned
 * and a multiple of 64 bytes, with a 32-byte header in front of the user
 * memory (so malloc returns 32-byte aligned pointers): no two objects share
 * a 64-byte shadow granule, and each object's access count is exact.
 *
 * Thread safety: every function here may be called from any thread.  None
 * may be called from a signal handler.
 */
#ifndef MEMPROF_MEMPROF_H
#define MEMPROF_MEMPROF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write a profile now: every context's record of freed objects, plus the
 * objects live at this moment, appended to this process's file.  The
 * records of freed objects are then discarded.  Returns 0, or -1 with
 * errno set (the file could not be written; the records are lost).
 */
int memprof_dump(void);

/*
 * Discard the records of freed objects without writing them (for instance
 * to leave start-up out of the next profile).  Live objects are unaffected.
 */
void memprof_discard(void);

/*
 * Send later dumps to PREFIX.<pid>, starting a new file (truncating one
 * left by an earlier run with the same pid).  "stdout" and "stderr" mean
 * those streams, without a suffix.  PREFIX is copied.  NULL goes back to
 * the default, which is, first found: MEMPROF_OPTIONS=log_path=PREFIX, the
 * program's __memprof_profile_filename (clang -fmemory-profile=DIR sets it),
 * "memprof.profraw".  Returns 0, or -1 with errno ENAMETOOLONG.
 */
int memprof_set_output(const char *prefix);

/*
 * The path the next dump writes, NUL-terminated in BUF when it fits in
 * SIZE bytes.  Returns its length (snprintf-style: a result >= SIZE means
 * BUF was too small).
 */
size_t memprof_output_path(char *buf, size_t size);

/*
 * Sampled profiling: record about one allocated byte in BYTES, chosen at
 * random (each byte independently, so an object of s bytes is recorded
 * with probability 1 - (1 - 1/BYTES)^s), instead of every allocation.  An
 * allocation not recorded costs a compare and a subtraction.  The profile
 * holds unbiased estimates (a recorded object of s bytes counts
 * 1/(1 - (1 - 1/BYTES)^s) objects) and what confidence intervals need,
 * which `memprof-data show` prints.  0 records every allocation (the
 * default; MEMPROF_OPTIONS=sample_interval=BYTES sets another).  For
 * production, 524288 (512 KiB, as Go and jemalloc) costs a few percent.
 * A thread takes a new interval at its next sampled allocation.
 * MEMPROF_OPTIONS=sample_seed=N makes the choice reproducible.  Returns
 * 0, or -1 with errno EINVAL when BYTES exceeds 2^30.
 */
int memprof_set_sample_interval(size_t bytes);
size_t memprof_sample_interval(void);	/* the interval in force */

/* Whether a profile is written at exit (default 1; MEMPROF_OPTIONS
 * dump_at_exit=0 sets 0). */
void memprof_set_dump_at_exit(int enable);

/*
 * compiler-rt's names, for programs written against its runtime:
 * __memprof_profile_dump() is memprof_dump() (and returns 0);
 * __memprof_profile_reset() makes the next dump start a new file.
 */
int __memprof_profile_dump(void);
void __memprof_profile_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_MEMPROF_H */
