#include "idx.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*
 * Section ids, in the order they are written (memprof-data-format(5)).
 */
enum {
	SEC_SUMMARY = 1, SEC_STRINGS, SEC_PATHS, SEC_FRAMES, SEC_TRIE,
	SEC_SCHEMA, SEC_RECORDS, SEC_HASH, SEC__COUNT
};

const char *const idx_section_names[9] = {
	"", "summary", "strings", "paths", "frames", "trie", "schema",
	"records", "hash",
};

#define HEADER_SIZE 64
#define SECTION_ENTRY_SIZE 24
#define MAX_SECTIONS 16
#define PATH_NODE_SIZE 8
#define FRAMES_HEADER 12	/* count, six column widths, reserved */
#define FRAME_COLUMNS 6
#define TRIE_HEADER 4		/* count; the first node is at offset 4 */
#define HASH_TYPE_FNV1A 1
#define TYPE_VARINT 1
#define TYPE_VARINT_ARRAY 2
#define TAG_HISTOGRAM 27

/* The summary's totals. */
static const enum mib_field summary_fields[] = {
	MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount, MIB_TotalLifetime,
};
#define NSUMMARY (sizeof(summary_fields) / sizeof(summary_fields[0]))

struct idx_bstr {
	const char *s;
	uint32_t len;
	uint32_t out;		/* string id in the output */
};

struct idx_rec {
	uint32_t a, b;		/* paths: name, parent+1; trie: frame, parent+1 */
};

struct idx_bctx {
	uint32_t node;
	uint32_t nhist;
	uint64_t *hist;
	struct mp_mib mib;
};

/* ---- building ---- */

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

/* The index of pair KEY in ARR (through MAP), appended if new. */
static enum mp_errcode intern_rec(struct idx_rec **arr, size_t *n,
				  size_t *alloc, struct ht_map *map,
				  struct idx_rec key, uint32_t *out)
{
	uint64_t k = ht_pair_key(key.a, key.b);
	enum mp_errcode rc;

	if (ht_map_get(map, k, out))
		return MP_OK;
	if (*n >= UINT32_MAX - 1)
		return MP_E_TOO_LARGE;
	if (!MP_GROW(*arr, *alloc, *n + 1))
		return MP_E_NOMEM;
	(*arr)[*n] = key;
	if ((rc = ht_map_put(map, k, (uint32_t)*n)))
		return rc;
	*out = (uint32_t)(*n)++;
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
				    const struct idx_frame *f, uint32_t *out)
{
	uint32_t key[6], id;
	uint64_t h;
	enum mp_errcode rc;

	memset(key, 0, sizeof(key));
	rc = intern_str(b, f->function ? f->function : "",
			f->function ? strlen(f->function) : 0, &key[0]);
	if (rc)
		return rc;
	if (f->flags & IDX_FRAME_UNSYMBOLIZED) {
		key[2] = (uint32_t)f->offset;
		key[3] = (uint32_t)(f->offset >> 32);
	} else {
		rc = intern_path(b, f->file, &key[1]);
		if (rc)
			return rc;
		key[2] = f->line;
		key[3] = f->column;
		key[4] = f->discriminator;
	}
	key[5] = f->flags & (IDX_FRAME_INLINED | IDX_FRAME_UNSYMBOLIZED);
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
	for (size_t i = 0; i < b->nctxs; i++)
		free(b->ctxs[i].hist);
	free(b->strs);
	free(b->paths);
	free(b->frames);
	free(b->trie);
	free(b->ctxs);
	free(b->node_ctx);
	ht_release(&b->str_ht);
	ht_map_release(&b->path_map);
	ht_release(&b->frame_ht);
	ht_map_release(&b->trie_map);
	free(b->path_frames);
	free(b->path_nodes);
	mp_arena_release(&b->arena);
	memset(b, 0, sizeof(*b));
}

enum mp_errcode idx_builder_reserve(struct idx_builder *b, size_t n)
{
	size_t want;
	struct idx_bctx *c;

	if (!mp_add(b->nctxs, n, &want))
		return MP_E_NOMEM;
	if (want <= b->actxs)
		return MP_OK;
	if (want > SIZE_MAX / sizeof(*c) ||
	    !(c = realloc(b->ctxs, want * sizeof(*c))))
		return MP_E_NOMEM;
	mp_want_huge_pages(c, want * sizeof(*c));
	b->ctxs = c;
	b->actxs = want;
	return MP_OK;
}

void idx_builder_count_inputs(struct idx_builder *b, uint64_t n)
{
	b->inputs += n;
}

static enum mp_errcode add_hist(struct idx_bctx *c, const uint64_t *hist,
				uint32_t nhist, uint64_t weight)
{
	if (nhist > c->nhist) {
		uint64_t *h = realloc(c->hist, (size_t)nhist * sizeof(*h));

		if (!h)
			return MP_E_NOMEM;
		memset(h + c->nhist, 0, (size_t)(nhist - c->nhist) * sizeof(*h));
		c->hist = h;
	}
	for (uint32_t i = 0; i < nhist; i++) {
		uint64_t v, s;

		v = __builtin_mul_overflow(hist[i], weight, &v) ? UINT64_MAX : v;
		c->hist[i] = __builtin_add_overflow(c->hist[i], v, &s) ? UINT64_MAX : s;
	}
	if (nhist > c->nhist)
		c->nhist = nhist;
	return MP_OK;
}

enum mp_errcode idx_builder_frame(struct idx_builder *b,
				  const struct idx_frame *f, uint32_t *id)
{
	return intern_frame(b, f, id);
}

