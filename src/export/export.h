/*
 * export.h - profiles written in other tools' formats (src/export/).
 *
 * LLVM's indexed profile with a MemProf section, the file that
 * `clang -fmemory-profile-use=FILE` reads (the end of the RFC's pipeline):
 * an indexed profile header (version 8 with the MemProf variant bit, or
 * version 12 as llvm-profdata-19 writes it), the profile summary, an empty
 * table of instrumentation counters, and MemProf version 3: a frame
 * array, call stacks in a radix array, and one record per function GUID
 * in an on-disk chained hash table.
 *
 *	struct exp_llvm x;
 *	exp_llvm_init(&x);
 *	for each context of a profile (frames leaf first, all inline frames):
 *		rc = exp_llvm_add(&x, frames, n, &mib, &err);
 *	rc = exp_llvm_write(&x, &opts, fp, &err);
 *	exp_llvm_release(&x);
 *
 * What the compiler is given, frame by frame: the GUID of the function
 * (the first 8 bytes of the MD5 of its canonical linkage name, read
 * little-endian), the line as an offset from the function's first line
 * (DW_AT_decl_line), the column, and whether it is inlined into the next.
 * A PC is kept when debug information names its innermost frame's
 * function and source file and it is not the profiling runtime's own code
 * (as llvm-profdata filters: a name from the ELF symbol table alone does
 * not count); a context left empty is dropped.  Equal contexts are folded, their MIBs merged by
 * the MIB rules (llvm-profdata appends them), and the output is the same
 * bytes whatever order the contexts come in.
 *
 * Memory: a few dozen bytes per distinct frame, per frame of each
 * distinct call stack and per context, and per stack entry of the file an
 * export from a view reads (exp_llvm_add_view()); the output is not held.
 * One thread uses an exp_llvm.
 * Never prints; errors are mp_errcode with a detail.
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/mp_err.h"
#include "common/mp_frame.h"
#include "common/mp_mib.h"
#include "hashtable/ht.h"
#include "profile/compare.h"

struct exp_llvm_opts {
	unsigned header_version;	/* 8 (default) or 12 */
	unsigned memprof_version;	/* 3 (what clang 19 and later read)
					 * or 0 (the RFC's; clang 19 only) */
	bool full_schema;		/* every MIB field, not only hot/cold
					 * (version 0 always has them all) */
	unsigned jobs;			/* threads the write may use (0, 1:
					 * only the caller's) */
};

struct exp_llvm_frame;
struct exp_llvm_stack;
struct exp_llvm_ctx;
struct exp_interned;

struct exp_llvm {
	/* Function names seen, each with its GUID: an MD5 per name, not
	 * one per frame of every context. */
	struct exp_interned *names;
	uint64_t *name_guids;
	size_t aname_guids;
	struct exp_llvm_frame *frames;	/* distinct frames */
	size_t nframes, aframes;
	struct ht frame_ht;
	uint32_t *stack_ids;		/* every call stack's frames, back to back */
	size_t nstack_ids, astack_ids;
	struct exp_llvm_stack *stacks;	/* distinct call stacks */
	size_t nstacks, astacks;
	struct ht stack_ht;
	struct exp_llvm_ctx *ctxs;	/* distinct contexts (allocation sites) */
	size_t nctxs, actxs;
	struct ht ctx_ht;
	/* Call sites: (function GUID, call stack) pairs, deduplicated. */
	struct { uint64_t guid; uint32_t stack; } *sites;
	size_t nsites, asites;
	struct ht site_ht;
	uint32_t *scratch;		/* one context's frame ids */
	size_t ascratch;
	uint32_t *scratch_at;		/* and where in its frames each is */
	size_t ascratch_at;
	uint64_t dropped_contexts;	/* left empty by the filter */
};

void exp_llvm_init(struct exp_llvm *x);
void exp_llvm_release(struct exp_llvm *x);

/*
 * Add one allocation context: FRAMES[0..N-1], leaf first, every inline
 * frame of every PC (MP_FRAME_INLINED on all but a PC's outermost), and
 * its MIB.  Fails only with MP_E_NOMEM or MP_E_TOO_LARGE.
 */
enum mp_errcode exp_llvm_add(struct exp_llvm *x, const struct mp_frame *frames,
			     uint32_t n, const struct mp_mib *mib,
			     struct mp_err *err);

/*
 * Write the indexed profile to OUT, front to back (OUT may be a pipe),
 * through a 1 MiB buffer.  It renumbers X's frames: afterwards X may only
 * be released.  Fails with MP_E_INVALID for a header version other than 8
 * or 12 or a MemProf version other than 0 or 3, MP_E_TOO_LARGE past
 * LLVM's 32-bit call stack ids, MP_E_IO when writing fails, MP_E_NOMEM.
 */
