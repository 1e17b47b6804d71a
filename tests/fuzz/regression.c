/*
 * regression.c - replay fuzz inputs through a target without libFuzzer.
 *
 *	fuzz-regress-raw tests/fuzz/corpus/raw [FILE|DIR]...
 *
 * Linked with one tests/fuzz/fuzz_<name>.c (FUZZ_TARGET names it), this
 * main() feeds every file named, and every regular file of every directory
 * named (in name order), to LLVMFuzzerTestOneInput(), each from a buffer
 * of exactly its size.  Beyond "does not crash" (an abort names the file),
 * it holds every input to two resource bounds:
 *
 *   time	each input must finish within FUZZ_TIMEOUT seconds (default
 *		10): a reader must never loop;
 *   heap	the peak of live heap bytes while the input runs may exceed
 *		the heap in use before it by at most
 *		fuzz_mem_per_byte x (input + decoded bytes) + FUZZ_MEM_SLACK
 *		(fuzz.h), plus MP_ZSTD_WINDOW_MAX for a zstd input (the
 *		window its frame declares, up to that), and nothing may stay
 *		allocated once it returns.
 *
 * The heap is measured by replacing malloc and friends with thin wrappers
 * around glibc's __libc_* functions (glibc supports replacing malloc this
 * way); under AddressSanitizer, which owns malloc, only time is checked and
 * ASan checks leaks.  Prints one summary line; exits 1 on any failure.
 * FUZZ_VERBOSE=1 prints a line per input.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/mp_file.h"
#include "fuzz.h"

#ifndef FUZZ_TARGET
#define FUZZ_TARGET "fuzz"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* The input being replayed, for the crash and timeout messages. */
static const char *current = "(none)";

static void say(const char *a, const char *b)
{
	ssize_t r;

	r = write(STDERR_FILENO, a, strlen(a));
	r = write(STDERR_FILENO, b, strlen(b));
	r = write(STDERR_FILENO, "\n", 1);
	(void)r;
}

static void on_crash(int sig)
{
	say(FUZZ_TARGET ": crashed on ", current);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_alarm(int sig)
{
	(void)sig;
	say(FUZZ_TARGET ": timeout (a loop?) on ", current);
	_exit(1);
}

/* ---- heap accounting ---- */

#ifndef UNDER_ASAN
#define HEAP_ACCOUNTING 1

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);
void __libc_free(void *);

static size_t heap_live, heap_peak;

static void *counted(void *p)
{
	if (p) {
		size_t live = __atomic_add_fetch(&heap_live,
						 malloc_usable_size(p),
						 __ATOMIC_RELAXED);

		if (live > __atomic_load_n(&heap_peak, __ATOMIC_RELAXED))
			__atomic_store_n(&heap_peak, live, __ATOMIC_RELAXED);
	}
	return p;
}

static void uncount(void *p)
{
	if (p)
		__atomic_sub_fetch(&heap_live, malloc_usable_size(p),
				   __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	return counted(__libc_malloc(n));
}

void *calloc(size_t n, size_t m)
{
	return counted(__libc_calloc(n, m));
}

void *realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = __libc_realloc(p, n);

	if (q || n == 0)
		__atomic_sub_fetch(&heap_live, old, __ATOMIC_RELAXED);
	return counted(q);
}

void free(void *p)
{
	uncount(p);
	__libc_free(p);
}

void *memalign(size_t a, size_t n)
{
	return counted(__libc_memalign(a, n));
}

void *aligned_alloc(size_t a, size_t n)
{
	return counted(__libc_memalign(a, n));
}

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p;

	if (a < sizeof(void *) || (a & (a - 1)))
		return EINVAL;
	p = counted(__libc_memalign(a, n));
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return counted(__libc_valloc(n));
}

void *pvalloc(size_t n)
{
	return counted(__libc_pvalloc(n));
}
#endif /* !UNDER_ASAN */

#ifdef UNDER_ASAN
#include <sanitizer/common_interface_defs.h>

static void on_asan_death(void)
{
	say(FUZZ_TARGET ": AddressSanitizer report on ", current);
}
#endif

static size_t decoded;
static bool verbose, warmed;

void fuzz_note_decoded(size_t bytes)
{
	decoded += bytes;
}

/* ---- replay ---- */

struct stats {
	size_t inputs, bytes;
	size_t peak, peak_input;	/* the largest heap peak, its input */
	double slowest;
	char peak_file[512], slowest_file[512];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void keep_name(char *dst, size_t size, const char *path)
{
	snprintf(dst, size, "%s", path);
}

static int run_one(const char *path, struct stats *st, unsigned timeout)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data;
	struct stat sb;
	size_t size;
	double t0, dt;
	int rc = 0;

