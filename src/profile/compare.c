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

/* The MIB of a side an entry is absent from. */
static const struct mp_mib no_mib;

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
 * Match keys, hash-consed.  A frame's key is a few 32-bit words of string
 * ids and numbers, as the match mode says (frame_words), numbered once
 * per distinct frame key.  A stack's key is built from its outermost
 * frame down to its leaf: the empty stack's is 0, and frames k..n-1 have
 * the number of the pair (key of frames k+1..n-1, frame key of k), each
 * distinct pair numbered once (prefix_key).  Equal stacks, on either
 * side, raw or indexed, then have equal keys, and a context's key is one
 * 32-bit id, whatever its depth and its names' lengths.
 *
 * An indexed file's call-stack trie shares its prefixes the same way: a
 * trie node's key is computed once (struct trie_memo), from its parent's
 * and its own frame's, so matching an indexed input costs its trie nodes,
 * not the sum of its stacks' depths (a trie of N nodes can describe N^2/2
 * frames), and no stack is expanded.  Only the contexts printed are
 * (cmp_entry_view).
 */
struct cmp_fkey {
	uint32_t n;
	uint32_t w[7];
};

/*
 * The words of frame F.  Its strings must be in memory that outlives the
 * comparison (a view's), but for the file path when FILE_TEMP: that is
 * hashed by its bytes and copied once.  False when out of memory.
 */
static bool frame_words(struct cmp *c, const struct mp_frame *f,
			enum cmp_match m, bool file_temp, struct cmp_fkey *k)
{
	k->n = 0;
	if (!mp_frame_symbolized(f)) {
		/* Unsymbolized: its module and offset, or its address. */
		char bid[2 * 255 + 1];
		uint64_t at = f->build_id_size || !(f->flags & MP_FRAME_ADDRESS)
			? f->offset : f->address;

		k->w[k->n++] = 1;
		k->w[k->n++] = str_id_copy(c, mp_frame_build_id_hex(f, bid,
								      sizeof(bid)));
		k->w[k->n++] = (uint32_t)at;
		k->w[k->n++] = (uint32_t)(at >> 32);
	} else {
		const char *file = f->file ? f->file : "";
		char mapped[IDX_PATH_MAX];

		k->w[k->n++] = 2;
		k->w[k->n++] = str_id(c, f->function ? f->function : "");
		if (m != CMP_MATCH_FUNCTION) {
			/* A mapped path is in MAPPED: copied, as a temporary.
			 * One too long to map (past any path a file holds)
			 * is matched as it is. */
			if (c->paths && f->file) {
				const char *p = mp_prefix_map_apply(c->paths, file,
								    mapped,
								    sizeof(mapped));

				if (p != file)
					file_temp = true;
				file = p ? p : file;
			}
			k->w[k->n++] = file_temp ? str_id_copy(c, file)
						 : str_id(c, file);
			k->w[k->n++] = f->line;
			k->w[k->n++] = m == CMP_MATCH_COLUMN ? f->column : 0;
			k->w[k->n++] = f->discriminator;
			k->w[k->n++] = mp_frame_inlined(f);
		}
	}
	return !c->nomem;
}

static bool fkey_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct cmp_fkey *k = key;
	const struct cmp *c = ctx;

	return c->fkeys[id].n == k->n &&
	       memcmp(c->fkeys[id].w, k->w, k->n * sizeof(*k->w)) == 0;
}

/* Frame F's key number, from 1; 0 when out of memory. */
static uint32_t frame_key(struct cmp *c, const struct mp_frame *f,
			  enum cmp_match m, bool file_temp)
{
	struct cmp_fkey k;
	uint64_t h;
	uint32_t id;

	if (!frame_words(c, f, m, file_temp, &k))
		return 0;
	h = mp_hash_bytes(k.w, k.n * sizeof(*k.w), 3);
	id = ht_find(&c->fkey_ht, h, fkey_eq, &k, c);
	if (id != HT_NONE)
		return id + 1;
	if (c->nfkeys >= UINT32_MAX - 2 ||
	    !MP_GROW(c->fkeys, c->afkeys, c->nfkeys + 1) ||
	    ht_insert(&c->fkey_ht, h, (uint32_t)c->nfkeys))
		return 0;
	c->fkeys[c->nfkeys] = k;
	return (uint32_t)++c->nfkeys;
}

