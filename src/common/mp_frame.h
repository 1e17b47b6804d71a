/*
 * mp_frame.h - one frame of a call stack, whoever made it.
 *
 * The symbolizer produces frames from PCs, the indexed reader from its
 * tables, and every consumer (merge's builder, show, overlap, diff, the
 * exports) takes the same struct.  A frame is one of:
 *
 *	symbolized	function (linkage name) and/or file set, with line,
 *			column, discriminator and the function's first line
 *	unsymbolized	function and file NULL: its module's build id and
 *			the offset in that module when the module is known,
 *			else only the address (raw inputs without a build id)
 *
 * Strings and the build id are borrowed: whoever fills a frame says how
 * long they live (the symbolizer's context, the indexed file's bytes, a
 * view's arena).
 *
 *	char *s = mp_frame_string(&f, NULL);	// "main /src/a.c:12:3"
 *	...
 *	free(s);
 */
#ifndef MP_FRAME_H
#define MP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	MP_FRAME_INLINED = 1,	/* inlined into the next (outer) frame */
	MP_FRAME_ADDRESS = 2,	/* address holds the PC (raw inputs) */
	MP_FRAME_UNMAPPED = 4,	/* the PC lies in no segment of its profile */
	MP_FRAME_RUNTIME = 8,	/* the allocation runtime's own frame */
	MP_FRAME_GUID = 16,	/* LLVM's: function is "guid:HEX" (no name
				 * known), line an offset from its first line */
	MP_FRAME_ALLOC_LIB = 32,	/* an allocator library's frame (with
					 * RUNTIME from the symbolizer): kept in
					 * indexed profiles, hidden by show */
	MP_FRAME_FOUND = 64,	/* symbolized from a file found by build id
				 * (a debug directory's, a library of the
				 * loader's cache), not a given binary: the
				 * LLVM export leaves it out */
	/*
	 * With RUNTIME, from the symbolizer: in the profiling runtime's own
	 * source (compiler-rt's, ours), which calls no code of the program.
	 * Past the stack's leading runtime frames it is a stale return
	 * address that a walk of frame pointers met where code built
	 * without them left no frame; show and merge leave it out, as
	 * llvm-profdata does.  Never written to a file.
	 */
	MP_FRAME_RUNTIME_CODE = 128,
};

struct mp_frame {
	const char *function;	/* linkage name; NULL: unknown */
	const char *file;	/* NULL: unknown */
	uint32_t line, column, discriminator;	/* 0: unknown */
	uint32_t start_line;	/* the function's DW_AT_decl_line; 0: unknown */
	uint64_t address;	/* the PC, when MP_FRAME_ADDRESS */
	uint64_t offset;	/* unsymbolized: the offset in its module (ELF
				 * address from raw v3 on, file offset in v1/v2;
				 * the address itself when no build id) */
	const uint8_t *build_id;	/* unsymbolized: its module's, or NULL */
	uint8_t build_id_size;
	uint8_t flags;		/* MP_FRAME_* */
};

/* Is F symbolized (a function or a file known)? */
static inline bool mp_frame_symbolized(const struct mp_frame *f)
{
	return f->function || f->file;
}

static inline bool mp_frame_inlined(const struct mp_frame *f)
{
	return f->flags & MP_FRAME_INLINED;
}

/*
 * The line of an LLVM frame (MP_FRAME_GUID) as the offset it is from its
 * function's first line: LLVM stores a uint32 that wraps for a line above
 * the function's start (#line directives, line 0 of compiler-made code).
 */
static inline int64_t mp_frame_line_offset(const struct mp_frame *f)
{
	return (int32_t)f->line;
}

/*
 * Where an unsymbolized frame is, as the indexed format and the compare
 * keys name it: its offset in its module when it has a build id or came
 * from an indexed file, else (a raw frame without a build id) its
 * address.
 */
