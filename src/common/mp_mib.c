#include "mp_mib.h"

#include <stdbool.h>
#include <strings.h>

const struct mib_field_info mib_fields[MIB__COUNT] = {
#define MIB_INFO(n, t, w, o, ver, merge) \
	[MIB_##n] = { #n, t, w, o, ver, MIB_RULE_##merge },
	RAW_MIB_FIELDS(MIB_INFO)
#undef MIB_INFO
};

int mib_field_by_name(const char *name)
{
	for (int i = 0; i < MIB__COUNT; i++)
		if (strcasecmp(mib_fields[i].name, name) == 0)
			return i;
	return -1;
}

int mib_field_by_tag(unsigned tag)
{
	for (int i = 0; i < MIB__COUNT; i++)
		if (mib_fields[i].tag == tag)
			return i;
	return -1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* The rules every merge shares: sums, mins, maxes, histogram length. */
static void merge_common(struct mp_mib *a, const struct mp_mib *b, int i)
{
	switch (mib_fields[i].rule) {
	case MIB_RULE_SUM:
		a->v[i] = sat_add(a->v[i], b->v[i]);
		break;
	case MIB_RULE_MIN:
		if (b->v[i] < a->v[i])
			a->v[i] = b->v[i];
		break;
	case MIB_RULE_MAX:
	case MIB_RULE_HLEN:
		if (b->v[i] > a->v[i])
			a->v[i] = b->v[i];
		break;
	default:
		break;
	}
}

void mib_merge_runtime(struct mp_mib *a, const struct mp_mib *b)
{
	/* Compare against A's values before the LAST fields move on. */
	if (b->v[MIB_AllocTimestamp] < a->v[MIB_DeallocTimestamp])
		a->v[MIB_NumLifetimeOverlaps]++;
	if (b->v[MIB_AllocCpuId] == a->v[MIB_AllocCpuId])
		a->v[MIB_NumSameAllocCpu]++;
	if (b->v[MIB_DeallocCpuId] == a->v[MIB_DeallocCpuId])
		a->v[MIB_NumSameDeallocCpu]++;
	for (int i = 0; i < MIB__COUNT; i++) {
		if (mib_fields[i].rule == MIB_RULE_LAST)
			a->v[i] = b->v[i];
		else
			merge_common(a, b, i);
	}
}

/* The order of "newer" used by mib_fold: a total order on the LAST fields. */
static int newer(const struct mp_mib *a, const struct mp_mib *b)
{
	static const enum mib_field key[] = {
		MIB_DeallocTimestamp, MIB_AllocTimestamp,
		MIB_DeallocCpuId, MIB_AllocCpuId,
	};

	for (size_t k = 0; k < sizeof(key) / sizeof(key[0]); k++)
		if (a->v[key[k]] != b->v[key[k]])
			return a->v[key[k]] > b->v[key[k]] ? 1 : -1;
	return 0;
}

/*
 * mib_fold() and mib_scale() are spelled out field by field from
 * RAW_MIB_FIELDS, each field's rule known when compiled: a merge folds
 * millions of MIBs, and a loop that looked each rule up in mib_fields[]
 * and switched on it took 12.6 % of a 500-input merge (bench/RESULTS.md).
 */
#define FOLD_SUM(i)	a->v[i] = sat_add(a->v[i], b->v[i]);
#define FOLD_OVLP	FOLD_SUM
#define FOLD_SAMEA	FOLD_SUM
#define FOLD_SAMED	FOLD_SUM
#define FOLD_MIN(i)	a->v[i] = b->v[i] < a->v[i] ? b->v[i] : a->v[i];
#define FOLD_MAX(i)	a->v[i] = b->v[i] > a->v[i] ? b->v[i] : a->v[i];
#define FOLD_HLEN	FOLD_MAX
#define FOLD_LAST(i)	a->v[i] = b_newer ? b->v[i] : a->v[i];
/* Order-independent: the smaller non-zero id. */
#define FOLD_KEEP(i)	a->v[i] = b->v[i] && (!a->v[i] || b->v[i] < a->v[i]) \
				  ? b->v[i] : a->v[i];

void mib_fold(struct mp_mib *a, const struct mp_mib *b)
{
	bool b_newer = newer(b, a) > 0;

#define FOLD_FIELD(name, tag, width, off, ver, rule) FOLD_##rule(MIB_##name)
	RAW_MIB_FIELDS(FOLD_FIELD)
#undef FOLD_FIELD
}

static uint64_t sat_mul(uint64_t v, uint64_t w)
{
	uint64_t r;

	return __builtin_mul_overflow(v, w, &r) ? UINT64_MAX : r;
}

/* Counts and totals scale; mins, maxes and the LAST fields do not. */
#define SCALE_SUM(i)	m->v[i] = sat_mul(m->v[i], w);
#define SCALE_OVLP	SCALE_SUM
#define SCALE_SAMEA	SCALE_SUM
#define SCALE_SAMED	SCALE_SUM
#define SCALE_MIN(i)
#define SCALE_MAX(i)
#define SCALE_HLEN(i)
#define SCALE_LAST(i)
#define SCALE_KEEP(i)

void mib_scale(struct mp_mib *m, uint64_t w)
{
#define SCALE_FIELD(name, tag, width, off, ver, rule) SCALE_##rule(MIB_##name)
	RAW_MIB_FIELDS(SCALE_FIELD)
#undef SCALE_FIELD
}

uint32_t mib_hist_add(uint64_t *a, uint32_t na, const uint64_t *b,
		      uint32_t nb)
{
	for (uint32_t i = 0; i < nb; i++)
		a[i] = i < na ? sat_add(a[i], b[i]) : b[i];
	return na > nb ? na : nb;
}

enum mib_class mib_alloc_class(const struct mp_mib *m,
			       const struct mib_thresholds *t)
{
	float count = (float)m->v[MIB_AllocCount], density;

	if (m->v[MIB_AllocCount] == 0)
		return MIB_CLASS_DENSE;
	density = (float)m->v[MIB_TotalLifetimeAccessDensity] / count / 100;
	if (density < t->cold_density &&
	    (float)m->v[MIB_TotalLifetime] / count >= t->cold_lifetime * 1000)
		return MIB_CLASS_COLD;
	if (density > t->hot_density)
		return MIB_CLASS_HOT;
	return density < t->cold_density ? MIB_CLASS_SHORT : MIB_CLASS_DENSE;
}

enum mib_type mib_alloc_type(const struct mp_mib *m,
			     const struct mib_thresholds *t)
{
	static const enum mib_type of_class[MIB__CLASSES] = {
		[MIB_CLASS_COLD] = MIB_COLD, [MIB_CLASS_SHORT] = MIB_NOTCOLD,
		[MIB_CLASS_DENSE] = MIB_NOTCOLD, [MIB_CLASS_HOT] = MIB_HOT,
	};

	return of_class[mib_alloc_class(m, t)];
}

const char *mib_type_name(enum mib_type k)
{
	static const char *const names[] = { "notcold", "cold", "hot" };

	return names[k];
}
