#include "compare.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;

	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

static const char *const match_names[] = { "column", "line", "function" };

bool cmp_match_parse(const char *s, enum cmp_match *out)
{
	for (int i = 0; i < 3; i++) {
		if (strcmp(s, match_names[i]) == 0) {
			*out = (enum cmp_match)i;
			return true;
		}
	}
	return false;
}

const char *cmp_match_name(enum cmp_match m)
{
	return match_names[m];
}

const char *cmp_class_name(enum cmp_class k)
{
	static const char *const names[] = { "notcold", "cold", "hot" };

	return names[k];
}

int cmp_metric_parse(const char *s)
{
	static const struct {
		const char *alias;
		enum mib_field f;
	} aliases[] = {
		{ "allocs", MIB_AllocCount },
		{ "bytes", MIB_TotalSize },
		{ "accesses", MIB_TotalAccessCount },
		{ "lifetime", MIB_TotalLifetime },
	};

	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(s, aliases[i].alias) == 0)
			return aliases[i].f;
	return mib_field_by_name(s);
}

bool cmp_metric_known(const char *s, size_t len)
{
	char name[64];

	if (len >= sizeof(name))
		return false;
	memcpy(name, s, len);
	name[len] = '\0';
	return cmp_metric_parse(name) >= 0;
}

enum cmp_class cmp_classify(const struct mp_mib *m,
			    const struct cmp_thresholds *t)
{
	float count = (float)m->v[MIB_AllocCount], density;

	if (m->v[MIB_AllocCount] == 0)
		return CMP_CLASS_NOTCOLD;
	density = (float)m->v[MIB_TotalLifetimeAccessDensity] / count / 100;
	if (density < t->cold_density &&
	    (float)m->v[MIB_TotalLifetime] / count >= t->cold_lifetime * 1000)
		return CMP_CLASS_COLD;
	if (density > t->hot_density)
		return CMP_CLASS_HOT;
	return CMP_CLASS_NOTCOLD;
}

/* ---- keys ---- */

/*
 * Strings by content, each hashed once: a string is found by its pointer
 * first (the views hand out the same pointer for the same string: a file's
 * string table, the symbolizer's interned names), by its bytes only the
 * first time a pointer is seen.  Ids start at 1; 0 is "no string".  The
 * strings are not copied: the views outlive the comparison.
 */
static bool str_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct cmp *c = ctx;

	return strcmp(c->strs[id - 1], key) == 0;
}

static uint32_t str_id(struct cmp *c, const char *s)
{
	uint32_t *slot, id;
	bool added;
	uint64_t h;

	if (!s)
		return 0;
	slot = ht_map_find_or_add(&c->str_by_ptr, (uint64_t)(uintptr_t)s, &added);
	if (!slot) {
		c->nomem = true;
		return UINT32_MAX;
	}
	if (!added)
		return *slot;
	h = mp_hash_bytes(s, strlen(s), 7);
	id = ht_find(&c->str_ht, h, str_eq, s, c);
	if (id == HT_NONE) {
		if (c->nstrs >= UINT32_MAX - 2 ||
		    !MP_GROW(c->strs, c->astrs, c->nstrs + 1) ||
		    ht_insert(&c->str_ht, h, (uint32_t)c->nstrs + 1)) {
			/* Forget the pointer: a later try starts afresh. */
			c->nomem = true;
			return *slot = UINT32_MAX;
		}
		c->strs[c->nstrs++] = s;
		id = (uint32_t)c->nstrs;
	}
	return *slot = id;
}

/* The same for a string in a buffer of the caller's: copied once.  (Out
 * of memory, both set c->nomem.) */
static uint32_t str_id_copy(struct cmp *c, const char *s)
{
	uint64_t h = mp_hash_bytes(s, strlen(s), 7);
	uint32_t id = ht_find(&c->str_ht, h, str_eq, s, c);

	if (id != HT_NONE)
		return id;
	s = mp_arena_strdup(&c->arena, s);
	if (!s)
		c->nomem = true;
	return s ? str_id(c, s) : UINT32_MAX;
}

/*
 * The match key of a context: per frame a few 32-bit words of string ids
 * and numbers, as the match mode says, into c->kw.  A frame costs the same
 * whatever the length of its names.  False when out of memory.
 */
static bool context_key(struct cmp *c, const struct view_context *vc,
			enum cmp_match m)
{
	c->nkw = 0;
	for (uint32_t i = 0; i < vc->nframes; i++) {
		const struct mp_frame *f = &vc->frames[i];
		uint32_t w[7], n = 0;

		if (!mp_frame_symbolized(f)) {
			/* Unsymbolized: its module and offset, or its address. */
			char bid[2 * 255 + 1];
			uint64_t at = f->build_id_size || !(f->flags & MP_FRAME_ADDRESS)
				? f->offset : f->address;

			w[n++] = 1;
			w[n++] = str_id_copy(c, mp_frame_build_id_hex(f, bid,
								      sizeof(bid)));
			w[n++] = (uint32_t)at;
			w[n++] = (uint32_t)(at >> 32);
		} else {
			w[n++] = 2;
			w[n++] = str_id(c, f->function ? f->function : "");
			if (m != CMP_MATCH_FUNCTION) {
				w[n++] = str_id(c, f->file ? f->file : "");
				w[n++] = f->line;
				w[n++] = m == CMP_MATCH_COLUMN ? f->column : 0;
				w[n++] = f->discriminator;
				w[n++] = mp_frame_inlined(f);
			}
		}
		if (c->nomem || !MP_GROW(c->kw, c->akw, c->nkw + n))
			return false;
		memcpy(c->kw + c->nkw, w, n * sizeof(*w));
		c->nkw += n;
	}
	return true;
}

