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
 * with its own lock, index and storage: threads folding different stacks
 * rarely wait for each other.
 *
 *	struct ctab t;
 *	ctab_init(&t);
 *	rc = ctab_fold(&t, keys, n, &mib, hist, nhist, weight);  // any thread
 *	for (size_t s = 0; s < CTAB_SHARDS; s++)                // one thread
 *		for (size_t i = 0; i < t.shard[s].n; i++)
 *			use(&t.shard[s].e[i]);
 *	ctab_release(&t);
 */
#ifndef CTAB_H
#define CTAB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/mp_err.h"
#include "../common/mp_mib.h"
#include "../common/mp_util.h"
#include "../hashtable/ht.h"

#define CTAB_SHARDS 64

struct ctab_entry {
	uint64_t *keys;		/* nkeys location keys, leaf first */
	uint64_t *hist;		/* nhist access counts, or NULL */
	uint32_t nkeys, nhist;
	uint64_t hash;
	struct mp_mib mib;	/* AccessHistogramSize == nhist */
};

struct ctab_shard {
	pthread_mutex_t lock;
	struct ctab_entry *e;
	size_t n, alloc;
	struct ht index;	/* hash of the keys -> entry */
	struct mp_arena arena;	/* keys and histograms */
};

struct ctab {
	struct ctab_shard shard[CTAB_SHARDS];
	size_t count;		/* entries in all shards (atomic) */
};

void ctab_init(struct ctab *t);
void ctab_release(struct ctab *t);
/* Free shard S's storage (after its entries were used). */
void ctab_release_shard(struct ctab *t, size_t s);

/*
 * Fold a context (stack KEYS[0..N-1], N >= 1; MIB and histogram HIST of
 * NHIST counts, both scaled by WEIGHT >= 1) into T.  Thread-safe.  Fails
 * only with MP_E_NOMEM or MP_E_TOO_LARGE.
 */
enum mp_errcode ctab_fold(struct ctab *t, const uint64_t *keys, uint32_t n,
			  const struct mp_mib *mib, const uint64_t *hist,
			  uint32_t nhist, uint64_t weight);

/* Entries in all shards; may be read while other threads fold. */
size_t ctab_count(const struct ctab *t);

#endif /* CTAB_H */
