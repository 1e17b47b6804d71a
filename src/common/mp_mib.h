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
 * Add histogram B (NB entries) into A (NA entries, capacity >= max(NA,NB)):
 * element-wise, keeping the longer.  Returns the new length.
 */
uint32_t mib_hist_add(uint64_t *a, uint32_t na, const uint64_t *b,
		      uint32_t nb);

#endif /* MP_MIB_H */
