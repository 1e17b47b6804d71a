#include "view.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_file.h"
#include "common/mp_thread.h"
#include "hashtable/ht.h"
#include "llvm/llvm.h"

void view_init(struct view *v)
{
	memset(v, 0, sizeof(*v));
	v->read.known = view_known_format;
}

void view_release(struct view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nraws; i++) {
		raw_file_release(v->raws[i]);
		free(v->raws[i]);
	}
	free(v->raws);
	for (size_t i = 0; i < v->ninputs; i++) {
		free(v->inputs[i].entry_frames);
		free(v->inputs[i].entry_built);
	}
	for (size_t i = 0; i < v->nbufs; i++)
		mp_buf_release(&v->bufs[i]);
	free(v->bufs);
	free(v->inputs);
	free(v->segments);
	free(v->contexts);
	free(v->samp);
	ht_map_release(&v->guid_map);
	free(v->guids);
	view_scratch_release(&v->scratch);
	mp_arena_release(&v->arena);
	memset(v, 0, sizeof(*v));
}

void view_keep_top(struct view *v, enum mib_field key, size_t n)
{
	v->keep_top = n;
	v->keep_key = key;
}

/*
 * Count C, just added, in V's totals: one more context, its MIB folded in
 * (sums add, stopping at 2^64 - 1; minima and maxima stay minima and
 * maxima, which the intervals of sampled sums stand on), its sample
 * entries folded.  False when out of memory.
 */
static bool count_context(struct view *v, const struct view_context *c)
{
	if (v->nall)
		mib_fold(&v->sums, &c->mib);
	else
		v->sums = c->mib;
	v->nall++;
	if (!c->nsamp)
		return true;
	if (!MP_GROW(v->samp, v->alloc_samp, (size_t)v->nsamp + c->nsamp))
		return false;
	mp_samp_fold(v->samp, &v->nsamp, c->samp, c->nsamp, 1);
	return true;
}

/* A new input named PATH; NULL when out of memory. */
static struct view_input *new_input(struct view *v, const char *path)
{
	struct view_input *vi;

	if (!MP_GROW(v->inputs, v->alloc_inputs, v->ninputs + 1))
		return NULL;
	vi = &v->inputs[v->ninputs];
	memset(vi, 0, sizeof(*vi));
	vi->mib_mask = VIEW_ALL_MIB;
	vi->path = mp_arena_strdup(&v->arena, path);
	if (!vi->path)
		return NULL;
	v->ninputs++;
	return vi;
}

/*
 * A context as the ranking sees it: its sort key, then its input, id and
 * place (in the view, or in its input while view_keep_top() reads it) to
 * break ties, copied out of the context so that sorting touches 40 bytes
 * per context, not a whole MIB.
 */
struct rank_ent {
	uint64_t key, id;
	uint32_t input;
	size_t pos;
	struct view_context *c;
};

/* Does A come before B: larger key first, then input, id, place. */
static bool ranks_before(const struct rank_ent *a, const struct rank_ent *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	if (a->input != b->input)
		return a->input < b->input;
	if (a->id != b->id)
		return a->id < b->id;
	return a->pos < b->pos;
}

static int by_rank(const void *a, const void *b)
{
	const struct rank_ent *x = a, *y = b;

	return ranks_before(x, y) ? -1 : ranks_before(y, x);
}

static int by_pos(const void *a, const void *b)
{
	const struct rank_ent *x = a, *y = b;

	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Restore the heap H[0..N-1] (its root the last in rank) below slot I. */
static void heap_down(struct rank_ent *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, last = i;
		struct rank_ent t;

		if (l < n && ranks_before(&h[last], &h[l]))
			last = l;
		if (r < n && ranks_before(&h[last], &h[r]))
			last = r;
		if (last == i)
			return;
		t = h[i];
		h[i] = h[last];
		h[last] = t;
		i = last;
	}
}

/*
 * Offer E to the heap H of the first KEEP by rank (*HELD entries so far,
 * its root the last of them in rank): appended while there is room, the
 * heap made when it fills; then in place of the root if E ranks before it.
 */
static void rank_offer(struct rank_ent *h, size_t *held, size_t keep,
		       const struct rank_ent *e)
{
	if (*held < keep) {
		h[(*held)++] = *e;
		if (*held == keep)
			for (size_t k = keep / 2 + 1; k-- > 0;)
				heap_down(h, keep, k);
	} else if (ranks_before(e, &h[0])) {
		h[0] = *e;
		heap_down(h, keep, 0);
	}
}

struct view_context **view_rank(const struct view *v, enum mib_field key,
				size_t top, size_t *n)
{
	size_t keep = top && top < v->ncontexts ? top : v->ncontexts, held = 0;
	struct rank_ent *h = malloc((keep ? keep : 1) * sizeof(*h));
	struct view_context **order = malloc((keep ? keep : 1) * sizeof(*order));

	if (!h || !order) {
		free(h);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < v->ncontexts; i++) {
		struct view_context *c = &v->contexts[i];
		struct rank_ent e = { c->mib.v[key], c->id, c->input, i, c };

		if (keep == v->ncontexts)
			h[held++] = e;	/* all of them: no heap */
		else
			rank_offer(h, &held, keep, &e);
	}
	qsort(h, held, sizeof(*h), by_rank);
	for (size_t i = 0; i < held; i++)
		order[i] = h[i].c;
	free(h);
	*n = held;
	return order;
}

/* An input's contexts being added: to the view, or to a heap of the
 * first KEEP by rank. */
struct ctx_add {
	struct view *v;
	uint32_t input;
	enum mp_errcode rc;
	size_t seen;		/* the input's contexts so far */
	/* view_keep_top(): the first KEEP by rank, a heap whose entries
	 * point into SLOTS, where the contexts are. */
	struct rank_ent *heap;
	struct view_context *slots;
	size_t nheap, keep;
	enum mib_field key;
};

/*
 * Ready A to add input A->input's NCTX contexts to V: all of them, room
 * made at once (ALL), or the first v->keep_top by rank.
 */
static enum mp_errcode ctx_add_begin(struct ctx_add *a, struct view *v,
				     uint64_t nctx, bool all)
{
	*a = (struct ctx_add){ .v = v, .input = (uint32_t)v->ninputs - 1 };
	a->keep = v->keep_top < nctx ? v->keep_top : 0;
	a->key = v->keep_key;
	if (a->keep && (!(a->heap = malloc(a->keep * sizeof(*a->heap))) ||
			!(a->slots = malloc(a->keep * sizeof(*a->slots))))) {
		free(a->heap);
		a->heap = NULL;
		return MP_E_NOMEM;
	}
	/* All of them: room at once, not a copy per doubling. */
	if (!a->keep && all && nctx <= SIZE_MAX / sizeof(*v->contexts) &&
	    !MP_GROW(v->contexts, v->alloc_contexts, v->ncontexts + (size_t)nctx))
		return MP_E_NOMEM;
	return MP_OK;
}

