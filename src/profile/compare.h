/*
 * compare.h - matching the contexts of two profiles, for overlap and diff
 * (src/profile/compare.c; diff rows and CI gates in diff.c).  A struct cmp
 * borrows the two views, their contexts, frames and strings (they must
 * outlive it), and owns the rest; one thread uses it.  Never prints.
 *
 * Two profiles (base and test, each raw or indexed, already symbolized in
 * a view) are matched context by context on their call stacks.  Indexed
 * contexts need not be expanded: their keys are computed once per node
 * of the file's trie, and only the contexts printed are expanded
 * (cmp_entry_view).  The key
 * can be loosened for profiles of different builds:
 *	column    every frame's function, file, line, column, discriminator
 *		  and inline flag (the default)
 *	line      the same without the column
 *	function  function names only
 * Contexts of one side that share a key fold into one (mib_fold).  Each
 * entry then has a MIB per side, or is present on one side only.
 *
 * Overlap of a field f over matched entries i, with B and T the field's
 * totals over all of base and all of test:
 *	sum_i min(b_i / B, t_i / T)
 * computed as sum_i min(b_i T, t_i B) / (B T) in 128-bit integers, so a
 * profile against itself, or against itself scaled, gives exactly 1.
 *
 * Hot and cold are decided as LLVM's MemProfUse pass does
 * (mib_alloc_type(), common/mp_mib.h).
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"
#include "common/mp_mib.h"
#include "common/mp_samp.h"
#include "hashtable/ht.h"
#include "view.h"

enum cmp_match { CMP_MATCH_COLUMN, CMP_MATCH_LINE, CMP_MATCH_FUNCTION };

enum { CMP_BASE = 0, CMP_TEST = 1 };

struct cmp_entry {
	/* Per side: the MIB of its one context (the view's), the fold of
	 * several (in the comparison's arena), or zeros when absent; a
	 * pointer, not a copy, as most entries have one context a side. */
	const struct mp_mib *mib[2];
	bool present[2];
	bool folded[2];			/* mib[s] is the comparison's own */
	struct mp_samp *samp[2];	/* sample entries per side (sampled
					 * inputs), nsamp[s] of them */
	uint32_t nsamp[2];
	struct view_context *ctx;	/* its first context, for display:
					 * its view from cmp_entry_view() */
	uint32_t function;		/* index into cmp.functions */
};

struct cmp_fkey;

struct cmp {
	struct cmp_entry *e;
	size_t n, alloc;
	const char **functions;		/* leaf function of each group */
	size_t nfunctions, afunctions;
	uint64_t total[2][MIB__COUNT];	/* over all contexts of each side */
	size_t contexts[2];		/* contexts of each side, after folding */
	struct mp_samp *tsamp[2];	/* all of each side's sample entries */
	uint32_t ntsamp[2];
	bool sampled;			/* some context of a side is */
	/* private */
	struct view *views[2];
	size_t *fn_start;		/* function f's entries are */
	uint32_t *by_fn;		/* by_fn[fn_start[f] .. fn_start[f+1]) */
	/* While building: the match keys (compare.c). */
	struct cmp_fkey *fkeys;		/* frame keys by number - 1 */
	size_t nfkeys, afkeys;
	struct ht fkey_ht;
	struct ht_map prefix_map;	/* (stack key, frame key) -> stack key */
	uint32_t nprefixes;
	uint32_t *key_entry;		/* stack key -> entry + 1 (0: none) */
	size_t nkey_entry, akey_entry;
	const char **strs;		/* string id - 1 -> the string */
	size_t nstrs, astrs;
	struct ht str_ht;		/* strings by content */
	struct ht_map str_by_ptr;	/* pointer -> string id */
	struct ht_map fn_by_str;	/* string id -> index in functions */
	struct mp_arena arena;		/* strings made here (build ids) */
	bool nomem;			/* a string could not be kept */
	/* A side has LLVM inputs, which keep no frame of a file found by
	 * build id (MP_FRAME_FOUND): such frames are no part of a key. */
	bool skip_found;
	const struct mp_prefix_map *paths;	/* files as mapped, or NULL */
};

/* Parse "column", "line" or "function". */
bool cmp_match_parse(const char *s, enum cmp_match *out);
const char *cmp_match_name(enum cmp_match m);

/*
 * Match the contexts of BASE and TEST into C (initialized here).  BASE
 * and TEST may be one view.  Frames' files are matched as PATHS maps them
 * (merge --prefix-map's rules; NULL: as they are), and print as they are.  Costs, beyond the entries: a few words per
 * distinct frame and per distinct stack prefix, and while an indexed
 * input is matched 8 bytes per byte of its trie; no stack is kept (an
 * indexed one is not expanded, an LLVM or raw one is read into a
 * scratch, view_frames_scratch()).
 */
enum mp_errcode cmp_build(struct cmp *c, struct view *base, struct view *test,
			  enum cmp_match m, const struct mp_prefix_map *paths,
			  struct mp_err *err);
void cmp_release(struct cmp *c);

/*
 * The view E's context (e->ctx) is in, for its frames: expanded, or walked
 * as stack entries (view_entries_scratch()), only when printed.
 */
struct view *cmp_entry_view(const struct cmp *c, const struct cmp_entry *e);

/*
 * The overlap of field F over the entries of function FN (or all entries
 * for FN < 0), normalized by that group's totals.  1 when both sides are
 * empty, 0 when only one is.
 */
