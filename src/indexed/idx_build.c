/*
 * idx_build.c - the indexed profile's builder: strings, file paths,
 * frames and the call-stack trie interned, contexts folded (idx.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "idx_format.h"

static bool str_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct idx_bstr *k = key;
	const struct idx_builder *b = ctx;

	return b->strs[id].len == k->len && memcmp(b->strs[id].s, k->s, k->len) == 0;
}

static bool frame_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct idx_builder *b = ctx;

	return memcmp(b->frames[id], key, sizeof(b->frames[0])) == 0;
}

static enum mp_errcode intern_str(struct idx_builder *b, const char *s,
				  size_t len, uint32_t *out)
{
	struct idx_bstr key = { s, (uint32_t)len, 0 };
	uint64_t h;
	uint32_t id;
	char *copy;

	if (len > UINT32_MAX / 2)
		return MP_E_TOO_LARGE;
	h = mp_hash_bytes(s, len, 0);
	id = ht_find(&b->str_ht, h, str_eq, &key, b);
	if (id != HT_NONE) {
		*out = id;
		return MP_OK;
	}
	if (!MP_GROW(b->strs, b->astrs, b->nstrs + 1))
		return MP_E_NOMEM;
	copy = mp_arena_alloc(&b->arena, len + 1);
	if (!copy)
		return MP_E_NOMEM;
	memcpy(copy, s, len);
	b->strs[b->nstrs] = (struct idx_bstr){ copy, (uint32_t)len, 0 };
	if (ht_insert(&b->str_ht, h, (uint32_t)b->nstrs))
		return MP_E_NOMEM;
	*out = (uint32_t)b->nstrs++;
	return MP_OK;
}

/* Room in ARR (N records, ALLOC allocated) for one more, with an id. */
static enum mp_errcode room_for_rec(struct idx_rec **arr, size_t n,
				    size_t *alloc)
{
	if (n >= UINT32_MAX - 1)
		return MP_E_TOO_LARGE;
	return MP_GROW(*arr, *alloc, n + 1) ? MP_OK : MP_E_NOMEM;
}

/* The index of pair KEY in ARR (through MAP), appended if new. */
static enum mp_errcode intern_rec(struct idx_rec **arr, size_t *n,
				  size_t *alloc, struct ht_map *map,
				  struct idx_rec key, uint32_t *out)
{
	enum mp_errcode rc;
	uint32_t *slot;
	bool added;

	/* Room for the new one first, then one probe that finds or adds
	 * (the map then never holds a key whose record failed). */
	if ((rc = room_for_rec(arr, *n, alloc)))
		return rc;
	if (!(slot = ht_map_find_or_add(map, ht_pair_key(key.a, key.b), &added)))
		return MP_E_NOMEM;
	if (!added) {
		*out = *slot;
		return MP_OK;
	}
	(*arr)[*n] = key;
	*slot = *out = (uint32_t)(*n)++;
	return MP_OK;
}

/* The path node of FILE (components split at '/'), + 1; 0 for NULL. */
static enum mp_errcode intern_path(struct idx_builder *b, const char *file,
				   uint32_t *out)
{
	uint32_t parent1 = 0;
	const char *p = file;
	enum mp_errcode rc;

	if (!file) {
		*out = 0;
		return MP_OK;
	}
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		struct idx_rec key;
		uint32_t name, node;

		rc = intern_str(b, p, len, &name);
		if (rc)
			return rc;
		key = (struct idx_rec){ name, parent1 };
		rc = intern_rec(&b->paths, &b->npaths, &b->apaths,
				&b->path_map, key, &node);
		if (rc)
			return rc;
		parent1 = node + 1;
		if (!slash)
			break;
		p = slash + 1;
	}
	*out = parent1;
	return MP_OK;
}