/* Those A kept, into its view in the order of the file (OK: no failure
 * before), and A's memory freed.  Returns A->rc. */
static enum mp_errcode ctx_add_end(struct ctx_add *a, bool ok)
{
	struct view *v = a->v;

	v->inputs[a->input].ncontexts = a->seen;
	if (ok && !a->rc && a->keep) {
		qsort(a->heap, a->nheap, sizeof(*a->heap), by_pos);
		if (MP_GROW(v->contexts, v->alloc_contexts,
			    v->ncontexts + a->nheap))
			for (size_t i = 0; i < a->nheap; i++)
				v->contexts[v->ncontexts++] = *a->heap[i].c;
		else
			a->rc = MP_E_NOMEM;
	}
	free(a->heap);
	free(a->slots);
	a->heap = NULL;
	a->slots = NULL;
	return a->rc;
}

/* Offer C, the input's a->seen-th context, to A's heap: kept in the slot
 * of none yet, or of the root it displaces. */
static void keep_offer(struct ctx_add *a, const struct view_context *c)
{
	struct rank_ent e = { c->mib.v[a->key], c->id, c->input, a->seen, NULL };
	size_t slot;

	if (a->nheap < a->keep)
		slot = a->nheap;
	else if (ranks_before(&e, &a->heap[0]))
		slot = (size_t)(a->heap[0].c - a->slots);
	else
		return;
	a->slots[slot] = *c;
	e.c = &a->slots[slot];
	rank_offer(a->heap, &a->nheap, a->keep, &e);
}

/*
 * Take C, the input's next context, into A: counted in the view's totals,
 * then kept, in the view or offered to the heap.  False when out of
 * memory.
 */
static bool ctx_add_one(struct ctx_add *a, const struct view_context *c)
{
	struct view *v = a->v;

	if (!count_context(v, c) ||
	    (!a->keep && !MP_GROW(v->contexts, v->alloc_contexts,
				  v->ncontexts + 1)))
		return false;
	v->inputs[a->input].nsampled += c->nsamp != 0;
	if (a->keep)
		keep_offer(a, c);
	else
		v->contexts[v->ncontexts++] = *c;
	a->seen++;
	return true;
}

/*
 * A raw file's contexts, each with its MIB, histogram and samples where
 * the file holds them; their frames are symbolized from the file's PCs
 * when asked for, once view_symbolize() has run (64 bytes a frame kept
 * here would be several times the file).
 */
static enum mp_errcode add_raw(struct view *v, const char *path,
			       struct raw_file *rf, struct mp_err *err)
{
	uint32_t in = (uint32_t)v->ninputs;
	struct view_input *vi;
	struct ctx_add a;
	size_t nseg = 0;

	for (size_t p = 0; p < rf->nprofiles; p++)
		nseg += rf->profiles[p].nsegments;
	if (!MP_GROW(v->segments, v->alloc_segments, v->nsegments + nseg) ||
	    !(vi = new_input(v, path)))
		return mp_fail(err, MP_E_NOMEM, NULL);
	vi->kind = "raw";
	vi->version = rf->max_version;
	vi->min_version = rf->min_version;
	vi->nprofiles = (uint32_t)rf->nprofiles;
	vi->compressed = rf->compressed;
	for (size_t p = 0; p < rf->nprofiles; p++)
		if (rf->profiles[p].sample_interval > vi->sample_interval)
			vi->sample_interval = rf->profiles[p].sample_interval;

	for (size_t p = 0; p < rf->nprofiles; p++)
		for (size_t s = 0; s < rf->profiles[p].nsegments; s++)
			v->segments[v->nsegments++] = (struct view_segment){
				in, (uint32_t)p, &rf->profiles[p].segments[s]
			};
	for (size_t i = 0; i < rf->ncontexts; i++) {
		uint32_t n = rf->contexts[i].npcs;

		if (n > vi->deepest) {
			vi->deepest = n;
			vi->at_deepest = 0;
		}
		vi->at_deepest += n == vi->deepest;
	}
	if (ctx_add_begin(&a, v, rf->ncontexts, true))
		return mp_fail(err, MP_E_NOMEM, NULL);
	for (size_t i = 0; i < rf->ncontexts && !a.rc; i++) {
		const struct raw_context *rc = &rf->contexts[i];
		struct view_context c = {
			.id = rc->stack_id, .input = a.input, .mib = rc->mib,
			.hist = rc->hist, .nhist = rc->nhist,
			.samp = rc->samp, .nsamp = rc->nsamp,
			.raw = rf, .profile = rc->profile, .id_index = (uint32_t)i,
		};

		if (!ctx_add_one(&a, &c))
			a.rc = MP_E_NOMEM;
	}
	if (ctx_add_end(&a, true))
		return mp_fail(err, MP_E_NOMEM, NULL);
	return MP_OK;
}

/*
 * Take an indexed context in with its MIB only: its frames are expanded
 * when first asked for (view_frames), so that `show --top=10` of a file
 * of 100k contexts builds 10 stacks, not 100k.
 */
static int add_idx_context(void *arg, const struct idx_file *f,
			   const struct idx_context *ic)
{
	struct ctx_add *a = arg;
	struct view *v = a->v;
	struct view_context c = { 0 };

	c.id = ic->stack_id;
	c.input = a->input;
	c.mib = ic->mib;
	c.nhist = ic->nhist;
	c.idx = f;
	/* A schema without a histogram array gives hist == NULL. */
	c.hist = ic->nhist ? mp_arena_memdup(&v->arena, ic->hist,
					     (size_t)ic->nhist * sizeof(*ic->hist))
			   : NULL;
	c.nsamp = ic->nsamp;
	c.samp = ic->nsamp ? mp_arena_memdup(&v->arena, ic->samp,
					     (size_t)ic->nsamp * sizeof(*ic->samp))
			   : NULL;
	if ((ic->nhist && !c.hist) || (ic->nsamp && !c.samp) ||
	    !ctx_add_one(a, &c)) {
		a->rc = MP_E_NOMEM;
		return 1;
	}
	return 0;
}

/*
 * GUID's entry in V's table, made "guid:HEX" if new.  NULL when out of
 * memory.
 */
static struct view_guid *guid_entry(struct view *v, uint64_t guid)
{
	uint32_t idx;
	char name[32];

	if (ht_map_get(&v->guid_map, guid, &idx))
		return &v->guids[idx - 1];
	if (!MP_GROW(v->guids, v->alloc_guids, v->nguids + 1))
		return NULL;
	snprintf(name, sizeof(name), "guid:%016" PRIx64, guid);
	v->guids[v->nguids] = (struct view_guid){
		.name = mp_arena_strdup(&v->arena, name),
	};
	if (!v->guids[v->nguids].name ||
	    ht_map_put(&v->guid_map, guid, (uint32_t)v->nguids + 1))
		return NULL;
	return &v->guids[v->nguids++];
}

