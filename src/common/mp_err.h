/*
 * mp_err.h - the one list of errors of the memprof-data library code.
 *
 * Library modules never print.  A function that can fail returns an
 * enum mp_errcode (0 = MP_OK) and, when the caller passes a struct mp_err,
 * records there the code and a detail string that names the reason
 * precisely ("MIB section runs past end of profile (offset 0x238, size
 * 39376)").  Only src/cli/ turns that into a message on stderr, prefixed
 * with the file it concerns:
 *
 *	struct mp_err err = { 0 };
 *	if (raw_file_load(&rf, path, &err))
 *		return cli_fail(path, &err);	// "memprof-data: 'a.profraw': ..."
 *
 * The codes are generated from one X-macro list so that the enum and the
 * short names can never drift apart.
 */
#ifndef MP_ERR_H
#define MP_ERR_H

#include <stddef.h>

/* X(ENUM_SUFFIX, "short description") */
#define MP_ERRORS(X)                                                     \
	X(OK, "success")                                                 \
	X(NOMEM, "out of memory")                                        \
	X(IO, "input/output error")                                      \
	X(TOO_LARGE, "input too large")                                  \
	X(TRUNCATED, "file is truncated")                                \
	X(BAD_MAGIC, "bad magic")                                        \
	X(BAD_VERSION, "unsupported version")                            \
	X(CORRUPT, "corrupt profile")                                    \
	X(ZSTD, "zstd decompression failed")                             \
	X(EMPTY, "empty file")                                           \
	X(ELF, "cannot read ELF file")                                   \
	X(DWARF, "cannot read debug information")                        \
	X(BUILD_ID, "build id mismatch")                                 \
	X(NO_BINARY, "no binary for a module")                           \
	X(NOT_FOUND, "not found")                                        \
	X(INVALID, "invalid argument")                                   \
	X(NO_INPUT, "no input could be used")

enum mp_errcode {
#define MP_ERR_ENUM(name, desc) MP_E_##name,
	MP_ERRORS(MP_ERR_ENUM)
#undef MP_ERR_ENUM
	MP_E__COUNT
};
#define MP_OK MP_E_OK

/*
 * The detail is a complete message without the file name; when it is empty
 * the short description of the code stands in for it.
 */
struct mp_err {
	enum mp_errcode code;
	char detail[256];
};

/* The short description of CODE ("bad magic"); never NULL. */
const char *mp_strerror(enum mp_errcode code);

/*
 * Record CODE with a printf-style detail in ERR (which may be NULL) and
 * return CODE, so that a failure site reads
 *	return mp_fail(err, MP_E_CORRUPT, "stack id %llu has no stack", id);
 */
enum mp_errcode mp_fail(struct mp_err *err, enum mp_errcode code,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The message to show for ERR: its detail, or the code's description. */
const char *mp_errmsg(const struct mp_err *err);

#endif /* MP_ERR_H */
