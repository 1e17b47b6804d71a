/*
 * idx_write.c - the builder's contents laid out as an indexed profile:
 * everything numbered in an order that depends only on the contents
 * (so any input order gives the same bytes), then the sections written
 * (memprof-data-format(5)).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_thread.h"
#include "idx_format.h"
#include "idx_varint.h"

/*
 * Everything written is numbered in an order that depends only on the
 * contents, never on the order contexts arrived in, so that merging the
 * same contexts in any order gives the same bytes.
 */

/* String ids by their bytes; ARG is the builder. */
static int by_string(const void *x, const void *y, void *arg)
{
	const struct idx_builder *b = arg;
	const struct idx_bstr *a = &b->strs[*(const uint32_t *)x];
	const struct idx_bstr *c = &b->strs[*(const uint32_t *)y];
	size_t n = a->len < c->len ? a->len : c->len;
	int r = memcmp(a->s, c->s, n);

	if (r)
		return r;
	return a->len < c->len ? -1 : a->len > c->len;
}

/* A node of a forest to renumber, and its key among its siblings. */
struct forest_ent {
	uint32_t key, node;
};

static int by_key(const void *x, const void *y)
{
	const struct forest_ent *a = x, *c = y;

	return a->key < c->key ? -1 : a->key > c->key;
}

