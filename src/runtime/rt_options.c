/*
 * rt_options.c - MEMPROF_OPTIONS and __memprof_default_options(), parsed
 * into memprof_rt_opts, which the rest of the runtime reads.
 */
#include "rt.h"

#include <string.h>

_Static_assert(RT_MAX_FRAMES == 255, "the messages below say 255");

struct rt_opts memprof_rt_opts = {
	.dump_at_exit = 1,
	.max_frames = 30,	/* compiler-rt's malloc_context_size */
};

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

static int parse_u64(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(v[i] - '0');

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

/* One line on stderr for a value we cannot use: never silently. */
static void bad_value(const char *origin, const char *name, size_t nl,
		      const char *val, size_t vl, const char *what)
{
	char n[64], v[64];

	nl = nl < sizeof(n) - 1 ? nl : sizeof(n) - 1;
	vl = vl < sizeof(v) - 1 ? vl : sizeof(v) - 1;
	memcpy(n, name, nl);
	n[nl] = '\0';
	memcpy(v, val, vl);
	v[vl] = '\0';
	memprof_rt_log("%s: %s=%s: %s", origin, n, v, what);
}

/*
 * NAME=VALUE pairs separated by ':', ',' or blanks, as sanitizers take
 * them.  Unknown names are ignored (reported with verbosity=1), so a
 * MEMPROF_OPTIONS meant for compiler-rt does no harm; a known name with a
 * value we cannot use is reported on stderr and ignored, and a value out
 * of range clamped, with a line saying so.
 */
void memprof_rt_parse_options(const char *s, const char *origin)
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
		} else if (IS("dump_at_exit") || IS("malloc_context_size") ||
			   IS("verbosity")) {
			if (parse_int(val, vl, &n) != 0) {
				bad_value(origin, name, nl, val, vl,
					  "not a whole number up to 1000000, ignored");
			} else if (IS("dump_at_exit")) {
				memprof_rt_opts.dump_at_exit = n != 0;
			} else if (IS("verbosity")) {
				memprof_rt_opts.verbosity = n;
			} else if (n < 1) {
				/* Empty stacks: llvm-profdata rejects the file. */
				bad_value(origin, name, nl, val, vl, "at least 1 frame "
					  "is kept (a profile of empty stacks is "
					  "unreadable); using 1");
				memprof_rt_opts.max_frames = 1;
			} else if (n > RT_MAX_FRAMES) {
				bad_value(origin, name, nl, val, vl, "more than the "
					  "runtime keeps (255, as compiler-rt); using 255");
				memprof_rt_opts.max_frames = RT_MAX_FRAMES;
			} else {
				memprof_rt_opts.max_frames = n;
			}
		} else if (IS("sample_interval") || IS("sample_seed")) {
			uint64_t x;

			if (parse_u64(val, vl, &x) != 0) {
				bad_value(origin, name, nl, val, vl,
					  "not a whole number, ignored");
			} else if (IS("sample_seed")) {
				memprof_rt_opts.sample_seed = x;
				memprof_rt_opts.sample_seed_set = 1;
			} else if (x > RAW_SAMPLE_INTERVAL_MAX) {
				bad_value(origin, name, nl, val, vl, "more than "
					  "1073741824 bytes; using 1073741824");
				memprof_rt_opts.sample_interval = RAW_SAMPLE_INTERVAL_MAX;
			} else {
				memprof_rt_opts.sample_interval = x;
			}
		} else if (IS("unwind")) {
			int fp = vl == 2 && memcmp(val, "fp", 2) == 0;
			int bt = vl == 9 && memcmp(val, "backtrace", 9) == 0;

			if (fp || bt) {
				memprof_rt_opts.unwind_backtrace = bt;
				memprof_rt_opts.slow_unwind_cut = 0;
			} else {
				bad_value(origin, name, nl, val, vl,
					  "wants fp or backtrace, ignored");
			}
		} else if (IS("fast_unwind_on_malloc")) {
			/* compiler-rt's name for the same choice: 1 walks
			 * frame pointers, 0 unwinds slowly and whole, and
			 * cuts a deep stack where compiler-rt's slow unwinder
			 * does (memprof_rt_stack_id()). */
			if (parse_int(val, vl, &n) != 0 || n > 1)
				bad_value(origin, name, nl, val, vl,
					  "wants 0 or 1, ignored");
			else
				memprof_rt_opts.unwind_backtrace =
					memprof_rt_opts.slow_unwind_cut = n == 0;
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
