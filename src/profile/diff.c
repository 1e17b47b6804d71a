/*
 * diff.c - what overlap and diff decide, apart from how they print it:
 * functions ranked by weight, hot/cold counts and flips, diff rows, and
 * the CI gates.  Declared in compare.h.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

struct ranked {
	double weight;
	const char *name;
	long fn;
};

static int by_weight(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

enum mp_errcode cmp_functions_ranked(const struct cmp *c, const char *only,
				     long **out, size_t *n)
{
	struct ranked *r = malloc((c->nfunctions + 1) * sizeof(*r));
	long *fns = malloc((c->nfunctions + 1) * sizeof(*fns));
	size_t k = 0;

	if (!r || !fns) {
		free(r);
		free(fns);
		return MP_E_NOMEM;
	}
	/* Weights are computed once each, before sorting. */
	for (size_t i = 0; i < c->nfunctions; i++) {
		uint64_t t[2];

		if (only && strcmp(c->functions[i], only) != 0)
			continue;
		cmp_totals(c, MIB_TotalSize, (long)i, t);
		r[k++] = (struct ranked){
			share(t[0], c->total[0][MIB_TotalSize]) +
			share(t[1], c->total[1][MIB_TotalSize]),
			c->functions[i], (long)i,
		};
	}
	qsort(r, k, sizeof(*r), by_weight);
	for (size_t i = 0; i < k; i++)
		fns[i] = r[i].fn;
	free(r);
	*out = fns;
	*n = k;
	return MP_OK;
}

void cmp_matching(const struct cmp *c, struct cmp_matching *m)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < c->n; i++) {
		const struct cmp_entry *e = &c->e[i];

		if (!e->present[0] || !e->present[1])
			continue;
		m->common++;
		for (int s = 0; s < 2; s++) {
			m->allocs[s] += e->mib[s]->v[MIB_AllocCount];
			m->bytes[s] += e->mib[s]->v[MIB_TotalSize];
		}
	}
}

bool cmp_flips(const struct cmp_entry *e, const struct mib_thresholds *t,
	       enum mib_type k[2])
{
	for (int s = 0; s < 2; s++)
		k[s] = e->present[s] ? mib_alloc_type(e->mib[s], t)
				     : MIB_NOTCOLD;
	return e->present[0] && e->present[1] && k[0] != k[1];
}

void cmp_hot_cold(const struct cmp *c, const struct mib_thresholds *t,
		  struct cmp_hot_cold *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < c->n; i++) {
		const struct cmp_entry *e = &c->e[i];
		enum mib_type k[2];
		bool flip = cmp_flips(e, t, k);

		for (int s = 0; s < 2; s++)
			if (e->present[s])
				h->count[s][k[s]]++;
		if (!flip)
			continue;
		h->flips++;
		h->flipped_bytes[0] += e->mib[0]->v[MIB_TotalSize];
		h->flipped_bytes[1] += e->mib[1]->v[MIB_TotalSize];
	}
}

/* ---- diff ---- */

bool cmp_gate_parse(const char *s, struct cmp_gate *g)
{
	const char *colon = strrchr(s, ':');
	char name[64], *end;
	size_t len;
	int f;

	memset(g, 0, sizeof(*g));
	if (!colon || (colon[1] != '+' && colon[1] != '-'))
		return false;
	len = (size_t)(colon - s);
	if (len == 0 || len >= sizeof(name))
		return false;
	memcpy(name, s, len);
	name[len] = '\0';
	f = cmp_metric_parse(name);
	if (f < 0)
		return false;
	g->field = (enum mib_field)f;
	g->drop = colon[1] == '-';
	g->value = strtod(colon + 2, &end);
	if (end == colon + 2 || !(g->value >= 0) || isinf(g->value))
		return false;
	if (*end == '%') {
		g->percent = true;
		end++;
	}
	g->text = s;
	return *end == '\0';
}

