/*
 * exp_llvm.c - LLVM's indexed profile with MemProf version 3 (export.h).
 *
 * Layout (little-endian, offsets from the start of the file), as LLVM 19's
 * InstrProfReader and MemProfReader read it:
 *
 *	header		magic, version | MEMPROF variant bit, 0, hash type 0
 *			(MD5), HashOffset, MemProfOffset; version 12 adds
 *			BinaryIdOffset, TemporalProfTracesOffset (0) and
 *			VTableNamesOffset
 *	summary		6 fields and 16 cutoff entries, all counts 0
 *	counters	an empty on-disk hash table {1 bucket, 0 entries, 0}
 *	MemProf		u64 3, CallStackPayloadOffset, RecordPayloadOffset,
 *			RecordTableOffset; the schema (u64 count, u64 tags);
 *			the frames, 17 bytes each; the call stacks as an array
 *			of u32 (a stack's id is its position: its length, then
 *			its frame ids leaf first); the records' payload and
 *			their chained hash table keyed by function GUID
 *	(version 12)	a u64 0 where the binary ids and the vtable names go
 *
 * Call stacks here share nothing (the radix array allows sharing
 * root-side prefixes; readers follow either), which keeps the writer
 * simple at the cost of size: a stack costs 4 bytes per frame.
 */
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"
#include "profile/view.h"
#include "symbolize/sym.h"


struct exp_llvm_frame {
	uint64_t guid;
	uint32_t line_offset, column;
	uint8_t inlined;
	uint32_t out;		/* linear id in the output */
};

struct exp_llvm_stack {
	uint32_t first, n;	/* frame ids in stack_ids[first .. first + n) */
	uint32_t pos;		/* position in the output's array */
};

struct exp_llvm_ctx {
	uint32_t stack;
	uint32_t cls;		/* its class's MP_FRAME_CLASS_BASE offset + 1,
				 * or 0 (a merge folding all records) */
	struct mp_mib mib;
};

/* ---- building ---- */

void exp_llvm_init(struct exp_llvm *x)
{
	memset(x, 0, sizeof(*x));
}

void exp_llvm_release(struct exp_llvm *x)
{
	if (!x)
		return;
	free(x->frames);
	ht_release(&x->frame_ht);
	free(x->stack_ids);
	free(x->stacks);
	ht_release(&x->stack_ht);
	free(x->ctxs);
	ht_release(&x->ctx_ht);
	free(x->sites);
	ht_release(&x->site_ht);
	free(x->scratch);
	memset(x, 0, sizeof(*x));
}

static bool same_frame(const void *key, uint32_t id, const void *arg)
{
	const struct exp_llvm_frame *a = key;
	const struct exp_llvm_frame *b = &((const struct exp_llvm *)arg)->frames[id];

	return a->guid == b->guid && a->line_offset == b->line_offset &&
	       a->column == b->column && a->inlined == b->inlined;
}

static enum mp_errcode intern_frame(struct exp_llvm *x, const struct mp_frame *f,
				    uint32_t *out)
{
	struct exp_llvm_frame k = {
		.guid = llvm_guid(f->function),
		.line_offset = f->line - f->start_line,
		.column = f->column,
		.inlined = mp_frame_inlined(f),
	};
	uint64_t h = mp_hash_bytes(&k.guid, 8, k.line_offset ^
				   ((uint64_t)k.column << 32) ^ k.inlined);
	uint32_t id = ht_find(&x->frame_ht, h, same_frame, &k, x);

	if (id != HT_NONE) {
		*out = id;
		return MP_OK;
	}
	if (x->nframes >= INT32_MAX)
		return MP_E_TOO_LARGE;
	if (!MP_GROW(x->frames, x->aframes, x->nframes + 1) ||
	    ht_insert(&x->frame_ht, h, (uint32_t)x->nframes))
		return MP_E_NOMEM;
	x->frames[x->nframes] = k;
	*out = (uint32_t)x->nframes++;
	return MP_OK;
}