/* The key of the stack PARENT with the frame of key FK under it, from
 * 1; 0 when out of memory. */
static uint32_t prefix_key(struct cmp *c, uint32_t parent, uint32_t fk)
{
	uint32_t *slot;
	bool added;

	slot = ht_map_find_or_add(&c->prefix_map, ht_pair_key(parent, fk), &added);
	if (!slot || (added && c->nprefixes >= UINT32_MAX - 2))
		return 0;
	if (added)
		*slot = (uint32_t)++c->nprefixes;
	return *slot;
}

/*
 * Is F no part of a stack's key?  A class frame (merge --keep-types) is
 * no frame of the stack, and a frame of a file found by build id none
 * against an LLVM side, which keeps no such frame (skip_found).
 */
static bool unkeyed(const struct cmp *c, const struct mp_frame *f)
{
	return (c->skip_found && (f->flags & MP_FRAME_FOUND)) ||
	       mp_frame_class(f) >= 0;
}

/* The key of a stack given as its N FRAMES (raw, LLVM, or expanded),
 * into *KEY.  False when out of memory. */
static bool frames_key(struct cmp *c, const struct mp_frame *frames,
		       uint32_t n, enum cmp_match m, uint32_t *key)
{
	uint32_t k = 0;

	for (uint32_t i = n; i-- > 0;) {
		uint32_t fk;

		if (unkeyed(c, &frames[i]))
			continue;
		fk = frame_key(c, &frames[i], m, false);
		if (!fk || !(k = prefix_key(c, k, fk)))
			return false;
	}
	*key = k;
	return true;
}

/*
 * What the keys of one indexed file's contexts need, each computed once:
 * per trie node its key and the nearest node at or above it whose frame
 * the view's rules keep (view_frame_hidden: the leading hidden frames of
 * a context are not part of it), per stack entry its frame key and
 * whether it is hidden.  A node is two varints, two bytes at least, so
 * half its offset tells it from every other (memo_of): 4 bytes per byte
 * of the trie, and 4 per stack entry.
 */
struct trie_memo {
	const struct idx_file *f;
	uint32_t (*node)[2];	/* key (0: not yet), kept node + 1 (0: none) */
	uint32_t *entry;	/* frame key | TRIE_HIDDEN (0: not yet) */
	uint32_t *walk;		/* nodes on the way up, not yet known */
	size_t awalk;
};

#define TRIE_HIDDEN 0x80000000u
#define TRIE_SKIPPED 0xffffffffu	/* no part of the key (unkeyed()) */

/* The memo of the trie node at offset NODE. */
static uint32_t *memo_of(const struct trie_memo *t, uint32_t node)
{
	return t->node[node / 2];
}

static void trie_memo_release(struct trie_memo *t)
{
	free(t->node);
	free(t->entry);
	free(t->walk);
	memset(t, 0, sizeof(*t));
}

static enum mp_errcode trie_memo_reset(struct trie_memo *t,
				       const struct idx_file *f)
{
	trie_memo_release(t);
	t->f = f;
	t->node = mp_calloc_big(f->trie_size / 2 + 1, sizeof(*t->node));
	t->entry = calloc(f->nframes ? f->nframes : 1, sizeof(*t->entry));
	return t->node && t->entry ? MP_OK : MP_E_NOMEM;
}

/* The frame key of trie node NODE, with TRIE_HIDDEN, or TRIE_SKIPPED; 0
 * when out of memory. */
static uint32_t node_frame_key(struct cmp *c, struct trie_memo *t,
			       const struct view *v, uint32_t node,
			       enum cmp_match m)
{
	uint32_t e = idx_node_entry(t->f, node), fk;
	struct idx_frame_buf buf;
	struct mp_frame fr;