static enum mp_errcode intern_frame(struct idx_builder *b,
				    const struct mp_frame *f, uint32_t *out)
{
	uint32_t key[FRAME_COLUMNS], id;
	uint64_t h;
	enum mp_errcode rc;

	memset(key, 0, sizeof(key));
	if (!mp_frame_symbolized(f)) {
		/*
		 * Unsymbolized frames compare by build id and offset in the
		 * module, the same in every process.  Without a build id
		 * (raw v1/v2, or a PC in no segment) only the address itself
		 * is safe: two modules may share a file offset.
		 */
		char hex[2 * IDX_BUILD_ID_MAX + 1];
		uint64_t where = mp_frame_where(f);

		if (f->build_id_size > IDX_BUILD_ID_MAX)
			return MP_E_TOO_LARGE;
		mp_hex(f->build_id, f->build_id_size, hex, sizeof(hex));
		rc = intern_str(b, hex, strlen(hex), &key[0]);
		key[2] = (uint32_t)where;
		key[3] = (uint32_t)(where >> 32);
		key[5] = IDX_FRAME_UNSYMBOLIZED;
	} else {
		rc = intern_str(b, f->function ? f->function : "",
				f->function ? strlen(f->function) : 0, &key[0]);
		if (!rc)
			rc = intern_path(b, f->file, &key[1]);
		key[2] = f->line;
		key[3] = f->column;
		key[4] = f->discriminator;
		key[5] = (mp_frame_inlined(f) ? IDX_FRAME_INLINED : 0) |
			 (f->flags & MP_FRAME_ALLOC_LIB ? IDX_FRAME_ALLOC : 0) |
			 (f->flags & MP_FRAME_FOUND ? IDX_FRAME_FOUND : 0);
		key[6] = f->start_line;
	}
	if (rc)
		return rc;
	h = mp_hash_bytes(key, sizeof(key), 1);
	id = ht_find(&b->frame_ht, h, frame_eq, key, b);
	if (id != HT_NONE) {
		*out = id;
		return MP_OK;
	}
	if (b->nframes >= UINT32_MAX - 1)
		return MP_E_TOO_LARGE;
	if (!MP_GROW(b->frames, b->aframes, b->nframes + 1))
		return MP_E_NOMEM;
	memcpy(b->frames[b->nframes], key, sizeof(key));
	if (ht_insert(&b->frame_ht, h, (uint32_t)b->nframes))
		return MP_E_NOMEM;
	b->nfound += (key[5] & IDX_FRAME_FOUND) != 0;
	*out = (uint32_t)b->nframes++;
	return MP_OK;
}

void idx_builder_init(struct idx_builder *b)
{
	uint32_t empty;

	memset(b, 0, sizeof(*b));
	/* String 0 is "", the name of the root of absolute paths. */
	intern_str(b, "", 0, &empty);
}

void idx_builder_release(struct idx_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nctxs; i++) {
		if (b->ctxs[i].own & BCTX_OWN_HIST)
			free(b->ctxs[i].hist);
		if (b->ctxs[i].own & BCTX_OWN_SAMP)
			free(b->ctxs[i].samp);
	}
	free(b->strs);
	free(b->paths);
	free(b->frames);
	free(b->trie);
	free(b->ctxs);
	free(b->ctx_owner);
	free(b->node_ctx);
	ht_release(&b->str_ht);
	ht_map_release(&b->path_map);
	ht_release(&b->frame_ht);
	ht_map_release(&b->trie_map);
	free(b->first_child);
	free(b->path_frames);
	free(b->path_nodes);
	free(b->last_use);
	mp_arena_release(&b->arena);
	memset(b, 0, sizeof(*b));
}

/* Room for WANT contexts (the arrays ctxs and ctx_owner), exactly. */
static enum mp_errcode room_for_ctxs(struct idx_builder *b, size_t want)
{
	struct idx_bctx *c;
	uint32_t *o;

	if (want <= b->actxs)
		return MP_OK;
	/* Whole huge pages (mp_alloc_big()), not realloc()'s 4 KiB ones at
	 * the block's unaligned ends: these arrays are written through. */
	if (want > SIZE_MAX / sizeof(*c) ||
	    !(c = mp_alloc_big(want * sizeof(*c))))
		return MP_E_NOMEM;
	if (!(o = mp_alloc_big(want * sizeof(*o)))) {
		free(c);
		return MP_E_NOMEM;
	}
	if (b->nctxs) {
		memcpy(c, b->ctxs, b->nctxs * sizeof(*c));
		memcpy(o, b->ctx_owner, b->nctxs * sizeof(*o));
	}
	if (b->last)
		b->last = c + (b->last - b->ctxs);
	free(b->ctxs);
	free(b->ctx_owner);
	b->ctxs = c;
	b->ctx_owner = o;
	b->actxs = want;
	return MP_OK;
}

enum mp_errcode idx_builder_reserve(struct idx_builder *b, size_t n)
{
	size_t want;