/*
 * LLVM context C's frames, read again from its file into S->frames, each
 * named by its GUID's entry; once one is named by a binary, the leading
 * frames the rules hide go, as those of raw and indexed inputs do (none
 * when all would).
 */
static enum mp_errcode llvm_frames(struct view *v, const struct view_context *c,
				   struct view_scratch *s,
				   const struct mp_frame **frames, uint32_t *n,
				   struct mp_err *err)
{
	int64_t len = llvm_stack(c->llvm, c->site, s->llvm, s->allvm, err);
	uint32_t hidden = 0;
	bool named = false;

	if (len < 0)
		return err->code;
	if ((size_t)len > s->allvm) {
		if (!MP_GROW(s->llvm, s->allvm, (size_t)len))
			return mp_fail(err, MP_E_NOMEM, NULL);
		if (llvm_stack(c->llvm, c->site, s->llvm, s->allvm, err) != len)
			return err->code;
	}
	if (!MP_GROW(s->frames, s->alloc, (size_t)len))
		return mp_fail(err, MP_E_NOMEM, NULL);
	for (int64_t k = 0; k < len; k++) {
		const struct llvm_frame *lf = &s->llvm[k];
		const struct view_guid *g = guid_entry(v, lf->guid);

		if (!g)
			return mp_fail(err, MP_E_NOMEM, NULL);
		s->frames[k] = (struct mp_frame){
			.function = g->name,
			.line = lf->line_offset,
			.column = lf->column,
			.flags = MP_FRAME_GUID |
				 (lf->inlined ? MP_FRAME_INLINED : 0) |
				 (g->alloc_lib ? MP_FRAME_ALLOC_LIB : 0),
		};
		named |= g->named;
	}
	while (named && hidden < len && view_frame_hidden(v, &s->frames[hidden]))
		hidden++;
	if (hidden == len)
		hidden = 0;
	*frames = s->frames + hidden;
	*n = (uint32_t)(len - hidden);
	return MP_OK;
}

/*
 * Raw context C's frames, symbolized again into S->raw through the
 * symbolizer view_symbolize() was given: the answers of its first pass,
 * cached there, so it fails only when out of memory.
 */
static enum mp_errcode raw_frames(struct view *v, const struct view_context *c,
				  struct view_scratch *s,
				  const struct mp_frame **frames, uint32_t *n,
				  struct mp_err *err)
{
	const struct raw_context *r = &c->raw->contexts[c->id_index];
	enum mp_errcode rc;

	rc = sym_stack_symbolize(v->sym, &c->raw->profiles[c->profile], r->pcs,
				 r->npcs, v->sym_flags, &s->raw, NULL, err);
	if (rc)
		return rc;
	*frames = s->raw.f;
	*n = (uint32_t)s->raw.n;
	return MP_OK;
}

/*
 * Stack entry E of input IN's file F as a frame that lives as long as V:
 * built once per entry, its file path and build id (which the reader
 * gives in a scratch buffer) copied into the arena.  NULL: out of memory.
 */
static const struct mp_frame *entry_frame(struct view *v,
					  struct view_input *in,
					  const struct idx_file *f, uint32_t e)
{
	struct idx_frame_buf fb;
	struct mp_frame *fr;

	if (e >= f->nframes) {
		static const struct mp_frame none;

		return &none;	/* no table: idx_entry_frame() gives zeros */
	}
	if (!in->entry_frames) {
		/* Big ones fault one huge page, not one page per entry used. */
		in->entry_frames = mp_alloc_big((size_t)f->nframes *
						 sizeof(*in->entry_frames));
		in->entry_built = calloc(f->nframes, 1);
		if (!in->entry_frames || !in->entry_built)
			return NULL;
	}
	fr = &in->entry_frames[e];
	if (in->entry_built[e])
		return fr;
	idx_entry_frame(f, e, fr, &fb);
	if (fr->build_id &&
	    !(fr->build_id = mp_arena_memdup(&v->arena, fr->build_id,
					     fr->build_id_size)))
		return NULL;
	if (fr->file && !(fr->file = mp_arena_strdup(&v->arena, fr->file)))
		return NULL;
	in->entry_built[e] = 1;
	return fr;
}

bool view_maps_build_id(const struct view *v, const uint8_t *id, uint32_t n)
{
	if (v->nraws < v->ninputs)
		return true;
	for (size_t i = 0; i < v->nsegments; i++) {
		const struct raw_segment *g = v->segments[i].seg;

		if (!g->build_id_size ||
		    (g->build_id_size == n && !memcmp(g->build_id, id, n)))
			return true;
	}
	return false;
}

const struct mp_frame *view_entry_frame(struct view *v,
					const struct view_context *c,
					uint32_t e)
{
	return entry_frame(v, &v->inputs[c->input], c->idx, e);
}

/*
 * Are C's frames made again from its file whenever asked for?  An LLVM
 * context's or a raw one's (once view_symbolize() has run), not kept.
 */
static bool read_again(const struct view *v, const struct view_context *c)
{
	return !c->frames && (c->llvm || (c->raw && v->sym));
}

enum mp_errcode view_entries_scratch(struct view *v,
				     const struct view_context *c,
				     struct view_scratch *scratch,
				     const uint32_t **entries, uint32_t *n,
				     struct mp_err *err)
{
	struct view_input *in = &v->inputs[c->input];
	uint32_t k = 0, hidden = 0;
	enum mp_errcode rc;

	*entries = NULL;
	*n = c->nframes;
	if (read_again(v, c))
		return mp_fail(err, MP_E_INVALID, "an LLVM or raw context is "
			       "read as frames, not stack entries");
	if (c->frames || !c->idx)
		return MP_OK;
	/*
	 * One pass from the leaf, the scratch growing as it goes: a stack's
	 * depth is not asked for first (another walk).  Parents lie at
	 * smaller offsets (checked by idx_open()), so the walk ends.
	 */
	for (uint32_t node1 = (uint32_t)c->id + 1; node1; k++) {
		if (!MP_GROW(scratch->entries, scratch->aentries, (size_t)k + 1))
			return mp_fail(err, MP_E_NOMEM, NULL);
		node1 = idx_node_step(c->idx, node1 - 1, &scratch->entries[k]);
	}
	if ((rc = idx_charge_frames(c->idx, &in->frames_expanded, k, err)))
		return rc;
	if (k > 1 && !v->class_frames) {
		const struct mp_frame *root = entry_frame(v, in, c->idx,
							  scratch->entries[k - 1]);

		if (!root)
			return mp_fail(err, MP_E_NOMEM, NULL);
		k -= mp_frame_class(root) >= 0;
	}
	/*
	 * The leading frames the rules hide (the allocator library's, the
	 * program's own allocation wrappers), as the runtime's are from raw
	 * stacks; none when that would leave nothing.
	 */
	while (hidden < k) {
		const struct mp_frame *fr = entry_frame(v, in, c->idx,
							scratch->entries[hidden]);

		if (!fr)
			return mp_fail(err, MP_E_NOMEM, NULL);
		if (!view_frame_hidden(v, fr))
			break;
		hidden++;
	}
	if (hidden == k)
		hidden = 0;
	*entries = scratch->entries + hidden;
	*n = k - hidden;
	return MP_OK;
}