struct stack_key {
	const struct exp_llvm *x;
	const uint32_t *ids;
	uint32_t n;
};

static bool same_stack(const void *key, uint32_t id, const void *arg)
{
	const struct stack_key *k = key;
	const struct exp_llvm_stack *s = &k->x->stacks[id];

	(void)arg;
	return s->n == k->n &&
	       memcmp(k->x->stack_ids + s->first, k->ids, k->n * 4u) == 0;
}

static enum mp_errcode intern_stack(struct exp_llvm *x, const uint32_t *ids,
				    uint32_t n, uint32_t *out)
{
	struct stack_key k = { x, ids, n };
	uint64_t h = mp_hash_bytes(ids, (size_t)n * 4, 0x57ac);
	uint32_t id = ht_find(&x->stack_ht, h, same_stack, &k, NULL);

	if (id != HT_NONE) {
		*out = id;
		return MP_OK;
	}
	if (x->nstacks >= INT32_MAX || x->nstack_ids + n >= INT32_MAX)
		return MP_E_TOO_LARGE;
	if (!MP_GROW(x->stack_ids, x->astack_ids, x->nstack_ids + n + 1) ||
	    !MP_GROW(x->stacks, x->astacks, x->nstacks + 1) ||
	    ht_insert(&x->stack_ht, h, (uint32_t)x->nstacks))
		return MP_E_NOMEM;
	memcpy(x->stack_ids + x->nstack_ids, ids, (size_t)n * 4);
	x->stacks[x->nstacks] = (struct exp_llvm_stack){
		(uint32_t)x->nstack_ids, n, 0 };
	x->nstack_ids += n;
	*out = (uint32_t)x->nstacks++;
	return MP_OK;
}

static bool same_ctx(const void *key, uint32_t id, const void *arg)
{
	const struct exp_llvm_ctx *c = &((const struct exp_llvm *)arg)->ctxs[id];
	const uint32_t *k = key;

	return c->stack == k[0] && c->cls == k[1];
}

static bool same_site(const void *key, uint32_t id, const void *arg)
{
	const struct exp_llvm *x = arg;
	const uint64_t *k = key;

	return x->sites[id].guid == k[0] && x->sites[id].stack == k[1];
}

static enum mp_errcode add_site(struct exp_llvm *x, uint64_t guid,
				uint32_t stack)
{
	uint64_t key[2] = { guid, stack };
	uint64_t h = mp_hash64(guid ^ mp_hash64(stack));

	if (ht_find(&x->site_ht, h, same_site, key, x) != HT_NONE)
		return MP_OK;
	if (!MP_GROW(x->sites, x->asites, x->nsites + 1) ||
	    ht_insert(&x->site_ht, h, (uint32_t)x->nsites))
		return MP_E_NOMEM;
	x->sites[x->nsites].guid = guid;
	x->sites[x->nsites].stack = stack;
	x->nsites++;
	return MP_OK;
}

/*
 * Is the PC whose frames start at F (its innermost) one llvm-profdata
 * keeps?  Only when debug information names its function (a name from
 * the ELF symbol table alone, with no source file, does not count: LLVM
 * symbolizes without the symbol table here), in a binary the merge was
 * given (llvm-profdata symbolizes its --profiled-binary only: a C
 * library's frames, named by libc6-dbg's debug file, would lengthen
 * every context and give the calls into it call sites), and it is not
 * the profiling runtime's own code.
 */
static bool pc_kept(const struct mp_frame *f)
{
	return f->function && f->file && !(f->flags & MP_FRAME_FOUND) &&
	       !sym_is_runtime(NULL, f->file);
}

