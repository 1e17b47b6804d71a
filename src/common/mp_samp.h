/*
 * mp_samp.h - what a sampled profile knows about its estimates, and the
 * 95 % confidence intervals that follow from it.
 *
 * A sampled profile (libmemprof with sample_interval=R; see the block in
 * include/memprof/raw_format.h) records each allocated byte with
 * probability p = 1/R.  Its MIB fields that are sums over objects hold
 * unbiased (Horvitz-Thompson) estimates.  For each context it also keeps,
 * per interval R its objects were sampled at, one struct mp_samp: how many
 * objects were sampled (n), u = sum of (size - offset of the sampled
 * byte), and per estimated field the estimate and its variance.  Entries
 * of one context and one interval add up (the Bernoulli trials of two
 * runs at one interval are one longer run); entries of different
 * intervals stay apart.  A context with no entry is exact.
 */
#ifndef MP_SAMP_H
#define MP_SAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_mib.h"
#include "common/mp_util.h"

#define MP_SAMP_NFIELDS RAW_SAMPLE_NFIELDS

/*
 * Estimates and variances are summed in fixed point (units of 2^-20, in
 * 128 bits, saturating near 1.6e32): floating-point sums depend on their
 * order, and merge must write the same bytes whatever order its threads
 * fold in.  Files hold them as binary64; mp_samp_set/get convert.
 */
/* Aligned to 8 only: entries live in arenas, which align to 8. */
typedef __int128 mp_fixed __attribute__((aligned(8)));
#define MP_FIXED_ONE ((double)(1 << 20))

struct mp_samp {
	uint64_t interval;	/* R in bytes, >= 1 */
	uint64_t n;		/* objects sampled */
	uint64_t u;		/* sum of (size - offset of the sampled byte) */
	mp_fixed est[MP_SAMP_NFIELDS];	/* by mp_samp_field[] */
	mp_fixed var[MP_SAMP_NFIELDS];
};

/* Set estimate k of S and its variance; false (S unchanged) unless both
 * are finite and not negative. */
bool mp_samp_set(struct mp_samp *s, int k, double est, double var);
/* The same from the sums themselves; false (S unchanged) if negative. */
bool mp_samp_set_fixed(struct mp_samp *s, int k, mp_fixed est, mp_fixed var);
double mp_samp_est(const struct mp_samp *s, int k);
double mp_samp_var(const struct mp_samp *s, int k);

/* The MIB field of estimate k, and the k of a MIB field (-1: exact). */
extern const enum mib_field mp_samp_field[MP_SAMP_NFIELDS];
int mp_samp_index(enum mib_field f);

/* Add B into A (the same interval). */
void mp_samp_add(struct mp_samp *a, const struct mp_samp *b);
/* Scale A's sums by W, as an input's --weight does (n and u too). */
void mp_samp_scale(struct mp_samp *a, uint64_t w);
/* Is S a well-formed entry (R >= 1, n >= 1)?  (mp_samp_set() checks the
 * sums.) */
bool mp_samp_valid(const struct mp_samp *s);

/*
 * Fold the NB entries at B, each scaled by W (>= 1; 1: as they are), into
 * the list A (*NA entries, room for *NA + NB): entries of an interval A
 * has are added, others inserted.  The list stays sorted by interval.
 */
void mp_samp_fold(struct mp_samp *a, uint32_t *na, const struct mp_samp *b,
		  uint32_t nb, uint64_t w);
/*
 * The same into a list held in ARENA: *LIST (*N entries) is replaced by a
 * new list from ARENA with room for B's (arena memory is not freed one
 * piece at a time).  False when out of memory, *LIST and *N unchanged.
 */
bool mp_samp_fold_arena(struct mp_arena *arena, struct mp_samp **list,
			uint32_t *n, const struct mp_samp *b, uint32_t nb,
			uint64_t w);

/* Below this many samples in a context, intervals come from the
 * negative binomial distribution; from it on, from the normal one. */
#define MP_SAMP_NORMAL_FROM 20

/*
 * The 95 % interval of MIB field F of a context whose MIB is M and whose
 * entries are S[0..NS-1]: *LO <= M's value <= *HI for the estimate.
 * Fields that are not estimated, and exact contexts, get [v, v].
 *
 * Many samples: estimate +- 1.96 sd, the variance summed over entries,
 * the lower end raised to what was observed (at least the bytes past the
 * sampled ones, and n objects of at least M's minimum, one of its
 * maximum: M must be folded, mib_fold(), not summed).  Few: per entry,
 * the seed's negative-binomial interval of the bytes, [NB(0.025; n) + u,
 * NB(0.975; n) + u], turned into field F's by the ratio of its estimate
 * to the bytes' (exact for a context of one size), summed over entries;
 * for fields other than the bytes, widened to the normal interval's ends
 * (one sampled small object of large weight carries most of a count
 * beside large objects, which the ratio does not see).  Every object
 * certain to be sampled (the count's variance zero) gives [v, v].
 * Fields that count objects or pairs of consecutive objects with a
 * property (NumMigratedCpu, NumLifetimeOverlaps, NumSameAllocCpu,
 * NumSameDeallocCpu), which sampled objects say little of, get [0, the
 * count's upper end] (less one for pairs).
 *
 * The bytes' interval holds whatever the sizes; the others assume that
 * the objects not sampled were like the sampled ones, which a context of
 * sizes far apart (a string growing from 100 bytes to megabytes) breaks:
 * a sample may miss all its small objects, and its count's interval then
 * falls short (bench/sampling/growth.sh).  Calibrated by simulation and
 * by bench/sampling/coverage.sh on sites of one size each: the seed's
 * conservative variant, NB(0.975; n + 1), covers 96-98 % at few samples;
 * the normal interval alone 91-94 %; this one 94-96 %.
 */
void mp_samp_ci95(const struct mp_mib *m, const struct mp_samp *s, uint32_t ns,
		  enum mib_field f, double *lo, double *hi);

/* Total samples over the entries. */
uint64_t mp_samp_count(const struct mp_samp *s, uint32_t ns);

#endif /* MP_SAMP_H */