enum mp_errcode view_frames_scratch(struct view *v,
				    const struct view_context *c,
				    struct view_scratch *scratch,
				    const struct mp_frame **frames,
				    const uint32_t **entries,
				    uint32_t *n, struct mp_err *err)
{
	struct view_input *in = &v->inputs[c->input];
	enum mp_errcode rc;

	*frames = c->frames;
	if (read_again(v, c)) {
		*entries = NULL;
		return c->llvm ? llvm_frames(v, c, scratch, frames, n, err)
			       : raw_frames(v, c, scratch, frames, n, err);
	}
	if ((rc = view_entries_scratch(v, c, scratch, entries, n, err)) ||
	    !*entries)
		return rc;
	if (!MP_GROW(scratch->frames, scratch->alloc, *n))
		return mp_fail(err, MP_E_NOMEM, NULL);
	for (uint32_t k = 0; k < *n; k++) {
		const struct mp_frame *fr = entry_frame(v, in, c->idx,
							(*entries)[k]);

		if (!fr)
			return mp_fail(err, MP_E_NOMEM, NULL);
		scratch->frames[k] = *fr;
	}
	*frames = scratch->frames;
	return MP_OK;
}

enum mp_errcode view_stack_scratch(struct view *v,
				   const struct view_context *c,
				   struct view_scratch *scratch,
				   const struct mp_frame **frames,
				   const uint32_t **entries, uint32_t *n,
				   struct mp_err *err)
{
	if (!c->idx)
		return view_frames_scratch(v, c, scratch, frames, entries, n,
					   err);
	*frames = c->frames;
	return view_entries_scratch(v, c, scratch, entries, n, err);
}

void view_scratch_release(struct view_scratch *scratch)
{
	free(scratch->frames);
	free(scratch->entries);
	free(scratch->llvm);
	sym_stack_release(&scratch->raw);
	memset(scratch, 0, sizeof(*scratch));
}

/* A context's frames, walked or read again as view_frames_scratch()
 * does, and kept in the arena. */
enum mp_errcode view_frames(struct view *v, struct view_context *c,
			    struct mp_err *err)
{
	const struct mp_frame *frames;
	const uint32_t *entries;
	struct mp_frame *kept;
	enum mp_errcode rc;
	uint32_t n;

	if (c->frames || (!c->idx && !read_again(v, c)))
		return MP_OK;	/* expanded, or raw and not symbolized */
	if ((rc = view_frames_scratch(v, c, &v->scratch, &frames, &entries, &n,
				      err)))
		return rc;
	/* A byte more: an empty stack gets a pointer too, "expanded". */
	kept = mp_arena_alloc(&v->arena, (size_t)n * sizeof(*kept) + 1);
	if (!kept)
		return mp_fail(err, MP_E_NOMEM, NULL);
	if (n)
		memcpy(kept, frames, (size_t)n * sizeof(*kept));
	c->frames = kept;
	c->nframes = n;
	return MP_OK;
}

enum mp_errcode view_expand_all(struct view *v, struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;

	for (size_t i = 0; i < v->ncontexts && !rc; i++)
		rc = view_frames(v, &v->contexts[i], err);
	return rc;
}

/* ---- --function by demangled name, and suggestions ---- */

/* Edit distance of A and B (their first 255 bytes), insertions, deletions
 * and substitutions each 1. */