	if (e < t->f->nframes && t->entry[e])
		return t->entry[e];
	idx_stack_frame(t->f, node, 0, &fr, &buf);
	if (unkeyed(c, &fr)) {
		fk = TRIE_SKIPPED;
	} else {
		fk = frame_key(c, &fr, m, true);
		if (!fk || fk >= TRIE_HIDDEN)
			return 0;
		if (view_frame_hidden(v, &fr))
			fk |= TRIE_HIDDEN;
	}
	if (e < t->f->nframes)
		t->entry[e] = fk;
	return fk;
}

/*
 * The key of the context at trie node LEAF, the view's rules applied,
 * into *KEY, and the node of its first frame kept into *FIRST.  Walks up
 * only as far as the first node already known.
 */
static enum mp_errcode trie_key(struct cmp *c, struct trie_memo *t,
				const struct view *v, uint32_t leaf,
				enum cmp_match m, uint32_t *key, uint32_t *first)
{
	uint32_t n = leaf, up = 0, kept1 = 0;
	size_t depth = 0;

	/* Stack ids and parents were checked by idx_open(). */
	if (leaf >= t->f->trie_size)
		return MP_E_CORRUPT;
	for (;;) {
		uint32_t p1;

		if (memo_of(t, n)[0]) {
			up = memo_of(t, n)[0];
			kept1 = memo_of(t, n)[1];
			break;
		}
		if (!MP_GROW(t->walk, t->awalk, depth + 1))
			return MP_E_NOMEM;
		t->walk[depth++] = n;
		p1 = idx_node_parent1(t->f, n);
		if (!p1 || p1 - 1 >= n)
			break;
		n = p1 - 1;
	}
	while (depth-- > 0) {
		uint32_t fk;

		n = t->walk[depth];
		fk = node_frame_key(c, t, v, n, m);
		if (!fk)
			return MP_E_NOMEM;
		if (fk != TRIE_SKIPPED) {
			if (!(up = prefix_key(c, up, fk & ~TRIE_HIDDEN)))
				return MP_E_NOMEM;
			if (!(fk & TRIE_HIDDEN))
				kept1 = n + 1;
		}
		memo_of(t, n)[0] = up;
		memo_of(t, n)[1] = kept1;
	}
	/* A context made only of hidden frames is kept whole. */
	*first = memo_of(t, leaf)[1] ? memo_of(t, leaf)[1] - 1 : leaf;
	*key = memo_of(t, *first)[0];
	return MP_OK;
}

/*
 * The function a context belongs to: its leaf frame's (F, NULL for an
 * empty stack); for an unsymbolized leaf, its module's build id in hex,
 * or "?".  As a string id (0 or UINT32_MAX when out of memory).
 */
static uint32_t leaf_function(struct cmp *c, const struct mp_frame *f)
{
	char bid[2 * 255 + 1];

	if (!f)
		return str_id(c, "");
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
	if (ns)
		c->sampled = true;
	return mp_samp_fold_arena(&c->arena, l, n, s, ns, 1);
}

/*
 * How add_side() reads a side's contexts: an indexed one through the
 * memo of its file's trie, any other as frames (an LLVM or raw one read
 * again into SCRATCH: FRAMES, N; ERR says why not).
 */
struct side_walk {
	struct view *v;
	struct trie_memo t;
	struct view_scratch scratch;
	const struct mp_frame *frames;
	uint32_t n;
	struct mp_err err;
};

/*
 * Context VC's key into *KEY; for an indexed context, the trie node of
 * its first frame kept into *FIRST.
 */
static enum mp_errcode context_key(struct cmp *c, struct side_walk *w,
				   const struct view_context *vc,
				   enum cmp_match m, uint32_t *key, uint32_t *first)
{
	const uint32_t *entries;
	enum mp_errcode rc;

	if (!vc->idx) {
		if ((rc = view_frames_scratch(w->v, vc, &w->scratch, &w->frames,
					      &entries, &w->n, &w->err)))
			return rc;
		return frames_key(c, w->frames, w->n, m, key) ? MP_OK
							      : MP_E_NOMEM;
	}
	if (w->t.f != vc->idx && (rc = trie_memo_reset(&w->t, vc->idx)))
		return rc;
	return trie_key(c, &w->t, w->v, (uint32_t)vc->id, m, key, first);
}

