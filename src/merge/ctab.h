/*
 * ctab.h - raw contexts folded by stack, before symbolization, shared by
 * the merge's worker threads.
 *
 * A context is keyed by its stack as a sequence of location keys (64-bit
 * words naming a PC independently of the process: see merge.c), leaf
 * first.  Folding a context whose stack is already present folds its MIB
 * into the one held (mib_fold, which is order-independent) and adds its
 * histogram, each scaled by the input's weight; so the table ends the same
 * whatever the order and the thread each context came in.
 *
 * The table is split into CTAB_SHARDS shards by the stack's hash, each
 * with its own lock and index: threads folding different stacks rarely
 * wait for each other.  Most folds find their stack present, so a fold is
 * made to touch little memory: a slot holds the whole hash and the
 * entry's address, and an entry holds its MIB and keys together.
 * Entries and histograms are allocated from the folding thread's own
 * arena (no lock; big blocks, huge pages), which the caller releases
 * after the table.
 *
 *	struct ctab t;
 *	ctab_init(&t);
 *	rc = ctab_fold(&t, &my_arena, keys, n, &mib, hist, nhist, weight,
 *		       &added);				// any thread
 *	for (size_t s = 0; s < CTAB_SHARDS; s++)	// when no thread folds
 *		for (size_t i = 0; i < t.shard[s].n; i++)
 *			use(t.shard[s].list[i]);
 *	ctab_release(&t);
 *	mp_arena_release(&my_arena);			// each thread's
 */
#ifndef CTAB_H
#define CTAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"
#include "common/mp_mib.h"
#include "common/mp_samp.h"
#include "common/mp_util.h"

#define CTAB_SHARDS 64

struct ctab_entry {
	uint64_t *hist;		/* nhist access counts, or NULL */
	struct mp_samp *samp;	/* nsamp sample entries by interval */
	uint32_t nkeys, nhist, nsamp;
	/* The caller's: 0 when made (merge.c: its builder trie node + 1,
	 * once its stack is symbolized). */
	uint32_t node1;
	struct mp_mib mib;	/* AccessHistogramSize == nhist */
	uint64_t keys[];	/* nkeys location keys, leaf first */
};

struct ctab_slot {
	uint64_t hash;		/* of the keys */
	struct ctab_entry *e;	/* NULL: empty */
};

struct ctab_shard {
	/* A cache line of its own: two threads' locks must not share one. */
	_Alignas(128) pthread_mutex_t lock;
	struct ctab_slot *slots;	/* open addressing, load <= 1/2 */
	size_t mask, n;			/* capacity - 1 (0: none), entries */
	struct ctab_entry **list;	/* the entries in the order made, which
					 * is their order in memory */
	size_t alist;
	size_t count;			/* n, for readers without the lock */
	struct mp_arena arena;		/* entries and histograms */
};

struct ctab {
	struct ctab_shard shard[CTAB_SHARDS];
};

void ctab_init(struct ctab *t);
void ctab_release(struct ctab *t);
/* Free shard S's index (its entries stay in their arenas). */
void ctab_release_shard(struct ctab *t, size_t s);

/*
 * Fold a context (stack KEYS[0..N-1], N >= 1; MIB, histogram HIST of
 * NHIST counts and sample entries SAMP[0..NSAMP-1], all scaled by
 * WEIGHT >= 1) into T, allocating from A
 * (the calling thread's own arena).  *ADDED is the stack's new entry
 * when it was new, else NULL.  Thread-safe.  Fails only with MP_E_NOMEM
 * or MP_E_TOO_LARGE.
 */
enum mp_errcode ctab_fold(struct ctab *t, struct mp_arena *a,
			  const uint64_t *keys, uint32_t n,
			  const struct mp_mib *mib, const uint64_t *hist,
			  uint32_t nhist, const struct mp_samp *samp,
			  uint32_t nsamp, uint64_t weight,
			  struct ctab_entry **added);

/*
 * The hash of a stack, made one key at a time by the code that makes the
 * keys (no second pass over them):
 *
 *	uint64_t h = CTAB_HASH_SEED;
 *	for (k = 0; k < n; k++)
 *		h = ctab_hash_step(h, keys[k] = make_key(...));
 *	h = ctab_hash_end(h, n);		// == ctab_hash(keys, n)
 *
 * A step is a rotation, an exclusive or and one multiplication by an odd
 * constant, each a bijection: two stacks of one length that differ in
 * one key always differ in hash.  The end mixes every bit into the low
 * ones (the shard) and the high ones (the slot).
 */
#define CTAB_HASH_SEED UINT64_C(0xcbf29ce484222325)

static inline uint64_t ctab_hash_step(uint64_t h, uint64_t key)
{
	return ((h << 29 | h >> 35) ^ key) * UINT64_C(0x9e3779b97f4a7c15);
}

static inline uint64_t ctab_hash_end(uint64_t h, uint32_t n)
{
	return mp_hash64(h ^ n);
}

uint64_t ctab_hash(const uint64_t *keys, uint32_t n);

/*
 * A context for ctab_fold_batch(): KEYS[0..N-1], their ctab_hash() HASH
 * and MIB in, ADDED out.
 */
struct ctab_item {
	const uint64_t *keys;
	uint32_t n;
	struct ctab_entry *added;	/* as ctab_fold()'s */
	uint64_t hash;
	const struct mp_mib *mib;
};

/*
 * Fold N contexts without histograms, each scaled by WEIGHT, as
 * ctab_fold() would one by one; faster: the batch is taken shard by
 * shard, each under one lock, and its slots and entries are fetched from
 * memory ahead of their folds, so that the misses overlap.  A shard that
 * another thread holds is left for later, not waited for.  ORDER is
 * scratch of N entries.  On failure some contexts may be folded.
 */
enum mp_errcode ctab_fold_batch(struct ctab *t, struct mp_arena *a,
				struct ctab_item *items, uint32_t *order,
				size_t n, uint64_t weight);

/* Entries in all shards; may be read while other threads fold. */
size_t ctab_count(const struct ctab *t);

#endif /* CTAB_H */
