/*
 * mp_mib.h - the Memory Info Block in memory, and how two of them merge.
 *
 * Every field is held as a u64 in an array indexed by enum mib_field, so
 * code that treats fields alike (merging, printing, the indexed schema)
 * loops over them instead of naming each one.  The list of fields, their
 * tags and merge rules live in include/memprof/raw_format.h.
 *
 * Two merge operations, because two different things are being combined:
 *
 *  - mib_merge_runtime(): a second record for the same stack inside one
 *    raw profile, i.e. one process.  This is compiler-rt's own rule
 *    (sums, mins, maxes; overlap/same-CPU counters bumped by comparing
 *    timestamps and CPU ids; "last" fields take the newer record), except
 *    that NumMigratedCpu is summed: it is a count.
 *
 *  - mib_fold(): the same context seen in different profiles (different
 *    dumps or processes).  Timestamps of different processes cannot be
 *    compared, so counters are summed and the "last" fields come from the
 *    record with the greater (DeallocTimestamp, AllocTimestamp,
 *    DeallocCpuId, AllocCpuId).  This is commutative and associative,
 *    which makes merge order-independent.
 *
 * Weights (mib_scale) multiply counts and totals, never mins and maxes.
 */
#ifndef MP_MIB_H
#define MP_MIB_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/raw_format.h"

enum mib_field {
#define MIB_ENUM(name, tag, width, off, ver, merge) MIB_##name,
	RAW_MIB_FIELDS(MIB_ENUM)
#undef MIB_ENUM
	MIB__COUNT
};

enum mib_merge_rule {
	MIB_RULE_SUM, MIB_RULE_MIN, MIB_RULE_MAX, MIB_RULE_LAST,
	MIB_RULE_KEEP, MIB_RULE_OVLP, MIB_RULE_SAMEA, MIB_RULE_SAMED,
	MIB_RULE_HLEN,
};

struct mib_field_info {
	const char *name;	/* "AllocCount" */
	uint8_t tag;		/* schema tag, 1..26 */
	uint8_t width;		/* bytes in the raw MIB */
	uint8_t offset;		/* offset in the raw MIB */
	uint8_t min_version;	/* first raw version holding it */
	uint8_t rule;		/* enum mib_merge_rule */
};

extern const struct mib_field_info mib_fields[MIB__COUNT];

struct mp_mib {
	uint64_t v[MIB__COUNT];
};

/* The field whose name is NAME (case-insensitive), or -1. */
int mib_field_by_name(const char *name);
/* The field whose schema tag is TAG, or -1. */
int mib_field_by_tag(unsigned tag);

/* Fold B into A by compiler-rt's in-process rule (B is the newer record). */
void mib_merge_runtime(struct mp_mib *a, const struct mp_mib *b);
/* Fold B into A, order-independent (see above). */
void mib_fold(struct mp_mib *a, const struct mp_mib *b);
/* Multiply counts and totals by W (saturating). */
void mib_scale(struct mp_mib *m, uint64_t w);

/*
 * A context's allocation type, as LLVM's MemProfUse pass decides it from
 * its MIB (getAllocType in llvm/lib/Analysis/MemoryProfileInfo.cpp), in
 * single precision like it:
 *	density  = TotalLifetimeAccessDensity / AllocCount / 100
 *	lifetime = TotalLifetime / AllocCount (ms)
 *	cold     if density < cold_density and lifetime >= cold_lifetime * 1000
 *	hot      else if density > hot_density
 *	notcold  otherwise (and when AllocCount is 0)
 * with LLVM's defaults 0.05 (memprof-lifetime-access-density-cold-
 * threshold), 200 s (memprof-ave-lifetime-cold-threshold) and 1000
 * (memprof-min-ave-lifetime-access-density-hot-threshold).
 */
enum mib_type { MIB_NOTCOLD, MIB_COLD, MIB_HOT };

struct mib_thresholds {
	float cold_density;	/* accesses per byte per lifetime second */
	float cold_lifetime;	/* seconds */
	float hot_density;
};

#define MIB_THRESHOLDS_DEFAULT { 0.05f, 200.0f, 1000.0f }

enum mib_type mib_alloc_type(const struct mp_mib *m,
			     const struct mib_thresholds *t);
const char *mib_type_name(enum mib_type k);

/*
 * The type split finer, so that MIBs of one class fold into a MIB of the
 * same class: the averages above of a fold are means of the parts',
 * weighted by AllocCount, and each class is a convex set of (density,
 * lifetime) - where two not-cold MIBs, one short-lived, one dense, can
 * fold into a cold one.  (Up to rounding at the thresholds themselves.)
 */
enum mib_class {
	MIB_CLASS_COLD,
	MIB_CLASS_SHORT,	/* not cold: sparse, but too short-lived */
	MIB_CLASS_DENSE,	/* not cold: too dense, not hot (or no count) */
	MIB_CLASS_HOT,
	MIB__CLASSES
};

enum mib_class mib_alloc_class(const struct mp_mib *m,
			       const struct mib_thresholds *t);

/*
 * Add histogram B (NB entries) into A (NA entries, capacity >= max(NA,NB)):
 * element-wise, keeping the longer.  Returns the new length.
 */
uint32_t mib_hist_add(uint64_t *a, uint32_t na, const uint64_t *b,
		      uint32_t nb);

#endif /* MP_MIB_H */