/* The string id of VC's function (leaf_function), W and FIRST as
 * context_key() left them for VC. */
static uint32_t context_function(struct cmp *c, const struct side_walk *w,
				 const struct view_context *vc, uint32_t first)
{
	struct idx_frame_buf buf;
	struct mp_frame fr;

	if (!vc->idx) {
		uint32_t i = 0;

		while (i < w->n && unkeyed(c, &w->frames[i]))
			i++;
		return leaf_function(c, i < w->n ? &w->frames[i] : NULL);
	}
	idx_stack_frame(vc->idx, first, 0, &fr, &buf);
	return leaf_function(c, &fr);
}

static enum mp_errcode add_side(struct cmp *c, struct view *v, int side,
				enum cmp_match m, struct mp_err *err)
{
	struct side_walk w = { .v = v };
	enum mp_errcode rc = MP_OK;

	for (size_t i = 0; i < v->ncontexts && !rc; i++) {
		struct view_context *vc = &v->contexts[i];
		struct cmp_entry *e;
		uint32_t key, first = 0, *slot;
		bool added;

		for (int f = 0; f < MIB__COUNT; f++)
			c->total[side][f] = sat_add(c->total[side][f],
						    vc->mib.v[f]);
		if ((rc = context_key(c, &w, vc, m, &key, &first)))
			break;
		/* Keys are numbered from 0 densely: an array maps them. */
		if (key >= c->nkey_entry) {
			size_t n = c->nkey_entry;

			if (!MP_GROW(c->key_entry, c->akey_entry,
				     (size_t)c->nprefixes + 1)) {
				rc = MP_E_NOMEM;
				break;
			}
			c->nkey_entry = c->akey_entry;
			memset(c->key_entry + n, 0,
			       (c->nkey_entry - n) * sizeof(*c->key_entry));
		}
		slot = &c->key_entry[key];
		added = *slot == 0;
		if (added) {
			if (c->n >= UINT32_MAX - 1 ||
			    !MP_GROW(c->e, c->alloc, c->n + 1)) {
				rc = MP_E_NOMEM;
				break;
			}
			e = &c->e[c->n++];
			*slot = (uint32_t)c->n;
			memset(e, 0, sizeof(*e));
			e->mib[0] = e->mib[1] = &no_mib;
			e->ctx = vc;
			if ((rc = function_index(c, context_function(c, &w, vc,
									first),
						 &e->function)))
				break;
		}
		e = &c->e[*slot - 1];
		if (!e->present[side]) {
			e->present[side] = true;
			e->mib[side] = &vc->mib;
			c->contexts[side]++;
		} else {
			struct mp_mib *own = (struct mp_mib *)e->mib[side];

			if (!e->folded[side]) {
				own = mp_arena_memdup(&c->arena, e->mib[side],
						      sizeof(*own));
				if (!own) {
					rc = MP_E_NOMEM;
					break;
				}
				e->mib[side] = own;
				e->folded[side] = true;
			}
			mib_fold(own, &vc->mib);
		}
		if (!fold_samples(c, &e->samp[side], &e->nsamp[side], vc->samp,
				  vc->nsamp) ||
		    !fold_samples(c, &c->tsamp[side], &c->ntsamp[side], vc->samp,
				  vc->nsamp))
			rc = MP_E_NOMEM;
	}
	trie_memo_release(&w.t);
	view_scratch_release(&w.scratch);
	if (rc && w.err.code == rc)
		*err = w.err;
	else if (rc)
		mp_fail(err, rc, NULL);
	return rc;
}

/*
 * Index the entries by function (a counting sort): a function's totals
 * and overlap then cost its own entries, not a pass over all of them.
 */
static enum mp_errcode group_by_function(struct cmp *c)
{
	size_t nf = c->nfunctions;