enum mp_errcode idx_builder_add_stack(struct idx_builder *b,
				      const uint32_t *frames, uint32_t n,
				      const struct mp_mib *mib,
				      const uint64_t *hist, uint32_t nhist,
				      uint64_t weight, struct mp_err *err)
{
	uint32_t parent1, node, k = 0;
	struct idx_bctx *c;
	struct mp_mib m = *mib;
	enum mp_errcode rc;

	if (n == 0)
		return mp_fail(err, MP_E_INVALID, "a context with no frame");
	if (!MP_GROW(b->path_frames, b->apath_frames, n) ||
	    !MP_GROW(b->path_nodes, b->apath_nodes, n))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * From the outermost frame in, so stacks share prefixes.  The prefix
	 * this stack shares with the previous one has its nodes in the path
	 * already: callers that add stacks in order (merge sorts them) make
	 * most frames cost nothing, and the rest one probe each.
	 */
	while (k < n && k < b->npath && b->path_frames[k] == frames[n - 1 - k])
		k++;
	parent1 = k ? b->path_nodes[k - 1] + 1 : 0;
	for (; k < n; k++) {
		uint32_t f = frames[n - 1 - k];

		b->npath = k;	/* the path is valid up to here */
		if (f >= b->nframes)
			return mp_fail(err, MP_E_INVALID,
				       "frame id %u out of range", f);
		rc = intern_rec(&b->trie, &b->ntrie, &b->atrie, &b->trie_map,
				(struct idx_rec){ f, parent1 }, &node);
		if (rc)
			return mp_fail(err, rc, NULL);
		b->path_frames[k] = f;
		b->path_nodes[k] = node;
		parent1 = node + 1;
	}
	b->npath = n;
	node = b->path_nodes[n - 1];
	if (b->ntrie > b->anode_ctx) {
		size_t old = b->anode_ctx;

		if (!MP_GROW(b->node_ctx, b->anode_ctx, b->ntrie))
			return mp_fail(err, MP_E_NOMEM, NULL);
		memset(b->node_ctx + old, 0,
		       (b->anode_ctx - old) * sizeof(*b->node_ctx));
	}
	if (weight > 1)
		mib_scale(&m, weight);
	if (b->node_ctx[node]) {
		c = &b->ctxs[b->node_ctx[node] - 1];
		mib_fold(&c->mib, &m);
	} else {
		if (!MP_GROW(b->ctxs, b->actxs, b->nctxs + 1))
			return mp_fail(err, MP_E_NOMEM, NULL);
		c = &b->ctxs[b->nctxs];
		memset(c, 0, sizeof(*c));
		c->node = node;
		c->mib = m;
		b->node_ctx[node] = (uint32_t)++b->nctxs;
	}
	if (nhist && add_hist(c, hist, nhist, weight ? weight : 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	c->mib.v[MIB_AccessHistogramSize] = c->nhist;
	return MP_OK;
}

enum mp_errcode idx_builder_add(struct idx_builder *b,
				const struct idx_frame *frames, uint32_t n,
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

/* ---- canonical order ---- */

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

/* A node of a forest to renumber: its key among siblings, its parent. */
struct forest_ent {
	uint32_t parent1, key, node;
};

static int by_parent_key(const void *x, const void *y)
{
	const struct forest_ent *a = x, *c = y;

	if (a->parent1 != c->parent1)
		return a->parent1 < c->parent1 ? -1 : 1;
	return a->key < c->key ? -1 : a->key > c->key;
}

/*
 * Renumber a forest of N nodes (PARENT1[i], KEY[i]) in depth-first
 * pre-order, siblings by key: parents come before children, and the
 * numbering depends only on the keys.  OUT[i] is node i's new index.
 */
static enum mp_errcode forest_order(size_t n, const struct idx_rec *recs,
				    const uint32_t *key, uint32_t *out)
{
	struct forest_ent *e = malloc((n ? n : 1) * sizeof(*e));
	uint32_t *first = malloc((n + 1) * sizeof(*first));
	uint32_t *count = calloc(n + 1, sizeof(*count));
	uint32_t *stack = malloc((n ? n : 1) * sizeof(*stack));
	size_t sp = 0, next = 0;

	if (!e || !first || !count || !stack) {
		free(e);
		free(first);
		free(count);
		free(stack);
		return MP_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		e[i] = (struct forest_ent){ recs[i].b, key[i], (uint32_t)i };
		count[recs[i].b]++;
	}
	qsort(e, n, sizeof(*e), by_parent_key);
	/* Children of parent p (p = node + 1, 0 = roots) are e[first[p]..]. */
	for (size_t p = 0, pos = 0; p <= n; p++) {
		first[p] = (uint32_t)pos;
		pos += count[p];
	}
	/* Push roots in reverse so the smallest key is numbered first. */
	for (size_t k = count[0]; k-- > 0;)
		stack[sp++] = e[first[0] + k].node;
	while (sp) {
		uint32_t v = stack[--sp];

		out[v] = (uint32_t)next++;
		for (size_t k = count[v + 1]; k-- > 0;)
			stack[sp++] = e[first[v + 1] + k].node;
	}
	free(e);
	free(first);
	free(count);
	free(stack);
	return MP_OK;
}

/* Frame ids by their six columns; ARG is the frame table. */
static int by_frame(const void *x, const void *y, void *arg)
{
	uint32_t (*frames)[6] = arg;
	const uint32_t *a = frames[*(const uint32_t *)x];
	const uint32_t *c = frames[*(const uint32_t *)y];

	for (int i = 0; i < 6; i++)
		if (a[i] != c[i])
			return a[i] < c[i] ? -1 : 1;
	return 0;
}

struct ctx_order {
	uint32_t owner;		/* string id of the owning function */
	uint32_t node;		/* its trie node's offset: the stack id */
	uint32_t ctx;
};

static int by_owner_node(const void *x, const void *y)
{
	const struct ctx_order *a = x, *c = y;

	if (a->owner != c->owner)
		return a->owner < c->owner ? -1 : 1;
	return a->node < c->node ? -1 : a->node > c->node;
}

/* ---- writing ---- */

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
	unsigned char tmp[10];
	size_t n = 0;
	unsigned char *p;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	p = ob_put(o, n);
	if (p)
		memcpy(p, tmp, n);
}

static void ob_align(struct obuf *o)
{
	while (o->n % 8 && !o->oom)
		ob_put(o, 1);
}

struct out_tables {
	uint32_t *str_out;	/* old string -> new id (byte offset) */
	uint32_t *path_out;	/* old path -> new index */
	uint32_t *frame_out;	/* old frame -> new index */
	uint32_t *frame_new_to_old;
	uint32_t *path_new_to_old;
	uint32_t *trie_out;
	uint32_t *trie_new_to_old;
	uint32_t (*frames)[6];	/* frames with output string and path ids */
	struct ctx_order *order;
};

static void free_tables(struct out_tables *t)
{
	free(t->str_out);
	free(t->path_out);
	free(t->frame_out);
	free(t->frame_new_to_old);
	free(t->path_new_to_old);
	free(t->trie_out);
	free(t->trie_new_to_old);
	free(t->frames);
	free(t->order);
}

static bool same_hist(const struct idx_bctx *a, const struct idx_bctx *c)
{
	return a->nhist == c->nhist &&
	       (!a->nhist || memcmp(a->hist, c->hist,
				    a->nhist * sizeof(*a->hist)) == 0);
}

/*
 * One MIB of a record: its presence mask, then the fields that differ
 * from PREV, the MIB before it in the record (NULL for the first, whose
 * reference is all zeros and an empty histogram).  Schema field f < 26 is
 * MIB field f, field 26 the histogram.
 */
static void write_mib(struct obuf *o, const struct idx_bctx *c,
		      const struct idx_bctx *prev)
{
	static const struct idx_bctx zero;
	uint64_t mask = 0;

	if (!prev)
		prev = &zero;
	for (int f = 0; f < MIB__COUNT; f++)
		if (c->mib.v[f] != prev->mib.v[f])
			mask |= (uint64_t)1 << f;
	if (!same_hist(c, prev))
		mask |= (uint64_t)1 << MIB__COUNT;
	ob_varint(o, mask);
	for (int f = 0; f < MIB__COUNT; f++)
		if (mask >> f & 1)
			ob_varint(o, c->mib.v[f]);
	if (mask >> MIB__COUNT & 1) {
		ob_varint(o, c->nhist);
		for (uint32_t i = 0; i < c->nhist; i++)
			ob_varint(o, c->hist[i]);
	}
}

/*
 * Number a forest of N nodes (payload A renumbered through AMAP, parent
 * + 1) with forest_order() on the renumbered payloads: OUT gets each
 * node's new index, NEW_TO_OLD the inverse.  TMP holds N entries.
 */
static enum mp_errcode number_forest(const struct idx_rec *recs, size_t n,
				     const uint32_t *amap, uint32_t *out,
				     uint32_t *new_to_old, uint32_t *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = amap[recs[i].a];
	if (forest_order(n, recs, tmp, out))
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		new_to_old[out[i]] = (uint32_t)i;
	return MP_OK;
}

/* The file-path table: u32 count, then (name, parent + 1) per node. */
static enum mp_errcode write_paths(struct obuf *o, const struct idx_rec *recs,
				   size_t n, const uint32_t *amap, uint32_t *out,
				   uint32_t *new_to_old, uint32_t *tmp)
{
	if (number_forest(recs, n, amap, out, new_to_old, tmp))
		return MP_E_NOMEM;
	ob_u32(o, (uint32_t)n);
	for (size_t k = 0; k < n; k++) {
		const struct idx_rec *r = &recs[new_to_old[k]];

		ob_u32(o, amap[r->a]);
		ob_u32(o, r->b ? out[r->b - 1] + 1 : 0);
	}
	return MP_OK;
}

/*
 * The call-stack trie: u32 count, then each node as varints (frame, its
 * offset minus its parent's, 0 for a root), in forest order, which puts
 * parents first, so a parent's offset is known when its child is written.
 * On return OUT[i] is node i's offset in the section: its stack id.
 * TMP holds N entries.
 */
static enum mp_errcode write_trie(struct obuf *o, const struct idx_rec *recs,
				  size_t n, const uint32_t *frame_out,
				  uint32_t *out, uint32_t *new_to_old,
				  uint32_t *tmp)
{
	size_t start = o->n;

	if (number_forest(recs, n, frame_out, out, new_to_old, tmp))
		return MP_E_NOMEM;
	ob_u32(o, (uint32_t)n);
	/* tmp[k]: offset of the k-th node written. */
	for (size_t k = 0; k < n; k++) {
		const struct idx_rec *r = &recs[new_to_old[k]];
		size_t off = o->n - start;

		/* Offsets and offset + 1 (a parent1) must fit 32 bits. */
		if (off >= UINT32_MAX - 1)
			return MP_E_TOO_LARGE;
		tmp[k] = (uint32_t)off;
		ob_varint(o, frame_out[r->a]);
		ob_varint(o, r->b ? off - tmp[out[r->b - 1]] : 0);
	}
	if (o->n - start >= UINT32_MAX - 1)
		return MP_E_TOO_LARGE;
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[out[i]];
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
static void write_frames(struct obuf *o, uint32_t (*frames)[6],
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

enum mp_errcode idx_builder_write(struct idx_builder *b, FILE *out,
				  struct mp_err *err)
{
	struct out_tables t = { 0 };
	struct obuf o = { 0 };
	size_t sec_off[SEC__COUNT] = { 0 }, sec_size[SEC__COUNT] = { 0 };
	struct ht_disk_item *items = NULL;
	uint32_t nitems = 0, *tmp = NULL;
	unsigned char *hash = NULL;
	size_t hash_size = 0;
	uint64_t totals[NSUMMARY] = { 0 };
	enum mp_errcode rc = MP_E_NOMEM;
	size_t nstr = b->nstrs, npath = b->npaths, nfr = b->nframes,
	       ntr = b->ntrie, nctx = b->nctxs, nused = 0, ncp = 0;
	unsigned char *used = NULL, *used_str, *used_path, *used_frame;
	struct idx_rec *cpaths = NULL;
	uint32_t *cidx = NULL, *cout = NULL;

	t.str_out = malloc((nstr + 1) * sizeof(uint32_t));
	t.path_out = malloc((npath + 1) * sizeof(uint32_t));
	t.path_new_to_old = malloc((npath + 1) * sizeof(uint32_t));
	t.frame_out = malloc((nfr + 1) * sizeof(uint32_t));
	t.frame_new_to_old = malloc((nfr + 1) * sizeof(uint32_t));
	t.trie_out = malloc((ntr + 1) * sizeof(uint32_t));
	t.trie_new_to_old = malloc((ntr + 1) * sizeof(uint32_t));
	t.order = malloc((nctx + 1) * sizeof(*t.order));
	t.frames = malloc((nfr + 1) * sizeof(*t.frames));
	tmp = malloc((nstr + npath + nfr + ntr + 1) * sizeof(uint32_t));
	items = malloc((nctx + 1) * sizeof(*items));
	used = calloc(nstr + npath + nfr + 1, 1);
	cpaths = calloc(npath + 1, sizeof(*cpaths));
	cidx = malloc((npath + 1) * sizeof(*cidx));
	cout = malloc((npath + 1) * sizeof(*cout));
	if (!t.str_out || !t.path_out || !t.path_new_to_old || !t.frame_out ||
	    !t.frame_new_to_old || !t.trie_out || !t.trie_new_to_old ||
	    !t.order || !t.frames || !tmp || !items || !used || !cpaths ||
	    !cidx || !cout)
		goto out;

	/*
	 * Only what the stacks reach is written: the frames of trie nodes,
	 * their paths with every ancestor, and the strings of those (and "",
	 * string 0).  A frame interned but dropped before any stack used it
	 * must not change the bytes, or the output would depend on history.
	 */
	used_str = used;
	used_path = used + nstr;
	used_frame = used + nstr + npath;
	used_str[0] = 1;
	for (size_t i = 0; i < ntr; i++)
		used_frame[b->trie[i].a] = 1;
	for (size_t i = 0; i < nfr; i++) {
		if (!used_frame[i])
			continue;
		used_str[b->frames[i][0]] = 1;
		for (uint32_t p1 = b->frames[i][1]; p1 && !used_path[p1 - 1];
		     p1 = b->paths[p1 - 1].b) {
			used_path[p1 - 1] = 1;
			used_str[b->paths[p1 - 1].a] = 1;
		}
	}

	/* Header and section table, patched at the end. */
	ob_put(&o, HEADER_SIZE + (SEC__COUNT - 1) * SECTION_ENTRY_SIZE);

	/* 1: summary. */
	for (size_t i = 0; i < nctx; i++)
		for (size_t k = 0; k < NSUMMARY; k++) {
			uint64_t v = b->ctxs[i].mib.v[summary_fields[k]];

			totals[k] = __builtin_add_overflow(totals[k], v, &totals[k])
				? UINT64_MAX : totals[k];
		}
	sec_off[SEC_SUMMARY] = o.n;
	ob_u32(&o, NSUMMARY);
	ob_u32(&o, 0);
	for (size_t k = 0; k < NSUMMARY; k++) {
		ob_u32(&o, mib_fields[summary_fields[k]].tag);
		ob_u32(&o, 0);
		ob_u64(&o, totals[k]);
	}
	sec_size[SEC_SUMMARY] = o.n - sec_off[SEC_SUMMARY];
	ob_align(&o);

	/* 2: strings, sorted by bytes; an id is a byte offset. */
	sec_off[SEC_STRINGS] = o.n;
	for (size_t i = 0; i < nstr; i++)
		if (used_str[i])
			tmp[nused++] = (uint32_t)i;
	qsort_r(tmp, nused, sizeof(*tmp), by_string, b);
	for (size_t i = 0; i < nused; i++) {
		struct idx_bstr *s = &b->strs[tmp[i]];
		unsigned char *p;

		if (o.n - sec_off[SEC_STRINGS] + s->len + 1 > UINT32_MAX) {
			rc = MP_E_TOO_LARGE;
			goto out;
		}
		t.str_out[tmp[i]] = (uint32_t)(o.n - sec_off[SEC_STRINGS]);
		p = ob_put(&o, s->len + 1);
		if (p)
			memcpy(p, s->s, s->len);
	}
	sec_size[SEC_STRINGS] = o.n - sec_off[SEC_STRINGS];
	ob_align(&o);

	/* 3: paths, as a forest ordered by component names. */
	for (size_t i = 0; i < npath; i++) {
		if (!used_path[i])
			continue;
		cidx[i] = (uint32_t)ncp;
		cpaths[ncp].a = b->paths[i].a;
		/* A used path's parent is used, and earlier: already numbered. */
		cpaths[ncp].b = b->paths[i].b ? cidx[b->paths[i].b - 1] + 1 : 0;
		ncp++;
	}
	sec_off[SEC_PATHS] = o.n;
	if (write_paths(&o, cpaths, ncp, t.str_out, cout, t.path_new_to_old,
			tmp))
		goto out;
	for (size_t i = 0; i < npath; i++)
		if (used_path[i])
			t.path_out[i] = cout[cidx[i]];
	sec_size[SEC_PATHS] = o.n - sec_off[SEC_PATHS];
	ob_align(&o);

	/* 4: frames, renumbered in the order of their new contents. */
	nused = 0;
	for (size_t i = 0; i < nfr; i++) {
		if (!used_frame[i])
			continue;
		memcpy(t.frames[i], b->frames[i], sizeof(t.frames[i]));
		t.frames[i][0] = t.str_out[b->frames[i][0]];
		if (b->frames[i][1])
			t.frames[i][1] = t.path_out[b->frames[i][1] - 1] + 1;
		t.frame_new_to_old[nused++] = (uint32_t)i;
	}
	qsort_r(t.frame_new_to_old, nused, sizeof(uint32_t), by_frame, t.frames);
	for (size_t k = 0; k < nused; k++)
		t.frame_out[t.frame_new_to_old[k]] = (uint32_t)k;
	sec_off[SEC_FRAMES] = o.n;
	write_frames(&o, t.frames, t.frame_new_to_old, nused);
	sec_size[SEC_FRAMES] = o.n - sec_off[SEC_FRAMES];
	ob_align(&o);

	/* 5: the call-stack trie, ordered by frames from the outermost. */
	sec_off[SEC_TRIE] = o.n;
	if ((rc = write_trie(&o, b->trie, ntr, t.frame_out, t.trie_out,
			     t.trie_new_to_old, tmp)) != MP_OK)
		goto out;
	rc = MP_E_NOMEM;
	sec_size[SEC_TRIE] = o.n - sec_off[SEC_TRIE];
	ob_align(&o);

	/* 6: the schema: every MIB field, then the histogram. */
	sec_off[SEC_SCHEMA] = o.n;
	ob_u32(&o, MIB__COUNT + 1);
	for (int f = 0; f < MIB__COUNT; f++) {
		unsigned char *p = ob_put(&o, 2);

		if (p) {
			p[0] = mib_fields[f].tag;
			p[1] = TYPE_VARINT;
		}
	}
	{
		unsigned char *p = ob_put(&o, 2);

		if (p) {
			p[0] = TAG_HISTOGRAM;
			p[1] = TYPE_VARINT_ARRAY;
		}
	}
	sec_size[SEC_SCHEMA] = o.n - sec_off[SEC_SCHEMA];
	ob_align(&o);

	/*
	 * 7: records, by owning function, MIBs by stack id (t.trie_out holds
	 * node offsets, in the same order as the nodes), each stack id as
	 * its step from the one before and each MIB as its changes from the
	 * one before.
	 */
	for (size_t i = 0; i < nctx; i++) {
		uint32_t node = b->ctxs[i].node;

		t.order[i].owner = t.frames[b->trie[node].a][0];
		t.order[i].node = t.trie_out[node];
		t.order[i].ctx = (uint32_t)i;
	}
	qsort(t.order, nctx, sizeof(*t.order), by_owner_node);
	sec_off[SEC_RECORDS] = o.n;
	for (size_t i = 0; i < nctx;) {
		size_t j = i, start = o.n;

		while (j < nctx && t.order[j].owner == t.order[i].owner)
			j++;
		ob_varint(&o, j - i);
		for (size_t k = i; k < j; k++) {
			ob_varint(&o, t.order[k].node -
				      (k > i ? t.order[k - 1].node : 0));
			write_mib(&o, &b->ctxs[t.order[k].ctx],
				  k > i ? &b->ctxs[t.order[k - 1].ctx] : NULL);
		}
		if (o.n - sec_off[SEC_RECORDS] > UINT32_MAX) {
			rc = MP_E_TOO_LARGE;
			goto out;
		}
		items[nitems].name = t.order[i].owner;
		items[nitems].record_offset = (uint32_t)(start - sec_off[SEC_RECORDS]);
		items[nitems].record_size = (uint32_t)(o.n - start);
		items[nitems].contexts = (uint32_t)(j - i);
		nitems++;
		i = j;
	}
	sec_size[SEC_RECORDS] = o.n - sec_off[SEC_RECORDS];
	ob_align(&o);
	if (o.oom)
		goto out;

	/* 8: the hash table over the records' function names. */
	for (uint32_t k = 0; k < nitems; k++) {
		const char *name = (const char *)o.d + sec_off[SEC_STRINGS] +
				   items[k].name;

		items[k].hash = ht_disk_hash(name, strlen(name));
	}
	rc = ht_disk_write(items, nitems, &hash, &hash_size);
	if (rc)
		goto out;
	rc = MP_E_NOMEM;
	sec_off[SEC_HASH] = o.n;
	{
		unsigned char *p = ob_put(&o, hash_size);

		if (p)
			memcpy(p, hash, hash_size);
	}
	sec_size[SEC_HASH] = hash_size;
	ob_align(&o);
	if (o.oom)
		goto out;

	/* The header and the section table. */
	memcpy(o.d, IDX_MAGIC, IDX_MAGIC_SIZE);
	mp_put_le32(o.d + 8, IDX_VERSION);
	mp_put_le32(o.d + 12, HASH_TYPE_FNV1A);
	mp_put_le64(o.d + 16, o.n);
	mp_put_le32(o.d + 24, SEC__COUNT - 1);
	mp_put_le32(o.d + 28, 0);
	mp_put_le64(o.d + 32, nctx);
	mp_put_le64(o.d + 40, nitems);
	mp_put_le64(o.d + 48, b->inputs);
	for (int s = 1; s < SEC__COUNT; s++) {
		unsigned char *e = o.d + HEADER_SIZE + (size_t)(s - 1) * SECTION_ENTRY_SIZE;

		mp_put_le32(e, (uint32_t)s);
		mp_put_le64(e + 8, sec_off[s]);
		mp_put_le64(e + 16, sec_size[s]);
	}
	if (fwrite(o.d, 1, o.n, out) != o.n) {
		rc = mp_fail(err, MP_E_IO, "cannot write output: %s",
			     strerror(errno ? errno : EIO));
		goto done;
	}
	rc = MP_OK;
out:
	if (rc)
		mp_fail(err, rc, rc == MP_E_TOO_LARGE
			? "the profile is too large for 32-bit offsets" : NULL);
done:
	free(used);
	free(cpaths);
	free(cidx);
	free(cout);
	free(items);
	free(hash);
	free(tmp);
	free(o.d);
	free_tables(&t);
	return rc;
}

/* ---- reading ---- */

bool idx_is_indexed(const void *data, size_t size)
{
	return size >= IDX_MAGIC_SIZE && memcmp(data, IDX_MAGIC, IDX_MAGIC_SIZE) == 0;
}

/* Decode a varint at *P, not past END; false if malformed or cut off. */
static bool get_varint(const unsigned char **p, const unsigned char *end,
		       uint64_t *v)
{
	uint64_t r = 0;

	for (int i = 0; i < 10; i++) {
		unsigned char c;

		if (*p >= end)
			return false;
		c = *(*p)++;
		/* The tenth byte may only carry the 64th bit. */
		if (i == 9 && c > 1)
			return false;
		r |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static bool string_ok(const struct idx_file *f, uint32_t id)
{
	const unsigned char *s = f->sec[SEC_STRINGS];

	return id < f->sec_size[SEC_STRINGS] && (id == 0 || s[id - 1] == 0);
}

static const char *string_at(const struct idx_file *f, uint32_t id)
{
	return (const char *)f->sec[SEC_STRINGS] + id;
}

static bool name_ok(uint32_t name, uint64_t *hash, const void *ctx)
{
	const struct idx_file *f = ctx;

	if (!string_ok(f, name))
		return false;
	*hash = ht_disk_hash(string_at(f, name), strlen(string_at(f, name)));
	return true;
}

/* Column COL of stack entry I, which the caller knows is in the table. */
static uint32_t frame_get(const struct idx_file *f, uint32_t i, int col)
{
	const unsigned char *p = f->sec[SEC_FRAMES] + FRAMES_HEADER +
				 (size_t)i * f->frame_size + f->frame_col[col];
	uint32_t v = 0;

	for (unsigned k = f->frame_width[col]; k-- > 0;)
		v = v << 8 | p[k];
	return v;
}

/*
 * The trie node at offset NODE: its frame, and its parent's offset + 1
 * (0 for a root).  Every node was checked by idx_open(); the bounds here
 * only keep an id that did not come from the file from reading outside
 * the section or walking forwards.
 */
static void node_at(const struct idx_file *f, uint32_t node, uint32_t *frame,
		    uint32_t *parent1)
{
	const unsigned char *p = f->sec[SEC_TRIE] + node,
			    *end = f->sec[SEC_TRIE] + f->trie_size;
	uint64_t fr = 0, up = 0;

	*frame = 0;
	*parent1 = 0;
	if (node < TRIE_HEADER || node >= f->trie_size ||
	    !get_varint(&p, end, &fr) || !get_varint(&p, end, &up))
		return;
	if (fr < f->nframes)
		*frame = (uint32_t)fr;
	if (up && up <= node - TRIE_HEADER)
		*parent1 = node - (uint32_t)up + 1;
}

static const unsigned char *path_ptr(const struct idx_file *f, uint32_t i)
{
	return f->sec[SEC_PATHS] + 4 + (size_t)i * PATH_NODE_SIZE;
}

static bool is_node(const uint8_t *starts, uint64_t off)
{
	return starts[off / 8] >> (off % 8) & 1;
}

struct span {
	uint64_t off, size;
	int id;
};

static int by_offset(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->off < b->off ? -1 : a->off > b->off;
}

static enum mp_errcode open_sections(struct idx_file *f, struct mp_err *err)
{
	const unsigned char *d = f->data;
	struct span spans[SEC__COUNT];
	uint32_t n = mp_le32(d + 24);
	int nspans = 0;

	if (n == 0 || n > MAX_SECTIONS)
		return mp_fail(err, MP_E_CORRUPT,
			       "section count %" PRIu32 " is not between 1 and %d",
			       n, MAX_SECTIONS);
	if (HEADER_SIZE + (size_t)n * SECTION_ENTRY_SIZE > f->size)
		return mp_fail(err, MP_E_CORRUPT,
			       "section table of %" PRIu32 " entries runs past "
			       "the end of the file", n);
	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *e = d + HEADER_SIZE + (size_t)i * SECTION_ENTRY_SIZE;
		uint32_t id = mp_le32(e);
		uint64_t off = mp_le64(e + 8), size = mp_le64(e + 16);

		if (id == 0 || id >= SEC__COUNT)
			continue;	/* unknown: skipped */
		if (f->sec[id])
			return mp_fail(err, MP_E_CORRUPT,
				       "section %s appears twice",
				       idx_section_names[id]);
		if (off % 8 || off < HEADER_SIZE + (uint64_t)n * SECTION_ENTRY_SIZE ||
		    !mp_in_bounds(off, size, f->size))
			return mp_fail(err, MP_E_CORRUPT,
				       "section %s (offset 0x%" PRIx64 ", size %"
				       PRIu64 ") is misaligned or outside the "
				       "file (%zu bytes)", idx_section_names[id],
				       off, size, f->size);
		f->sec[id] = d + off;
		f->sec_size[id] = (size_t)size;
		spans[nspans++] = (struct span){ off, size, (int)id };
	}
	for (int id = 1; id < SEC__COUNT; id++)
		if (!f->sec[id])
			return mp_fail(err, MP_E_CORRUPT, "section %s is missing",
				       idx_section_names[id]);
	qsort(spans, (size_t)nspans, sizeof(spans[0]), by_offset);
	for (int i = 1; i < nspans; i++)
		if (spans[i - 1].off + spans[i - 1].size > spans[i].off)
			return mp_fail(err, MP_E_CORRUPT,
				       "sections %s and %s overlap",
				       idx_section_names[spans[i - 1].id],
				       idx_section_names[spans[i].id]);
	return MP_OK;
}

/* Check a table of COUNT entries of ENTRY bytes after HDR header bytes. */
static enum mp_errcode table_fits(const struct idx_file *f, int id, size_t hdr,
				  size_t entry, uint32_t *count,
				  struct mp_err *err)
{
	if (f->sec_size[id] < hdr)
		return mp_fail(err, MP_E_CORRUPT,
			       "section %s is %zu bytes, too small for its "
			       "count", idx_section_names[id], f->sec_size[id]);
	*count = mp_le32(f->sec[id]);
	if ((uint64_t)*count * entry > f->sec_size[id] - hdr)
		return mp_fail(err, MP_E_CORRUPT,
			       "section %s claims %" PRIu32 " entries of %zu "
			       "bytes but holds %zu bytes", idx_section_names[id],
			       *count, entry, f->sec_size[id] - hdr);
	return MP_OK;
}

/*
 * The stack-entry table: column widths, then fixed-size entries, strictly
 * increasing (which also bounds the count of a table of width 0 to one).
 */
static enum mp_errcode check_frames(struct idx_file *f, struct mp_err *err)
{
	const unsigned char *p = f->sec[SEC_FRAMES];
	size_t size = f->sec_size[SEC_FRAMES];

	if (size < FRAMES_HEADER)
		return mp_fail(err, MP_E_CORRUPT,
			       "section frames is %zu bytes, too small for its "
			       "header", size);
	f->nframes = mp_le32(p);
	f->frame_size = 0;
	for (int c = 0; c < FRAME_COLUMNS; c++) {
		if (p[4 + c] > 4)
			return mp_fail(err, MP_E_CORRUPT,
				       "stack-entry column %d has width %u (at "
				       "most 4)", c, p[4 + c]);
		f->frame_width[c] = p[4 + c];
		f->frame_col[c] = (uint8_t)f->frame_size;
		f->frame_size += p[4 + c];
	}
	if ((uint64_t)f->nframes * f->frame_size > size - FRAMES_HEADER)
		return mp_fail(err, MP_E_CORRUPT,
			       "section frames claims %" PRIu32 " entries of %"
			       PRIu32 " bytes but holds %zu bytes", f->nframes,
			       f->frame_size, size - FRAMES_HEADER);
	for (uint32_t i = 0; i < f->nframes; i++) {
		uint32_t flags = frame_get(f, i, 5), path1 = frame_get(f, i, 1);
		int c = 0;

		if (!string_ok(f, frame_get(f, i, 0)))
			return mp_fail(err, MP_E_CORRUPT,
				       "stack entry %" PRIu32 " names string id %"
				       PRIu32 ", which is not a string", i,
				       frame_get(f, i, 0));
		if (path1 > f->npaths ||
		    ((flags & IDX_FRAME_UNSYMBOLIZED) && path1))
			return mp_fail(err, MP_E_CORRUPT,
				       "stack entry %" PRIu32 " has file node %"
				       PRIu32 " (of %" PRIu32 ")", i, path1,
				       f->npaths);
		if (flags & ~(IDX_FRAME_INLINED | IDX_FRAME_UNSYMBOLIZED))
			return mp_fail(err, MP_E_CORRUPT,
				       "stack entry %" PRIu32 " has unknown "
				       "flags 0x%" PRIx32, i, flags);
		if (i == 0)
			continue;
		while (c < FRAME_COLUMNS &&
		       frame_get(f, i, c) == frame_get(f, i - 1, c))
			c++;
		if (c == FRAME_COLUMNS ||
		    frame_get(f, i, c) < frame_get(f, i - 1, c))
			return mp_fail(err, MP_E_CORRUPT,
				       "stack entry %" PRIu32 " does not sort "
				       "after stack entry %" PRIu32 " (entries "
				       "are sorted and distinct)", i, i - 1);
	}
	return MP_OK;
}

/*
 * The call-stack trie, in one pass in order: each node's varints, its
 * frame, and its parent, which must start an earlier node.  *STARTS gets
 * a bitmap of node starts (bit i: a node begins at offset i), for the
 * records' stack ids; the caller frees it, also on failure.
 */
static enum mp_errcode check_trie(struct idx_file *f, uint8_t **starts,
				  struct mp_err *err)
{
	const unsigned char *base = f->sec[SEC_TRIE], *p, *end;
	size_t size = f->sec_size[SEC_TRIE];
	uint32_t n = 0;

	if (size < TRIE_HEADER)
		return mp_fail(err, MP_E_CORRUPT,
			       "section trie is %zu bytes, too small for its "
			       "count", size);
	/* A stack id plus one (idx_node_parent1()) must fit 32 bits. */
	if (size >= UINT32_MAX - 1)
		return mp_fail(err, MP_E_CORRUPT,
			       "section trie is %zu bytes, too large for 32-bit "
			       "stack ids", size);
	f->ntrie = mp_le32(base);
	f->trie_size = (uint32_t)size;
	*starts = calloc(size / 8 + 1, 1);
	if (!*starts)
		return mp_fail(err, MP_E_NOMEM, NULL);
	end = base + size;
	for (p = base + TRIE_HEADER; p < end; n++) {
		uint32_t off = (uint32_t)(p - base);
		uint64_t frame, up;

		if (!get_varint(&p, end, &frame) || !get_varint(&p, end, &up))
			return mp_fail(err, MP_E_CORRUPT,
				       "trie node at offset %" PRIu32 " is malformed "
				       "or runs past the section", off);
		if (frame >= f->nframes)
			return mp_fail(err, MP_E_CORRUPT,
				       "trie node at offset %" PRIu32 " names stack "
				       "entry %" PRIu64 " of %" PRIu32, off, frame,
				       f->nframes);
		if (up && (up > off - TRIE_HEADER || !is_node(*starts, off - up)))
			return mp_fail(err, MP_E_CORRUPT,
				       "trie node at offset %" PRIu32 " has its "
				       "parent %" PRIu64 " bytes back, not at an "
				       "earlier node", off, up);
		(*starts)[off / 8] |= (uint8_t)(1u << (off % 8));
	}
	if (n != f->ntrie)
		return mp_fail(err, MP_E_CORRUPT,
			       "trie holds %" PRIu32 " nodes, its count says %"
			       PRIu32, n, f->ntrie);
	return MP_OK;
}

static enum mp_errcode check_tables(struct idx_file *f, uint8_t **starts,
				    struct mp_err *err)
{
	uint32_t n;
	enum mp_errcode rc;

	if (f->sec_size[SEC_STRINGS] == 0 ||
	    f->sec[SEC_STRINGS][f->sec_size[SEC_STRINGS] - 1] != 0)
		return mp_fail(err, MP_E_CORRUPT,
			       "string table does not end with a NUL byte");
	if ((rc = table_fits(f, SEC_SUMMARY, 8, 16, &n, err)))
		return rc;

	if ((rc = table_fits(f, SEC_PATHS, 4, PATH_NODE_SIZE, &f->npaths, err)))
		return rc;
	for (uint32_t i = 0; i < f->npaths; i++) {
		const unsigned char *p = path_ptr(f, i);

		if (!string_ok(f, mp_le32(p)))
			return mp_fail(err, MP_E_CORRUPT,
				       "path node %" PRIu32 " names string id %"
				       PRIu32 ", which is not a string", i,
				       mp_le32(p));
		if (mp_le32(p + 4) > i)
			return mp_fail(err, MP_E_CORRUPT,
				       "path node %" PRIu32 " has parent %" PRIu32
				       ", not an earlier node", i, mp_le32(p + 4) - 1);
	}

	if ((rc = check_frames(f, err)) || (rc = check_trie(f, starts, err)))
		return rc;

	if ((rc = table_fits(f, SEC_SCHEMA, 4, 2, &f->nschema, err)))
		return rc;
	if (f->nschema > 64)
		return mp_fail(err, MP_E_CORRUPT,
			       "MIB schema has %" PRIu32 " fields (at most 64)",
			       f->nschema);
	for (uint32_t i = 0; i < f->nschema; i++) {
		const unsigned char *p = f->sec[SEC_SCHEMA] + 4 + 2 * (size_t)i;

		f->schema_tag[i] = p[0];
		f->schema_type[i] = p[1];
		if (p[1] != TYPE_VARINT && p[1] != TYPE_VARINT_ARRAY)
			return mp_fail(err, MP_E_CORRUPT,
				       "MIB schema field %" PRIu32 " (tag %u) has "
				       "unknown type %u", i, p[0], p[1]);
		for (uint32_t k = 0; k < i; k++)
			if (f->schema_tag[k] == p[0])
				return mp_fail(err, MP_E_CORRUPT,
					       "MIB schema lists tag %u twice", p[0]);
	}
	return MP_OK;
}

/* Scratch space for one histogram while a record is decoded. */
struct hist_buf {
	uint64_t *v;
	size_t alloc;
};

/*
 * Decode the record of ITEM: check it when FN is NULL (ERR set on the
 * first problem; STARTS is the bitmap of trie node starts), else call FN
 * on each context.  Returns MP_OK, an error code, or FN's non-zero result.
 *
 * A MIB stores only the fields its mask names; the others keep the value
 * they had in the MIB before (0 or empty in the first), which is why C,
 * and the histogram in HB, carry over from one context to the next.
 */
static int walk_record(const struct idx_file *f, const struct ht_disk_item *it,
		       idx_context_fn fn, void *arg, struct hist_buf *hb,
		       const uint8_t *starts, struct mp_err *err)
{
	const unsigned char *p, *end;
	uint64_t n, id = 0;
	struct idx_context c;

	if (!mp_in_bounds(it->record_offset, it->record_size,
			  f->sec_size[SEC_RECORDS]))
		return mp_fail(err, MP_E_CORRUPT,
			       "record of '%s' (offset %" PRIu32 ", size %" PRIu32
			       ") lies outside the records section",
			       string_at(f, it->name), it->record_offset,
			       it->record_size);
	p = f->sec[SEC_RECORDS] + it->record_offset;
	end = p + it->record_size;
	if (!get_varint(&p, end, &n) || n != it->contexts)
		return mp_fail(err, MP_E_CORRUPT,
			       "record of '%s' does not hold the %" PRIu32
			       " contexts its hash-table item says",
			       string_at(f, it->name), it->contexts);
	memset(&c, 0, sizeof(c));
	c.function = string_at(f, it->name);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t step, mask;

		/* Stack ids increase: each after the first is a step >= 1. */
		if (!get_varint(&p, end, &step) || (k && step == 0) ||
		    step >= f->trie_size - id)
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s': context %" PRIu64 " has a "
				       "bad or unsorted stack id", c.function, k);
		id += step;
		c.stack_id = (uint32_t)id;
		if (starts && !is_node(starts, id))
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s': context %" PRIu64 " has "
				       "stack id %" PRIu64 ", which is not a trie "
				       "node", c.function, k, id);
		if (!get_varint(&p, end, &mask))
			goto bad_field;
		if (f->nschema < 64 && mask >> f->nschema)
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s': context %" PRIu64 " stores "
				       "fields the schema does not have (mask 0x%"
				       PRIx64 ", %" PRIu32 " fields)", c.function,
				       k, mask, f->nschema);
		for (uint32_t s = 0; s < f->nschema; s++) {
			uint8_t tag = f->schema_tag[s];
			uint64_t v, len;

			if (!(mask >> s & 1))
				continue;
			if (f->schema_type[s] == TYPE_VARINT) {
				if (!get_varint(&p, end, &v))
					goto bad_field;
				if (tag >= 1 && tag <= MIB__COUNT)
					c.mib.v[tag - 1] = v;
				continue;
			}
			if (!get_varint(&p, end, &len) || len > (uint64_t)(end - p))
				goto bad_field;
			if (tag == TAG_HISTOGRAM && fn &&
			    !MP_GROW(hb->v, hb->alloc, (size_t)len + 1))
				return -1;
			for (uint64_t i = 0; i < len; i++) {
				if (!get_varint(&p, end, &v))
					goto bad_field;
				if (tag == TAG_HISTOGRAM && fn)
					hb->v[i] = v;
			}
			if (tag == TAG_HISTOGRAM) {
				if (len > UINT32_MAX)
					goto bad_field;
				c.nhist = (uint32_t)len;
			}
		}
		if (!fn) {
			/* The context belongs to its leaf frame's function. */
			uint32_t fr, parent1;

			node_at(f, c.stack_id, &fr, &parent1);
			if (frame_get(f, fr, 0) != it->name)
				return mp_fail(err, MP_E_CORRUPT,
					       "record of '%s' holds stack %" PRIu32
					       ", whose leaf is another function",
					       c.function, c.stack_id);
			continue;
		}
		c.hist = hb->v;
		{
			int r = fn(arg, f, &c);

			if (r)
				return r;
		}
	}
	if (p != end)
		return mp_fail(err, MP_E_CORRUPT,
			       "record of '%s' has %zu bytes after its last context",
			       c.function, (size_t)(end - p));
	return MP_OK;
bad_field:
	return mp_fail(err, MP_E_CORRUPT,
		       "record of '%s': a MIB field is malformed or runs past "
		       "the record", c.function);
}

/* The items of the hash table, in chain order, into *OUT (malloc'ed). */
static bool collect_items(const struct idx_file *f, struct ht_disk_item **out)
{
	struct ht_disk_item *items = malloc(((size_t)f->hash.nentries + 1) *
					    sizeof(*items));
	size_t k = 0;

	if (!items)
		return false;
	for (uint32_t b = 0; b < f->hash.nbuckets; b++) {
		uint32_t off = mp_le32(f->hash.base + 8 + (size_t)b * 4), count;

		if (!off)
			continue;
		count = mp_le32(f->hash.base + off);
		for (uint32_t i = 0; i < count; i++)
			ht_disk_item_at(&f->hash, f->hash.base + off + 4 +
					(size_t)i * HT_DISK_ITEM_SIZE, &items[k++]);
	}
	*out = items;
	return true;
}

/* Hash table items by their function's name; ARG is the file. */
static int by_item_name(const void *x, const void *y, void *arg)
{
	const struct ht_disk_item *a = x, *b = y;
	const struct idx_file *f = arg;

	return strcmp(string_at(f, a->name), string_at(f, b->name));
}

static int by_record(const void *x, const void *y)
{
	const struct ht_disk_item *a = x, *b = y;

	return a->record_offset < b->record_offset ? -1
	       : a->record_offset > b->record_offset;
}

/*
 * Records must not overlap and a function has one: otherwise a small file
 * could list one big record many times over.
 */
static enum mp_errcode check_items(const struct idx_file *f,
				   struct ht_disk_item *items, struct mp_err *err)
{
	uint32_t n = f->hash.nentries;

	qsort(items, n, sizeof(*items), by_record);
	for (uint32_t i = 1; i < n; i++)
		if ((uint64_t)items[i - 1].record_offset + items[i - 1].record_size >
		    items[i].record_offset)
			return mp_fail(err, MP_E_CORRUPT,
				       "records of '%s' and '%s' overlap (offsets %"
				       PRIu32 " and %" PRIu32 ")",
				       string_at(f, items[i - 1].name),
				       string_at(f, items[i].name),
				       items[i - 1].record_offset,
				       items[i].record_offset);
	qsort_r(items, n, sizeof(*items), by_item_name, (void *)f);
	for (uint32_t i = 1; i < n; i++)
		if (strcmp(string_at(f, items[i - 1].name),
			   string_at(f, items[i].name)) == 0)
			return mp_fail(err, MP_E_CORRUPT,
				       "function '%s' has two records",
				       string_at(f, items[i].name));
	return MP_OK;
}

enum mp_errcode idx_open(struct idx_file *f, const void *data, size_t size,
			 struct mp_err *err)
{
	const unsigned char *d = data;
	struct ht_disk_item *items = NULL;
	uint8_t *starts = NULL;		/* trie node starts, while checking */
	uint64_t version, hash_type, file_size, contexts = 0;
	enum mp_errcode rc;

	memset(f, 0, sizeof(*f));
	f->data = d;
	f->size = size;
	if (!idx_is_indexed(data, size))
		return mp_fail(err, MP_E_BAD_MAGIC, "not an indexed profile");
	if (size < HEADER_SIZE)
		return mp_fail(err, MP_E_TRUNCATED,
			       "header is truncated (%zu of %d bytes)", size,
			       HEADER_SIZE);
	version = mp_le32(d + 8);
	hash_type = mp_le32(d + 12);
	file_size = mp_le64(d + 16);
	if (version != IDX_VERSION)
		return mp_fail(err, MP_E_BAD_VERSION,
			       "unsupported indexed profile version %" PRIu64
			       " (supported: %d)", version, IDX_VERSION);
	if (hash_type != HASH_TYPE_FNV1A)
		return mp_fail(err, MP_E_BAD_VERSION,
			       "unsupported hash type %" PRIu64, hash_type);
	if (file_size != size)
		return mp_fail(err, file_size > size ? MP_E_TRUNCATED : MP_E_CORRUPT,
			       "header says the file has %" PRIu64 " bytes, "
			       "it has %zu", file_size, size);
	f->ncontexts = mp_le64(d + 32);
	f->nfunctions = mp_le64(d + 40);
	f->ninputs = mp_le64(d + 48);
	if ((rc = open_sections(f, err)) ||
	    (rc = check_tables(f, &starts, err)))
		goto out;
	rc = ht_disk_open(&f->hash, f->sec[SEC_HASH], f->sec_size[SEC_HASH],
			  name_ok, f, err);
	if (rc)
		goto out;
	if (f->hash.nentries != f->nfunctions) {
		rc = mp_fail(err, MP_E_CORRUPT,
			     "header says %" PRIu64 " functions, the hash "
			     "table holds %" PRIu32, f->nfunctions,
			     f->hash.nentries);
		goto out;
	}
	if (!collect_items(f, &items)) {
		rc = mp_fail(err, MP_E_NOMEM, NULL);
		goto out;
	}
	if ((rc = check_items(f, items, err)))
		goto out;
	for (uint32_t i = 0; i < f->hash.nentries; i++) {
		int r = walk_record(f, &items[i], NULL, NULL, NULL, starts, err);

		if (r) {
			rc = (enum mp_errcode)r;
			goto out;
		}
		contexts += items[i].contexts;
	}
	if (contexts != f->ncontexts)
		rc = mp_fail(err, MP_E_CORRUPT,
			     "header says %" PRIu64 " contexts, the records "
			     "hold %" PRIu64, f->ncontexts, contexts);
out:
	free(items);
	free(starts);
	return rc;
}

int idx_foreach_context(const struct idx_file *f, idx_context_fn fn, void *arg)
{
	struct ht_disk_item *items;
	struct hist_buf hb = { 0 };
	int r = 0;

	if (!collect_items(f, &items))
		return -1;
	qsort_r(items, f->hash.nentries, sizeof(*items), by_item_name,
		(void *)f);
	for (uint32_t i = 0; i < f->hash.nentries && !r; i++)
		r = walk_record(f, &items[i], fn, arg, &hb, NULL, NULL);
	free(items);
	free(hb.v);
	return r;
}

struct name_key {
	const struct idx_file *f;
	const char *name;
};

static bool same_name(uint32_t name, const void *ctx)
{
	const struct name_key *k = ctx;

	return strcmp(string_at(k->f, name), k->name) == 0;
}

int idx_find_function(const struct idx_file *f, const char *name,
		      idx_context_fn fn, void *arg)
{
	struct name_key key = { f, name };
	struct ht_disk_item it;
	struct hist_buf hb = { 0 };
	int r;

	if (!ht_disk_find(&f->hash, ht_disk_hash(name, strlen(name)), same_name,
			  &key, &it))
		return -2;
	r = walk_record(f, &it, fn, arg, &hb, NULL, NULL);
	free(hb.v);
	return r;
}

uint32_t idx_node_parent1(const struct idx_file *f, uint32_t node)
{
	uint32_t frame, parent1;

	node_at(f, node, &frame, &parent1);
	return parent1;
}

uint32_t idx_stack_depth(const struct idx_file *f, uint32_t stack_id)
{
	uint32_t depth = 0, node1 = stack_id + 1, frame;

	/* Parents lie at smaller offsets (checked), so this ends. */
	while (node1) {
		depth++;
		node_at(f, node1 - 1, &frame, &node1);
	}
	return depth;
}

/*
 * Join the components of path node NODE into BUF with '/' between them:
 * an absolute path's root component is "", so it comes out with its
 * leading '/'.
 */
static void path_string(const struct idx_file *f, uint32_t node, char *buf,
			size_t size)
{
	uint32_t comp[256];
	size_t n = 0, len = 0;
	bool first = true;

	for (uint32_t p1 = node + 1; p1 && n < 256; n++) {
		comp[n] = mp_le32(path_ptr(f, p1 - 1));
		p1 = mp_le32(path_ptr(f, p1 - 1) + 4);
	}
	buf[0] = '\0';
	while (n-- > 0) {
		int w = snprintf(buf + len, size - len, "%s%s", first ? "" : "/",
				 string_at(f, comp[n]));

		first = false;
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
	}
}

void idx_stack_frame(const struct idx_file *f, uint32_t stack_id, uint32_t k,
		     struct idx_frame *out, char *pathbuf, size_t size)
{
	uint32_t node = stack_id, fr, parent1, path1;

	node_at(f, node, &fr, &parent1);
	while (k-- > 0 && parent1) {
		node = parent1 - 1;
		node_at(f, node, &fr, &parent1);
	}
	memset(out, 0, sizeof(*out));
	/* An empty table (no stack can then be asked for) has no entry 0. */
	if (fr >= f->nframes) {
		out->function = "";
		return;
	}
	out->function = string_at(f, frame_get(f, fr, 0));
	out->flags = frame_get(f, fr, 5);
	path1 = frame_get(f, fr, 1);
	if (out->flags & IDX_FRAME_UNSYMBOLIZED) {
		out->offset = frame_get(f, fr, 2) |
			      (uint64_t)frame_get(f, fr, 3) << 32;
		return;
	}
	out->line = frame_get(f, fr, 2);
	out->column = frame_get(f, fr, 3);
	out->discriminator = frame_get(f, fr, 4);
	if (path1 && size) {
		path_string(f, path1 - 1, pathbuf, size);
		out->file = pathbuf;
	}
}

void idx_file_stats(const struct idx_file *f, struct idx_file_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->size = f->size;
	for (int s = 1; s < SEC__COUNT; s++)
		out->section_size[s] = f->sec_size[s];
	for (size_t i = 0; i < f->sec_size[SEC_STRINGS]; i++)
		out->strings += f->sec[SEC_STRINGS][i] == 0;
	out->paths = f->npaths;
	out->frames = f->nframes;
	out->trie_nodes = f->ntrie;
	out->contexts = f->ncontexts;
	out->functions = f->nfunctions;
	out->buckets = f->hash.nbuckets;
	out->inputs = f->ninputs;
}