static unsigned distance(const char *a, const char *b)
{
	unsigned row[256], la = (unsigned)strnlen(a, 255),
			   lb = (unsigned)strnlen(b, 255);

	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

struct find_fn {
	const char *query;
	struct sym_demangler dm;
	const char **hits;		/* linkage names matching QUERY */
	size_t nhits, ahits;
	const char *near[3];		/* the closest names, for a hint */
	unsigned near_d[3];
	bool no_near;			/* no hint wanted: skip them */
	bool nomem;
};

/* REST past the ABI tags it starts with ("[abi:cxx11]"), or NULL. */
static const char *skip_abi_tags(const char *rest)
{
	while (rest && strncmp(rest, "[abi:", 5) == 0) {
		rest = strchr(rest, ']');
		if (rest)
			rest++;
	}
	return rest;
}

/*
 * Does a name end where REST starts: at the end, at its parameter list,
 * or at template arguments followed by it ("make" of "make<int>(long)"),
 * past ABI tags ("str2wcs_internal" of "str2wcs_internal[abi:cxx11](char
 * const*, unsigned long)": a function returning std::string has one)?
 */
static bool name_ends(const char *rest)
{
	int depth = 0;

	if (!(rest = skip_abi_tags(rest)))
		return false;
	if (*rest == '<') {
		do {
			depth += *rest == '<' ? 1 : *rest == '>' ? -1 : 0;
			rest++;
		} while (*rest && depth > 0);
		rest = skip_abi_tags(rest);
		return rest && *rest == '(';
	}
	return *rest == '\0' || *rest == '(';
}

/*
 * Does QUERY name PRETTY, a demangled name, with or without the return
 * type before a function template's name (sym_name_start()), its template
 * arguments and its parameter list?
 */
static bool names(const char *query, const char *pretty)
{
	size_t n = strlen(query);
	const char *bare = pretty + sym_name_start(pretty);

	return (strncmp(pretty, query, n) == 0 && name_ends(pretty + n)) ||
	       (bare != pretty && strncmp(bare, query, n) == 0 &&
		name_ends(bare + n));
}

/*
 * One function of the file: a hit if its demangled name is QUERY, with or
 * without its parameter list ("ns::f" finds "ns::f(int)" and its
 * overloads), a function template's return type and template arguments
 * ("make<int>" and "make" find "int* make<int>(long)"); else a candidate
 * for the suggestions.
 */
static int find_one(void *arg, const char *name)
{
	struct find_fn *s = arg;
	const char *pretty = sym_demangled(&s->dm, name);
	unsigned d;

	if (!pretty) {
		s->nomem = true;
		return 1;
	}
	if (names(s->query, pretty)) {
		if (!MP_GROW(s->hits, s->ahits, s->nhits + 1)) {
			s->nomem = true;
			return 1;
		}
		s->hits[s->nhits++] = name;
		return 0;
	}
	if (s->no_near)
		return 0;
	d = distance(s->query, name);
	if (pretty != name) {
		const char *start = pretty + sym_name_start(pretty);
		unsigned dp = distance(s->query, pretty);
		char *paren = strchr(start, '('), *tag = strstr(start, "[abi:");

		d = dp < d ? dp : d;
		/* The name alone: before its parameters and ABI tags. */
		if (tag && (!paren || tag < paren))
			paren = tag;
		if (paren) {
			char bare[256];
			size_t len = (size_t)(paren - start);

			if (len < sizeof(bare)) {
				memcpy(bare, start, len);
				bare[len] = '\0';
				dp = distance(s->query, bare);
				d = dp < d ? dp : d;
			}
		}
	}
	/* Keep the three closest, in order; ties keep name order; a name
	 * twice (a constructor's C1 and C2 read alike) once. */
	for (int k = 0; k < 3; k++)
		if (s->near[k] && strcmp(s->near[k], pretty) == 0)
			return 0;
	for (int k = 0; k < 3; k++) {
		if (!s->near[k] || d < s->near_d[k]) {
			for (int j = 2; j > k; j--) {
				s->near[j] = s->near[j - 1];
				s->near_d[j] = s->near_d[j - 1];
			}
			s->near[k] = pretty;
			s->near_d[k] = d;
			break;
		}
	}
	return 0;
}

/* " (closest: 'a', 'b')" of S's names near enough its query, into HINT
 * (SIZE bytes; "" when none is). */
static void near_hint(const struct find_fn *s, char *hint, size_t size)
{
	size_t limit = strlen(s->query) / 3 + 3, len = 0;

	hint[0] = '\0';
	for (int k = 0; k < 3 && s->near[k] && s->near_d[k] <= limit; k++) {
		int w = snprintf(hint + len, size - len, "%s'%.200s'",
				 k ? ", " : " (closest: ", s->near[k]);

		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
	}
	if (len && len + 2 < size)
		memcpy(hint + len, ")", 2);
}

/*
 * --function=QUERY named no linkage name: add the contexts of every
 * function whose demangled name QUERY is, or -2 (only_calls_through()
 * then says what the profile has, with the closest names of all its
 * stack entries).
 */
static int find_demangled(const struct idx_file *f, const char *query,
			  struct ctx_add *a)
{
	struct find_fn s = { .query = query, .no_near = true };
	int r = -2;

	sym_demangler_init(&s.dm);
	if (idx_foreach_function(f, find_one, &s) < 0 || s.nomem)
		r = -1;
	else if (s.nhits) {
		r = 0;
		for (size_t i = 0; i < s.nhits && !r; i++)
			r = idx_find_function(f, s.hits[i], add_idx_context, a);
	}
	free(s.hits);
	sym_demangler_release(&s.dm);
	return r;
}

/*
 * show prints a context from its first frame the rules do not hide
 * (view_frame_hidden(): the allocator library's, --alloc-function's), so
 * that a C++ context of std::__new_allocator<T>::allocate, its first
 * frame in the file, shows the function that called it.  --function
 * follows what is shown: besides the contexts of QUERY's own records, it
 * takes those of records whose first frame is hidden and whose first
 * frame shown is QUERY's.  A record's contexts all have one first
 * function, so one context of it tells whether to walk the others.
 */
struct behind {
	struct view *v;
	struct view_input *in;
	const struct idx_file *f;
	const char *query;
	struct sym_demangler dm;
	struct ctx_add *a;
	bool hidden;		/* the first frame of the record looked at is */
	bool nomem;
};

/* The first frame of stack STACK_ID that V shows, or NULL when it hides
 * them all (then it shows them all) or is out of memory (B->nomem). */
static const struct mp_frame *first_shown(struct behind *b, uint32_t stack_id,
					  bool leaf_only)
{
	for (uint32_t node1 = stack_id + 1, entry; node1;) {
		const struct mp_frame *fr;

		node1 = idx_node_step(b->f, node1 - 1, &entry);
		if (!(fr = entry_frame(b->v, b->in, b->f, entry))) {
			b->nomem = true;
			return NULL;
		}
		if (!view_frame_hidden(b->v, fr))
			return fr;
		if (leaf_only)
			break;
	}
	return NULL;
}

static int peek_owner(void *arg, const struct idx_file *f,
		      const struct idx_context *ic)
{
	struct behind *b = arg;

	(void)f;
	b->hidden = !first_shown(b, ic->stack_id, true) && !b->nomem;
	return 1;
}

static int take_behind(void *arg, const struct idx_file *f,
		       const struct idx_context *ic)
{
	struct behind *b = arg;
	const struct mp_frame *fr = first_shown(b, ic->stack_id, false);
	const char *pretty;

	if (b->nomem)
		return 1;
	if (!fr || !fr->function)
		return 0;
	if (strcmp(fr->function, b->query) != 0) {
		if (!(pretty = sym_demangled(&b->dm, fr->function))) {
			b->nomem = true;
			return 1;
		}
		if (!names(b->query, pretty))
			return 0;
	}
	return add_idx_context(b->a, f, ic);
}

static int owner_behind(void *arg, const char *owner)
{
	struct behind *b = arg;
	const char *pretty = sym_demangled(&b->dm, owner);
	int r;

	if (!pretty) {
		b->nomem = true;
		return 1;
	}
	/* QUERY's own records: taken already, whole. */
	if (strcmp(owner, b->query) == 0 || names(b->query, pretty))
		return 0;
	b->hidden = false;
	r = idx_find_function(b->f, owner, peek_owner, b);
	if (b->nomem || r < 0)
		return 1;
	if (!b->hidden)
		return 0;
	r = idx_find_function(b->f, owner, take_behind, b);
	return b->nomem || r < 0 ? 1 : r;
}

/* The scan above, of indexed file F (input IN) into A: 0, or -1 when out
 * of memory (or as A's callbacks fail). */
static int add_behind(struct view *v, struct view_input *in,
		      const struct idx_file *f, const char *query,
		      struct ctx_add *a)
{
	struct behind b = { .v = v, .in = in, .f = f, .query = query, .a = a };
	int r;

	sym_demangler_init(&b.dm);
	r = idx_foreach_function(f, owner_behind, &b);
	sym_demangler_release(&b.dm);
	return b.nomem || r ? -1 : 0;
}

static int by_address(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t)*(const char *const *)x,
		  b = (uintptr_t)*(const char *const *)y;

	return (a > b) - (a < b);
}