	c->fn_start = calloc(nf + 1, sizeof(*c->fn_start));
	c->by_fn = mp_alloc_big((c->n ? c->n : 1) * sizeof(*c->by_fn));
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

/* The nodes of V's indexed inputs' tries: about as many stack keys. */
static size_t trie_nodes(const struct view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->ninputs; i++)
		if (v->inputs[i].idx)
			n += v->inputs[i].idx->ntrie;
	return n;
}

enum mp_errcode cmp_build(struct cmp *c, struct view *base, struct view *test,
			  enum cmp_match m, const struct mp_prefix_map *paths,
			  struct mp_err *err)
{
	enum mp_errcode rc;

	memset(c, 0, sizeof(*c));
	c->paths = paths && paths->n ? paths : NULL;
	c->views[CMP_BASE] = base;
	c->views[CMP_TEST] = test;
	c->skip_found = base->nllvm || test->nllvm;
	/* Room for every context as an entry: no copy per doubling, and
	 * pages not touched when fewer keys are distinct. */
	if (!MP_GROW(c->e, c->alloc, base->ncontexts + test->ncontexts) ||
	    ht_map_reset(&c->prefix_map, trie_nodes(base) + trie_nodes(test)))
		return mp_fail(err, MP_E_NOMEM, NULL);
	rc = add_side(c, base, CMP_BASE, m, err);
	if (!rc)
		rc = add_side(c, test, CMP_TEST, m, err);
	/* The keys and the pointer cache are done with. */
	free(c->fkeys);
	c->fkeys = NULL;
	c->nfkeys = c->afkeys = 0;
	ht_release(&c->fkey_ht);
	ht_map_release(&c->prefix_map);
	free(c->key_entry);
	c->key_entry = NULL;
	c->nkey_entry = c->akey_entry = 0;
	ht_map_release(&c->str_by_ptr);
	if (rc)
		return rc;	/* ERR set by add_side() */
	if ((rc = group_by_function(c)))
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
	free(c->fkeys);
	free(c->fn_start);
	free(c->by_fn);
	ht_release(&c->fkey_ht);
	ht_map_release(&c->prefix_map);
	free(c->key_entry);
	ht_release(&c->str_ht);
	ht_map_release(&c->str_by_ptr);
	ht_map_release(&c->fn_by_str);
	mp_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------ prefix hint */

/* Bounds on the work, whatever the inputs: contexts and files looked
 * at per side, file pairs weighed, distinct leading parts kept. */
#define HINT_CONTEXTS 256
#define HINT_FILES 4096
#define HINT_PAIRS 65536
#define HINT_VOTES 64

static int by_string(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const char *last_part(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int by_last_part(const void *x, const void *y)
{
	return strcmp(last_part(*(const char *const *)x),
		      last_part(*(const char *const *)y));
}

/*
 * The distinct files of the frames of up to HINT_CONTEXTS entries present
 * on side S alone, sorted, into a malloc'd *OUT (*N of them).
 */
static enum mp_errcode side_files(const struct cmp *c, int s,
				  const char ***out, size_t *n)
{
	struct view_scratch scratch = { 0 };
	const char **files = NULL;
	size_t nfiles = 0, afiles = 0, taken = 0;
	enum mp_errcode rc = MP_OK;

	for (size_t i = 0; i < c->n && taken < HINT_CONTEXTS && !rc; i++) {
		const struct cmp_entry *e = &c->e[i];
		const struct mp_frame *frames;
		const uint32_t *entries;
		struct mp_err err = { 0 };
		uint32_t nf;

		if (!e->present[s] || e->present[!s])
			continue;
		taken++;
		if (view_frames_scratch(c->views[s], e->ctx, &scratch, &frames,
					&entries, &nf, &err))
			continue;	/* a stack not readable: no hint from it */
		for (uint32_t k = 0; k < nf && nfiles < HINT_FILES; k++) {
			const char *f = frames[k].file;

			if (!f || !*f || (nfiles && files[nfiles - 1] == f))
				continue;
			if (!MP_GROW(files, afiles, nfiles + 1)) {
				rc = MP_E_NOMEM;
				break;
			}
			files[nfiles++] = f;
		}
	}
	view_scratch_release(&scratch);
	if (rc) {
		free(files);
		return rc;
	}
	if (nfiles)
		qsort(files, nfiles, sizeof(*files), by_string);
	*n = 0;
	for (size_t i = 0; i < nfiles; i++)
		if (!*n || strcmp(files[*n - 1], files[i]))
			files[(*n)++] = files[i];
	*out = files;
	return MP_OK;
}

/* The lengths of T's and B's leading parts before their longest common
 * tail that starts at a '/'; false when they have none, or share it all. */
static bool split_tail(const char *t, const char *b, size_t *lt, size_t *lb)
{
	size_t i = strlen(t), j = strlen(b);

	while (i && j && t[i - 1] == b[j - 1])
		i--, j--;
	/* The tail must begin at a separator both share. */
	while (t[i] && t[i] != '/')
		i++, j++;
	if (!t[i] || !i || !j)
		return false;
	*lt = i;
	*lb = j;
	return true;
}

bool cmp_prefix_hint(const struct cmp *c, struct cmp_prefix_hint *h)
{
	struct vote {
		const char *t, *b;	/* the first pair of files to show it */
		size_t lt, lb;
		uint32_t n;
	} *votes = NULL, *best = NULL;
	size_t nvotes = 0, avotes = 0, nt = 0, nb = 0, pairs = 0;
	const char **tf = NULL, **bf = NULL, **bl = NULL;
	bool ok = false;

	memset(h, 0, sizeof(*h));
	if (side_files(c, CMP_TEST, &tf, &nt) ||
	    side_files(c, CMP_BASE, &bf, &nb) || !nt || !nb ||
	    !(bl = malloc(nb * sizeof(*bl))))
		goto out;
	/* Base's files again, by last component. */
	memcpy(bl, bf, nb * sizeof(*bl));
	qsort(bl, nb, sizeof(*bl), by_last_part);
	for (size_t i = 0; i < nt && pairs < HINT_PAIRS; i++) {
		size_t lo = 0, hi = nb;

		if (bsearch(&tf[i], bf, nb, sizeof(*bf), by_string))
			continue;	/* the same file on both sides */
		while (lo < hi) {	/* the first of bl not before tf[i] */
			size_t mid = lo + (hi - lo) / 2;

			if (by_last_part(&bl[mid], &tf[i]) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t j = lo; j < nb && pairs < HINT_PAIRS &&
				    !by_last_part(&bl[j], &tf[i]); j++) {
			size_t lt, lb, v;

			pairs++;
			if (!split_tail(tf[i], bl[j], &lt, &lb))
				continue;
			for (v = 0; v < nvotes; v++)
				if (votes[v].lt == lt && votes[v].lb == lb &&
				    !strncmp(votes[v].t, tf[i], lt) &&
				    !strncmp(votes[v].b, bl[j], lb))
					break;
			if (v == nvotes) {
				if (nvotes == HINT_VOTES)
					continue;
				if (!MP_GROW(votes, avotes, nvotes + 1))
					goto out;
				votes[nvotes++] = (struct vote){ tf[i], bl[j],
								 lt, lb, 0 };
			}
			votes[v].n++;
		}
	}
	for (size_t v = 0; v < nvotes; v++)
		if (!best || votes[v].n > best->n)
			best = &votes[v];
	if (best && best->lt < sizeof(h->old) && best->lb < sizeof(h->new)) {
		memcpy(h->old, best->t, best->lt);
		memcpy(h->new, best->b, best->lb);
		h->test_file = best->t;
		h->base_file = best->b;
		h->pairs = best->n;
		ok = true;
	}
out:
	free(votes);
	free(tf);
	free(bf);
	free(bl);
	return ok;
}

struct view *cmp_entry_view(const struct cmp *c, const struct cmp_entry *e)
{
	/* An entry is made by the first side that has its key. */
	return c->views[e->present[CMP_BASE] ? CMP_BASE : CMP_TEST];
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
				out[s] = sat_add(out[s], e->mib[s]->v[f]);
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
		a = (unsigned __int128)e->mib[0]->v[f] * tot[1];
		b = (unsigned __int128)e->mib[1]->v[f] * tot[0];
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