static inline uint64_t mp_frame_where(const struct mp_frame *f)
{
	return f->build_id_size || !(f->flags & MP_FRAME_ADDRESS)
		? f->offset : f->address;
}

/*
 * A merge for LLVM's format keeps the records of one stack apart by their
 * allocation class (enum mib_class, common/mp_mib.h), each context's
 * class in a last frame, at the root: unsymbolized, without build id, at
 * MP_FRAME_CLASS_BASE + class, which is no canonical address, so no PC.
 * The LLVM export takes it out (exp_llvm.c).
 */
#define MP_FRAME_CLASS_BASE UINT64_C(0xffffffffffffff00)

/* F's class if F is such a frame, else -1. */
static inline int mp_frame_class(const struct mp_frame *f)
{
	if (mp_frame_symbolized(f) || f->build_id_size ||
	    (f->flags & MP_FRAME_ADDRESS) || f->offset < MP_FRAME_CLASS_BASE ||
	    f->offset - MP_FRAME_CLASS_BASE >= 16)
		return -1;
	return (int)(f->offset - MP_FRAME_CLASS_BASE);
}

/*
 * --prefix-map=OLD=NEW: frames' file paths rewritten, as GCC's and clang's
 * -ffile-prefix-map rewrite the paths a build writes, so that the same
 * sources built in two directories (two CI workspaces, a static and a
 * shared build) give the same frames.  A rule applies to a path that is
 * OLD or starts with OLD followed by '/' (or with OLD ending in '/'): no
 * rule for "/src/a" touches "/src/ab/x.c".  The last rule given that
 * applies wins, as with GCC's; the result is not mapped again.
 */
struct mp_prefix_map {
	struct mp_prefix_rule {
		char *old;		/* owned */
		const char *new;	/* the rule's string, past its '=' */
		size_t old_len;
	} *rule;
	size_t n, alloc;
};

/* Parse "OLD=NEW" (at the first '=', OLD not empty) into M; false if
 * malformed, and *NOMEM if it was memory that failed. */
bool mp_prefix_map_add(struct mp_prefix_map *m, const char *rule, bool *nomem);
void mp_prefix_map_release(struct mp_prefix_map *m);
/*
 * PATH as M maps it: PATH itself when no rule applies (or M is NULL), else
 * the mapped path in BUF of SIZE bytes; NULL when it does not fit.
 */
const char *mp_prefix_map_apply(const struct mp_prefix_map *m,
				const char *path, char *buf, size_t size);

/*
 * F for people, malloc'ed, whole whatever its length; NULL when out of
 * memory.  Symbolized: "NAME FILE:LINE:COLUMN[ [discriminator N]][
 * (inlined)]", NAME being NAME if not NULL (a demangled name) or the
 * linkage name, "??" for what is unknown.  Unsymbolized:
 * "BUILDID+0xOFFSET", "0xADDRESS" for a raw frame without a build id, or
 * "?+0xOFFSET" for an indexed one without.  A frame of LLVM's format
 * (MP_FRAME_GUID) is "guid:HEX +LINE:COLUMN[ (inlined)]", LINE the offset
 * from the function's first line ("-LINE" when above it).
 */
char *mp_frame_string(const struct mp_frame *f, const char *name);

/*
 * mp_frame_string() into BUF of SIZE bytes, snprintf-like: at most SIZE
 * bytes with the terminating NUL (when SIZE > 0); returns the length of
 * the whole string, so that a result >= SIZE means it was cut.  For
 * printing many frames without an allocation each.
 */
size_t mp_frame_format(const struct mp_frame *f, const char *name, char *buf,
		       size_t size);

/*
 * F's module: its build id in lowercase hex into BUF (at least 2 * size
 * + 1 bytes; "" when it has none).  Returns BUF.
 */
char *mp_frame_build_id_hex(const struct mp_frame *f, char *buf, size_t size);

#endif /* MP_FRAME_H */
