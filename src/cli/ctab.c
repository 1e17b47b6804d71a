#include "ctab.h"

#include <stdlib.h>
#include <string.h>

void ctab_init(struct ctab *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t s = 0; s < CTAB_SHARDS; s++)
		pthread_mutex_init(&t->shard[s].lock, NULL);
}

void ctab_release_shard(struct ctab *t, size_t s)
{
	struct ctab_shard *sh = &t->shard[s];

	free(sh->e);
	ht_release(&sh->index);
	mp_arena_release(&sh->arena);
	sh->e = NULL;
	sh->n = sh->alloc = 0;
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
	return __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}

struct probe {
	const uint64_t *keys;
	uint32_t n;
	uint64_t hash;
};

static bool same_stack(const void *key, uint32_t id, const void *ctx)
{
	const struct probe *p = key;
	const struct ctab_entry *e = &((const struct ctab_shard *)ctx)->e[id];

	return e->hash == p->hash && e->nkeys == p->n &&
	       memcmp(e->keys, p->keys, (size_t)p->n * sizeof(*p->keys)) == 0;
}

static uint64_t sat_mul_add(uint64_t acc, uint64_t v, uint64_t w)
{
	uint64_t r;

	if (__builtin_mul_overflow(v, w, &r) || __builtin_add_overflow(acc, r, &r))
		return UINT64_MAX;
	return r;
}

/* Add HIST (N counts) times W into E's histogram, growing it if shorter. */
static enum mp_errcode add_hist(struct ctab_shard *sh, struct ctab_entry *e,
				const uint64_t *hist, uint32_t n, uint64_t w)
{
	if (n > e->nhist) {
		uint64_t *h = mp_arena_alloc(&sh->arena, (size_t)n * sizeof(*h));

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

static enum mp_errcode fold_locked(struct ctab *t, struct ctab_shard *sh,
				   const struct probe *p,
				   const struct mp_mib *mib, const uint64_t *hist,
				   uint32_t nhist, uint64_t weight)
{
	struct mp_mib m = *mib;
	struct ctab_entry *e;
	uint32_t id;

	if (weight > 1)
		mib_scale(&m, weight);
	id = ht_find(&sh->index, p->hash, same_stack, p, sh);
	if (id != HT_NONE) {
		e = &sh->e[id];
		mib_fold(&e->mib, &m);
		e->mib.v[MIB_AccessHistogramSize] = e->nhist;
	} else {
		uint64_t *keys;

		if (sh->n >= UINT32_MAX - 1)
			return MP_E_TOO_LARGE;
		keys = mp_arena_memdup(&sh->arena, p->keys,
				       (size_t)p->n * sizeof(*keys));
		if (!keys || !MP_GROW(sh->e, sh->alloc, sh->n + 1) ||
		    ht_insert(&sh->index, p->hash, (uint32_t)sh->n))
			return MP_E_NOMEM;
		e = &sh->e[sh->n++];
		*e = (struct ctab_entry){ .keys = keys, .nkeys = p->n,
					  .hash = p->hash, .mib = m };
		e->mib.v[MIB_AccessHistogramSize] = 0;
		__atomic_add_fetch(&t->count, 1, __ATOMIC_RELAXED);
	}
	return nhist ? add_hist(sh, e, hist, nhist, weight) : MP_OK;
}

enum mp_errcode ctab_fold(struct ctab *t, const uint64_t *keys, uint32_t n,
			  const struct mp_mib *mib, const uint64_t *hist,
			  uint32_t nhist, uint64_t weight)
{
	struct probe p = { keys, n, mp_hash_bytes(keys, (size_t)n * 8, n) };
	struct ctab_shard *sh = &t->shard[p.hash % CTAB_SHARDS];
	enum mp_errcode rc;

	pthread_mutex_lock(&sh->lock);
	rc = fold_locked(t, sh, &p, mib, hist, nhist, weight);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}
