#include "emit.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_util.h"

/*
 * Two writers share the container bookkeeping: a JSON writer, and a block
 * writer that produces YAML or the text layout (the same indentation
 * rules; they differ in quoting, in how rows and vectors look, and in how
 * empty containers read).
 */

enum kind { K_OBJECT, K_LIST, K_ROW, K_VECTOR };

#define MAX_DEPTH 32

struct level {
	enum kind kind;
	unsigned count;		/* children written so far */
	bool silent;		/* text row with a display string */
};

/* S_PLAIN: a string emit_is_plain() accepted, copied as it is (quoted but
 * for text). */
enum scalar_type { S_NUM, S_STR, S_PLAIN, S_BOOL, S_NULL };

/*
 * The emitter formats into its own buffer and hands OUT whole buffers: a
 * value then costs a memcpy, not a stdio call (issue 17: show's output
 * should stream at disk speed).
 */
#define BUF_SIZE 65536

struct emit {
	enum emit_format fmt;
	FILE *out;
	int depth;		/* number of open containers */
	struct level lv[MAX_DEPTH];
	bool dash_pending;	/* block: an object element of a list opened */
	bool begun;		/* the document has started */
	bool failed;		/* nesting misuse */
	size_t len;		/* bytes waiting in buf */
	char buf[BUF_SIZE];
};

static void flush_buf(struct emit *e);

static const char *const format_names[] = { "text", "yaml", "json" };

bool emit_format_parse(const char *name, enum emit_format *out)
{
	for (int i = 0; i < 3; i++) {
		if (strcmp(name, format_names[i]) == 0) {
			*out = (enum emit_format)i;
			return true;
		}
	}
	return false;
}

struct emit *emit_open(enum emit_format f, FILE *out)
{
	struct emit *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fmt = f;
	e->out = out;
	return e;
}

bool emit_close(struct emit *e)
{
	bool ok;

	if (!e)
		return true;
	while (e->depth > 0)
		emit_end(e);
	flush_buf(e);
	ok = !e->failed && fflush(e->out) == 0 && !ferror(e->out);
	free(e);
	return ok;
}

static struct level *top(struct emit *e)
{
	return e->depth ? &e->lv[e->depth - 1] : NULL;
}

static bool inline_kind(enum kind k)
{
	return k == K_ROW || k == K_VECTOR;
}

static bool keyed(const struct level *l)
{
	return l && (l->kind == K_OBJECT || l->kind == K_ROW);
}

/* ---- the output buffer ---- */

static void flush_buf(struct emit *e)
{
	/* A short write sets OUT's error flag, which emit_close() reads. */
	if (e->len)
		fwrite_unlocked(e->buf, 1, e->len, e->out);
	e->len = 0;
}

static void put(struct emit *e, const void *s, size_t n)
{
	if (n > BUF_SIZE - e->len) {
		flush_buf(e);
		if (n > BUF_SIZE) {
			fwrite_unlocked(s, 1, n, e->out);
			return;
		}
	}
	memcpy(e->buf + e->len, s, n);
	e->len += n;
}

static void putch(struct emit *e, char c)
{
	if (e->len == BUF_SIZE)
		flush_buf(e);
	e->buf[e->len++] = c;
}

static void put_str(struct emit *e, const char *s)
{
	put(e, s, strlen(s));
}

static const char hex_digits[] = "0123456789abcdef";

/* PREFIX (two characters), then V in hex with at least MIN digits. */
static void put_hex_escape(struct emit *e, const char *prefix, uint32_t v,
			   int min)
{
	char buf[8], *end = buf + sizeof(buf), *p = end;

	for (; v || min > 0; min--) {
		*--p = hex_digits[v & 15];
		v >>= 4;
	}
	put(e, prefix, 2);
	put(e, p, (size_t)(end - p));
}

/* Printable ASCII, which both backends copy as it is (bar two quoted). */
static bool printable(unsigned char c)
{
	return (unsigned)(c - 0x20) < 0x5f;
}

/*
 * Does the word of 8 bytes W hold a byte that is not printable ASCII (below
 * 0x20, or 0x7f and up)?  Frame names and paths are long runs of
 * printable bytes: scanned 8 at a time, they cost an eighth.
 */
