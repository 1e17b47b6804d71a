/*
 * emit.h - one structured-output interface, three backends (text, YAML,
 * JSON), in the manner of bpftool's json_writer.
 *
 * The format is chosen once, when the emitter is opened; print sites only
 * describe structure and values and never test the format.  Escaping and
 * layout live in the backends alone.
 *
 *	struct emit *e = emit_open(EMIT_JSON, stdout);
 *	emit_object(e, NULL);			// the document
 *	emit_str(e, "schema", "memprof-data/show/2");
 *	emit_list(e, "frames");
 *	emit_row(e, NULL, "main a.c:3:5");	// one frame
 *	emit_hex(e, "address", 0x401136);
 *	emit_end(e);				// row
 *	emit_end(e);				// list
 *	emit_end(e);				// document
 *	if (emit_close(e))			// flushes; false on write error
 *		...
 *
 * Containers:
 *	object  a block mapping of named values
 *	list    a block sequence
 *	row     a small mapping shown on one line; DISPLAY, when not NULL,
 *		is what the text backend shows instead of key=value pairs
 *	vector  a sequence of scalars shown on one line
 * Keys are required inside objects and rows and ignored inside lists and
 * vectors (pass NULL).
 *
 * Text is for people: no quoting, "key: value" lines, rows as their
 * display string.  YAML is block YAML with double-quoted strings.  JSON
 * is indented two spaces with rows and vectors on one line; numbers are
 * numbers, addresses are "0x..." strings.
 */
#ifndef EMIT_H
#define EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum emit_format { EMIT_TEXT, EMIT_YAML, EMIT_JSON };

struct emit;

/* Parse "text", "yaml" or "json"; false for anything else. */
bool emit_format_parse(const char *name, enum emit_format *out);

/*
 * NULL only when out of memory.  The emitter keeps its output in a buffer
 * of its own and writes it to OUT when the buffer fills and at
 * emit_close(): nothing else should write to OUT in between.
 */
struct emit *emit_open(enum emit_format f, FILE *out);
/* Finish, flush and free; false when writing failed at any point. */
bool emit_close(struct emit *e);

void emit_object(struct emit *e, const char *key);
void emit_list(struct emit *e, const char *key);
void emit_row(struct emit *e, const char *key, const char *display);
void emit_vector(struct emit *e, const char *key);
void emit_end(struct emit *e);

void emit_u64(struct emit *e, const char *key, uint64_t v);
void emit_i64(struct emit *e, const char *key, int64_t v);
/* A real number with DIGITS digits after the point. */
void emit_f64(struct emit *e, const char *key, double v, int digits);
void emit_hex(struct emit *e, const char *key, uint64_t v);
/* S == NULL emits null. */
void emit_str(struct emit *e, const char *key, const char *s);
/* The same for the LEN bytes at S (not NULL), whose length is known. */
void emit_strn(struct emit *e, const char *key, const char *s, size_t len);
void emit_bool(struct emit *e, const char *key, bool v);

/*
 * A string printed many times is checked once: emit_is_plain() tells
 * whether the LEN bytes at S are printable ASCII with no quote or
 * backslash, which every format takes as they are (in quotes for YAML
 * and JSON); emit_plain() emits such a string without looking at it
 * again, as emit_strn() would.
 */
bool emit_is_plain(const char *s, size_t len);
void emit_plain(struct emit *e, const char *key, const char *s, size_t len);

/*
 * A command failed before its document began: JSON and YAML print an
 * error document instead, {"schema": "memprof-data/error/1", "error":
 * {"file": FILE, "message": MESSAGE}}, so that a consumer always gets a
 * valid document; text prints nothing (the message is on stderr).  Does
 * nothing once the document has begun.  FILE may be NULL.
 */
void emit_error(struct emit *e, const char *file, const char *message);

#endif /* EMIT_H */