/*
 * QUERY, which no context has as its first frame: is it a function of
 * F's stack entries, by linkage or demangled name, one the profile has
 * only calls through (1, ERR saying so)?  Else (0) ERR names the
 * closest functions of all the entries, callers too: those of the
 * records alone missed a caller one letter away.  -1 when out of
 * memory.  (Only when --function finds nothing: it reads every entry.)
 */
static int only_calls_through(const struct idx_file *f, const char *query,
			      struct mp_err *err)
{
	struct find_fn s = { .query = query };
	const char **fns = NULL;
	size_t n = 0;
	int r = 0;

	/* Each function once: the entries' names are the string table's. */
	if (f->nframes && !(fns = malloc(f->nframes * sizeof(*fns))))
		return -1;
	for (uint32_t e = 0; e < f->nframes; e++) {
		struct idx_frame_buf fb;
		struct mp_frame fr;

		idx_entry_frame(f, e, &fr, &fb);
		if (fr.function)
			fns[n++] = fr.function;
	}
	if (n)
		qsort(fns, n, sizeof(*fns), by_address);
	sym_demangler_init(&s.dm);
	for (size_t i = 0; i < n && !r && !s.nomem; i++) {
		if (i && fns[i] == fns[i - 1])
			continue;
		if (strcmp(fns[i], query) == 0)
			r = 1;
		else if (find_one(&s, fns[i]) == 0 && s.nhits)
			r = 1;
	}
	if (s.nomem) {
		r = -1;
	} else if (r) {
		mp_fail(err, MP_E_NOT_FOUND, "no context allocated in function "
			"'%s': the profile has only calls through it", query);
	} else {
		char hint[1024];

		near_hint(&s, hint, sizeof(hint));
		mp_fail(err, MP_E_NOT_FOUND, "no function '%s' in the profile, "
			"by linkage or demangled name%s", query, hint);
	}
	free(s.hits);
	free(fns);
	sym_demangler_release(&s.dm);
	return r;
}

static enum mp_errcode add_indexed(struct view *v, const char *path,
				   struct mp_buf *buf, const char *function,
				   struct mp_err *err)
{
	struct ctx_add a;
	struct idx_file *f;
	struct view_input *vi;
	enum mp_errcode rc;
	int r;

	/* The file's bytes must live as long as the view. */
	if (!MP_GROW(v->bufs, v->alloc_bufs, v->nbufs + 1)) {
		mp_buf_release(buf);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	v->bufs[v->nbufs++] = *buf;
	f = mp_arena_alloc(&v->arena, sizeof(*f));
	if (!f)
		return mp_fail(err, MP_E_NOMEM, NULL);
	rc = idx_open(f, buf->data, buf->size, err);
	if (rc)
		return rc;
	vi = new_input(v, path);
	if (!vi)
		return mp_fail(err, MP_E_NOMEM, NULL);
	vi->kind = "indexed";
	vi->version = vi->min_version = f->version;
	vi->nprofiles = 1;
	vi->compressed = buf->was_compressed;
	vi->idx = f;
	/* idx_open() checked the count against the records. */
	if (ctx_add_begin(&a, v, f->ncontexts, !function))
		return mp_fail(err, MP_E_NOMEM, NULL);
	r = function ? idx_find_function(f, function, add_idx_context, &a)
		     : idx_foreach_context(f, add_idx_context, &a);
	if (r == -2)
		r = find_demangled(f, function, &a);
	if (function && (r == 0 || r == -2)) {
		size_t seen = a.seen;

		if (add_behind(v, vi, f, function, &a))
			r = -1;
		else if (r == -2 && a.seen > seen)
			r = 0;	/* found behind the hidden frames only */
	}
	if (r == -2 && only_calls_through(f, function, err) < 0)
		r = -1;
	rc = ctx_add_end(&a, r == 0);
	if (r == -2)
		return MP_E_NOT_FOUND;	/* ERR says it, with suggestions */
	if (r || rc)
		return mp_fail(err, MP_E_NOMEM, NULL);
	return MP_OK;
}

/*
 * Take an LLVM context in with its MIB and where its call stack is: its
 * frames are read again from the file when asked for (view_frames), so
 * that `show --top=10` of a file of a million contexts builds 10 stacks.
 */
static enum mp_errcode add_llvm_context(void *arg, const struct llvm_context *lc,
					struct mp_err *err)
{
	struct ctx_add *a = arg;
	struct view *v = a->v;
	struct view_context c = { 0 };

	c.id = lc->site.off;
	c.input = a->input;
	c.mib = lc->mib;
	c.llvm = v->inputs[a->input].llvm;
	c.site = lc->site;
	return ctx_add_one(a, &c) ? MP_OK : mp_fail(err, MP_E_NOMEM, NULL);
}

/* sym_foreach_function()'s callback: find_one(). */
static void find_one_of(void *arg, const char *name)
{
	struct find_fn *s = arg;

	if (!s->nomem)
		find_one(s, name);
}

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/*
 * --function of an LLVM file past the hidden frames, as add_behind() for
 * ours: given the binaries' names, the records of the functions whose
 * frames show hides, for their contexts whose first frame shown is one
 * of WANT (sorted).  Each context is walked once, in its leaf's record.
 */
struct llvm_behind {
	struct view *v;
	uint64_t *hidden;		/* GUIDs of hidden functions, sorted */
	size_t nhidden, ahidden;
	const uint64_t *want;
	size_t nwant;
	struct ctx_add *a;
	bool nomem;
};

static bool has_guid(const uint64_t *set, size_t n, uint64_t guid)
{
	size_t at;

	return mp_u64_find(set, n, guid, &at);
}

/* sym_foreach_function()'s callback: NAME's GUID if show hides it (its
 * frames flagged as name_guid() flags them). */
static void hidden_guid(void *arg, const char *name)
{
	struct llvm_behind *b = arg;
	struct mp_frame fr = {
		.function = name,
		.flags = sym_is_alloc_library(name) ? MP_FRAME_ALLOC_LIB : 0,
	};

	if (b->nomem || !view_frame_hidden(b->v, &fr))
		return;
	if (!MP_GROW(b->hidden, b->ahidden, b->nhidden + 1)) {
		b->nomem = true;
		return;
	}
	b->hidden[b->nhidden++] = llvm_guid(name);
}

static enum mp_errcode take_llvm_behind(void *arg,
					const struct llvm_context *lc,
					struct mp_err *err)
{
	struct llvm_behind *b = arg;
	uint32_t k = 0;

	while (k < lc->n && has_guid(b->hidden, b->nhidden, lc->frames[k].guid))
		k++;
	if (k == lc->n || !has_guid(b->want, b->nwant, lc->frames[k].guid))
		return MP_OK;
	return add_llvm_context(b->a, lc, err);
}

static enum mp_errcode add_llvm_behind(struct view *v,
				       const struct llvm_file *f,
				       const uint64_t *want, size_t nwant,
				       struct ctx_add *a, struct mp_err *err)
{
	struct llvm_behind b = { .v = v, .want = want, .nwant = nwant, .a = a };
	enum mp_errcode rc = sym_foreach_function(v->names, hidden_guid, &b,
						  err);