static bool word_unprintable(uint64_t w)
{
	const uint64_t ones = UINT64_C(0x0101010101010101),
		       highs = UINT64_C(0x8080808080808080);

	return (((w - 0x20 * ones) & ~w) | ((w + ones) | w)) & highs;
}

/* The end of the run of printable bytes at P, not past END. */
static const unsigned char *printable_run(const unsigned char *p,
					  const unsigned char *end)
{
	uint64_t w;

	while (end - p >= 8) {
		memcpy(&w, p, 8);
		if (word_unprintable(w))
			break;
		p += 8;
	}
	while (p < end && printable(*p))
		p++;
	return p;
}

/*
 * JSON string escaping; YAML double-quoted strings accept the same.  Both
 * must be Unicode, and names from binaries are bytes: a byte that is not
 * part of valid UTF-8 becomes U+FFFD.  S holds N bytes and a NUL, which
 * stops mp_utf8_len() at the end.  Runs of printable ASCII are copied
 * whole.
 */
static void put_quoted(struct emit *e, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	putch(e, '"');
	while (p < end) {
		const unsigned char *run = p;

		while (p < end && printable(*p) && *p != '"' && *p != '\\')
			p++;
		put(e, run, (size_t)(p - run));
		if (p == end)
			break;
		if (*p >= 0x80) {
			uint32_t cp;
			size_t n = mp_utf8_len(p, &cp);

			if (n == 0) {
				put(e, "\\ufffd", 6);
				n = 1;
			} else if (mp_unicode_hidden(cp)) {
				put_hex_escape(e, "\\u", cp, 4);
			} else {
				put(e, p, n);
			}
			p += n;
			continue;
		}
		switch (*p) {
		case '"': put(e, "\\\"", 2); break;
		case '\\': put(e, "\\\\", 2); break;
		case '\n': put(e, "\\n", 2); break;
		case '\r': put(e, "\\r", 2); break;
		case '\t': put(e, "\\t", 2); break;
		default: put_hex_escape(e, "\\u", *p, 4);	/* C0, DEL */
		}
		p++;
	}
	putch(e, '"');
}

/*
 * Text shows strings bare, with control characters made visible: C0 and
 * bytes that are not UTF-8 as \xHH, C1 and bidirectional controls as
 * \uHHHH.  S holds LEN bytes and a NUL, as for put_quoted().
 */
static void put_bare(struct emit *e, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		const unsigned char *run = p;
		uint32_t cp;
		size_t n;

		p = printable_run(p, end);
		put(e, run, (size_t)(p - run));
		if (p == end)
			break;
		n = *p >= 0x80 ? mp_utf8_len(p, &cp) : 0;
		if (n == 0) {
			put_hex_escape(e, "\\x", *p, 2);	/* C0, DEL, not UTF-8 */
			n = 1;
		} else if (mp_unicode_hidden(cp)) {
			put_hex_escape(e, "\\u", cp, 4);
		} else {
			put(e, p, n);
		}
		p += n;
	}
}

static void indent(struct emit *e, int n)
{
	static const char spaces[] = "                                ";

	for (; n > 0; n -= (int)sizeof(spaces) - 1)
		put(e, spaces, n < (int)sizeof(spaces) - 1
			       ? (size_t)n : sizeof(spaces) - 1);
}

/* ---- JSON ---- */

static void json_before(struct emit *e, const char *key)
{
	struct level *l = top(e);

	if (l) {
		if (l->count)
			putch(e, ',');
		if (inline_kind(l->kind)) {
			if (l->count)
				putch(e, ' ');
		} else {
			putch(e, '\n');
			indent(e, 2 * e->depth);
		}
		l->count++;
	}
	if (keyed(l)) {
		if (key)
			put_quoted(e, key, strlen(key));
		else
			put(e, "\"\"", 2);
		put(e, ": ", 2);
	}
}

static void json_scalar(struct emit *e, const char *key, enum scalar_type t,
			const char *text, size_t len)
{
	json_before(e, key);
	if (t == S_STR) {
		put_quoted(e, text, len);
	} else if (t == S_PLAIN) {
		putch(e, '"');
		put(e, text, len);
		putch(e, '"');
	} else {
		put(e, text, len);
	}
}

static void json_begin(struct emit *e, enum kind k)
{
	putch(e, k == K_OBJECT || k == K_ROW ? '{' : '[');
}