struct key_probe {
	struct cmp *c;
	enum cmp_match m;
	bool nomem;
};

/*
 * Is entry ID's context the one whose key is in c->kw?  Its key is not
 * kept: it is made again from its context, into the spare buffer (a
 * context's frames stay in its view).
 */
static bool key_eq(const void *key, uint32_t id, const void *ctx)
{
	struct key_probe *p = (struct key_probe *)key;
	struct cmp *c = p->c;
	uint32_t *kw = c->kw;
	size_t nkw = c->nkw, akw = c->akw;
	bool eq;

	(void)ctx;
	/* Swap the buffers: the probe's key goes to kw2 for a moment. */
	c->kw = c->kw2;
	c->akw = c->akw2;
	if (!context_key(c, c->e[id].ctx, p->m)) {
		p->nomem = true;
		eq = false;
	} else {
		/* A context without frames has an empty key, and maybe no
		 * buffer yet. */
		eq = c->nkw == nkw &&
		     (!nkw || memcmp(c->kw, kw, nkw * sizeof(*kw)) == 0);
	}
	c->kw2 = c->kw;
	c->akw2 = c->akw;
	c->kw = kw;
	c->nkw = nkw;
	c->akw = akw;
	return eq;
}

/*
 * The function a context belongs to: its leaf frame's; for an
 * unsymbolized leaf, its module's build id in hex, or "?".  As a string
 * id (0 when out of memory).
 */
static uint32_t leaf_function(struct cmp *c, const struct view_context *v)
{
	const struct mp_frame *f;
	char bid[2 * 255 + 1];

	if (v->nframes == 0)
		return str_id(c, "");
	f = &v->frames[0];
	if (f->function)
		return str_id(c, f->function);
	if (!f->build_id_size)
		return str_id(c, "?");
	return str_id_copy(c, mp_frame_build_id_hex(f, bid, sizeof(bid)));
}

static enum mp_errcode function_index(struct cmp *c, uint32_t name,
				      uint32_t *out)
{
	uint32_t *slot;
	bool added;

	if (name == UINT32_MAX || name == 0)
		return MP_E_NOMEM;
	slot = ht_map_find_or_add(&c->fn_by_str, name, &added);
	if (!slot)
		return MP_E_NOMEM;
	if (!added) {
		*out = *slot;
		return MP_OK;
	}
	if (!MP_GROW(c->functions, c->afunctions, c->nfunctions + 1))
		return MP_E_NOMEM;
	c->functions[c->nfunctions] = c->strs[name - 1];
	*out = *slot = (uint32_t)c->nfunctions++;
	return MP_OK;
}

/* Fold the NS entries S into the arena-held list *L (*N entries). */
static bool fold_samples(struct cmp *c, struct mp_samp **l, uint32_t *n,
			 const struct mp_samp *s, uint32_t ns)
{
	struct mp_samp *list;

	if (!ns)
		return true;
	list = mp_arena_alloc(&c->arena, ((size_t)*n + ns) * sizeof(*list));
	if (!list)
		return false;
	if (*n)
		memcpy(list, *l, *n * sizeof(*list));
	mp_samp_fold(list, n, s, ns);
	*l = list;
	c->sampled = true;
	return true;
}

static enum mp_errcode add_side(struct cmp *c, const struct view *v, int side,
				enum cmp_match m)
{
	for (size_t i = 0; i < v->ncontexts; i++) {
		const struct view_context *vc = &v->contexts[i];
		struct key_probe probe = { c, m, false };
		struct cmp_entry *e;
		uint64_t h;
		uint32_t id;

		for (int f = 0; f < MIB__COUNT; f++)
			c->total[side][f] = sat_add(c->total[side][f],
						    vc->mib.v[f]);
		if (!context_key(c, vc, m))
			return MP_E_NOMEM;
		h = mp_hash_bytes(c->kw, c->nkw * sizeof(*c->kw), 3);
		id = ht_find(&c->key_ht, h, key_eq, &probe, c);
		if (probe.nomem)
			return MP_E_NOMEM;
		if (id == HT_NONE) {
			if (!MP_GROW(c->e, c->alloc, c->n + 1))
				return MP_E_NOMEM;
			id = (uint32_t)c->n++;
			e = &c->e[id];
			memset(e, 0, sizeof(*e));
			e->ctx = vc;
			if (function_index(c, leaf_function(c, vc), &e->function) ||
			    ht_insert(&c->key_ht, h, id))
				return MP_E_NOMEM;
		}
		e = &c->e[id];
		if (!e->present[side]) {
			e->present[side] = true;
			e->mib[side] = vc->mib;
			c->contexts[side]++;
		} else {
			mib_fold(&e->mib[side], &vc->mib);
		}
		if (!fold_samples(c, &e->samp[side], &e->nsamp[side], vc->samp,
				  vc->nsamp) ||
		    !fold_samples(c, &c->tsamp[side], &c->ntsamp[side], vc->samp,
				  vc->nsamp))
			return MP_E_NOMEM;
	}
	return MP_OK;
}

