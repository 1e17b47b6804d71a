/*
 * rt_options.c - MEMPROF_OPTIONS and __memprof_default_options(), parsed
 * into memprof_rt_opts, which the rest of the runtime reads.
 */
#include "rt.h"

#include <string.h>

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

/*
 * NAME=VALUE pairs separated by ':', ',' or blanks, as sanitizers take
 * them.  Unknown names are ignored (reported with verbosity=1), so a
 * MEMPROF_OPTIONS meant for compiler-rt does no harm.
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