static void json_end(struct emit *e, const struct level *l)
{
	if (!inline_kind(l->kind) && l->count) {
		putch(e, '\n');
		indent(e, 2 * e->depth);
	}
	putch(e, l->kind == K_OBJECT || l->kind == K_ROW ? '}' : ']');
	if (e->depth == 0)
		putch(e, '\n');
}

/* ---- YAML and text ---- */

/*
 * Indentation of block children: the document's own members sit at
 * column 0; every nesting below adds two columns.
 */
static int block_indent(const struct emit *e)
{
	return e->depth > 0 ? 2 * (e->depth - 1) : 0;
}

/*
 * Start a member of the innermost container: the separator, the key or
 * dash.  BLOCK tells whether the member is itself a block container, whose
 * children start on lines of their own (so no space after the colon).
 */
static void block_before(struct emit *e, const char *key, bool block)
{
	struct level *l = top(e);
	bool yaml = e->fmt == EMIT_YAML;

	if (!l)
		return;
	if (inline_kind(l->kind)) {
		if (l->count)
			put_str(e, yaml ? ", " : (l->kind == K_ROW ? "  " : " "));
		if (l->kind == K_ROW) {
			put_str(e, key ? key : "");
			put_str(e, yaml ? ": " : "=");
		}
		l->count++;
		return;
	}
	if (e->dash_pending) {
		/* First member of a list element: on the dash's line. */
		e->dash_pending = false;
	} else {
		if (e->depth > 1 || l->count)
			putch(e, '\n');
		indent(e, block_indent(e));
	}
	l->count++;
	if (l->kind == K_LIST)
		put(e, "- ", 2);
	else {
		put_str(e, key ? key : "");
		put(e, ": ", block ? 1 : 2);
	}
}

static void block_scalar(struct emit *e, const char *key, enum scalar_type t,
			 const char *text, size_t len)
{
	block_before(e, key, false);
	if (t == S_PLAIN && e->fmt == EMIT_YAML) {
		putch(e, '"');
		put(e, text, len);
		putch(e, '"');
	} else if (t != S_STR) {
		put(e, text, len);
	} else if (e->fmt == EMIT_YAML) {
		put_quoted(e, text, len);
	} else {
		put_bare(e, text, len);
	}
}

static void block_begin(struct emit *e, const char *key, enum kind k,
			const char *display)
{
	struct level *parent = top(e);
	bool yaml = e->fmt == EMIT_YAML;

	if (!parent)
		return;		/* the document itself */
	block_before(e, key, !inline_kind(k));
	if (k == K_ROW && !yaml && display) {
		put_bare(e, display, strlen(display));
		return;
	}
	if (inline_kind(k)) {
		if (yaml)
			putch(e, k == K_ROW ? '{' : '[');
		return;
	}
	if (parent->kind == K_LIST && k == K_OBJECT)
		e->dash_pending = true;
}

static void block_end(struct emit *e, const struct level *l)
{
	bool yaml = e->fmt == EMIT_YAML;

	if (e->depth == 0) {
		putch(e, '\n');
		return;
	}
	if (l->silent)
		return;
	if (inline_kind(l->kind)) {
		if (yaml)
			putch(e, l->kind == K_ROW ? '}' : ']');
		else if (l->count == 0)
			put_str(e, "(none)");
		return;
	}
	if (l->count == 0) {
		/* An empty container; its "key:" or "- " is already out. */
		if (!e->dash_pending)
			putch(e, ' ');
		if (yaml)
			put_str(e, l->kind == K_OBJECT ? "{}" : "[]");
		else
			put_str(e, "(none)");
		e->dash_pending = false;
	}
}

/* ---- the interface ---- */

static void begin(struct emit *e, const char *key, enum kind k,
		  const char *display)
{
	struct level *parent = top(e);

	if (e->depth >= MAX_DEPTH) {
		e->failed = true;
		return;
	}
	e->begun = true;
	if (parent && parent->silent) {
		e->lv[e->depth++] = (struct level){ k, 0, true };
		return;
	}
	if (e->fmt == EMIT_JSON) {
		json_before(e, key);
		json_begin(e, k);
	} else {
		block_begin(e, key, k, display);
	}
	e->lv[e->depth++] = (struct level){
		k, 0, k == K_ROW && display && e->fmt == EMIT_TEXT
	};
}