	if (!f || fstat(fileno(f), &sb) != 0) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	size = (size_t)sb.st_size;
	/* Exactly SIZE bytes, so that ASan sees a read past the end. */
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != size) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(data);
		fclose(f);
		return 1;
	}
	fclose(f);

	current = path;
	alarm(timeout);
	if (!warmed) {
		/* A target's one-time setup (a file it keeps open, its stdio
		 * buffer) is not a leak: run the first input once unmeasured. */
		LLVMFuzzerTestOneInput(data, size);
		warmed = true;
	}
	decoded = 0;
#ifdef HEAP_ACCOUNTING
	size_t before = heap_live, limit, used, left;

	heap_peak = before;
#endif
	t0 = now();
	LLVMFuzzerTestOneInput(data, size);
	dt = now() - t0;
	alarm(0);
#ifdef HEAP_ACCOUNTING
	used = heap_peak - before;
	left = heap_live - before;
	limit = fuzz_mem_per_byte * (size + decoded) + FUZZ_MEM_SLACK;
	/* A zstd frame's window, allocated before any content. */
	if (mp_is_zstd(data, size))
		limit += MP_ZSTD_WINDOW_MAX;
	if (used > limit) {
		fprintf(stderr, "%s: heap peak %zu bytes for %zu input bytes "
			"(%zu decoded), over the limit of %zu\n", path, used,
			size, decoded, limit);
		rc = 1;
	}
	if (left) {
		fprintf(stderr, "%s: %zu bytes still allocated after the input\n",
			path, left);
		rc = 1;
	}
	if (used > st->peak) {
		st->peak = used;
		st->peak_input = size + decoded;
		keep_name(st->peak_file, sizeof(st->peak_file), path);
	}
	if (verbose)
		fprintf(stderr, "%s: %zu bytes (%zu decoded), heap peak %zu, "
			"%.3f s\n", path, size, decoded, used, dt);
#else
	if (verbose)
		fprintf(stderr, "%s: %zu bytes, %.3f s\n", path, size, dt);
#endif
	current = "(none)";
	if (dt > st->slowest) {
		st->slowest = dt;
		keep_name(st->slowest_file, sizeof(st->slowest_file), path);
	}
	st->inputs++;
	st->bytes += size;
	free(data);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every regular file of DIR in name order. */
static int run_dir(const char *dir, struct stats *st, unsigned timeout)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, alloc = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "%s: cannot open: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			names = realloc(names, alloc * sizeof(*names));
			if (!names)
				abort();
		}
		names[n] = strdup(path);
		if (!names[n++])
			abort();
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		if (run_one(names[i], st, timeout))
			rc = 1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	struct stats st = { 0 };
	const char *t = getenv("FUZZ_TIMEOUT");
	unsigned timeout = t && atoi(t) > 0 ? (unsigned)atoi(t) : 10;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	verbose = getenv("FUZZ_VERBOSE") && *getenv("FUZZ_VERBOSE");
	signal(SIGABRT, on_crash);
	signal(SIGALRM, on_alarm);
#ifdef UNDER_ASAN
	__sanitizer_set_death_callback(on_asan_death);
#else
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGFPE, on_crash);
#endif
	for (int i = 1; i < argc; i++) {
		struct stat sb;

		if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode))
			rc |= run_dir(argv[i], &st, timeout);
		else
			rc |= run_one(argv[i], &st, timeout);
	}
	printf(FUZZ_TARGET ": %zu inputs (%zu bytes) replayed in the limits "
	       "(%us each", st.inputs, st.bytes, timeout);
#ifdef HEAP_ACCOUNTING
	printf(", heap <= %zu x input + %zu MiB (+ %u MiB for zstd)",
	       fuzz_mem_per_byte, FUZZ_MEM_SLACK >> 20,
	       MP_ZSTD_WINDOW_MAX >> 20);
	if (st.inputs)
		printf("; largest heap peak %zu KiB for %zu input bytes, %s",
		       st.peak >> 10, st.peak_input,
		       st.peak_file[0] ? st.peak_file : "-");
#endif
	if (st.inputs)
		printf("; slowest %.3f s on %s", st.slowest, st.slowest_file);
	printf(")%s\n", rc ? " -- with FAILURES above" : "");
	return rc || st.inputs == 0;
}
