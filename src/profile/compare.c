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

struct keybuf {
	char *s;
	size_t n, alloc;
};

static bool kb_add(struct keybuf *k, const char *s, size_t len)
{
	if (!MP_GROW(k->s, k->alloc, k->n + len + 1))
		return false;
	memcpy(k->s + k->n, s, len);
	k->n += len;
	k->s[k->n] = '\0';
	return true;
}

/*
 * The match key of a context: its frames, each reduced as the match mode
 * says, separated by control characters that no name or path holds.
 */
static bool context_key(const struct view_context *c, enum cmp_match m,
			struct keybuf *k)
{
	/* A context without frames has the empty key, not the last one's. */
	k->n = 0;
	if (!kb_add(k, "", 0))
		return false;
	for (uint32_t i = 0; i < c->nframes; i++) {
		const struct mp_frame *f = &c->frames[i];
		char num[2 * 255 + 32];
		int len;

		if (!mp_frame_symbolized(f)) {
			/* Unsymbolized: its module and offset, or its address. */
			char bid[2 * 255 + 1];

			len = snprintf(num, sizeof(num), "?%s+%" PRIx64 "\x1e",
				       mp_frame_build_id_hex(f, bid, sizeof(bid)),
				       f->build_id_size ||
				       !(f->flags & MP_FRAME_ADDRESS)
					       ? f->offset : f->address);
			if (!kb_add(k, num, (size_t)len))
				return false;
			continue;
		}
		if (!kb_add(k, f->function ? f->function : "", f->function
			    ? strlen(f->function) : 0))
			return false;
		if (m == CMP_MATCH_FUNCTION) {
			if (!kb_add(k, "\x1e", 1))
				return false;
			continue;
		}
		if (!kb_add(k, "\x1f", 1) ||
		    !kb_add(k, f->file ? f->file : "", f->file ? strlen(f->file) : 0))
			return false;
		len = m == CMP_MATCH_COLUMN
			? snprintf(num, sizeof(num), "\x1f%u:%u:%u:%d\x1e", f->line,
				   f->column, f->discriminator, mp_frame_inlined(f))
			: snprintf(num, sizeof(num), "\x1f%u:%u:%d\x1e", f->line,
				   f->discriminator, mp_frame_inlined(f));
		if (!kb_add(k, num, (size_t)len))
			return false;
	}
	return true;
}

static bool key_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct cmp *c = ctx;

	return strcmp(c->keys[id], key) == 0;
}

static bool fn_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct cmp *c = ctx;

	return strcmp(c->functions[id], key) == 0;
}

/*
 * The function a context belongs to: its leaf frame's; for an
 * unsymbolized leaf, its module's build id in hex (BUF), or "?".
 */
static const char *leaf_function(const struct view_context *v, char *buf,
				 size_t size)
{
	const struct mp_frame *f;

	if (v->nframes == 0)
		return "";
	f = &v->frames[0];
	if (f->function)
		return f->function;
	if (!f->build_id_size)
		return "?";
	return mp_frame_build_id_hex(f, buf, size);
}

static enum mp_errcode function_index(struct cmp *c, const char *name,
				      uint32_t *out)
{
	uint64_t h = mp_hash_bytes(name, strlen(name), 7);
	uint32_t id = ht_find(&c->fn_ht, h, fn_eq, name, c);

	if (id != HT_NONE) {
		*out = id;
		return MP_OK;
	}
	/* NAME may be the caller's buffer: keep a copy. */
	name = mp_arena_strdup(&c->arena, name);
	if (!name ||
	    !MP_GROW(c->functions, c->afunctions, c->nfunctions + 1) ||
	    ht_insert(&c->fn_ht, h, (uint32_t)c->nfunctions))
		return MP_E_NOMEM;
	c->functions[c->nfunctions] = name;
	*out = (uint32_t)c->nfunctions++;
	return MP_OK;
}

static enum mp_errcode add_side(struct cmp *c, const struct view *v, int side,
				enum cmp_match m, struct keybuf *k)
{
	char bid[2 * 255 + 1];

	for (size_t i = 0; i < v->ncontexts; i++) {
		const struct view_context *vc = &v->contexts[i];
		struct cmp_entry *e;
		uint64_t h;
		uint32_t id;

		for (int f = 0; f < MIB__COUNT; f++)
			c->total[side][f] = sat_add(c->total[side][f],
						    vc->mib.v[f]);
		if (!context_key(vc, m, k))
			return MP_E_NOMEM;
		h = mp_hash_bytes(k->s, k->n, 3);
		id = ht_find(&c->key_ht, h, key_eq, k->s, c);
		if (id == HT_NONE) {
			char *copy = mp_arena_memdup(&c->arena, k->s, k->n + 1);

			if (!copy || !MP_GROW(c->e, c->alloc, c->n + 1) ||
			    !MP_GROW(c->keys, c->akeys, c->n + 1))
				return MP_E_NOMEM;
			id = (uint32_t)c->n++;
			c->keys[id] = copy;
			e = &c->e[id];
			memset(e, 0, sizeof(*e));
			e->ctx = vc;
			if (function_index(c, leaf_function(vc, bid, sizeof(bid)),
					   &e->function) ||
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
	struct keybuf k = { 0 };
	enum mp_errcode rc;

	memset(c, 0, sizeof(*c));
	rc = add_side(c, base, CMP_BASE, m, &k);
	if (!rc)
		rc = add_side(c, test, CMP_TEST, m, &k);
	free(k.s);
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
	free(c->keys);
	free(c->fn_start);
	free(c->by_fn);
	ht_release(&c->key_ht);
	ht_release(&c->fn_ht);
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