enum mp_errcode exp_llvm_write(struct exp_llvm *x,
			       const struct exp_llvm_opts *opts, FILE *out,
			       struct mp_err *err);

struct view;
struct sym_demangler;

/*
 * V (every context, frames expanded as the view shows them: the
 * allocator's frames hidden) as pprof's profile.proto, gzip-compressed:
 * one sample per context with the values alloc_objects/count,
 * total_lifetime/milliseconds, access_count/count and alloc_space/bytes
 * (last, so that viewers show bytes by default); numeric labels bytes
 * (average object size) and lifetime_access_density, and the string label
 * alloc_type (hot, cold or notcold, by the compiler's rule with its
 * default thresholds).  A location is one PC with its inline frames,
 * callee first; a function carries its demangled name (through DM, may be
 * NULL), linkage name, file and first line; an unsymbolized frame stays
 * an address in the mapping of its module's build id.  Modules MODS[0..
 * NMODS-1] (those a symbolizer knew) name their mappings by path, marked
 * symbolized; others are named by build id.  MODS[PROGRAM], if PROGRAM is
 * not -1, is the first mapping, which pprof's header names.  Fails with
 * MP_E_NOMEM, MP_E_IO or view_frames()'s errors.
 */
enum mp_errcode exp_pprof_write(struct view *v, struct sym_demangler *dm,
				const struct sym_module_info *mods,
				size_t nmods, int32_t program, FILE *out,
				struct mp_err *err);

/*
 * V as folded stacks: one line per context whose VALUE field is not 0,
 * "outermost;...;leaf VALUE", names demangled through DM (may be NULL),
 * ';' in a name written as ':'.  Read by speedscope, Perfetto and
 * flamegraph tools.
 */
enum mp_errcode exp_folded_write(struct view *v, enum mib_field value,
				 struct sym_demangler *dm, FILE *out,
				 struct mp_err *err);

/*
 * Add every context of V (each stack walked, not kept in V; raw ones
 * symbolized with the runtime's frames kept: the filter above decides),
 * the MIB of each
 * context of input i multiplied by WEIGHTS[i] (NULL: all 1).  An indexed
 * input of format 9 keeps no function start lines, without which no line
 * offset can be computed: MP_E_INVALID naming it.
 */
enum mp_errcode exp_llvm_add_view(struct exp_llvm *x, struct view *v,
				  const uint64_t *weights, struct mp_err *err);

/*
 * Flame graphs, one self-contained SVG file (its own small script: hover
 * for a frame's figures, click to zoom, search; no network, no external
 * file).  Contexts are folded into a tree of frames, outermost at the
 * root, named as folded stacks name them; the allocator frames the view
 * hides are hidden.  A frame's width is its contexts' VALUE; its colour
 * the hot/cold class (THRESHOLDS) holding most of it, or, when a base
 * profile was added (a differential graph), how much the value grew
 * (red) or shrank (blue) from base to test relative to the larger of the
 * two, widths still the test's.
 *
 *	struct exp_flame *f = exp_flame_new(&opts);
 *	exp_flame_add_view(f, test, EXP_FLAME_TEST, &err);
 *	exp_flame_add_view(f, base, EXP_FLAME_BASE, &err);	// diff only
 *	exp_flame_write_svg(f, &opts, fp, &err);
 *	exp_flame_free(f);
 *
 * Memory: about 80 bytes per distinct path of frames from the root.
 */
enum { EXP_FLAME_TEST = 0, EXP_FLAME_BASE = 1 };

struct exp_flame_opts {
	enum mib_field value;		/* the width */
	struct mib_thresholds thresholds;	/* the colour */
	struct sym_demangler *dm;	/* NULL: linkage names */
	unsigned width;			/* pixels; 1200 is usual */
	const char *title;		/* NULL: "Heap flame graph" */
	const char *subtitle;		/* the details line at rest; may be NULL */
};

struct exp_flame;

/* NULL when out of memory.  O is copied; its DM must outlive F. */
struct exp_flame *exp_flame_new(const struct exp_flame_opts *o);
void exp_flame_free(struct exp_flame *f);

/* Add every context of V on SIDE.  MP_E_NOMEM or view_frames()'s errors. */
enum mp_errcode exp_flame_add_view(struct exp_flame *f, struct view *v,
				   int side, struct mp_err *err);

/*
 * Write the SVG.  The bytes depend only on the contexts added, not on
 * their order.  MP_E_NOMEM or MP_E_IO.
 */
enum mp_errcode exp_flame_write_svg(struct exp_flame *f,
				    const struct exp_flame_opts *o, FILE *out,
				    struct mp_err *err);

#endif /* EXPORT_H */
