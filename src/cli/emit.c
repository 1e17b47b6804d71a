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

enum scalar_type { S_NUM, S_STR, S_BOOL, S_NULL };

struct emit {
	enum emit_format fmt;
	FILE *out;
	int depth;		/* number of open containers */
	struct level lv[MAX_DEPTH];
	bool dash_pending;	/* block: an object element of a list opened */
	bool begun;		/* the document has started */
	bool failed;		/* nesting misuse */
};

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

/*
 * JSON string escaping; YAML double-quoted strings accept the same.  Both
 * must be Unicode, and names from binaries are bytes: a byte that is not
 * part of valid UTF-8 becomes U+FFFD.
 */
static void put_quoted(FILE *out, const char *s)
{
	putc_unlocked('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80) {
			uint32_t cp;
			size_t n = mp_utf8_len(p, &cp);

			if (n == 0) {
				fputs_unlocked("\\ufffd", out);
			} else if (mp_unicode_hidden(cp)) {
				fprintf(out, "\\u%04x", (unsigned)cp);
				p += n - 1;
			} else {
				fwrite(p, 1, n, out);
				p += n - 1;
			}
			continue;
		}
		switch (*p) {
		case '"': fputs_unlocked("\\\"", out); break;
		case '\\': fputs_unlocked("\\\\", out); break;
		case '\n': fputs_unlocked("\\n", out); break;
		case '\r': fputs_unlocked("\\r", out); break;
		case '\t': fputs_unlocked("\\t", out); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				putc_unlocked(*p, out);
		}
	}
	putc_unlocked('"', out);
}

/*
 * Text shows strings bare, with control characters made visible: C0 and
 * bytes that are not UTF-8 as \xHH, C1 and bidirectional controls as
 * \uHHHH.
 */
static void put_bare(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		uint32_t cp;
		size_t n = *p >= 0x80 ? mp_utf8_len(p, &cp) : 1;

		if (*p < 0x20 || *p == 0x7f || n == 0) {
			fprintf(out, "\\x%02x", *p);
		} else if (n > 1 && mp_unicode_hidden(cp)) {
			fprintf(out, "\\u%04x", (unsigned)cp);
			p += n - 1;
		} else {
			fwrite(p, 1, n, out);
			p += n - 1;
		}
	}
}

static void indent(struct emit *e, int n)
{
	for (int i = 0; i < n; i++)
		putc_unlocked(' ', e->out);
}

/* ---- JSON ---- */

static void json_before(struct emit *e, const char *key)
{
	struct level *l = top(e);

	if (l) {
		if (l->count)
			putc_unlocked(',', e->out);
		if (inline_kind(l->kind)) {
			if (l->count)
				putc_unlocked(' ', e->out);
		} else {
			putc_unlocked('\n', e->out);
			indent(e, 2 * e->depth);
		}
		l->count++;
	}
	if (keyed(l)) {
		put_quoted(e->out, key ? key : "");
		fputs_unlocked(": ", e->out);
	}
}

static void json_scalar(struct emit *e, const char *key, enum scalar_type t,
			const char *text)
{
	json_before(e, key);
	if (t == S_STR)
		put_quoted(e->out, text);
	else
		fputs_unlocked(text, e->out);
}

static void json_begin(struct emit *e, enum kind k)
{
	putc_unlocked(k == K_OBJECT || k == K_ROW ? '{' : '[', e->out);
}

static void json_end(struct emit *e, const struct level *l)
{
	if (!inline_kind(l->kind) && l->count) {
		putc_unlocked('\n', e->out);
		indent(e, 2 * e->depth);
	}
	putc_unlocked(l->kind == K_OBJECT || l->kind == K_ROW ? '}' : ']', e->out);
	if (e->depth == 0)
		putc_unlocked('\n', e->out);
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
			fputs_unlocked(yaml ? ", " : (l->kind == K_ROW ? "  " : " "),
			      e->out);
		if (l->kind == K_ROW)
			fprintf(e->out, yaml ? "%s: " : "%s=", key ? key : "");
		l->count++;
		return;
	}
	if (e->dash_pending) {
		/* First member of a list element: on the dash's line. */
		e->dash_pending = false;
	} else {
		if (e->depth > 1 || l->count)
			putc_unlocked('\n', e->out);
		indent(e, block_indent(e));
	}
	l->count++;
	if (l->kind == K_LIST)
		fputs_unlocked("- ", e->out);
	else
		fprintf(e->out, block ? "%s:" : "%s: ", key ? key : "");
}

static void block_scalar(struct emit *e, const char *key, enum scalar_type t,
			 const char *text)
{
	block_before(e, key, false);
	if (t != S_STR)
		fputs_unlocked(text, e->out);
	else if (e->fmt == EMIT_YAML)
		put_quoted(e->out, text);
	else
		put_bare(e->out, text);
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
		put_bare(e->out, display);
		return;
	}
	if (inline_kind(k)) {
		if (yaml)
			putc_unlocked(k == K_ROW ? '{' : '[', e->out);
		return;
	}
	if (parent->kind == K_LIST && k == K_OBJECT)
		e->dash_pending = true;
}

static void block_end(struct emit *e, const struct level *l)
{
	bool yaml = e->fmt == EMIT_YAML;

	if (e->depth == 0) {
		putc_unlocked('\n', e->out);
		return;
	}
	if (l->silent)
		return;
	if (inline_kind(l->kind)) {
		if (yaml)
			putc_unlocked(l->kind == K_ROW ? '}' : ']', e->out);
		else if (l->count == 0)
			fputs_unlocked("(none)", e->out);
		return;
	}
	if (l->count == 0) {
		/* An empty container; its "key:" or "- " is already out. */
		if (!e->dash_pending)
			putc_unlocked(' ', e->out);
		if (yaml)
			fputs_unlocked(l->kind == K_OBJECT ? "{}" : "[]", e->out);
		else
			fputs_unlocked("(none)", e->out);
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

static void scalar(struct emit *e, const char *key, enum scalar_type t,
		   const char *text)
{
	struct level *l = top(e);

	if (!l) {
		e->failed = true;
		return;
	}
	if (l->silent)
		return;
	if (e->fmt == EMIT_JSON)
		json_scalar(e, key, t, text);
	else
		block_scalar(e, key, t, text);
}

void emit_u64(struct emit *e, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	scalar(e, key, S_NUM, buf);
}

void emit_i64(struct emit *e, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	scalar(e, key, S_NUM, buf);
}

void emit_f64(struct emit *e, const char *key, double v, int digits)
{
	char buf[64];

	/* JSON has no NaN or infinity. */
	if (v != v || v > 1e300 || v < -1e300)
		scalar(e, key, S_NULL, "null");
	else {
		snprintf(buf, sizeof(buf), "%.*f", digits, v);
		scalar(e, key, S_NUM, buf);
	}
}

void emit_hex(struct emit *e, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	/* A string in JSON and YAML; bare in text either way. */
	scalar(e, key, S_STR, buf);
}

void emit_str(struct emit *e, const char *key, const char *s)
{
	if (!s)
		scalar(e, key, S_NULL, e->fmt == EMIT_TEXT ? "-" : "null");
	else
		scalar(e, key, S_STR, s);
}

void emit_bool(struct emit *e, const char *key, bool v)
{
	scalar(e, key, S_BOOL, v ? "true" : "false");
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