/*
 * Index the entries by function (a counting sort): a function's totals
 * and overlap then cost its own entries, not a pass over all of them.
 */
static enum mp_errcode group_by_function(struct cmp *c)
{
	size_t nf = c->nfunctions;

	c->fn_start = calloc(nf + 1, sizeof(*c->fn_start));
	c->by_fn = malloc((c->n ? c->n : 1) * sizeof(*c->by_fn));
	if (!c->fn_start || !c->by_fn)
		return MP_E_NOMEM;
	for (size_t i = 0; i < c->n; i++)
		c->fn_start[c->e[i].function + 1]++;
	for (size_t f = 0; f < nf; f++)
		c->fn_start[f + 1] += c->fn_start[f];
	for (size_t i = 0; i < c->n; i++)
		c->by_fn[c->fn_start[c->e[i].function]++] = (uint32_t)i;
	/* Each start moved to the next one's: shift back. */
	for (size_t f = nf; f > 0; f--)
		c->fn_start[f] = c->fn_start[f - 1];
	c->fn_start[0] = 0;
	return MP_OK;
}

enum mp_errcode cmp_build(struct cmp *c, const struct view *base,
			  const struct view *test, enum cmp_match m,
			  struct mp_err *err)
{
	enum mp_errcode rc;

	memset(c, 0, sizeof(*c));
	rc = add_side(c, base, CMP_BASE, m);
	if (!rc)
		rc = add_side(c, test, CMP_TEST, m);
	/* The keys' buffers and the pointer cache are done with. */
	free(c->kw);
	free(c->kw2);
	c->kw = c->kw2 = NULL;
	c->akw = c->akw2 = c->nkw = 0;
	ht_map_release(&c->str_by_ptr);
	if (!rc)
		rc = group_by_function(c);
	if (rc)
		return mp_fail(err, rc, NULL);
	return MP_OK;
}

void cmp_release(struct cmp *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->functions);
	free(c->strs);
	free(c->kw);
	free(c->kw2);
	free(c->fn_start);
	free(c->by_fn);
	ht_release(&c->key_ht);
	ht_release(&c->str_ht);
	ht_map_release(&c->str_by_ptr);
	ht_map_release(&c->fn_by_str);
	mp_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

/* The entries of function FN (< 0: all), as [*first, *end) of order. */
static const uint32_t *fn_entries(const struct cmp *c, long fn, size_t *n)
{
	if (fn < 0) {
		*n = c->n;
		return NULL;
	}
	*n = c->fn_start[fn + 1] - c->fn_start[fn];
	return c->by_fn + c->fn_start[fn];
}

#define ENTRY(c, list, i) (&(c)->e[(list) ? (list)[i] : (i)])

void cmp_totals(const struct cmp *c, enum mib_field f, long fn,
		uint64_t out[2])
{
	const uint32_t *list;
	size_t n;

	if (fn < 0) {
		out[0] = c->total[0][f];
		out[1] = c->total[1][f];
		return;
	}
	out[0] = out[1] = 0;
	list = fn_entries(c, fn, &n);
	for (size_t i = 0; i < n; i++) {
		const struct cmp_entry *e = ENTRY(c, list, i);

		for (int s = 0; s < 2; s++)
			if (e->present[s])
				out[s] = sat_add(out[s], e->mib[s].v[f]);
	}
}

double cmp_overlap(const struct cmp *c, enum mib_field f, long fn)
{
	unsigned __int128 num = 0, den;
	const uint32_t *list;
	uint64_t tot[2];
	size_t n;

	cmp_totals(c, f, fn, tot);
	if (tot[0] == 0 && tot[1] == 0)
		return 1.0;
	if (tot[0] == 0 || tot[1] == 0)
		return 0.0;
	den = (unsigned __int128)tot[0] * tot[1];
	list = fn_entries(c, fn, &n);
	for (size_t i = 0; i < n; i++) {
		const struct cmp_entry *e = ENTRY(c, list, i);
		unsigned __int128 a, b;

		if (!e->present[0] || !e->present[1])
			continue;
		a = (unsigned __int128)e->mib[0].v[f] * tot[1];
		b = (unsigned __int128)e->mib[1].v[f] * tot[0];
		/*
		 * Saturated totals can make the terms add up past DEN, and
		 * past 2^128: the overlap is 1 as soon as they reach DEN.
		 */
		if ((a < b ? a : b) >= den - num)
			return 1.0;
		num += a < b ? a : b;
	}
	return (double)((long double)num / (long double)den);
}
