/*
 * fuzz_show - `memprof-data show` minus the command line: any bytes that
 * load as a raw or indexed profile are put in a view and rendered by
 * report_show() in text, YAML and JSON.
 *
 * The input goes through the same path as a file given to show: it is
 * written to a memfd and view_add_file() opens "/proc/self/fd/N", so zstd
 * detection and decompression are exercised too.  The file is added twice
 * (two inputs in one view); an indexed file is also loaded through
 * --function with the name of one of its records.  The JSON document must
 * parse (a small strict parser below), its strings valid UTF-8 whatever
 * bytes the names hold.  Text and YAML go to /dev/null.
 */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "cli/emit.h"
#include "cli/report.h"
#include "profile/view.h"
#include "common/mp_file.h"

/*
 * The view holds every stack as frames of about 100 bytes each, and an
 * indexed file may expand to 16 frames per byte of it (VIEW_FRAMES_PER_BYTE
 * in src/cli/view.c: a trie shares prefixes).
 */
const size_t fuzz_mem_per_byte = 2048;

/* ---- a strict JSON parser, for checking the output only ---- */

struct json {
	const char *p, *end;
	int depth;
};

static void ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' ||
				 *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct json *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n))
		return false;
	j->p += n;
	return true;
}

static bool digits(struct json *j)
{
	const char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool number(struct json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!digits(j))
			return false;
	}
	return true;
}

/* Length of the UTF-8 sequence at P (at most N bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

static bool string(struct json *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20)
			return false;
		if (c == '\\') {
			j->p++;
			if (j->p >= j->end)
				return false;
			if (*j->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (j->p + i >= j->end ||
					    !strchr("0123456789abcdefABCDEF", j->p[i]))
						return false;
				j->p += 5;
			} else if (strchr("\"\\/bfnrt", *j->p) && *j->p) {
				j->p++;
			} else {
				return false;
			}
			continue;
		}
		if (c >= 0x80) {
			size_t n = utf8_len((const unsigned char *)j->p,
					    (size_t)(j->end - j->p));

			if (!n)
				return false;
			j->p += n;
			continue;
		}
		j->p++;
	}
	if (j->p >= j->end)
		return false;
	j->p++;
	return true;
}

static bool value(struct json *j);

static bool container(struct json *j, char close, bool keyed)
{
	j->p++;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		ws(j);
		if (keyed) {
			if (!string(j))
				return false;
			ws(j);
			if (j->p >= j->end || *j->p != ':')
				return false;
			j->p++;
		}
		if (!value(j))
			return false;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return true;
		}
		return false;
	}
}

static bool value(struct json *j)
{
	bool ok;

	ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > 64)
			return false;
		ok = container(j, *j->p == '{' ? '}' : ']', *j->p == '{');
		j->depth--;
		return ok;
	case '"':
		return string(j);
	case 't':
		return lit(j, "true");
	case 'f':
		return lit(j, "false");
	case 'n':
		return lit(j, "null");
	default:
		return number(j);
	}
}

static bool json_valid(const char *s, size_t n)
{
	struct json j = { s, s + n, 0 };

	if (!value(&j))
		return false;
	ws(&j);
	return j.p == j.end;
}

/* ---- the target ---- */

static int memfd = -1;
static FILE *devnull;
static char devnull_buf[4096];
static char fd_path[64];

static void setup(void)
{
	if (memfd >= 0)
		return;
	memfd = memfd_create("fuzz_show", MFD_CLOEXEC);
	FUZZ_ASSERT(memfd >= 0);
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", memfd);
	devnull = fopen("/dev/null", "w");
	FUZZ_ASSERT(devnull);
	/* A buffer of our own: stdio's would be allocated at the first
	 * render and look like a leak to the regression driver. */
	setvbuf(devnull, devnull_buf, _IOFBF, sizeof(devnull_buf));
}

static void render(const struct view *v, enum emit_format fmt,
		   const struct report_show_opts *opts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = fmt == EMIT_JSON ? open_memstream(&buf, &len) : devnull;
	struct emit *e;

	FUZZ_ASSERT(out);
	e = emit_open(fmt, out);
	FUZZ_ASSERT(e);
	FUZZ_ASSERT(report_show(e, v, opts));
	FUZZ_ASSERT(emit_close(e));
	if (fmt != EMIT_JSON)
		return;
	FUZZ_ASSERT(fclose(out) == 0);
	if (!json_valid(buf, len)) {
		fprintf(stderr, "invalid JSON output:\n%.*s\n",
			len > 4096 ? 4096 : (int)len, buf);
		abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct view v;
	struct mp_err err = { 0 };
	enum mp_errcode rc;
	char function[256] = "";
	unsigned char *fixed = NULL;

	setup();
	/*
	 * An indexed input gets its header's size field set right: without
	 * that, any mutation that changes the length is rejected at once
	 * (fuzz_indexed tries both ways).
	 */
	if (size >= 24 && memcmp(data, "\x89MPIDX\r\n", 8) == 0) {
		fixed = malloc(size);
		FUZZ_ASSERT(fixed);
		memcpy(fixed, data, size);
		fuzz_fix_idx_size(fixed, size);
		data = fixed;
	}
	if (mp_is_zstd(data, size)) {
		/* Only to state the decoded size to the regression driver. */
		struct mp_buf z = { 0 };

		if (mp_zstd_decompress(&z, data, size, &err) == MP_OK)
			fuzz_decoded(z.size);
		mp_buf_release(&z);
	}
	FUZZ_ASSERT(ftruncate(memfd, 0) == 0);
	FUZZ_ASSERT(pwrite(memfd, data, size, 0) == (ssize_t)size);
	free(fixed);

	view_init(&v);
	rc = view_add_file(&v, fd_path, NULL, &err);
	if (rc) {
		FUZZ_ASSERT_REJECTED(rc, err);
		view_release(&v);
		return 0;
	}
	FUZZ_ASSERT(view_add_file(&v, fd_path, NULL, &err) == MP_OK);
	FUZZ_ASSERT(v.ninputs == 2);
	FUZZ_ASSERT(v.inputs[0].ncontexts + v.inputs[1].ncontexts == v.ncontexts);

	{
		struct report_show_opts text = { SORT_ALLOCS, 0, true, NULL, NULL, true };
		struct report_show_opts yaml = { SORT_BYTES, 3, false, NULL, NULL, false };
		struct report_show_opts json = { SORT_LIFETIME, 0, false, NULL, NULL, true };

		render(&v, EMIT_TEXT, &text);
		render(&v, EMIT_YAML, &yaml);
		render(&v, EMIT_JSON, &json);
	}
	/* An indexed file's first context, found again through the hash table. */
	if (v.inputs[0].idx && v.ncontexts && v.contexts[0].nframes &&
	    v.contexts[0].frames[0].function) {
		const char *name = v.contexts[0].frames[0].function;
		size_t n = strlen(name);

		if (n < sizeof(function))
			memcpy(function, name, n + 1);
	}
	view_release(&v);

	if (function[0]) {
		struct report_show_opts opts = { SORT_ACCESSES, 0, false, NULL, NULL, false };

		view_init(&v);
		FUZZ_ASSERT(view_add_file(&v, fd_path, function, &err) == MP_OK);
		FUZZ_ASSERT(v.ncontexts >= 1);
		render(&v, EMIT_JSON, &opts);
		view_release(&v);
	}
	return 0;
}
