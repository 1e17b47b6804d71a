/*
 * report.h - what `show` prints, independent of the output format.
 *
 * The document (schema "memprof-data/show/2", see memprof-data-show(1)):
 *	schema, inputs[], segments[], summary{}, contexts[]
 * Contexts come sorted by the chosen key, largest first, ties by id.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>

#include "emit.h"
#include "profile/view.h"

enum report_sort {
	REPORT_SORT_ALLOCS,	/* AllocCount */
	REPORT_SORT_BYTES,	/* TotalSize */
	REPORT_SORT_ACCESSES,	/* TotalAccessCount */
	REPORT_SORT_LIFETIME,	/* TotalLifetime */
};

struct sym_ctx;
struct sym_demangler;
struct sym_stack_stats;

struct report_show_opts {
	enum report_sort sort;
	size_t top;		/* 0: all contexts */
	size_t max_frames;	/* 0: every frame of a context */
	/* C++ names demangled for display through it; NULL: linkage names */
	struct sym_demangler *demangler;
	/* When set, a "symbolization" summary: coverage per module. */
	const struct sym_ctx *sym;
	const struct sym_stack_stats *sym_stats;
	bool stats;		/* table sizes of indexed inputs */
	/* Each distinct frame once, in a "frame_table" list, and each
	 * context's frames as indices into it. */
	bool frame_table;
};

/* Parse "allocs", "bytes", "accesses" or "lifetime". */
bool report_sort_parse(const char *name, enum report_sort *out);
/* The MIB field a sort key orders by. */
enum mib_field report_sort_field(enum report_sort s);

/*
 * Emit the whole show document for V, expanding the frames of the
 * contexts it prints (view_frames).  Fails with MP_E_NOMEM, or with
 * view_frames()'s MP_E_TOO_LARGE; the document is then unfinished.
 */
enum mp_errcode report_show(struct emit *e, struct view *v,
			    const struct report_show_opts *opts,
			    struct mp_err *err);

/*
 * Frame F for people (mp_frame_format), its name demangled through DM
 * unless DM is NULL, and its length in *LEN.  Malloc'ed; NULL when out
 * of memory.
 */
char *report_frame_string(const struct mp_frame *f, struct sym_demangler *dm,
			  size_t *len);

#endif /* REPORT_H */