void emit_object(struct emit *e, const char *key)
{
	begin(e, key, K_OBJECT, NULL);
}

void emit_list(struct emit *e, const char *key)
{
	begin(e, key, K_LIST, NULL);
}

void emit_row(struct emit *e, const char *key, const char *display)
{
	begin(e, key, K_ROW, display);
}

void emit_vector(struct emit *e, const char *key)
{
	begin(e, key, K_VECTOR, NULL);
}

void emit_end(struct emit *e)
{
	struct level l;

	if (e->depth == 0) {
		e->failed = true;
		return;
	}
	l = e->lv[--e->depth];
	if (e->depth && e->lv[e->depth - 1].silent)
		return;
	if (e->fmt == EMIT_JSON)
		json_end(e, &l);
	else
		block_end(e, &l);
}

/*
 * Is a scalar here shown?  Not inside a text row that has a display
 * string; never outside the document (misuse).  Asked before a value is
 * formatted, so that silent values cost nothing.
 */
static bool shown(struct emit *e)
{
	struct level *l = top(e);

	if (!l) {
		e->failed = true;
		return false;
	}
	return !l->silent;
}

/* TEXT holds LEN bytes and a NUL. */
static void scalar(struct emit *e, const char *key, enum scalar_type t,
		   const char *text, size_t len)
{
	if (e->fmt == EMIT_JSON)
		json_scalar(e, key, t, text, len);
	else
		block_scalar(e, key, t, text, len);
}

void emit_u64(struct emit *e, const char *key, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf) - 1, *p;

	if (!shown(e))
		return;
	*end = '\0';
	p = mp_u64_digits(end, v);
	scalar(e, key, S_NUM, p, (size_t)(end - p));
}

void emit_i64(struct emit *e, const char *key, int64_t v)
{
	char buf[24], *end = buf + sizeof(buf) - 1, *p;

	if (!shown(e))
		return;
	*end = '\0';
	p = mp_u64_digits(end, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	scalar(e, key, S_NUM, p, (size_t)(end - p));
}

void emit_f64(struct emit *e, const char *key, double v, int digits)
{
	char buf[64];

	if (!shown(e))
		return;
	/* JSON has no NaN or infinity. */
	if (v != v || v > 1e300 || v < -1e300)
		scalar(e, key, S_NULL, "null", 4);
	else {
		snprintf(buf, sizeof(buf), "%.*f", digits, v);
		scalar(e, key, S_NUM, buf, strlen(buf));
	}
}

void emit_hex(struct emit *e, const char *key, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf) - 1, *p = end;

	if (!shown(e))
		return;
	*end = '\0';
	do {
		*--p = hex_digits[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	/* A string in JSON and YAML; bare in text either way. */
	scalar(e, key, S_STR, p, (size_t)(end - p));
}

void emit_str(struct emit *e, const char *key, const char *s)
{
	if (!shown(e))
		return;
	if (!s)
		scalar(e, key, S_NULL, e->fmt == EMIT_TEXT ? "-" : "null",
		       e->fmt == EMIT_TEXT ? 1 : 4);
	else
		scalar(e, key, S_STR, s, strlen(s));
}

void emit_strn(struct emit *e, const char *key, const char *s, size_t len)
{
	if (shown(e))
		scalar(e, key, S_STR, s, len);
}

bool emit_is_plain(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	return printable_run(p, end) == end && !memchr(s, '"', len) &&
	       !memchr(s, '\\', len);
}

void emit_plain(struct emit *e, const char *key, const char *s, size_t len)
{
	if (shown(e))
		scalar(e, key, S_PLAIN, s, len);
}

void emit_bool(struct emit *e, const char *key, bool v)
{
	if (shown(e))
		scalar(e, key, S_BOOL, v ? "true" : "false", v ? 4 : 5);
}

void emit_error(struct emit *e, const char *file, const char *message)
{
	if (!e || e->begun || e->fmt == EMIT_TEXT)
		return;
	emit_object(e, NULL);
	emit_str(e, "schema", "memprof-data/error/1");
	emit_object(e, "error");
	emit_str(e, "file", file);
	emit_str(e, "message", message);
	emit_end(e);
	emit_end(e);
}