bool cmp_gate_crosses(const struct cmp_gate *g, uint64_t b, uint64_t t)
{
	double d = g->drop ? (double)b - (double)t : (double)t - (double)b;

	if (g->percent)
		return b == 0 ? d > 0 : d * 100.0 / (double)b > g->value;
	return d > g->value;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * A row's place in the order of cmp_rows(): largest change of the sort
 * field first, then function name (as its rank among the names), then
 * entry (as the row's index, entries being in order): 16 bytes a row to
 * sort, where comparing rows would chase two pointers and a strcmp().
 */
struct row_key {
	uint64_t change;
	uint32_t fn_rank, row;
};

static int by_row_key(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->change != y->change)
		return x->change > y->change ? -1 : 1;
	if (x->fn_rank != y->fn_rank)
		return x->fn_rank < y->fn_rank ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int by_name(const void *a, const void *b, void *arg)
{
	const char *const *names = arg;

	return strcmp(names[*(const uint32_t *)a], names[*(const uint32_t *)b]);
}

/* Sort ROWS[0..N-1] of C as by_row_key() says.  False when out of memory. */
static bool sort_rows(const struct cmp *c, struct cmp_row *rows, size_t n,
		      bool by_function, enum mib_field f)
{
	size_t nf = c->nfunctions;
	uint32_t *by_name_order = malloc((nf ? nf : 1) * sizeof(uint32_t));
	uint32_t *rank = malloc((nf ? nf : 1) * sizeof(*rank));
	struct row_key *k = mp_alloc_big((n ? n : 1) * sizeof(*k));
	struct cmp_row *sorted = mp_alloc_big((n ? n : 1) * sizeof(*sorted));
	bool ok = by_name_order && rank && k && sorted && n <= UINT32_MAX &&
		  nf <= UINT32_MAX;

	if (ok) {
		for (size_t i = 0; i < nf; i++)
			by_name_order[i] = (uint32_t)i;
		qsort_r(by_name_order, nf, sizeof(uint32_t), by_name,
			(void *)c->functions);
		for (size_t i = 0; i < nf; i++)
			rank[by_name_order[i]] = (uint32_t)i;
		for (size_t i = 0; i < n; i++) {
			uint32_t fn = by_function ? (uint32_t)i : c->e[i].function;

			k[i] = (struct row_key){
				absdiff(rows[i].v[0][f], rows[i].v[1][f]),
				rank[fn], (uint32_t)i };
		}
		qsort(k, n, sizeof(*k), by_row_key);
		for (size_t i = 0; i < n; i++)
			sorted[i] = rows[k[i].row];
		memcpy(rows, sorted, n * sizeof(*rows));
	}
	free(by_name_order);
	free(rank);
	free(k);
	free(sorted);
	return ok;
}

enum mp_errcode cmp_rows(const struct cmp *c, bool by_function,
			 enum mib_field sort, struct cmp_row **out,
			 size_t *nrows)
{
	size_t n = by_function ? c->nfunctions : c->n, pool = 0, at = 0;
	size_t nsums = by_function ? 2 * n : 0;
	struct cmp_row *rows;
	struct mp_mib *sums;
	struct mp_samp *ps;

	/* A row's entries fold into room for all its entries' entries. */
	for (size_t i = 0; i < c->n; i++)
		pool += (size_t)c->e[i].nsamp[0] + c->e[i].nsamp[1];
	rows = mp_calloc_big(1, (n + 1) * sizeof(*rows) + nsums * sizeof(*sums) +
			 pool * sizeof(*ps));
	if (!rows)
		return MP_E_NOMEM;
	/* The sample entries' 128-bit sums stay aligned after both. */
	_Static_assert(sizeof(struct cmp_row) % _Alignof(struct mp_samp) == 0 &&
		       sizeof(struct mp_mib) % _Alignof(struct mp_samp) == 0,
		       "cmp_rows() blocks misalign struct mp_samp");
	sums = (struct mp_mib *)(rows + n + 1);
	ps = (struct mp_samp *)(sums + nsums);
	for (size_t i = 0; by_function && i < n; i++) {
		rows[i].function = c->functions[i];
		rows[i].v[0] = sums[2 * i].v;
		rows[i].v[1] = sums[2 * i + 1].v;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct cmp_entry *x = &c->e[i];
		struct cmp_row *r = by_function ? &rows[x->function] : &rows[i];

		if (!by_function) {
			/* An entry's MIB on a side it is absent from is zero. */
			r->function = c->functions[x->function];
			r->entry = x;
			r->v[0] = x->mib[0]->v;
			r->v[1] = x->mib[1]->v;
		}
		for (int s = 0; s < 2; s++) {
			if (!x->present[s])
				continue;
			/* A function's MIB: its contexts' folded (minima
			 * stay minima). */
			if (by_function && r->present[s])
				mib_fold(&sums[2 * x->function + s], x->mib[s]);
			else if (by_function)
				sums[2 * x->function + s] = *x->mib[s];
			r->present[s] = true;
		}
	}
	/* Each row's share of the pool, then the folds. */
	if (pool) {
		size_t *need = calloc(n + 1, sizeof(*need) * 2);

		if (!need) {
			free(rows);
			return MP_E_NOMEM;
		}
		for (size_t i = 0; i < c->n; i++) {
			size_t r = by_function ? c->e[i].function : i;

			need[2 * r] += c->e[i].nsamp[0];
			need[2 * r + 1] += c->e[i].nsamp[1];
		}
		for (size_t r = 0; r < n; r++)
			for (int s = 0; s < 2; s++) {
				rows[r].samp[s] = ps + at;
				at += need[2 * r + s];
			}
		free(need);
		for (size_t i = 0; i < c->n; i++) {
			const struct cmp_entry *x = &c->e[i];
			struct cmp_row *r = by_function ? &rows[x->function] : &rows[i];

			for (int s = 0; s < 2; s++)
				mp_samp_fold(r->samp[s], &r->nsamp[s], x->samp[s],
					     x->nsamp[s], 1);
		}
	}
	if (!sort_rows(c, rows, n, by_function, sort)) {
		free(rows);
		return MP_E_NOMEM;
	}
	*out = rows;
	*nrows = n;
	return MP_OK;
}

bool cmp_significant(const struct mp_mib *b, const struct mp_samp *sb,
		     uint32_t nb, const struct mp_mib *t,
		     const struct mp_samp *st, uint32_t nt, enum mib_field f)
{
	double blo, bhi, tlo, thi, vb = (double)b->v[f], vt = (double)t->v[f];
	double ub, ut;

	if (vb == vt)
		return false;
	if (!nb && !nt)
		return true;
	mp_samp_ci95(b, sb, nb, f, &blo, &bhi);
	mp_samp_ci95(t, st, nt, f, &tlo, &thi);
	if (vt > vb) {
		ub = bhi - vb;	/* how far up base may really be */
		ut = vt - tlo;	/* and test down */
	} else {
		ub = vb - blo;
		ut = thi - vt;
	}
	return fabs(vt - vb) > ub + ut;
}

bool cmp_row_significant(const struct cmp_row *r, enum mib_field f)
{
	struct mp_mib m[2];

	memcpy(m[0].v, r->v[0], sizeof(m[0].v));
	memcpy(m[1].v, r->v[1], sizeof(m[1].v));
	return cmp_significant(&m[0], r->samp[0], r->nsamp[0], &m[1],
			       r->samp[1], r->nsamp[1], f);
}

void cmp_gate_eval(const struct cmp *c, const struct cmp_row *rows,
		   size_t nrows, const struct cmp_gate *g, bool per_row,
		   struct cmp_gate_result *r)
{
	struct mp_mib tot[2];

	for (int s = 0; s < 2; s++)
		memcpy(tot[s].v, c->total[s], sizeof(tot[s].v));
	r->base = c->total[0][g->field];
	r->test = c->total[1][g->field];
	/* On sampled profiles only a change outside the intervals counts. */
	r->whole = cmp_gate_crosses(g, r->base, r->test) &&
		   (!c->sampled ||
		    cmp_significant(&tot[0], c->tsamp[0], c->ntsamp[0], &tot[1],
				    c->tsamp[1], c->ntsamp[1], g->field));
	r->rows_crossed = 0;
	for (size_t i = 0; per_row && i < nrows; i++) {
		const struct cmp_row *x = &rows[i];

		/* A relative gate needs a base value to be relative to. */
		if (g->percent && (!x->present[0] || !x->present[1]))
			continue;
		if (cmp_gate_crosses(g, x->v[0][g->field], x->v[1][g->field]) &&
		    (!c->sampled || cmp_row_significant(x, g->field)))
			r->rows_crossed++;
	}
}
