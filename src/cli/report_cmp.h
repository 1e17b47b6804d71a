/*
 * report_cmp.h - what `overlap` and `diff` print, independent of format.
 *
 * Documents "memprof-data/overlap/1" and "memprof-data/diff/1"; their
 * keys are listed in memprof-data-overlap(1) and memprof-data-diff(1).
 */
#ifndef REPORT_CMP_H
#define REPORT_CMP_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/compare.h"
#include "emit.h"

struct report_cmp_opts {
	const char *base_path, *test_path;
	enum cmp_match match;
	struct mib_thresholds thresholds;
	const char *function;	/* only this function, or NULL */
	size_t top;		/* rows listed; 0 = all */
	struct sym_demangler *demangler;	/* NULL: linkage names */
	/* The fields overlap measures, in order; NULL: the four it knows
	 * (report_overlap_fields). */
	const enum mib_field *fields;
	size_t nfields;
};

/* What overlap measures unless told otherwise: AllocCount, TotalSize,
 * TotalAccessCount, TotalLifetime. */
extern const enum mib_field report_overlap_fields[];
extern const size_t report_noverlap_fields;

/* Emit the overlap document; false when out of memory. */
bool report_overlap(struct emit *e, const struct cmp *c,
		    const struct report_cmp_opts *o);

struct report_diff_opts {
	struct report_cmp_opts cmp;
	const enum mib_field *metrics;	/* reported, in order */
	size_t nmetrics;
	enum mib_field sort;		/* rows by largest |change| of this */
	bool by_function;
	const struct cmp_gate *gates;
	size_t ngates;
	bool per_context;		/* gates apply to each row too */
	bool fail_on_flip;
	/* With fail_on_flip: fail only when the flipped contexts' bytes
	 * reach this percentage of a side's TotalSize (0: on any flip). */
	double flip_share;
};

/*
 * Emit the diff document; *CROSSED tells whether a gate was crossed (or a
 * flip seen with fail_on_flip).  False when out of memory.
 */
bool report_diff(struct emit *e, const struct cmp *c,
		 const struct report_diff_opts *o, bool *crossed);

/*
 * Only the verdict of report_diff(), for a diff drawn as a picture: was a
 * gate crossed (or a flip seen with fail_on_flip)?  False when out of
 * memory.
 */
bool report_diff_crossed(const struct cmp *c, const struct report_diff_opts *o,
			 bool *crossed);

#endif /* REPORT_CMP_H */