	if (!mp_add(b->nctxs, n, &want))
		return MP_E_NOMEM;
	return room_for_ctxs(b, want);
}

void idx_builder_seal_stacks(struct idx_builder *b)
{
	ht_map_release(&b->trie_map);
	free(b->first_child);
	free(b->path_frames);
	free(b->path_nodes);
	free(b->last_use);
	b->first_child = NULL;
	b->path_frames = b->path_nodes = NULL;
	b->last_use = NULL;
	b->apath_frames = b->apath_nodes = b->alast_use = b->npath = 0;
	b->afirst_child = 0;
	b->sealed = true;
}

void idx_builder_set_jobs(struct idx_builder *b, unsigned n)
{
	b->write_jobs = n;
}

void idx_builder_set_classes(struct idx_builder *b,
			     const struct mib_thresholds *t)
{
	b->classes = true;
	b->thresholds = *t;
}

void idx_builder_count_inputs(struct idx_builder *b, uint64_t n)
{
	b->inputs += n;
}

/*
 * Grow C's histogram to N > c->nhist counts, the new ones zero, as the
 * builder's own: a lent one is copied (it cannot be grown in place).
 */
static bool grow_hist(struct idx_bctx *c, uint32_t n)
{
	uint64_t *h;

	if (c->own & BCTX_OWN_HIST) {
		if (!(h = realloc(c->hist, (size_t)n * sizeof(*h))))
			return false;
	} else {
		if (!(h = malloc((size_t)n * sizeof(*h))))
			return false;
		if (c->nhist)
			memcpy(h, c->hist, (size_t)c->nhist * sizeof(*h));
	}
	memset(h + c->nhist, 0, (size_t)(n - c->nhist) * sizeof(*h));
	c->hist = h;
	c->nhist = n;
	c->own |= BCTX_OWN_HIST;
	return true;
}

static enum mp_errcode add_hist(struct idx_bctx *c, const uint64_t *hist,
				uint32_t nhist, uint64_t weight)
{
	if (nhist > c->nhist && !grow_hist(c, nhist))
		return MP_E_NOMEM;
	for (uint32_t i = 0; i < nhist; i++) {
		uint64_t v, s;

		v = __builtin_mul_overflow(hist[i], weight, &v) ? UINT64_MAX : v;
		c->hist[i] = __builtin_add_overflow(c->hist[i], v, &s) ? UINT64_MAX : s;
	}
	return MP_OK;
}

/* Fold sample entries S[0..NS-1], scaled by WEIGHT, into C's. */
static enum mp_errcode add_samples(struct idx_builder *b, struct idx_bctx *c,
				   const struct mp_samp *s, uint32_t ns,
				   uint64_t weight)
{
	struct mp_samp *list;
	size_t n = (size_t)c->nsamp + ns;

	if (!ns)
		return MP_OK;
	if (c->own & BCTX_OWN_SAMP) {
		list = realloc(c->samp, n * sizeof(*list));
	} else if ((list = malloc(n * sizeof(*list))) && c->nsamp) {
		memcpy(list, c->samp, (size_t)c->nsamp * sizeof(*list));
	}
	if (!list)
		return MP_E_NOMEM;
	if (!c->nsamp)
		b->nsampled++;
	c->samp = list;
	c->own |= BCTX_OWN_SAMP;
	mp_samp_fold(c->samp, &c->nsamp, s, ns, weight ? weight : 1);
	return MP_OK;
}

enum mp_errcode idx_builder_frame(struct idx_builder *b,
				  const struct mp_frame *f, uint32_t *id)
{
	return intern_frame(b, f, id);
}

/*
 * Trie node (F, PARENT1 - 1), made if new.  A node's first child is kept
 * beside it (b->first_child): of a 64-input merge's 221,000 nodes 123,000
 * are one, and finding or making a first child costs no probe of the
 * trie map, which holds only the others: 57 % fewer probes, each a cache
 * miss in a map of megabytes, and a map half the size.
 */