enum mp_errcode exp_llvm_add(struct exp_llvm *x, const struct mp_frame *frames,
			     uint32_t n, const struct mp_mib *mib,
			     struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;
	uint32_t nids = 0, stack, id, key[2];
	uint64_t h;
	int cls = n ? mp_frame_class(&frames[n - 1]) : -1;

	/*
	 * A merge for this format keeps records of different allocation
	 * classes apart, as llvm-profdata keeps every record: clang then
	 * sees a context both cold and not cold where it is, not the type
	 * of the sums.  Records of one class fold (their sums stay in the
	 * class).
	 */
	if (cls >= 0)
		n--;
	if (!MP_GROW(x->scratch, x->ascratch, (size_t)n + 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/* The kept PCs' frames, as frame ids. */
	for (uint32_t i = 0, end; i < n; i = end) {
		for (end = i; end < n && mp_frame_inlined(&frames[end]); end++)
			;
		end = end < n ? end + 1 : n;	/* past the PC's outermost */
		if (!pc_kept(&frames[i]))
			continue;
		for (uint32_t k = i; k < end && !rc; k++)
			rc = frames[k].function
				? intern_frame(x, &frames[k], &x->scratch[nids++])
				: MP_OK;
		if (rc)
			return mp_fail(err, rc, NULL);
	}
	if (nids == 0) {
		x->dropped_contexts++;
		return MP_OK;
	}
	if ((rc = intern_stack(x, x->scratch, nids, &stack)))
		return mp_fail(err, rc, NULL);
	/* Equal contexts of one class fold. */
	key[0] = stack;
	key[1] = (uint32_t)(cls + 1);
	h = mp_hash64(stack ^ (uint64_t)key[1] << 32);
	id = ht_find(&x->ctx_ht, h, same_ctx, key, x);
	if (id != HT_NONE) {
		mib_fold(&x->ctxs[id].mib, mib);
		return MP_OK;
	}
	if (!MP_GROW(x->ctxs, x->actxs, x->nctxs + 1) ||
	    ht_insert(&x->ctx_ht, h, (uint32_t)x->nctxs))
		return mp_fail(err, MP_E_NOMEM, NULL);
	x->ctxs[x->nctxs].stack = stack;
	x->ctxs[x->nctxs].cls = key[1];
	x->ctxs[x->nctxs].mib = *mib;
	x->nctxs++;

	/*
	 * Each PC is a call site of each function in it, its own frames
	 * (the PC's inline chain) the site's stack; but the first PC's
	 * innermost frame is the allocation itself.  So when the call of
	 * the allocator was inlined, the functions it was inlined into get
	 * the first PC as a call site, as llvm-profdata gives them (its
	 * RawMemProfReader skips only frame 0 of address 0): without it,
	 * clang's MemProfUse matches no callsite in them.
	 */
	for (uint32_t i = 0, end; i < nids; i = end) {
		uint32_t site, k = i == 0 ? 1 : i;

		for (end = i; end < nids && x->frames[x->scratch[end]].inlined; end++)
			;
		end = end < nids ? end + 1 : nids;
		if (k >= end)
			continue;
		if ((rc = intern_stack(x, x->scratch + i, end - i, &site)))
			return mp_fail(err, rc, NULL);
		for (; k < end; k++)
			if ((rc = add_site(x, x->frames[x->scratch[k]].guid, site)))
				return mp_fail(err, rc, NULL);
	}
	return MP_OK;
}

enum mp_errcode exp_llvm_add_view(struct exp_llvm *x, struct view *v,
				  const uint64_t *weights, struct mp_err *err)
{
	struct view_scratch scratch = { 0 };
	enum mp_errcode rc = MP_OK;

	for (size_t i = 0; i < v->ninputs; i++)
		if (v->inputs[i].idx && v->inputs[i].version < 10)
			return mp_fail(err, MP_E_INVALID,
				       "'%s': an indexed profile of format %u keeps "
				       "no function start lines, which LLVM's line "
				       "offsets need; merge its raw profiles again",
				       v->inputs[i].path, v->inputs[i].version);
	/* Every frame: the filter in exp_llvm_add decides. */
	view_set_frame_rules(v, NULL, true);
	v->class_frames = true;
	/*
	 * Each stack walked into scratch, not kept in the view: the export
	 * keeps what it needs of a frame, and an indexed profile's contexts
	 * expanded all at once were hundreds of MB (cppcheck, 197k contexts:
	 * 869 -> 386 MB peak, the same bytes).
	 */
	for (size_t i = 0; i < v->ncontexts && !rc; i++) {
		const struct view_context *c = &v->contexts[i];
		const struct mp_frame *frames;
		const uint32_t *entries;
		struct mp_mib m = c->mib;
		uint32_t n;

		if ((rc = view_frames_scratch(v, c, &scratch, &frames, &entries,
					      &n, err)))
			break;
		if (weights && weights[c->input] != 1)
			mib_scale(&m, weights[c->input]);
		rc = exp_llvm_add(x, frames, n, &m, err);
	}
	view_scratch_release(&scratch);
	return rc;
}

/* ---- writing ---- */

struct out {
	unsigned char *d;
	size_t n, alloc;
	bool oom;
};

static unsigned char *put(struct out *o, size_t len)
{
	if (o->oom || !MP_GROW(o->d, o->alloc, o->n + len + 1)) {
		o->oom = true;
		return NULL;
	}
	o->n += len;
	return o->d + o->n - len;
}

static void put64(struct out *o, uint64_t v)
{
	unsigned char *p = put(o, 8);

	if (p)
		mp_put_le64(p, v);
}

static void put32(struct out *o, uint32_t v)
{
	unsigned char *p = put(o, 4);

	if (p)
		mp_put_le32(p, v);
}

static void put16(struct out *o, uint16_t v)
{
	unsigned char *p = put(o, 2);

	if (p) {
		p[0] = (unsigned char)v;
		p[1] = (unsigned char)(v >> 8);
	}
}

static void patch64(struct out *o, size_t at, uint64_t v)
{
	if (!o->oom)
		mp_put_le64(o->d + at, v);
}

/* The MIB as LLVM's PortableMemInfoBlock serializes it, in SCHEMA order. */
static void put_mib(struct out *o, const struct mp_mib *m, const int *schema,
		    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int f = mib_field_by_tag((unsigned)schema[i]);

		if (schema[i] == LLVM_TAG_HISTOGRAM) {
			put64(o, 0);	/* a pointer in LLVM's struct */
		} else if (mib_fields[f].width == 8) {
			put64(o, m->v[f]);
		} else {
			put32(o, m->v[f] > UINT32_MAX ? UINT32_MAX
						      : (uint32_t)m->v[f]);
		}
	}
}

static int by_frame(const void *a, const void *b, void *arg)
{
	const struct exp_llvm_frame *fr = arg;
	const struct exp_llvm_frame *x = &fr[*(const uint32_t *)a];
	const struct exp_llvm_frame *y = &fr[*(const uint32_t *)b];

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	if (x->line_offset != y->line_offset)
		return x->line_offset < y->line_offset ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return (int)x->inlined - (int)y->inlined;
}

/* Call stacks by their frames' output ids, leaf first. */
static int by_stack(const void *a, const void *b, void *arg)
{
	const struct exp_llvm *x = arg;
	const struct exp_llvm_stack *s = &x->stacks[*(const uint32_t *)a];
	const struct exp_llvm_stack *t = &x->stacks[*(const uint32_t *)b];

	for (uint32_t i = 0; i < s->n && i < t->n; i++) {
		uint32_t p = x->frames[x->stack_ids[s->first + i]].out;
		uint32_t q = x->frames[x->stack_ids[t->first + i]].out;

		if (p != q)
			return p < q ? -1 : 1;
	}
	return s->n < t->n ? -1 : s->n > t->n;
}

/* A record's entries: (GUID, kind, call stack position, class, context). */
struct rec_ent {
	uint64_t guid;
	uint32_t kind;		/* 0: alloc site, 1: call site */
	uint32_t pos;
	uint32_t cls;		/* alloc site: its context's, apart by class */
	uint32_t ctx;		/* alloc site: its context; call site: its stack */
};

static int by_rec_ent(const void *a, const void *b)
{
	const struct rec_ent *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

static enum mp_errcode gather_records(struct exp_llvm *x, struct rec_ent **out,
				      size_t *nout)
{
	struct rec_ent *e;
	size_t n = 0, cap = x->nsites + 1;

	/* Each context goes to the record of every function from its leaf
	 * to its first frame that is not inlined. */
	for (size_t c = 0; c < x->nctxs; c++) {
		const struct exp_llvm_stack *s = &x->stacks[x->ctxs[c].stack];

		for (uint32_t i = 0; i < s->n; i++) {
			cap++;
			if (!x->frames[x->stack_ids[s->first + i]].inlined)
				break;
		}
	}
	e = malloc(cap * sizeof(*e));
	if (!e)
		return MP_E_NOMEM;
	for (size_t c = 0; c < x->nctxs; c++) {
		const struct exp_llvm_stack *s = &x->stacks[x->ctxs[c].stack];

		for (uint32_t i = 0; i < s->n; i++) {
			const struct exp_llvm_frame *f =
				&x->frames[x->stack_ids[s->first + i]];

			e[n++] = (struct rec_ent){ f->guid, 0, s->pos,
						   x->ctxs[c].cls, (uint32_t)c };
			if (!f->inlined)
				break;
		}
	}
	for (size_t i = 0; i < x->nsites; i++)
		e[n++] = (struct rec_ent){ x->sites[i].guid, 1,
					   x->stacks[x->sites[i].stack].pos, 0,
					   x->sites[i].stack };
	qsort(e, n, sizeof(*e), by_rec_ent);
	*out = e;
	*nout = n;
	return MP_OK;
}

/*
 * An on-disk chained hash table as LLVM's OnDiskChainedHashTableGenerator
 * lays it out: for each non-empty bucket, a u16 item count and its items
 * (u64 hash, u64 key length 8, u64 data length, u64 key, the data); zero
 * padding to 8; then the bucket count, the item count and each bucket's
 * offset from the start of the file (0: empty).  In MemProf's tables the
 * hash is the key.  The N items' keys come from KEY; EMIT writes item I's
 * data and returns its length, which is patched in.  *PAYLOAD and *TABLE
 * get the offsets of the items and of the bucket array.
 */
struct table_items {
	size_t n;
	uint64_t (*key)(const void *ctx, size_t i);
	void (*emit)(struct out *o, const void *ctx, size_t i);
	const void *ctx;
};

static void write_table(struct out *o, const struct table_items *t,
			uint64_t *payload, uint64_t *table)
{
	size_t nbuckets = 1, *next, *head;
	uint64_t *bucket_off;

	while (nbuckets * 3 < t->n * 4)
		nbuckets *= 2;
	head = malloc(nbuckets * sizeof(*head));
	next = malloc((t->n + 1) * sizeof(*next));
	bucket_off = calloc(nbuckets, sizeof(*bucket_off));
	if (!head || !next || !bucket_off) {
		o->oom = true;
		goto out;
	}
	/* Chains in item order: a bucket lists its items as they come. */
	for (size_t b = 0; b < nbuckets; b++)
		head[b] = SIZE_MAX;
	for (size_t i = t->n; i-- > 0;) {
		size_t b = t->key(t->ctx, i) & (nbuckets - 1);

		next[i] = head[b];
		head[b] = i;
	}
	*payload = o->n;
	for (size_t b = 0; b < nbuckets; b++) {
		uint16_t count = 0;

		if (head[b] == SIZE_MAX)
			continue;
		for (size_t i = head[b]; i != SIZE_MAX; i = next[i])
			count++;
		bucket_off[b] = o->n;
		put16(o, count);
		for (size_t i = head[b]; i != SIZE_MAX; i = next[i]) {
			uint64_t key = t->key(t->ctx, i);
			size_t len_at, start;

			put64(o, key);		/* hash */
			put64(o, 8);		/* key length */
			len_at = o->n;
			put64(o, 0);		/* data length, patched */
			put64(o, key);
			start = o->n;
			t->emit(o, t->ctx, i);
			patch64(o, len_at, o->n - start);
		}
	}
	while (o->n % 8 && !o->oom)
		put(o, 1)[0] = 0;
	*table = o->n;
	put64(o, nbuckets);
	put64(o, t->n);
	for (size_t b = 0; b < nbuckets; b++)
		put64(o, bucket_off[b]);
out:
	free(head);
	free(next);
	free(bucket_off);
}

/* The records: e[] sorted by GUID, kind and stack, split by GUID. */
struct records {
	const struct exp_llvm *x;
	const struct rec_ent *e;
	size_t *starts;		/* record r is e[starts[r] .. starts[r + 1]) */
	const int *schema;
	size_t nschema;
	unsigned version;	/* 0 or 3 */
};

static uint64_t record_key(const void *ctx, size_t r)
{
	const struct records *R = ctx;

	return R->e[R->starts[r]].guid;
}

/* A call stack as version 0 stores it: u64 count, u64 frame ids. */
static void put_stack_v0(struct out *o, const struct exp_llvm *x,
			 const struct exp_llvm_stack *s)
{
	put64(o, s->n);
	for (uint32_t k = 0; k < s->n; k++)
		put64(o, x->frames[x->stack_ids[s->first + k]].out);
}

/*
 * One record: its alloc sites (version 3: the call stack's position;
 * version 0: the stack itself) each with its MIB, then its call sites.
 */
static void emit_record(struct out *o, const void *ctx, size_t r)
{
	const struct records *R = ctx;
	const struct exp_llvm *x = R->x;
	size_t i = R->starts[r], end = R->starts[r + 1], na = 0;

	while (i + na < end && R->e[i + na].kind == 0)
		na++;
	put64(o, na);
	for (size_t k = i; k < i + na; k++) {
		const struct exp_llvm_ctx *c = &x->ctxs[R->e[k].ctx];

		if (R->version == 0)
			put_stack_v0(o, x, &x->stacks[c->stack]);
		else
			put32(o, R->e[k].pos);
		put_mib(o, &c->mib, R->schema, R->nschema);
	}
	put64(o, end - i - na);
	for (size_t k = i + na; k < end; k++) {
		if (R->version == 0)
			put_stack_v0(o, x, &x->stacks[R->e[k].ctx]);
		else
			put32(o, R->e[k].pos);
	}
}

static void write_records(struct out *o, const struct exp_llvm *x,
			  const struct rec_ent *e, size_t n, const int *schema,
			  size_t nschema, unsigned version, uint64_t *payload,
			  uint64_t *table)
{
	struct records R = { x, e, NULL, schema, nschema, version };
	struct table_items t = { 0, record_key, emit_record, &R };

	R.starts = malloc((n + 2) * sizeof(*R.starts));
	if (!R.starts) {
		o->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (i == 0 || e[i].guid != e[i - 1].guid)
			R.starts[t.n++] = i;
	R.starts[t.n] = n;
	write_table(o, &t, payload, table);
	free(R.starts);
}

/* Version 0's frame table: frame id (its output index) -> its bytes. */
struct frame_table {
	const struct exp_llvm *x;
	const uint32_t *by_out;		/* output index -> frame */
};

static uint64_t frame_key(const void *ctx, size_t i)
{
	(void)ctx;
	return i;
}

static void put_frame(unsigned char *p, const struct exp_llvm_frame *f)
{
	mp_put_le64(p, f->guid);
	mp_put_le32(p + 8, f->line_offset);
	mp_put_le32(p + 12, f->column);
	p[16] = f->inlined;
}

static void emit_frame(struct out *o, const void *ctx, size_t i)
{
	const struct frame_table *ft = ctx;
	unsigned char *p = put(o, LLVM_FRAME_SIZE);

	if (p)
		put_frame(p, &ft->x->frames[ft->by_out[i]]);
}

/*
 * MemProf version 3: u64 3, CallStackPayloadOffset, RecordPayloadOffset,
 * RecordTableOffset; the schema; the frames at their linear ids; the call
 * stacks (ORDER: stacks in output order); the records.
 */
static void write_memprof_v3(struct out *o, const struct exp_llvm *x,
			     const struct rec_ent *recs, size_t nrec,
			     const int *schema, size_t nschema,
			     const uint32_t *order)
{
	uint64_t cs_off, payload = 0, table = 0;
	size_t hdr;
	unsigned char *base;

	put64(o, LLVM_MEMPROF_VERSION);
	hdr = o->n;
	put64(o, 0);
	put64(o, 0);
	put64(o, 0);
	put64(o, nschema);
	for (size_t i = 0; i < nschema; i++)
		put64(o, (uint64_t)schema[i]);
	base = put(o, x->nframes * LLVM_FRAME_SIZE);
	for (size_t i = 0; base && i < x->nframes; i++)
		put_frame(base + (size_t)x->frames[i].out * LLVM_FRAME_SIZE,
			  &x->frames[i]);
	/* Call stacks: length, then frame ids leaf first. */
	cs_off = o->n;
	for (size_t i = 0; i < x->nstacks; i++) {
		const struct exp_llvm_stack *s = &x->stacks[order[i]];

		put32(o, s->n);
		for (uint32_t k = 0; k < s->n; k++)
			put32(o, x->frames[x->stack_ids[s->first + k]].out);
	}
	write_records(o, x, recs, nrec, schema, nschema, 3, &payload, &table);
	patch64(o, hdr, cs_off);
	patch64(o, hdr + 8, payload);
	patch64(o, hdr + 16, table);
}

/*
 * MemProf version 0, the RFC's layout (read by clang 19, not later): no
 * version word; RecordTableOffset, FramePayloadOffset, FrameTableOffset;
 * the full schema; the records, each alloc site and call site holding its
 * frame ids; the frames in a table of their own keyed by frame id.
 */
static void write_memprof_v0(struct out *o, const struct exp_llvm *x,
			     const struct rec_ent *recs, size_t nrec,
			     const uint32_t *by_out)
{
	int full[LLVM_TAG_HISTOGRAM];
	struct frame_table ft = { x, by_out };
	struct table_items frames = { x->nframes, frame_key, emit_frame, &ft };
	uint64_t payload = 0, rec_table = 0, fr_payload = 0, fr_table = 0;
	size_t hdr = o->n;

	for (int i = 0; i < LLVM_TAG_HISTOGRAM; i++)
		full[i] = i + 1;
	put64(o, 0);
	put64(o, 0);
	put64(o, 0);
	put64(o, LLVM_TAG_HISTOGRAM);
	for (int i = 0; i < LLVM_TAG_HISTOGRAM; i++)
		put64(o, (uint64_t)full[i]);
	write_records(o, x, recs, nrec, full, LLVM_TAG_HISTOGRAM, 0, &payload,
		      &rec_table);
	write_table(o, &frames, &fr_payload, &fr_table);
	patch64(o, hdr, rec_table);
	patch64(o, hdr + 8, fr_payload);
	patch64(o, hdr + 16, fr_table);
}

enum mp_errcode exp_llvm_write(struct exp_llvm *x,
			       const struct exp_llvm_opts *opts, FILE *out,
			       struct mp_err *err)
{
	static const int hot_cold[] = { 1, 5, 10, 23 };
	static const uint64_t cutoffs[16] = {
		10000, 100000, 200000, 300000, 400000, 500000, 600000, 700000,
		800000, 900000, 950000, 990000, 999000, 999900, 999990, 999999,
	};
	unsigned hv = opts && opts->header_version ? opts->header_version : 8;
	unsigned mv = opts ? opts->memprof_version : LLVM_MEMPROF_VERSION;
	int full[LLVM_TAG_HISTOGRAM];
	const int *schema = hot_cold;
	size_t nschema = 4, nrec = 0, hdr_size = llvm_header_size(hv);
	struct out o = { 0 };
	uint32_t *order = NULL;
	struct rec_ent *recs = NULL;
	uint32_t *by_out = NULL;
	uint64_t hash_off, memprof_off;
	enum mp_errcode rc = MP_E_NOMEM;

	if (hv != 8 && hv != 12)
		return mp_fail(err, MP_E_INVALID,
			       "LLVM indexed profile header version %u (8 or 12)",
			       hv);
	if (mv != 0 && mv != LLVM_MEMPROF_VERSION)
		return mp_fail(err, MP_E_INVALID, "MemProf version %u (0 or 3)",
			       mv);
	if (opts && opts->full_schema) {
		for (int i = 0; i < LLVM_TAG_HISTOGRAM; i++)
			full[i] = i + 1;
		schema = full;
		nschema = LLVM_TAG_HISTOGRAM;
	}
	/* Frames and call stacks numbered by their contents. */
	order = malloc((x->nframes + x->nstacks + 1) * sizeof(*order));
	if (!order)
		goto fail;
	for (size_t i = 0; i < x->nframes; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, x->nframes, sizeof(*order), by_frame, x->frames);
	by_out = malloc((x->nframes + 1) * sizeof(*by_out));
	if (!by_out)
		goto fail;
	for (size_t i = 0; i < x->nframes; i++) {
		x->frames[order[i]].out = (uint32_t)i;
		by_out[i] = order[i];
	}
	for (size_t i = 0; i < x->nstacks; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, x->nstacks, sizeof(*order), by_stack, x);
	{
		uint64_t pos = 0;

		for (size_t i = 0; i < x->nstacks; i++) {
			struct exp_llvm_stack *s = &x->stacks[order[i]];

			if (pos > INT32_MAX) {
				rc = MP_E_TOO_LARGE;
				goto fail;
			}
			s->pos = (uint32_t)pos;
			pos += 1 + s->n;
		}
	}
	if ((rc = gather_records(x, &recs, &nrec)))
		goto fail;
	rc = MP_E_NOMEM;

	/* Header, patched below. */
	put64(&o, LLVM_MAGIC);
	put64(&o, hv | LLVM_VARIANT_MEMPROF);
	put64(&o, 0);
	put64(&o, 0);			/* hash type: MD5 */
	while (o.n < hdr_size)
		put64(&o, 0);
	/* The summary: no counters, so every count is 0. */
	put64(&o, 6);
	put64(&o, 16);
	for (int i = 0; i < 6; i++)
		put64(&o, 0);
	for (int i = 0; i < 16; i++) {
		put64(&o, cutoffs[i]);
		put64(&o, 0);
		put64(&o, 0);
	}
	/* The counters' table: one empty bucket. */
	hash_off = o.n;
	put64(&o, 1);
	put64(&o, 0);
	put64(&o, 0);

	memprof_off = o.n;
	if (mv == 0)
		write_memprof_v0(&o, x, recs, nrec, by_out);
	else
		write_memprof_v3(&o, x, recs, nrec, schema, nschema, order);
	patch64(&o, LLVM_HDR_HASH_OFFSET, hash_off);
	patch64(&o, LLVM_HDR_MEMPROF_OFFSET, memprof_off);
	if (hv == 12) {
		patch64(&o, LLVM_HDR_BINARY_ID_OFFSET, o.n);	/* no binary ids */
		put64(&o, 0);
		patch64(&o, LLVM_HDR_VTABLE_NAMES_OFFSET, o.n); /* none */
		put64(&o, 0);
	}
	if (o.oom)
		goto fail;
	if (fwrite(o.d, 1, o.n, out) != o.n) {
		rc = mp_fail(err, MP_E_IO, "cannot write output: %s",
			     strerror(errno ? errno : EIO));
		goto done;
	}
	rc = MP_OK;
	goto done;
fail:
	mp_fail(err, rc, rc == MP_E_TOO_LARGE
		? "the profile is too large for LLVM's 32-bit call stack ids"
		: NULL);
done:
	free(o.d);
	free(order);
	free(by_out);
	free(recs);
	return rc;
}