double cmp_overlap(const struct cmp *c, enum mib_field f, long fn);

/* Totals of field F over the entries of function FN (< 0: all). */
void cmp_totals(const struct cmp *c, enum mib_field f, long fn,
		uint64_t out[2]);

/*
 * A MIB field named by its name (case-insensitive) or an alias: allocs,
 * bytes, accesses, lifetime.  -1 if neither.
 */
int cmp_metric_parse(const char *s);
/* Whether the LEN bytes at S name a metric that cmp_metric_parse knows. */
bool cmp_metric_known(const char *s, size_t len);

/*
 * Function indices, all or those named ONLY, by their share of TotalSize
 * in base plus test, largest first, then by name.  *OUT is the caller's
 * to free.  Fails only with MP_E_NOMEM.
 */
enum mp_errcode cmp_functions_ranked(const struct cmp *c, const char *only,
				     long **out, size_t *n);

/* How much of each side found a partner. */
struct cmp_matching {
	uint64_t common;		/* entries present on both sides */
	uint64_t allocs[2], bytes[2];	/* AllocCount, TotalSize in them */
};
void cmp_matching(const struct cmp *c, struct cmp_matching *m);

/*
 * Two builds of one program made in different directories match little
 * by line or column: their frames' files differ by a leading part.  The
 * likeliest such part of each side, from the files of up to 256 contexts
 * of each side that found no partner: every file of test's not among
 * base's against base's files of the same last component, each pair's
 * leading parts once their longest common tail (from a '/') is cut off,
 * the pair seen most often: into H, test's part as OLD and base's as
 * NEW (what --prefix-map=OLD=NEW takes), with one pair of files that
 * shows it (strings of the views).  False when there is none (no such
 * pair, a part empty or too long for H) or when memory runs out.
 */
struct cmp_prefix_hint {
	char old[256], new[256];
	const char *test_file, *base_file;
	uint32_t pairs;			/* file pairs that agree on it */
};
bool cmp_prefix_hint(const struct cmp *c, struct cmp_prefix_hint *h);

/* E's class on each side (notcold where absent); true if both sides have
 * it and the classes differ. */
bool cmp_flips(const struct cmp_entry *e, const struct mib_thresholds *t,
	       enum mib_type k[2]);

struct cmp_hot_cold {
	uint64_t count[2][3];		/* per side, per enum mib_type */
	uint64_t flips;			/* entries whose class differs */
	uint64_t flipped_bytes[2];	/* their TotalSize per side */
};
void cmp_hot_cold(const struct cmp *c, const struct mib_thresholds *t,
		  struct cmp_hot_cold *h);

/*
 * diff's rows: one per entry, or one per function (its entries summed),
 * ordered by the largest absolute change of field SORT, then function
 * name, then entry.  A function row has entry NULL.
 */
struct cmp_row {
	const char *function;
	const struct cmp_entry *entry;
	const uint64_t *v[2];		/* MIB__COUNT values per side: the
					 * entry's MIB (zero where absent),
					 * or a function's sums */
	struct mp_samp *samp[2];	/* the row's sample entries per side */
	uint32_t nsamp[2];
	bool present[2];
};
/* *OUT (rows, function rows' sums and sample entries, one block) is the
 * caller's to free: a row of an entry is 64 bytes.  Fails only with
 * MP_E_NOMEM. */
enum mp_errcode cmp_rows(const struct cmp *c, bool by_function,
			 enum mib_field sort, struct cmp_row **out,
			 size_t *nrows);

/* A CI gate of diff: METRIC:+N% or METRIC:+ABS (or '-' for a drop). */
struct cmp_gate {
	enum mib_field field;
	bool percent;
	bool drop;		/* '-': fail on a decrease */
	double value;
	const char *text;	/* as given; points into the parsed string */
};

/* Parse a --fail-if value; false if malformed. */
bool cmp_gate_parse(const char *s, struct cmp_gate *g);

/* Does going from B to T cross gate G?  (Significance aside: on sampled
 * profiles cmp_gate_eval() also asks cmp_significant().) */
bool cmp_gate_crosses(const struct cmp_gate *g, uint64_t b, uint64_t t);

struct cmp_gate_result {
	uint64_t base, test;	/* the whole profile's totals */
	bool whole;		/* crossed by the whole profile */
	size_t rows_crossed;	/* with PER_ROW: rows that cross it */
};

/*
 * Is the change of field F from base B (sample entries SB[0..NB-1]) to
 * test T (ST[0..NT-1]) significant?  Exact sides (no entries) make every
 * change significant.  Otherwise the two sides' 95 % intervals
 * (mp_samp_ci95) must not overlap.  That is stricter than a 95 % test of
 * the difference (for two normal intervals of equal width, a level of
 * about 99.4 %): a CI gate over many rows should not fail on one row in
 * twenty by chance.
 */
bool cmp_significant(const struct mp_mib *b, const struct mp_samp *sb,
		     uint32_t nb, const struct mp_mib *t,
		     const struct mp_samp *st, uint32_t nt, enum mib_field f);
/* The same for row R. */
bool cmp_row_significant(const struct cmp_row *r, enum mib_field f);
void cmp_gate_eval(const struct cmp *c, const struct cmp_row *rows,
		   size_t nrows, const struct cmp_gate *g, bool per_row,
		   struct cmp_gate_result *r);

#endif /* COMPARE_H */