static enum mp_errcode trie_child(struct idx_builder *b, uint32_t f,
				  uint32_t parent1, uint32_t *node)
{
	struct idx_first_child *fc;
	enum mp_errcode rc;

	/* PARENT1 <= ntrie; the node made here may be a parent next. */
	if (!MP_GROW_ZERO(b->first_child, b->afirst_child, b->ntrie + 2))
		return MP_E_NOMEM;
	fc = &b->first_child[parent1];
	if (fc->node1 && fc->frame == f) {
		*node = fc->node1 - 1;
		return MP_OK;
	}
	if (fc->node1)
		return intern_rec(&b->trie, &b->ntrie, &b->atrie, &b->trie_map,
				  (struct idx_rec){ f, parent1 }, node);
	if ((rc = room_for_rec(&b->trie, b->ntrie, &b->atrie)))
		return rc;
	b->trie[b->ntrie] = (struct idx_rec){ f, parent1 };
	*node = (uint32_t)b->ntrie++;
	*fc = (struct idx_first_child){ *node + 1, f };
	return MP_OK;
}

enum mp_errcode idx_builder_node(struct idx_builder *b, const uint32_t *frames,
				 uint32_t n, uint32_t *node, struct mp_err *err)
{
	uint32_t parent1, k = 0;
	enum mp_errcode rc;

	if (n == 0)
		return mp_fail(err, MP_E_INVALID, "a context with no frame");
	if (b->sealed)
		return mp_fail(err, MP_E_INVALID, "a stack added after the "
			       "stacks were sealed");
	if (!MP_GROW(b->path_frames, b->apath_frames, n) ||
	    !MP_GROW(b->path_nodes, b->apath_nodes, n) ||
	    !MP_GROW_ZERO(b->last_use, b->alast_use, b->nframes))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * From the outermost frame in, so stacks share prefixes.  The prefix
	 * this stack shares with the previous one has its nodes in the path
	 * already: callers that add stacks in order make most frames cost
	 * nothing.  Past it, a frame is most often under the parent it had
	 * the last time it was met (b->last_use, a small array the caches
	 * keep), and the rest go to trie_child(): of a 64-input merge's
	 * 1.1 M frames past the shared prefix, 71 % were the last use's.
	 */
	while (k < n && k < b->npath && b->path_frames[k] == frames[n - 1 - k])
		k++;
	parent1 = k ? b->path_nodes[k - 1] + 1 : 0;
	for (; k < n; k++) {
		uint32_t f = frames[n - 1 - k];
		struct idx_last_use *last;

		b->npath = k;	/* the path is valid up to here */
		if (f >= b->nframes)
			return mp_fail(err, MP_E_INVALID,
				       "frame id %u out of range", f);
		last = &b->last_use[f];
		if (last->parent2 == parent1 + 1) {
			*node = last->node;
		} else {
			if ((rc = trie_child(b, f, parent1, node)))
				return mp_fail(err, rc, NULL);
			last->parent2 = parent1 + 1;
			last->node = *node;
		}
		b->path_frames[k] = f;
		b->path_nodes[k] = *node;
		parent1 = *node + 1;
	}
	b->npath = n;
	*node = b->path_nodes[n - 1];
	return MP_OK;
}

/* Node NODE's context, made if new (*FRESH), with a null MIB. */
static enum mp_errcode node_ctx(struct idx_builder *b, uint32_t node,
				struct idx_bctx **out, bool *fresh,
				struct mp_err *err)
{
	struct idx_bctx *c;

	if (node >= b->ntrie)
		return mp_fail(err, MP_E_INVALID, "trie node %u out of range",
			       node);
	if (!MP_GROW_ZERO(b->node_ctx, b->anode_ctx, b->ntrie))
		return mp_fail(err, MP_E_NOMEM, NULL);
	*fresh = !b->node_ctx[node];
	if (!*fresh) {
		*out = &b->ctxs[b->node_ctx[node] - 1];
		return MP_OK;
	}
	if (b->nctxs == b->actxs &&
	    room_for_ctxs(b, b->actxs < 16 ? 16
				: b->actxs > SIZE_MAX / 2 ? SIZE_MAX : b->actxs * 2))
		return mp_fail(err, MP_E_NOMEM, NULL);
	c = &b->ctxs[b->nctxs];
	memset(c, 0, sizeof(*c));
	c->node = node;
	b->ctx_owner[b->nctxs] = b->frames[b->trie[node].a][0];
	b->node_ctx[node] = (uint32_t)++b->nctxs;
	*out = c;
	return MP_OK;
}

