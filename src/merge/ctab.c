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

/* Double SH's slots (or make the first 64). */
static bool grow(struct ctab_shard *sh)
{
	size_t cap = sh->slots ? (sh->mask + 1) * 2 : 64;
	struct ctab_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
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
	/* Atomic: ctab_fold_batch() reads them without the lock. */
	__atomic_store_n(&sh->slots, slots, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->mask, cap - 1, __ATOMIC_RELAXED);
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

static enum mp_errcode fold_locked(struct ctab_shard *sh, struct mp_arena *a,
				   const uint64_t *keys, uint32_t n, uint64_t hash,
				   const struct mp_mib *mib, const uint64_t *hist,
				   uint32_t nhist, const struct mp_samp *samp,
				   uint32_t nsamp, uint64_t weight, bool *added)
{
	struct mp_mib m = *mib;
	struct ctab_entry *e;
	size_t i;

	*added = false;
	if (weight > 1)
		mib_scale(&m, weight);
	if ((sh->n + 1) * 2 > sh->mask + 1 && !grow(sh))
		return MP_E_NOMEM;
	for (i = home(hash, sh->mask); (e = sh->slots[i].e);
	     i = (i + 1) & sh->mask)
		if (sh->slots[i].hash == hash && e->nkeys == n &&
		    memcmp(e->keys, keys, (size_t)n * sizeof(*keys)) == 0)
			break;
	if (e) {
		mib_fold(&e->mib, &m);
		e->mib.v[MIB_AccessHistogramSize] = e->nhist;
	} else {
		size_t size;

		if (!mp_mul(n, sizeof(*keys), &size) ||
		    !mp_add(size, sizeof(*e), &size))
			return MP_E_TOO_LARGE;
		if (!MP_GROW(sh->list, sh->alist, sh->n + 1) ||
		    !(e = mp_arena_alloc(a, size)))
			return MP_E_NOMEM;
		e->nkeys = n;
		e->hist = NULL;
		e->samp = NULL;
		e->nhist = e->nsamp = 0;
		e->mib = m;
		e->mib.v[MIB_AccessHistogramSize] = 0;
		memcpy(e->keys, keys, (size_t)n * sizeof(*keys));
		sh->slots[i] = (struct ctab_slot){ hash, e };
		sh->list[sh->n] = e;
		*added = true;
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
			  uint32_t nsamp, uint64_t weight, bool *added)
{
	uint64_t hash = mp_hash_bytes(keys, (size_t)n * sizeof(*keys), n);
	struct ctab_shard *sh = &t->shard[hash % CTAB_SHARDS];
	enum mp_errcode rc;

	pthread_mutex_lock(&sh->lock);
	rc = fold_locked(sh, a, keys, n, hash, mib, hist, nhist, samp, nsamp,
			 weight, added);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}

enum mp_errcode ctab_fold_batch(struct ctab *t, struct mp_arena *a,
				struct ctab_item *items, size_t n,
				uint64_t weight)
{
	enum mp_errcode rc = MP_OK;

	/*
	 * A fold is bound by memory latency: its slot, then its entry, are
	 * rarely in a cache.  Start fetching every slot of the batch first,
	 * so that the misses overlap.  The slot array may be replaced
	 * meanwhile: a prefetch of a stale address is harmless.
	 */
	for (size_t i = 0; i < n; i++) {
		struct ctab_item *it = &items[i];
		const struct ctab_shard *sh;
		const struct ctab_slot *slots;

		it->hash = mp_hash_bytes(it->keys, (size_t)it->n * sizeof(*it->keys),
					 it->n);
		sh = &t->shard[it->hash % CTAB_SHARDS];
		slots = __atomic_load_n(&sh->slots, __ATOMIC_RELAXED);
		if (slots)
			__builtin_prefetch(&slots[home(it->hash,
				__atomic_load_n(&sh->mask, __ATOMIC_RELAXED))]);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct ctab_item *it = &items[i];
		struct ctab_shard *sh = &t->shard[it->hash % CTAB_SHARDS];

		pthread_mutex_lock(&sh->lock);
		rc = fold_locked(sh, a, it->keys, it->n, it->hash, it->mib, NULL,
				 0, NULL, 0, weight, &it->added);
		pthread_mutex_unlock(&sh->lock);
	}
	return rc;
}