/* Sort the N siblings at E by key: most groups hold a node or two. */
static void sort_siblings(struct forest_ent *e, size_t n)
{
	if (n > 16) {
		qsort(e, n, sizeof(*e), by_key);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct forest_ent x = e[i];
		size_t j = i;

		for (; j > 0 && e[j - 1].key > x.key; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
}

/*
 * Renumbering a forest of N nodes (RECS[i].b = parent + 1, 0 for a root)
 * in depth-first pre-order, siblings by key: parents come before
 * children, and the numbering depends only on the keys.  Every parent
 * must come before its children in RECS (the builder appends them so),
 * else MP_E_INVALID.
 *
 * No walk: siblings are grouped by a counting sort on the parent and each
 * group sorted by key; subtree sizes are summed from the last node back;
 * then each group, parents' groups first, hands its nodes consecutive
 * ranges after their parent's index.  A depth-first walk with a stack
 * waited for memory at every node (each step's address came from the
 * step before); these passes' accesses are independent of one another.
 *
 * In two steps: forest_group() needs no key, so it may run on a thread of
 * its own while the keys are made (a trie's keys are the numbers of the
 * stack entries, written just before it); forest_number() then sorts and
 * numbers.
 */
struct forest {
	const struct idx_rec *recs;
	size_t n;
	/* N + 1 entries: each node's subtree size, then its new index. */
	uint32_t *out;
	/* N + 2 entries: first[p] .. first[p + 1] - 1 are the places in E of
	 * the children of parent p (p = node + 1, 0 = roots); then the new
	 * indexes' old nodes. */
	uint32_t *first;
	struct forest_ent *e;	/* the nodes grouped by parent */
	enum mp_errcode rc;	/* forest_group()'s */
};

static void forest_group(struct forest *f)
{
	const struct idx_rec *recs = f->recs;
	uint32_t *first = f->first, *size = f->out;
	size_t n = f->n;

	/* Written whole at once: huge pages when big (mp_alloc_big). */
	f->e = mp_alloc_big((n ? n : 1) * sizeof(*f->e));
	if (!f->e) {
		f->rc = MP_E_NOMEM;
		return;
	}
	memset(first, 0, (n + 2) * sizeof(*first));
	for (size_t i = 0; i < n; i++) {
		if (recs[i].b > i) {
			f->rc = MP_E_INVALID;
			return;
		}
		first[recs[i].b + 1]++;
	}
	for (size_t p = 0; p <= n; p++)
		first[p + 1] += first[p];
	for (size_t i = 0; i < n; i++)
		f->e[first[recs[i].b]++].node = (uint32_t)i;
	/* Each first[p] now points where group p + 1 starts: shift back. */
	for (size_t p = n + 1; p > 0; p--)
		first[p] = first[p - 1];
	first[0] = 0;
	for (size_t i = n; i-- > 0;)
		size[i] = 1;
	for (size_t i = n; i-- > 0;)
		if (recs[i].b)
			size[recs[i].b - 1] += size[i];
	f->rc = MP_OK;
}

static void *forest_group_thread(void *arg)
{
	forest_group(arg);
	return NULL;
}

/*
 * Number grouped forest F, node i's key being AMAP[F->recs[i].a]: then
 * F->out[i] is node i's new index and F->first[k] the node with new
 * index k.  Frees what forest_group() took.
 */
static enum mp_errcode forest_number(struct forest *f, const uint32_t *amap)
{
	const struct idx_rec *recs = f->recs;
	struct forest_ent *e = f->e;
	uint32_t *first = f->first, *out = f->out;
	size_t n = f->n;

	if (f->rc) {
		free(e);
		f->e = NULL;
		return f->rc;
	}
	for (size_t k = 0; k < n; k++)
		e[k].key = amap[recs[e[k].node].a];
	/* OUT holds the sizes until each node's index replaces its size,
	 * which is read once, when the node is numbered. */
	for (size_t p = 0; p <= n; p++) {
		uint32_t at = p ? out[p - 1] + 1 : 0;

		sort_siblings(e + first[p], first[p + 1] - first[p]);
		for (uint32_t k = first[p]; k < first[p + 1]; k++) {
			uint32_t v = e[k].node, sz = out[v];

			out[v] = at;
			at += sz;
		}
	}
	free(e);
	f->e = NULL;
	for (size_t i = 0; i < n; i++)
		first[out[i]] = (uint32_t)i;
	return MP_OK;
}

/* Frame ids by their six columns; ARG is the frame table. */
static int by_frame(const void *x, const void *y, void *arg)
{
	uint32_t (*frames)[FRAME_COLUMNS] = arg;
	const uint32_t *a = frames[*(const uint32_t *)x];
	const uint32_t *c = frames[*(const uint32_t *)y];

	for (int i = 0; i < FRAME_COLUMNS; i++)
		if (a[i] != c[i])
			return a[i] < c[i] ? -1 : 1;
	return 0;
}

struct ctx_order {
	uint32_t owner;		/* string id of the owning function */
	uint32_t node;		/* its trie node's place in the trie's order */
	uint32_t ctx;
};

static int by_owner_node(const void *x, const void *y)
{
	const struct ctx_order *a = x, *c = y;

	if (a->owner != c->owner)
		return a->owner < c->owner ? -1 : 1;
	return a->node < c->node ? -1 : a->node > c->node;
}


struct obuf {
	unsigned char *d;
	size_t n, a;
	bool oom;
};

static unsigned char *ob_put(struct obuf *o, size_t len)
{
	if (o->oom || !MP_GROW(o->d, o->a, o->n + len)) {
		o->oom = true;
		return NULL;
	}
	memset(o->d + o->n, 0, len);
	o->n += len;
	return o->d + o->n - len;
}

static void ob_u32(struct obuf *o, uint32_t v)
{
	unsigned char *p = ob_put(o, 4);

	if (p)
		mp_put_le32(p, v);
}

static void ob_u64(struct obuf *o, uint64_t v)
{
	unsigned char *p = ob_put(o, 8);

	if (p)
		mp_put_le64(p, v);
}

static void ob_varint(struct obuf *o, uint64_t v)
{
	if (o->oom || !MP_GROW(o->d, o->a, o->n + 10)) {
		o->oom = true;
		return;
	}
	o->n += put_varint(o->d + o->n, v);
}

/* A sample sum, exactly: its low 64 bits, then its high ones. */
static void ob_fixed(struct obuf *o, mp_fixed v)
{
	ob_varint(o, (uint64_t)v);
	ob_varint(o, (uint64_t)((unsigned __int128)v >> 64));
}

static void ob_align(struct obuf *o)
{
	while (o->n % 8 && !o->oom)
		ob_put(o, 1);
}

struct out_tables {
	uint32_t *str_out;	/* old string -> new id (byte offset) */
	uint32_t *str_rank;	/* old string -> its place in that order */
	size_t nstr_used;
	uint32_t *path_out;	/* old path -> new index */
	uint32_t *frame_out;	/* old frame -> new index */
	uint32_t *frame_new_to_old;
	uint32_t *path_new_to_old;
	uint32_t *trie_out;	/* node -> its place in the trie's order */
	uint32_t *trie_new_to_old;
	uint32_t *trie_off;	/* place -> offset in the section: stack id */
	uint32_t (*frames)[FRAME_COLUMNS];	/* frames with output string and path ids */
	struct ctx_order *order;
};

static bool same_hist(const struct idx_bctx *a, const struct idx_bctx *c)
{
	return a->nhist == c->nhist &&
	       (!a->nhist || memcmp(a->hist, c->hist,
				    a->nhist * sizeof(*a->hist)) == 0);
}

static uint32_t f32_bits(float x)
{
	uint32_t b;

	memcpy(&b, &x, sizeof(b));
	return b;
}

/*
 * One MIB of a record: its presence mask, then the fields that differ
 * from PREV, the MIB before it in the record (NULL for the first, whose
 * reference is all zeros and an empty histogram).  Schema field f < 26 is
 * MIB field f, field 26 the histogram.  True when a field of C stopped at
 * 2^64 - 1 (mp_mib's sums saturate): the write counts them on its way,
 * where a pass of its own over every MIB cost a merge's tail 3 ms.
 */
static bool write_mib(struct obuf *o, const struct idx_bctx *c,
		      const struct idx_bctx *prev)
{
	static const struct mp_mib zero_mib;
	static const struct idx_bctx zero;
	const struct mp_mib *pm = prev ? prev->mib : &zero_mib;
	uint64_t mask = 0;
	bool saturated = false;

	if (!prev)
		prev = &zero;
	/* Without a branch per field: which fields change is data. */
	for (int f = 0; f < MIB__COUNT; f++) {
		mask |= (uint64_t)(c->mib->v[f] != pm->v[f]) << f;
		saturated |= c->mib->v[f] == UINT64_MAX;
	}
	if (!same_hist(c, prev))
		mask |= (uint64_t)1 << MIB__COUNT;
	if (c->nsamp)
		mask |= (uint64_t)1 << (MIB__COUNT + 1);
	/*
	 * The mask and the fields straight into room for the longest case:
	 * a hundred thousand records of up to 27 varints each, one ob_put()
	 * per varint was most of the write's time.
	 */
	if (o->oom || !MP_GROW(o->d, o->a, o->n + 10 * (MIB__COUNT + 1))) {
		o->oom = true;
		return saturated;
	}
	o->n += put_varint(o->d + o->n, mask);
	for (uint64_t m = mask & (((uint64_t)1 << MIB__COUNT) - 1); m; m &= m - 1)
		o->n += put_varint(o->d + o->n, c->mib->v[__builtin_ctzll(m)]);
	if (mask >> MIB__COUNT & 1) {
		ob_varint(o, c->nhist);
		for (uint32_t i = 0; i < c->nhist; i++)
			ob_varint(o, c->hist[i]);
	}
	if (c->nsamp) {
		ob_varint(o, (uint64_t)c->nsamp * SAMPLE_SUM_WORDS);
		for (uint32_t i = 0; i < c->nsamp; i++) {
			const struct mp_samp *e = &c->samp[i];

			ob_varint(o, e->interval);
			ob_varint(o, e->n);
			ob_varint(o, e->u);
			for (int k = 0; k < MP_SAMP_NFIELDS; k++)
				ob_fixed(o, e->est[k]);
			for (int k = 0; k < MP_SAMP_NFIELDS; k++)
				ob_fixed(o, e->var[k]);
		}
	}
	return saturated;
}

/*
 * The file-path table of forest F, grouped: u32 count, then (name, parent
 * + 1) per node, names renumbered through AMAP.  Then F->out[i] is path
 * i's index, F->first[k] the path at index k.
 */
static enum mp_errcode write_paths(struct obuf *o, struct forest *f,
				   const uint32_t *amap)
{
	enum mp_errcode rc = forest_number(f, amap);

	if (rc)
		return rc;
	ob_u32(o, (uint32_t)f->n);
	for (size_t k = 0; k < f->n; k++) {
		const struct idx_rec *r = &f->recs[f->first[k]];

		ob_u32(o, amap[r->a]);
		ob_u32(o, r->b ? f->out[r->b - 1] + 1 : 0);
	}
	return MP_OK;
}

/*
 * The call-stack trie of N nodes RECS, numbered (OUT[i]: node i's place
 * in forest order, NEW_TO_OLD its inverse), its frames renumbered through
 * FRAME_OUT: u32 count, then each node as varints (frame, its offset
 * minus its parent's, 0 for a root), in forest order, which puts parents
 * first, so a parent's offset is known when its child is written.  OFF[k]
 * gets the offset in the section of the k-th node written: its stack id.
 */
static enum mp_errcode write_trie(struct obuf *o, const struct idx_rec *recs,
				  size_t n, const uint32_t *out,
				  const uint32_t *new_to_old,
				  const uint32_t *frame_out, uint32_t *off)
{
	size_t start = o->n, max;

	ob_u32(o, (uint32_t)n);
	/* Room for the longest case once, then the varints straight in. */
	if (!mp_mul(n, 10, &max) || o->oom || !MP_GROW(o->d, o->a, o->n + max)) {
		o->oom = true;
		return MP_E_NOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		const struct idx_rec *r = &recs[new_to_old[k]];
		size_t at = o->n - start;

		/* Offsets and offset + 1 (a parent1) must fit 32 bits. */
		if (at >= UINT32_MAX - 1)
			return MP_E_TOO_LARGE;
		off[k] = (uint32_t)at;
		o->n += put_varint(o->d + o->n, frame_out[r->a]);
		o->n += put_varint(o->d + o->n, r->b ? at - off[out[r->b - 1]] : 0);
	}
	if (o->n - start >= UINT32_MAX - 1)
		return MP_E_TOO_LARGE;
	return MP_OK;
}

/* Bytes that hold V: 0 for 0, else 1 to 4. */
static unsigned width_of(uint32_t v)
{
	unsigned w = 0;

	while (v) {
		w++;
		v >>= 8;
	}
	return w;
}

/*
 * The stack-entry table: u32 count, the six column widths, two reserved
 * bytes, then the entries FRAMES[ORDER[k]] with each column in the fewest
 * bytes that hold its largest value.  Fixed-size entries keep lookup by
 * index O(1); most columns are small (string ids, lines, a flag bit).
 */
static void write_frames(struct obuf *o, uint32_t (*frames)[FRAME_COLUMNS],
			 const uint32_t *order, size_t n)
{
	unsigned width[FRAME_COLUMNS] = { 0 };
	unsigned char *p;

	for (size_t k = 0; k < n; k++)
		for (int c = 0; c < FRAME_COLUMNS; c++) {
			unsigned w = width_of(frames[order[k]][c]);

			if (w > width[c])
				width[c] = w;
		}
	ob_u32(o, (uint32_t)n);
	p = ob_put(o, FRAMES_HEADER - 4);
	for (int c = 0; p && c < FRAME_COLUMNS; c++)
		p[c] = (unsigned char)width[c];
	for (size_t k = 0; k < n; k++)
		for (int c = 0; c < FRAME_COLUMNS; c++) {
			uint32_t v = frames[order[k]][c];

			p = ob_put(o, width[c]);
			for (unsigned i = 0; p && i < width[c]; i++)
				p[i] = (unsigned char)(v >> (8 * i));
		}
}

/*
 * One write: the builder, the numbering tables, the output buffer and the
 * sections' places.  Each step below fills one section; every step leaves
 * o.oom set rather than failing on out of memory, which the end checks.
 * It is made in two steps (idx_write_begin(), idx_write_end()): the
 * stacks' sections, then the contexts' and the file.
 */
struct idx_write {
	struct idx_builder *b;
	struct out_tables t;
	struct obuf o;
	size_t sec_off[SEC__COUNT], sec_size[SEC__COUNT];
	unsigned char *used, *used_str, *used_path, *used_frame;
	uint32_t *tmp;			/* the strings' order, one per string */
	struct ht_disk_item *items;	/* one per record */
	uint32_t nitems;
	size_t nframes_used;
	uint64_t totals[NSUMMARY];	/* the summary's, saturating */
	size_t saturated;		/* contexts with a field at 2^64 - 1 */
	void *block;			/* the stacks' tables, one allocation */
	void *ctx_block;		/* the contexts' (order, items) */
	/* The first step's outcome, and the stacks it saw. */
	enum mp_errcode rc;
	enum mp_errcode trie_rc;	/* the trie section's */
	size_t nstrs, npaths, nframes, ntrie;
	/* The end's file when written as it goes (idx_write_push()): its
	 * bytes before O.d + OUT_AT are in OUT, but for the header's. */
	FILE *out;
	size_t out_at;
	int out_errno;			/* the first write's failure */
	void (*push)(void *);
	void *push_arg;
};

/*
 * Write what W's buffer holds past what is in its file (when written as
 * it goes), then let the caller push it on to the disk.
 */
static void write_out(struct idx_write *w)
{
	size_t n = w->o.n - w->out_at;

	if (!w->out || w->out_errno || w->o.oom || !n)
		return;
	if (fwrite(w->o.d + w->out_at, 1, n, w->out) != n) {
		w->out_errno = errno ? errno : EIO;
		return;
	}
	w->out_at = w->o.n;
	w->push(w->push_arg);
}

static void sec_begin(struct idx_write *w, int id)
{
	w->sec_off[id] = w->o.n;
}

static void sec_end(struct idx_write *w, int id)
{
	w->sec_size[id] = w->o.n - w->sec_off[id];
	ob_align(&w->o);
}

/*
 * Only what the stacks reach is written: the frames of trie nodes, their
 * paths with every ancestor, and the strings of those (and "", string 0).
 * A frame interned but dropped before any stack used it must not change
 * the bytes, or the output would depend on history.
 */
static void mark_used(struct idx_write *w)
{
	const struct idx_builder *b = w->b;

	w->used_str = w->used;
	w->used_path = w->used + b->nstrs;
	w->used_frame = w->used + b->nstrs + b->npaths;
	w->used_str[0] = 1;
	for (size_t i = 0; i < b->ntrie; i++)
		w->used_frame[b->trie[i].a] = 1;
	for (size_t i = 0; i < b->nframes; i++) {
		if (!w->used_frame[i])
			continue;
		w->used_str[b->frames[i][0]] = 1;
		for (uint32_t p1 = b->frames[i][1];
		     p1 && !w->used_path[p1 - 1]; p1 = b->paths[p1 - 1].b) {
			w->used_path[p1 - 1] = 1;
			w->used_str[b->paths[p1 - 1].a] = 1;
		}
	}
}

/*
 * 1: the totals of the summary fields: room for them here, filled in by
 * fill_summary() with what write_records() added up while it read every
 * MIB anyway (a pass of its own over the MIBs, which lie all over the
 * memory of a merge that lent them, cost as much as the records').
 */
static void write_summary(struct idx_write *w)
{
	sec_begin(w, SEC_SUMMARY);
	ob_u32(&w->o, NSUMMARY);
	ob_u32(&w->o, 0);
	for (size_t k = 0; k < NSUMMARY; k++) {
		ob_u32(&w->o, mib_fields[summary_fields[k]].tag);
		ob_u32(&w->o, 0);
		ob_u64(&w->o, 0);
	}
	sec_end(w, SEC_SUMMARY);
}

static void fill_summary(struct idx_write *w)
{
	unsigned char *d = w->o.d + w->sec_off[SEC_SUMMARY] + 8;

	for (size_t k = 0; k < NSUMMARY; k++)
		mp_put_le64(d + 16 * k + 8, w->totals[k]);
}

/* 2: strings, sorted by bytes; an id is a byte offset. */
static enum mp_errcode write_strings(struct idx_write *w)
{
	struct idx_builder *b = w->b;
	size_t nused = 0;

	sec_begin(w, SEC_STRINGS);
	for (size_t i = 0; i < b->nstrs; i++)
		if (w->used_str[i])
			w->tmp[nused++] = (uint32_t)i;
	qsort_r(w->tmp, nused, sizeof(*w->tmp), by_string, b);
	w->t.nstr_used = nused;
	for (size_t i = 0; i < nused; i++) {
		struct idx_bstr *s = &b->strs[w->tmp[i]];
		size_t at = w->o.n - w->sec_off[SEC_STRINGS];
		unsigned char *p;

		if (at + s->len + 1 > UINT32_MAX)
			return MP_E_TOO_LARGE;
		w->t.str_out[w->tmp[i]] = (uint32_t)at;
		w->t.str_rank[w->tmp[i]] = (uint32_t)i;
		p = ob_put(&w->o, s->len + 1);
		if (p)
			memcpy(p, s->s, s->len);
	}
	sec_end(w, SEC_STRINGS);
	return MP_OK;
}

/* 3: paths, as a forest ordered by component names. */
static enum mp_errcode write_path_section(struct idx_write *w)
{
	const struct idx_builder *b = w->b;
	size_t npath = b->npaths, ncp = 0;
	struct idx_rec *cpaths = calloc(npath + 1, sizeof(*cpaths));
	uint32_t *cidx = malloc((npath + 1) * sizeof(*cidx));
	uint32_t *cout = malloc((npath + 1) * sizeof(*cout));
	enum mp_errcode rc = MP_E_NOMEM;
	struct forest forest;

	if (!cpaths || !cidx || !cout)
		goto out;
	for (size_t i = 0; i < npath; i++) {
		if (!w->used_path[i])
			continue;
		cidx[i] = (uint32_t)ncp;
		cpaths[ncp].a = b->paths[i].a;
		/* A used path's parent is used, and earlier: already numbered. */
		cpaths[ncp].b = b->paths[i].b ? cidx[b->paths[i].b - 1] + 1 : 0;
		ncp++;
	}
	sec_begin(w, SEC_PATHS);
	forest = (struct forest){
		.recs = cpaths, .n = ncp, .out = cout,
		.first = w->t.path_new_to_old,
	};
	forest_group(&forest);
	if ((rc = write_paths(&w->o, &forest, w->t.str_out)))
		goto out;
	for (size_t i = 0; i < npath; i++)
		if (w->used_path[i])
			w->t.path_out[i] = cout[cidx[i]];
	sec_end(w, SEC_PATHS);
	rc = MP_OK;
out:
	free(cpaths);
	free(cidx);
	free(cout);
	return rc;
}

/* 4: frames, renumbered in the order of their new contents. */
static void write_frame_section(struct idx_write *w)
{
	const struct idx_builder *b = w->b;
	struct out_tables *t = &w->t;
	size_t nused = 0;

	for (size_t i = 0; i < b->nframes; i++) {
		if (!w->used_frame[i])
			continue;
		memcpy(t->frames[i], b->frames[i], sizeof(t->frames[i]));
		t->frames[i][0] = t->str_out[b->frames[i][0]];
		if (b->frames[i][1])
			t->frames[i][1] = t->path_out[b->frames[i][1] - 1] + 1;
		t->frame_new_to_old[nused++] = (uint32_t)i;
	}
	qsort_r(t->frame_new_to_old, nused, sizeof(uint32_t), by_frame,
		t->frames);
	for (size_t k = 0; k < nused; k++)
		t->frame_out[t->frame_new_to_old[k]] = (uint32_t)k;
	sec_begin(w, SEC_FRAMES);
	write_frames(&w->o, t->frames, t->frame_new_to_old, nused);
	sec_end(w, SEC_FRAMES);
	w->nframes_used = nused;
}

/* 5: the call-stack trie (numbered), ordered by frames from the outermost. */
static enum mp_errcode write_trie_section(struct idx_write *w)
{
	const struct idx_builder *b = w->b;
	enum mp_errcode rc;

	sec_begin(w, SEC_TRIE);
	rc = write_trie(&w->o, b->trie, b->ntrie, w->t.trie_out,
			w->t.trie_new_to_old, w->t.frame_out, w->t.trie_off);
	sec_end(w, SEC_TRIE);
	return rc;
}

static void *write_trie_thread(void *arg)
{
	struct idx_write *w = arg;

	w->trie_rc = write_trie_section(w);
	return NULL;
}

/* 6: the schema: every MIB field, the histogram, and in version 13 the
 * sample entries. */
static void write_schema(struct idx_write *w)
{
	int n = MIB__COUNT + 1 + (w->b->nsampled ? 1 : 0);

	sec_begin(w, SEC_SCHEMA);
	ob_u32(&w->o, (uint32_t)n);
	for (int f = 0; f < n; f++) {
		unsigned char *p = ob_put(&w->o, 2);

		if (!p)
			continue;
		p[0] = f < MIB__COUNT ? mib_fields[f].tag
		       : f == MIB__COUNT ? TAG_HISTOGRAM : TAG_SAMPLE_SUMS;
		p[1] = f < MIB__COUNT ? TYPE_VARINT : TYPE_VARINT_ARRAY;
	}
	sec_end(w, SEC_SCHEMA);
}

/*
 * The contexts by owning function, then stack id, into t.order: a
 * counting sort by the function's place among the strings over the
 * trie's nodes in written order (stack ids ascending), O(nodes +
 * contexts) where a sort of the contexts by the pair took a fifth of the
 * write.  The same order as by_owner_node(), which a builder whose node
 * map disagrees with its contexts falls back to.
 */
static enum mp_errcode order_records(struct idx_write *w)
{
	const struct idx_builder *b = w->b;
	struct ctx_order *order = w->t.order;
	size_t nctx = b->nctxs, placed = 0;
	uint32_t *at = calloc(w->t.nstr_used + 1, sizeof(*at));

	if (!at)
		return MP_E_NOMEM;
	for (size_t i = 0; i < nctx; i++)
		at[w->t.str_rank[b->ctx_owner[i]] + 1]++;
	for (size_t r = 0; r < w->t.nstr_used; r++)
		at[r + 1] += at[r];
	for (size_t k = 0; k < b->ntrie; k++) {
		uint32_t node = w->t.trie_new_to_old[k], owner, c1;

		if (node >= b->anode_ctx || !(c1 = b->node_ctx[node]))
			continue;
		owner = b->ctx_owner[c1 - 1];
		order[at[w->t.str_rank[owner]]++] = (struct ctx_order){
			w->t.str_out[owner], (uint32_t)k, c1 - 1,
		};
		placed++;
	}
	free(at);
	if (placed != nctx) {
		for (size_t i = 0; i < nctx; i++) {
			order[i].owner = w->t.str_out[b->ctx_owner[i]];
			order[i].node = w->t.trie_out[b->ctxs[i].node];
			order[i].ctx = (uint32_t)i;
		}
		qsort(order, nctx, sizeof(*order), by_owner_node);
	}
	return MP_OK;
}

/* A run of whole functions' records, encoded by encode_records(). */
struct rec_range {
	const struct idx_builder *b;
	const struct ctx_order *order;
	const uint32_t *off;		/* trie place -> stack id */
	size_t from, to;		/* ORDER[FROM..TO) */
	struct obuf o;			/* the records go here */
	size_t sec_start;		/* O's byte where the section starts */
	struct ht_disk_item *items;	/* an item per record */
	uint32_t nitems;
	uint64_t totals[NSUMMARY];	/* the summary fields, added up */
	size_t saturated;		/* contexts with a field at 2^64 - 1 */
	bool too_large;			/* the section would pass 4 GiB */
};

/*
 * The records of R: one per function, its count of contexts, then per
 * context its stack id as the step from the one before and its MIB as
 * its changes from the one before.
 */
static void encode_records(struct rec_range *r)
{
	const struct idx_builder *b = r->b;
	const struct ctx_order *order = r->order;
	size_t to = r->to;

	for (size_t i = r->from; i < to && !r->too_large;) {
		size_t j = i, start = r->o.n;
		struct ht_disk_item *it = &r->items[r->nitems];

		while (j < to && order[j].owner == order[i].owner)
			j++;
		ob_varint(&r->o, j - i);
		for (size_t k = i; k < j; k++) {
			const struct idx_bctx *c = &b->ctxs[order[k].ctx];

			/* Contexts are met in no order of their own: fetch
			 * the context a few records on, and the MIB (four
			 * cache lines) of the one before it, or each record
			 * waits for memory twice. */
			if (k + 16 < to) {
				__builtin_prefetch(&b->ctxs[order[k + 16].ctx]);
				__builtin_prefetch(&r->off[order[k + 16].node]);
			}
			if (k + 8 < to) {
				const char *m = (const char *)b->ctxs[order[k + 8].ctx].mib;

				for (size_t at = 0; at < sizeof(*c->mib); at += 64)
					__builtin_prefetch(m + at);
			}
			for (size_t f = 0; f < NSUMMARY; f++)
				if (__builtin_add_overflow(r->totals[f],
							   c->mib->v[summary_fields[f]],
							   &r->totals[f]))
					r->totals[f] = UINT64_MAX;
			ob_varint(&r->o, r->off[order[k].node] -
					 (k > i ? r->off[order[k - 1].node] : 0));
			r->saturated += write_mib(&r->o, c, k > i ?
						  &b->ctxs[order[k - 1].ctx] : NULL);
		}
		if (r->o.n - r->sec_start > UINT32_MAX) {
			r->too_large = true;
			break;
		}
		it->name = order[i].owner;
		it->record_offset = (uint32_t)(start - r->sec_start);
		it->record_size = (uint32_t)(r->o.n - start);
		it->contexts = (uint32_t)(j - i);
		r->nitems++;
		i = j;
	}
}

static void *encode_records_thread(void *arg)
{
	encode_records(arg);
	return NULL;
}

/*
 * Given threads (idx_builder_set_jobs()), the records are encoded in
 * parts at once, a part per thread but no smaller than this many
 * contexts: the write is the serial tail of a merge, after every input
 * is folded.
 */
#define RECORDS_PER_PART 8192
#define MAX_PARTS 16

/*
 * 7: the records, in t.order (order_records()): by owning function, MIBs
 * by stack id (t.trie_off of their nodes' places).  Each record becomes an
 * item of the hash table.  In parts: the first is encoded straight into
 * the output, each other one by a helper thread into a buffer of its own
 * meanwhile, then appended, its items' offsets moved by what comes before.
 */
static enum mp_errcode write_records(struct idx_write *w)
{
	const struct idx_builder *b = w->b;
	const struct ctx_order *order = w->t.order;
	struct rec_range r[MAX_PARTS];
	pthread_t helper[MAX_PARTS];
	bool started[MAX_PARTS] = { false };
	size_t nctx = b->nctxs, parts = 1, from = 0, groups = 0;
	enum mp_errcode rc = MP_OK;

	sec_begin(w, SEC_RECORDS);
	if (b->write_jobs > 1)
		parts = nctx / RECORDS_PER_PART;
	if (parts > b->write_jobs)
		parts = b->write_jobs;
	if (parts > MAX_PARTS)
		parts = MAX_PARTS;
	if (parts < 1)
		parts = 1;
	for (size_t h = 0; h < parts; h++) {
		/* Each part ends where the first function past its share
		 * starts (the last at the end). */
		size_t to = h + 1 == parts ? nctx : nctx / parts * (h + 1);

		if (to < from)
			to = from;
		while (to < nctx && to > 0 && order[to].owner == order[to - 1].owner)
			to++;
		r[h] = (struct rec_range){
			.b = b, .order = order, .off = w->t.trie_off,
			.from = from, .to = to, .items = w->items + groups,
		};
		for (size_t k = from; k < to; k++)
			groups += k == 0 || order[k].owner != order[k - 1].owner;
		from = to;
	}
	for (size_t h = 1; h < parts; h++) {
		if (r[h].from == r[h].to)
			continue;
		/* Room for what a record usually takes, on huge pages:
		 * growing from nothing cost a helper a fault per 4 KiB. */
		r[h].o.a = (r[h].to - r[h].from) * 48 + 4096;
		r[h].o.d = mp_alloc_big(r[h].o.a);
		r[h].o.a = r[h].o.d ? r[h].o.a : 0;
		started[h] = mp_thread_beside(&helper[h], encode_records_thread,
					      &r[h]) == 0;
	}
	r[0].o = w->o;
	r[0].sec_start = w->sec_off[SEC_RECORDS];
	encode_records(&r[0]);
	w->o = r[0].o;
	w->nitems = r[0].nitems;
	if (parts > 1 && !r[0].too_large)
		write_out(w);	/* while the other parts' threads finish */
	for (size_t h = 1; h < parts; h++) {
		size_t shift = w->o.n - w->sec_off[SEC_RECORDS];
		unsigned char *p;

		if (started[h])
			pthread_join(helper[h], NULL);
		else
			encode_records(&r[h]);
		if (r[h].too_large || shift + r[h].o.n > UINT32_MAX)
			rc = MP_E_TOO_LARGE;
		/* (A part left empty by a big function before it has no
		 * buffer.) */
		if (!rc && r[h].o.n && (p = ob_put(&w->o, r[h].o.n)))
			memcpy(p, r[h].o.d, r[h].o.n);
		w->o.oom |= r[h].o.oom;
		for (uint32_t k = 0; k < r[h].nitems; k++)
			r[h].items[k].record_offset += (uint32_t)shift;
		w->nitems += r[h].nitems;
		free(r[h].o.d);
	}
	if (rc || r[0].too_large)
		return MP_E_TOO_LARGE;
	for (size_t h = 0; h < parts; h++) {
		for (size_t f = 0; f < NSUMMARY; f++)
			if (__builtin_add_overflow(w->totals[f], r[h].totals[f],
						   &w->totals[f]))
				w->totals[f] = UINT64_MAX;
		w->saturated += r[h].saturated;
	}
	sec_end(w, SEC_RECORDS);
	return MP_OK;
}

/* 8: the hash table over the records' function names. */
static enum mp_errcode write_hash(struct idx_write *w)
{
	unsigned char *hash = NULL, *p;
	size_t hash_size = 0;
	enum mp_errcode rc;

	if (w->o.oom)
		return MP_E_NOMEM;	/* the names are read from the buffer */
	for (uint32_t k = 0; k < w->nitems; k++) {
		const char *name = (const char *)w->o.d +
				   w->sec_off[SEC_STRINGS] + w->items[k].name;

		w->items[k].hash = ht_disk_hash(name, strlen(name));
	}
	rc = ht_disk_write(w->items, w->nitems, &hash, &hash_size);
	if (rc)
		return rc;
	sec_begin(w, SEC_HASH);
	p = ob_put(&w->o, hash_size);
	if (p)
		memcpy(p, hash, hash_size);
	sec_end(w, SEC_HASH);
	free(hash);
	return MP_OK;
}

/* 9: the thresholds the records' classes were decided under. */
static void write_classes(struct idx_write *w)
{
	const struct mib_thresholds *t = &w->b->thresholds;

	sec_begin(w, SEC_CLASSES);
	ob_u32(&w->o, f32_bits(t->cold_density));
	ob_u32(&w->o, f32_bits(t->cold_lifetime));
	ob_u32(&w->o, f32_bits(t->hot_density));
	sec_end(w, SEC_CLASSES);
}

/* Sections of B's file: ids 1 to this (the classes' only if kept). */
static int nsections(const struct idx_builder *b)
{
	return SEC__COUNT - 1 - !b->classes;
}

/* The header and the section table, in the space left at the start. */
static void write_header(struct idx_write *w)
{
	unsigned char *d = w->o.d;

	memcpy(d + IDX_HDR_MAGIC, IDX_MAGIC, IDX_MAGIC_SIZE);
	mp_put_le32(d + IDX_HDR_VERSION,
		    w->b->nsampled ? IDX_VERSION
		    : w->b->nfound ? IDX_VERSION_FOUND : IDX_VERSION_EXACT);
	mp_put_le32(d + IDX_HDR_HASH_TYPE, HASH_TYPE_FNV1A);
	mp_put_le64(d + IDX_HDR_FILE_SIZE, w->o.n);
	mp_put_le32(d + IDX_HDR_NSECTIONS, (uint32_t)nsections(w->b));
	mp_put_le32(d + IDX_HDR_FLAGS, IDX_FLAG_CHECKSUM);
	mp_put_le64(d + IDX_HDR_CONTEXTS, w->b->nctxs);
	mp_put_le64(d + IDX_HDR_FUNCTIONS, w->nitems);
	mp_put_le64(d + IDX_HDR_INPUTS, w->b->inputs);
	for (int s = 1; s <= nsections(w->b); s++) {
		unsigned char *e = d + HEADER_SIZE +
				   (size_t)(s - 1) * SECTION_ENTRY_SIZE;

		mp_put_le32(e + IDX_SEC_ID, (uint32_t)s);
		mp_put_le64(e + IDX_SEC_OFFSET, w->sec_off[s]);
		mp_put_le64(e + IDX_SEC_SIZE, w->sec_size[s]);
	}
	mp_put_le64(d + IDX_HDR_CHECKSUM, 0);
	mp_put_le32(d + IDX_HDR_CHECKSUM, idx_checksum(d, w->o.n));
}

/*
 * The next SIZE bytes of the block at BASE, *OFF bytes in (8-aligned);
 * with BASE NULL only *OFF moves, which measures the block.
 */
static void *carve(unsigned char *base, size_t *off, size_t size)
{
	void *p = base ? base + *off : NULL;

	*off += (size + 7) & ~(size_t)7;
	return p;
}

/*
 * Point W's tables for the stacks into BASE (NULL: none); returns the
 * bytes they take.
 */
static size_t lay_out_tables(struct idx_write *w, unsigned char *base)
{
	const struct idx_builder *b = w->b;
	size_t nstr = b->nstrs, npath = b->npaths, nfr = b->nframes,
	       ntr = b->ntrie, off = 0;
	struct out_tables *t = &w->t;

	t->str_out = carve(base, &off, (nstr + 1) * sizeof(uint32_t));
	t->str_rank = carve(base, &off, (nstr + 1) * sizeof(uint32_t));
	t->path_out = carve(base, &off, (npath + 1) * sizeof(uint32_t));
	t->path_new_to_old = carve(base, &off, (npath + 2) * sizeof(uint32_t));
	t->frame_out = carve(base, &off, (nfr + 1) * sizeof(uint32_t));
	t->frame_new_to_old = carve(base, &off, (nfr + 1) * sizeof(uint32_t));
	t->trie_out = carve(base, &off, (ntr + 1) * sizeof(uint32_t));
	t->trie_new_to_old = carve(base, &off, (ntr + 2) * sizeof(uint32_t));
	t->trie_off = carve(base, &off, (ntr + 1) * sizeof(uint32_t));
	t->frames = carve(base, &off, (nfr + 1) * sizeof(*t->frames));
	w->tmp = carve(base, &off, (nstr + 1) * sizeof(uint32_t));
	w->used = carve(base, &off, nstr + npath + nfr + 1);
	return off;
}

/* The same for the contexts' tables, laid out when they are all in. */
static size_t lay_out_ctx_tables(struct idx_write *w, unsigned char *base)
{
	size_t nctx = w->b->nctxs, off = 0;

	w->t.order = carve(base, &off, (nctx + 1) * sizeof(*w->t.order));
	w->items = carve(base, &off, (nctx + 1) * sizeof(*w->items));
	return off;
}

/*
 * Room for about the whole file at once: grown by doubling, a file of
 * megabytes was copied several times over and its pages faulted in again.
 * Only a guess (a failure here leaves the buffer to grow as it goes), for
 * NCTX contexts: the caller's, as they may be still coming in.
 */
static void reserve_output(struct idx_write *w, size_t nctx)
{
	const struct idx_builder *b = w->b;
	size_t guess = 4096;

	for (size_t i = 0; i < b->nstrs; i++)
		guess += b->strs[i].len + 1;
	guess += b->npaths * 8 + b->nframes * 4 * FRAME_COLUMNS +
		 b->ntrie * 6 + nctx * 40;
	MP_GROW(w->o.d, w->o.a, guess);
}

/*
 * A trie this big is grouped (its key-independent half of the numbering)
 * by a thread of its own, given threads, while this one writes the
 * sections before it, and its bytes are written by one while the records'
 * order is made: at 200,000 nodes a millisecond of a merge's tail each.
 */
#define TRIE_BESIDE 16384

struct idx_write *idx_write_begin(struct idx_builder *b, size_t nctx)
{
	struct idx_write *w = calloc(1, sizeof(*w));
	struct forest trie;
	pthread_t grouper;
	bool beside = false;

	if (!w)
		return NULL;
	w->b = b;
	w->nstrs = b->nstrs;
	w->npaths = b->npaths;
	w->nframes = b->nframes;
	w->ntrie = b->ntrie;
	/*
	 * One block: the tables are all written during the write, and
	 * apart each of a few hundred KiB took its own page faults (about
	 * 10 us each in a virtual machine); together they are huge pages.
	 */
	w->rc = MP_E_NOMEM;
	if (!(w->block = mp_alloc_big(lay_out_tables(w, NULL))))
		return w;
	lay_out_tables(w, w->block);
	trie = (struct forest){
		.recs = b->trie, .n = b->ntrie, .out = w->t.trie_out,
		.first = w->t.trie_new_to_old,
	};
	if (b->write_jobs > 1 && b->ntrie >= TRIE_BESIDE)
		beside = mp_thread_beside(&grouper, forest_group_thread,
					  &trie) == 0;
	memset(w->used, 0, b->nstrs + b->npaths + b->nframes + 1);
	mark_used(w);
	reserve_output(w, nctx);
	/* Header and section table, filled in at the end. */
	ob_put(&w->o, HEADER_SIZE + (size_t)nsections(b) * SECTION_ENTRY_SIZE);
	write_summary(w);
	if (!(w->rc = write_strings(w)) && !(w->rc = write_path_section(w)))
		write_frame_section(w);
	if (beside)
		pthread_join(grouper, NULL);
	else
		forest_group(&trie);
	if (w->rc)
		free(trie.e);
	else
		w->rc = forest_number(&trie, w->t.frame_out);
	return w;
}

enum mp_errcode idx_write_end(struct idx_write *w, FILE *out,
			      struct mp_err *err)
{
	const struct idx_builder *b = w ? w->b : NULL;
	enum mp_errcode rc = w ? w->rc : MP_E_NOMEM, ordered;
	pthread_t writer;
	bool beside = false;

	if (rc)
		goto out;
	if (b->nstrs != w->nstrs || b->npaths != w->npaths ||
	    b->nframes != w->nframes || b->ntrie != w->ntrie)
		return mp_fail(err, MP_E_INVALID, "the stacks changed while "
			       "the profile was being written");
	rc = MP_E_NOMEM;
	if (!(w->ctx_block = mp_alloc_big(lay_out_ctx_tables(w, NULL))))
		goto out;
	lay_out_ctx_tables(w, w->ctx_block);
	/* The sections before the trie are done: to the file first, if it
	 * goes as it is written, past the room for the header and summary. */
	if (w->push && fseeko(out, (off_t)w->sec_off[SEC_STRINGS], SEEK_SET) == 0) {
		w->out = out;
		w->out_at = w->sec_off[SEC_STRINGS];
		write_out(w);
	}
	/*
	 * The trie's bytes and the records' order need only the trie's
	 * numbering, not each other: given threads, the trie is written on
	 * a second one (the only writer of the buffer meanwhile).
	 */
	if (b->write_jobs > 1 && b->ntrie >= TRIE_BESIDE)
		beside = mp_thread_beside(&writer, write_trie_thread, w) == 0;
	if (!beside)
		w->trie_rc = write_trie_section(w);
	ordered = order_records(w);
	if (beside)
		pthread_join(writer, NULL);
	if ((rc = w->trie_rc) || (rc = ordered))
		goto out;
	write_schema(w);
	if ((rc = write_records(w)) || (rc = write_hash(w)))
		goto out;
	if (b->classes)
		write_classes(w);
	rc = MP_E_NOMEM;
	if (w->o.oom)
		goto out;
	fill_summary(w);
	write_header(w);
	if (w->out) {
		write_out(w);
		if (!w->out_errno && (fseeko(out, 0, SEEK_SET) != 0 ||
				      fwrite(w->o.d, 1, w->sec_off[SEC_STRINGS], out) !=
				      w->sec_off[SEC_STRINGS] ||
				      fseeko(out, (off_t)w->o.n, SEEK_SET) != 0))
			w->out_errno = errno ? errno : EIO;
		if (w->out_errno)
			return mp_fail(err, MP_E_IO, "cannot write output: %s",
				       strerror(w->out_errno));
		return MP_OK;
	}
	if (fwrite(w->o.d, 1, w->o.n, out) != w->o.n)
		return mp_fail(err, MP_E_IO, "cannot write output: %s",
			       strerror(errno ? errno : EIO));
	return MP_OK;
out:
	return mp_fail(err, rc, rc == MP_E_TOO_LARGE
		       ? "the profile is too large for 32-bit offsets" : NULL);
}

void idx_write_push(struct idx_write *w, void (*push)(void *), void *arg)
{
	if (!w)
		return;
	w->push = push;
	w->push_arg = arg;
}

size_t idx_write_saturated(const struct idx_write *w)
{
	return w ? w->saturated : 0;
}

void idx_write_free(struct idx_write *w)
{
	if (!w)
		return;
	free(w->o.d);
	free(w->block);
	free(w->ctx_block);
	free(w);
}

enum mp_errcode idx_builder_write(struct idx_builder *b, FILE *out,
				  struct mp_err *err)
{
	struct idx_write *w = idx_write_begin(b, b->nctxs);
	enum mp_errcode rc = idx_write_end(w, out, err);

	idx_write_free(w);
	return rc;
}