enum mp_errcode idx_builder_add_node(struct idx_builder *b, uint32_t node,
				     const struct mp_mib *mib,
				     const uint64_t *hist, uint32_t nhist,
				     uint64_t weight, struct mp_err *err)
{
	struct idx_bctx *c;
	struct mp_mib m = *mib;
	enum mp_errcode rc;
	bool fresh;

	if (weight > 1)
		mib_scale(&m, weight);
	if ((rc = node_ctx(b, node, &c, &fresh, err)))
		return rc;
	if (fresh) {
		if (!(c->mib = mp_arena_alloc_uninit(&b->arena, sizeof(*c->mib))))
			return mp_fail(err, MP_E_NOMEM, NULL);
		*c->mib = m;
		c->own = BCTX_OWN_HIST | BCTX_OWN_SAMP;
	} else {
		mib_fold(c->mib, &m);
	}
	b->last = c;
	if (nhist && add_hist(c, hist, nhist, weight ? weight : 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	c->mib->v[MIB_AccessHistogramSize] = c->nhist;
	return MP_OK;
}

void idx_builder_prefetch_node(const struct idx_builder *b, uint32_t node)
{
	if (node < b->ntrie)
		__builtin_prefetch(&b->trie[node]);
	if (node < b->anode_ctx)
		__builtin_prefetch(&b->node_ctx[node]);
}

enum mp_errcode idx_builder_lend_node(struct idx_builder *b, uint32_t node,
				      struct mp_mib *mib, uint64_t *hist,
				      uint32_t nhist, struct mp_samp *samp,
				      uint32_t nsamp, struct mp_err *err)
{
	struct idx_bctx *c;
	enum mp_errcode rc;
	bool fresh;

	if ((rc = node_ctx(b, node, &c, &fresh, err)))
		return rc;
	b->last = c;
	if (fresh) {
		c->mib = mib;
		c->hist = hist;
		c->nhist = nhist;
		c->samp = samp;
		c->nsamp = nsamp;
		if (nsamp)
			b->nsampled++;
		return MP_OK;
	}
	mib_fold(c->mib, mib);
	if ((nhist && add_hist(c, hist, nhist, 1)) ||
	    add_samples(b, c, samp, nsamp, 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	c->mib->v[MIB_AccessHistogramSize] = c->nhist;
	return MP_OK;
}

enum mp_errcode idx_builder_add_stack(struct idx_builder *b,
				      const uint32_t *frames, uint32_t n,
				      const struct mp_mib *mib,
				      const uint64_t *hist, uint32_t nhist,
				      uint64_t weight, struct mp_err *err)
{
	uint32_t node;
	enum mp_errcode rc = idx_builder_node(b, frames, n, &node, err);

	return rc ? rc : idx_builder_add_node(b, node, mib, hist, nhist,
					      weight, err);
}

enum mp_errcode idx_builder_add_samples(struct idx_builder *b,
					const struct mp_samp *s, uint32_t ns,
					uint64_t weight, struct mp_err *err)
{
	if (!ns)
		return MP_OK;
	if (!b->last)
		return mp_fail(err, MP_E_INVALID, "sample entries before a context");
	return add_samples(b, b->last, s, ns, weight) ?
	       mp_fail(err, MP_E_NOMEM, NULL) : MP_OK;
}

enum mp_errcode idx_builder_add(struct idx_builder *b,
				const struct mp_frame *frames, uint32_t n,
				const struct mp_mib *mib, const uint64_t *hist,
				uint32_t nhist, uint64_t weight,
				struct mp_err *err)
{
	uint32_t small[64], *ids = n <= 64 ? small : malloc(n * sizeof(*ids));
	enum mp_errcode rc = MP_OK;

	if (!ids)
		return mp_fail(err, MP_E_NOMEM, NULL);
	for (uint32_t k = 0; k < n && !rc; k++)
		rc = intern_frame(b, &frames[k], &ids[k]);
	if (rc)
		mp_fail(err, rc, NULL);
	else
		rc = idx_builder_add_stack(b, ids, n, mib, hist, nhist, weight, err);
	if (ids != small)
		free(ids);
	return rc;
}

void idx_builder_stats(const struct idx_builder *b, struct idx_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->contexts = b->nctxs;
	out->strings = b->nstrs;
	for (size_t i = 0; i < b->nstrs; i++)
		out->string_bytes += b->strs[i].len + 1;
	out->paths = b->npaths;
	out->frames = b->nframes;
	out->trie_nodes = b->ntrie;
	out->inputs = b->inputs;
}