	if (!rc && b.nomem)
		rc = mp_fail(err, MP_E_NOMEM, NULL);
	if (!rc && b.nhidden)
		qsort(b.hidden, b.nhidden, sizeof(*b.hidden), by_u64);
	for (size_t i = 0; !rc && i < b.nhidden; i++) {
		/* WANT's own records are taken already, whole. */
		if ((i && b.hidden[i] == b.hidden[i - 1]) ||
		    has_guid(want, nwant, b.hidden[i]))
			continue;
		rc = llvm_function_contexts(f, b.hidden[i], take_llvm_behind,
					    &b, err);
		if (rc == MP_E_NOT_FOUND)
			rc = MP_OK;
	}
	free(b.hidden);
	return rc;
}

/*
 * The contexts of LLVM file F whose first frame shown is function QUERY,
 * into A: by the GUID of QUERY as a linkage name, else, given the
 * binaries' names (view_set_function_names()), by those of their
 * functions whose demangled name QUERY is, with or without parameters;
 * and, given the names, those past hidden frames (add_llvm_behind()).
 * An LLVM file has a record for every function of its stacks, its calls
 * too: one that gives no context is as much an error as no record, as in
 * our files.
 */
static enum mp_errcode add_llvm_function(struct view *v,
					 const struct llvm_file *f,
					 const char *query, struct ctx_add *a,
					 struct mp_err *err)
{
	struct find_fn s = { .query = query };
	enum mp_errcode rc;
	uint64_t *guids = NULL, linkage = llvm_guid(query);
	const uint64_t *want = &linkage;	/* QUERY's GUIDs, sorted */
	size_t n = 0, distinct = 0, nwant = 1, found = 0, seen = a->seen;
	char hint[1024] = "";

	sym_demangler_init(&s.dm);
	rc = llvm_function_contexts(f, linkage, add_llvm_context, a, err);
	if (rc == MP_OK) {
		found = 1;
	} else if (rc != MP_E_NOT_FOUND) {
		goto out;
	} else if (!v->names) {
		rc = mp_fail(err, rc, "no function '%s' in the profile (an "
			     "LLVM file knows a function by the MD5 of its "
			     "linkage name: give that name, as nm prints it, or "
			     "--binary to find it by its demangled name)", query);
		goto out;
	} else if (!(rc = sym_foreach_function(v->names, find_one_of, &s,
					       err))) {
		if (s.nomem || (s.nhits && !(guids = malloc(s.nhits *
							    sizeof(*guids)))))
			rc = mp_fail(err, MP_E_NOMEM, NULL);
		/* A name may come more than once, and overloads share no
		 * GUID: the distinct ones, sorted. */
		for (size_t i = 0; !rc && i < s.nhits; i++)
			guids[n++] = llvm_guid(s.hits[i]);
		if (n)
			qsort(guids, n, sizeof(*guids), by_u64);
		for (size_t i = 0; i < n; i++)
			if (!distinct || guids[i] != guids[distinct - 1])
				guids[distinct++] = guids[i];
		n = distinct;
		for (size_t i = 0; !rc && i < n; i++) {
			rc = llvm_function_contexts(f, guids[i], add_llvm_context,
						    a, err);
			if (rc == MP_OK)
				found++;
			else if (rc == MP_E_NOT_FOUND)
				rc = MP_OK;
		}
		want = guids;
		nwant = n;
	}
	if (!rc && v->names && nwant)
		rc = add_llvm_behind(v, f, want, nwant, a, err);
	if (!rc && a->seen == seen) {
		if (found)
			rc = mp_fail(err, MP_E_NOT_FOUND, "no context allocated "
				     "in function '%s': the profile has only "
				     "calls through it", query);
		else {
			if (!s.nhits)
				near_hint(&s, hint, sizeof(hint));
			rc = mp_fail(err, MP_E_NOT_FOUND, "no function '%s' in "
				     "the profile, by linkage name or by the "
				     "demangled names of the binaries' "
				     "functions%s%s", query,
				     s.nhits ? " (the binaries have it, the "
					       "profile has no record of it)"
					     : "", hint);
		}
	}
out:
	free(guids);
	free(s.hits);
	sym_demangler_release(&s.dm);
	return rc;
}

/*
 * Add an LLVM file's contexts, or with FUNCTION those whose leaf is that
 * function (add_llvm_function()).
 */
static enum mp_errcode add_llvm(struct view *v, const char *path,
				struct mp_buf *buf, const char *function,
				struct mp_err *err)
{
	struct ctx_add a;
	struct llvm_file *f;
	struct view_input *vi;
	enum mp_errcode rc;

	/* The file's bytes must live as long as the view. */
	if (!MP_GROW(v->bufs, v->alloc_bufs, v->nbufs + 1)) {
		mp_buf_release(buf);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	v->bufs[v->nbufs++] = *buf;
	f = mp_arena_alloc(&v->arena, sizeof(*f));
	if (!f)
		return mp_fail(err, MP_E_NOMEM, NULL);
	if ((rc = llvm_open(f, buf->data, buf->size, err)))
		return rc;
	vi = new_input(v, path);
	if (!vi)
		return mp_fail(err, MP_E_NOMEM, NULL);
	vi->kind = "llvm";
	vi->llvm = f;
	vi->mib_mask = 0;
	for (size_t i = 0; i < f->nschema; i++) {
		int fld = mib_field_by_tag(f->schema[i]);

		if (fld >= 0)
			vi->mib_mask |= (uint64_t)1 << fld;
	}
	v->nllvm++;
	vi->version = vi->min_version = f->version;
	vi->nprofiles = 1;
	vi->compressed = buf->was_compressed;
	/* llvm_open() counted the contexts, each under its leaf's record. */
	if (ctx_add_begin(&a, v, f->ncontexts, !function))
		return mp_fail(err, MP_E_NOMEM, NULL);
	rc = function ? add_llvm_function(v, f, function, &a, err)
		      : llvm_foreach_context(f, add_llvm_context, &a, err);
	if (ctx_add_end(&a, rc == MP_OK) && !rc)
		rc = mp_fail(err, MP_E_NOMEM, NULL);
	return rc;
}

bool view_known_format(const void *head, size_t n)
{
	/* Shorter than any magic: the reader will say what is missing. */
	return n < 8 || raw_is_raw(head, n) || idx_is_indexed(head, n) ||
	       llvm_is_llvm(head, n);
}

enum mp_errcode view_add_file(struct view *v, const char *path,
			      const char *function, struct mp_err *err)
{
	struct mp_buf buf;
	enum mp_errcode rc;

	rc = mp_file_read(&buf, path, &v->read, err);
	if (rc)
		return rc;
	return view_add_buf(v, path, &buf, function, err);
}

struct add_job {
	struct view *v;
	const char *path;
	struct mp_err *err;
	enum mp_errcode rc;
};

static void *add_job_run(void *arg)
{
	struct add_job *j = arg;

	j->rc = view_add_file(j->v, j->path, NULL, j->err);
	return NULL;
}

void view_add_file_pair(struct view *v[2], const char *path[2],
			enum mp_errcode rc[2], struct mp_err err[2])
{
	struct add_job j[2] = {
		{ v[0], path[0], &err[0], MP_OK },
		{ v[1], path[1], &err[1], MP_OK },
	};
	pthread_t t;
	bool threaded = mp_thread_beside(&t, add_job_run, &j[1]) == 0;

