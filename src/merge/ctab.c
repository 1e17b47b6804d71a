#include "ctab.h"

#include <stdlib.h>
#include <string.h>

void ctab_init(struct ctab *t)
{
	pthread_mutexattr_t attr;

	/*
	 * A fold holds its shard's lock for a few hundred nanoseconds: a
	 * thread finding it taken had better spin a little than sleep in
	 * the kernel (glibc's adaptive mutex).
	 */
	pthread_mutexattr_init(&attr);
#ifdef PTHREAD_MUTEX_ADAPTIVE_NP
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	memset(t, 0, sizeof(*t));
	for (size_t s = 0; s < CTAB_SHARDS; s++)
		pthread_mutex_init(&t->shard[s].lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

void ctab_release_shard(struct ctab *t, size_t s)
{
	struct ctab_shard *sh = &t->shard[s];

	free(sh->slots);
	free(sh->list);
	sh->slots = NULL;
	sh->list = NULL;
	sh->mask = sh->n = sh->alist = 0;
	__atomic_store_n(&sh->count, 0, __ATOMIC_RELAXED);
}

void ctab_release(struct ctab *t)
{
	if (!t)
		return;
	for (size_t s = 0; s < CTAB_SHARDS; s++) {
		ctab_release_shard(t, s);
		pthread_mutex_destroy(&t->shard[s].lock);
	}
	memset(t, 0, sizeof(*t));
}

size_t ctab_count(const struct ctab *t)
{
	size_t n = 0;

	for (size_t s = 0; s < CTAB_SHARDS; s++)
		n += __atomic_load_n(&t->shard[s].count, __ATOMIC_RELAXED);
	return n;
}

/* Where HASH starts probing: the shard was picked by its low bits. */
static size_t home(uint64_t hash, size_t mask)
{
	return (size_t)(hash >> 32) & mask;
}

uint64_t ctab_hash(const uint64_t *keys, uint32_t n)
{
	uint64_t h = CTAB_HASH_SEED;

	for (uint32_t k = 0; k < n; k++)
		h = ctab_hash_step(h, keys[k]);
	return ctab_hash_end(h, n);
}

/*
 * Make room in SH for MORE entries (load stays at most 1/2): its slots
 * doubled as often as needed at once, or the first 64 made.
 */
static bool make_room(struct ctab_shard *sh, size_t more)
{
	size_t cap = sh->slots ? sh->mask + 1 : 32, need;
	struct ctab_slot *slots;

	if (!mp_add(sh->n, more, &need) || !mp_mul(need, 2, &need))
		return false;
	if (sh->slots && need <= cap)
		return true;
	do
		if (!mp_mul(cap, 2, &cap))
			return false;
	while (cap < need);
	if (!(slots = mp_calloc_big(cap, sizeof(*slots))))
		return false;
	for (size_t i = 0; sh->slots && i <= sh->mask; i++) {
		size_t j = home(sh->slots[i].hash, cap - 1);

		if (!sh->slots[i].e)
			continue;
		while (slots[j].e)
			j = (j + 1) & (cap - 1);
		slots[j] = sh->slots[i];
	}
	free(sh->slots);
	sh->slots = slots;
	sh->mask = cap - 1;
	return true;
}

static uint64_t sat_mul_add(uint64_t acc, uint64_t v, uint64_t w)
{
	uint64_t r;

	if (__builtin_mul_overflow(v, w, &r) || __builtin_add_overflow(acc, r, &r))
		return UINT64_MAX;
	return r;
}

/* Add HIST (N counts) times W into E's histogram, growing it if shorter. */
static enum mp_errcode add_hist(struct mp_arena *a, struct ctab_entry *e,
				const uint64_t *hist, uint32_t n, uint64_t w)
{
	if (n > e->nhist) {
		uint64_t *h = mp_arena_alloc(a, (size_t)n * sizeof(*h));

		if (!h)
			return MP_E_NOMEM;
		if (e->nhist)
			memcpy(h, e->hist, (size_t)e->nhist * sizeof(*h));
		e->hist = h;
		e->nhist = n;
	}
	for (uint32_t i = 0; i < n; i++)
		e->hist[i] = sat_mul_add(e->hist[i], hist[i], w);
	e->mib.v[MIB_AccessHistogramSize] = e->nhist;
	return MP_OK;
}

/*
 * Does E hold stack KEYS[0..N-1]?  A loop, not memcmp(): stacks are a
 * dozen keys, and the call and its length dispatch cost more than that.
 */
static bool same_keys(const struct ctab_entry *e, const uint64_t *keys,
		      uint32_t n)
{
	uint64_t diff = 0;

	if (e->nkeys != n)
		return false;
	for (uint32_t k = 0; k < n; k++)
		diff |= e->keys[k] ^ keys[k];
	return diff == 0;
}

static enum mp_errcode fold_locked(struct ctab_shard *sh, struct mp_arena *a,
				   const uint64_t *keys, uint32_t n, uint64_t hash,
				   const struct mp_mib *mib, const uint64_t *hist,
				   uint32_t nhist, const struct mp_samp *samp,
				   uint32_t nsamp, uint64_t weight,
				   struct ctab_entry **added)
{
	struct mp_mib scaled;
	struct ctab_entry *e;
	size_t i;

	*added = NULL;
	if (weight > 1) {
		scaled = *mib;
		mib_scale(&scaled, weight);
		mib = &scaled;
	}
	if (!make_room(sh, 1))
		return MP_E_NOMEM;
	for (i = home(hash, sh->mask); (e = sh->slots[i].e);
	     i = (i + 1) & sh->mask)
		if (sh->slots[i].hash == hash && same_keys(e, keys, n))
			break;
	if (e) {
		mib_fold(&e->mib, mib);
		e->mib.v[MIB_AccessHistogramSize] = e->nhist;
	} else {
		size_t size;

		if (!mp_mul(n, sizeof(*keys), &size) ||
		    !mp_add(size, sizeof(*e), &size))
			return MP_E_TOO_LARGE;
		if (!MP_GROW(sh->list, sh->alist, sh->n + 1) ||
		    !(e = mp_arena_alloc_uninit(a, size)))
			return MP_E_NOMEM;
		e->nkeys = n;
		e->hist = NULL;
		e->samp = NULL;
		e->nhist = e->nsamp = e->node1 = 0;
		e->mib = *mib;
		e->mib.v[MIB_AccessHistogramSize] = 0;
		memcpy(e->keys, keys, (size_t)n * sizeof(*keys));
		sh->slots[i] = (struct ctab_slot){ hash, e };
		sh->list[sh->n] = e;
		*added = e;
		__atomic_store_n(&sh->count, ++sh->n, __ATOMIC_RELAXED);
	}
	if (!mp_samp_fold_arena(a, &e->samp, &e->nsamp, samp, nsamp, weight))
		return MP_E_NOMEM;
	return nhist ? add_hist(a, e, hist, nhist, weight) : MP_OK;
}

enum mp_errcode ctab_fold(struct ctab *t, struct mp_arena *a,
			  const uint64_t *keys, uint32_t n,
			  const struct mp_mib *mib, const uint64_t *hist,
			  uint32_t nhist, const struct mp_samp *samp,
			  uint32_t nsamp, uint64_t weight,
			  struct ctab_entry **added)
{
	uint64_t hash = ctab_hash(keys, n);
	struct ctab_shard *sh = &t->shard[hash % CTAB_SHARDS];
	enum mp_errcode rc;

	pthread_mutex_lock(&sh->lock);
	rc = fold_locked(sh, a, keys, n, hash, mib, hist, nhist, samp, nsamp,
			 weight, added);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}

/* Fetch the slot where HASH's probe starts into the cache.  Lock held. */
static void prefetch_slot(const struct ctab_shard *sh, uint64_t hash)
{
	if (sh->slots)
		__builtin_prefetch(&sh->slots[home(hash, sh->mask)]);
}

/*
 * Fetch into the cache the entry HASH probably finds, whole (its keys
 * and the MIB that a fold reads and writes): the first entry of its
 * probe with the same hash.  Lock held; its slot should be in the cache.
 */
static void prefetch_entry(const struct ctab_shard *sh, uint64_t hash,
			   uint32_t n)
{
	const struct ctab_entry *e;

	if (!sh->slots)
		return;
	for (size_t i = home(hash, sh->mask); (e = sh->slots[i].e);
	     i = (i + 1) & sh->mask)
		if (sh->slots[i].hash == hash) {
			const char *p = (const char *)e;
			size_t size = sizeof(*e) + (size_t)n * sizeof(e->keys[0]);

			for (size_t at = 0; at < size; at += 64)
				__builtin_prefetch(p + at, 1);
			return;
		}
}

/*
 * Fold the N items ORDER[0..N-1] of ITEMS, all of shard SH, whose lock
 * is held.  Each fold mostly waits for memory: its slot, then its entry,
 * are rarely in a cache.  So the slot of the item AHEAD * 2 places on and
 * the entry of the item AHEAD places on are fetched while this one is
 * folded, and a fold finds both in the cache.  Entries never move, and a
 * prefetch of one that turns out not to match is harmless.  At 500
 * inputs (a table of 180k stacks, far past the caches) 8 folds ahead
 * hide the latency where 4 did not: 7 % off the merge (bench/RESULTS.md).
 */
#define AHEAD 8

static enum mp_errcode fold_run(struct ctab_shard *sh, struct mp_arena *a,
				struct ctab_item *items, const uint32_t *order,
				size_t n, uint64_t weight)
{
	enum mp_errcode rc = MP_OK;

	if (!make_room(sh, n))
		return MP_E_NOMEM;
	for (size_t k = 0; k < n && k < 2 * AHEAD; k++)
		prefetch_slot(sh, items[order[k]].hash);
	for (size_t k = 0; k < n && k < AHEAD; k++)
		prefetch_entry(sh, items[order[k]].hash, items[order[k]].n);
	for (size_t k = 0; k < n && !rc; k++) {
		struct ctab_item *it = &items[order[k]];

		if (k + 2 * AHEAD < n)
			prefetch_slot(sh, items[order[k + 2 * AHEAD]].hash);
		if (k + AHEAD < n)
			prefetch_entry(sh, items[order[k + AHEAD]].hash,
				       items[order[k + AHEAD]].n);
		rc = fold_locked(sh, a, it->keys, it->n, it->hash, it->mib, NULL,
				 0, NULL, 0, weight, &it->added);
	}
	return rc;
}

enum mp_errcode ctab_fold_batch(struct ctab *t, struct mp_arena *a,
				struct ctab_item *items, uint32_t *order,
				size_t n, uint64_t weight)
{
	size_t first[CTAB_SHARDS + 1] = { 0 }, at[CTAB_SHARDS];
	bool done[CTAB_SHARDS] = { false };
	enum mp_errcode rc = MP_OK;

	/* The items by shard (a counting sort), to take each lock once. */
	for (size_t i = 0; i < n; i++)
		first[items[i].hash % CTAB_SHARDS + 1]++;
	for (size_t s = 0; s < CTAB_SHARDS; s++) {
		first[s + 1] += first[s];
		at[s] = first[s];
	}
	for (size_t i = 0; i < n; i++)
		order[at[items[i].hash % CTAB_SHARDS]++] = (uint32_t)i;
	/*
	 * Shards another thread holds are skipped in the first round and
	 * waited for in the second: threads folding at once spread over
	 * the shards instead of queueing behind one another.
	 */
	for (int round = 0; round < 2 && !rc; round++)
		for (size_t s = 0; s < CTAB_SHARDS && !rc; s++) {
			struct ctab_shard *sh = &t->shard[s];

			if (done[s] || first[s] == first[s + 1])
				continue;
			if (round == 0) {
				if (pthread_mutex_trylock(&sh->lock) != 0)
					continue;
			} else {
				pthread_mutex_lock(&sh->lock);
			}
			rc = fold_run(sh, a, items, order + first[s],
				      first[s + 1] - first[s], weight);
			pthread_mutex_unlock(&sh->lock);
			done[s] = true;
		}
	return rc;
}