	add_job_run(&j[0]);
	if (threaded)
		pthread_join(t, NULL);
	else
		add_job_run(&j[1]);
	rc[0] = j[0].rc;
	rc[1] = j[1].rc;
}

enum mp_errcode view_add_buf(struct view *v, const char *path,
			     struct mp_buf *in, const char *function,
			     struct mp_err *err)
{
	struct mp_buf buf = *in;
	struct raw_file *rf;
	enum mp_errcode rc;

	memset(in, 0, sizeof(*in));
	if (idx_is_indexed(buf.data, buf.size))
		return add_indexed(v, path, &buf, function, err);
	if (llvm_is_llvm(buf.data, buf.size))
		return add_llvm(v, path, &buf, function, err);
	if (function) {
		mp_buf_release(&buf);
		return mp_fail(err, MP_E_INVALID,
			       "--function needs an indexed profile; this is raw");
	}
	/* Anything that is not an indexed profile is read as raw, whose
	 * reader names precisely what is wrong with it. */
	rf = malloc(sizeof(*rf));
	if (!rf || !MP_GROW(v->raws, v->alloc_raws, v->nraws + 1)) {
		free(rf);
		mp_buf_release(&buf);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	raw_file_init(rf);
	rc = raw_parse(rf, buf.data, buf.size, err);
	rf->compressed = buf.was_compressed;
	mp_buf_release(&buf);
	if (rc) {
		free(rf);
		return rc;
	}
	v->raws[v->nraws++] = rf;
	return add_raw(v, path, rf, err);
}

/* sym_foreach_function()'s callback: NAME for its GUID, unless a
 * function met before has that GUID. */
struct guid_naming {
	struct view *v;
	bool nomem;
};

static void name_guid(void *arg, const char *name)
{
	struct guid_naming *g = arg;
	struct view_guid *e;

	if (g->nomem || !(e = guid_entry(g->v, llvm_guid(name)))) {
		g->nomem = true;
		return;
	}
	if (e->named)
		return;
	if (!(e->name = mp_arena_strdup(&g->v->arena, name))) {
		g->nomem = true;
		return;
	}
	e->named = true;
	/* std::allocator and kin, as in our indexed files. */
	e->alloc_lib = sym_is_alloc_library(e->name);
}

/*
 * Name the GUID frames of LLVM inputs by the binaries' functions: the
 * table their stacks are expanded through.  A stack expanded before is
 * expanded again when next asked for.
 */
static enum mp_errcode name_guids(struct view *v, struct sym_ctx *sym,
				  struct mp_err *err)
{
	struct guid_naming g = { .v = v };
	enum mp_errcode rc = sym_foreach_function(sym, name_guid, &g, err);

	if (!rc && g.nomem)
		rc = mp_fail(err, MP_E_NOMEM, NULL);
	for (size_t i = 0; !rc && i < v->ncontexts; i++)
		if (v->contexts[i].llvm)
			v->contexts[i].frames = NULL;
	return rc;
}

enum mp_errcode view_symbolize(struct view *v, struct sym_ctx *sym,
			       unsigned flags, struct sym_stack_stats *stats,
			       struct mp_err *err)
{
	struct sym_stack buf = { 0 };
	enum mp_errcode rc = MP_OK;

	for (size_t i = 0; i < v->nraws; i++)
		for (size_t p = 0; p < v->raws[i]->nprofiles && !rc; p++)
			rc = sym_check_profile(sym, &v->raws[i]->profiles[p], err);
	/*
	 * Every stack of every raw input, kept or not (view_keep_top()), for
	 * STATS and to fail here if one cannot be (--strict); their frames
	 * are made again from the symbolizer's answers when asked for.
	 */
	for (size_t i = 0; i < v->nraws && !rc; i++) {
		const struct raw_file *rf = v->raws[i];

		for (size_t j = 0; j < rf->ncontexts && !rc; j++) {
			const struct raw_context *r = &rf->contexts[j];

			rc = sym_stack_symbolize(sym, &rf->profiles[r->profile],
						 r->pcs, r->npcs, flags, &buf,
						 stats, err);
		}
	}
	if (!rc) {
		v->sym = sym;
		v->sym_flags = flags;
		/* Any expanded before are expanded again, symbolized. */
		for (size_t i = 0; i < v->ncontexts; i++)
			if (v->contexts[i].raw)
				v->contexts[i].frames = NULL;
	}
	sym_stack_release(&buf);
	if (!rc && v->nllvm)
		rc = name_guids(v, sym, err);
	return rc;
}

void view_set_function_names(struct view *v, struct sym_ctx *sym)
{
	v->names = sym;
}

void view_set_frame_rules(struct view *v, const struct sym_alloc_rules *r,
			  bool keep_runtime)
{
	v->alloc = r && r->n ? r : NULL;
	v->keep_runtime = keep_runtime;
}

bool view_frame_hidden(const struct view *v, const struct mp_frame *f)
{
	/* The patterns first: each frame they match is counted, for the
	 * warning of a pattern that matched none. */
	return sym_alloc_match(v->alloc, f->function) ||
	       (!v->keep_runtime && (f->flags & MP_FRAME_ALLOC_LIB));
}

bool view_match_functions(const struct view *v,
			  const struct sym_alloc_rules *r)
{
	struct idx_frame_buf buf;
	struct mp_frame fr;

	/* Each stack entry once: the functions of callers too, which an
	 * indexed file's function table leaves out. */
	for (size_t i = 0; i < v->ninputs; i++)
		for (uint32_t e = 0; v->inputs[i].idx &&
				     e < v->inputs[i].idx->nframes; e++) {
			idx_entry_frame(v->inputs[i].idx, e, &fr, &buf);
			sym_alloc_match(r, fr.function);
		}
	for (size_t i = 0; i < v->nguids; i++) {
		if (!v->guids[i].named)
			return false;
		sym_alloc_match(r, v->guids[i].name);
	}
	return true;
}
