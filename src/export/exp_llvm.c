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
 *			the frames, 17 bytes each; the call stacks as a radix
 *			array of u32 (radix_build()); the records' payload
 *			and their chained hash table keyed by function GUID
 *	(version 12)	a u64 0 where the binary ids and the vtable names go
 */
#include "export.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_thread.h"
#include "exp_intern.h"
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
	uint32_t rank;		/* among the stacks in content order */
	uint32_t pos;		/* version 3: its id, a place in the array */
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
	if (x->names)
		exp_interned_release(x->names);
	free(x->names);
	free(x->name_guids);
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
	free(x->scratch_at);
	memset(x, 0, sizeof(*x));
}

static bool same_frame(const void *key, uint32_t id, const void *arg)
{
	const struct exp_llvm_frame *a = key;
	const struct exp_llvm_frame *b = &((const struct exp_llvm *)arg)->frames[id];

	return a->guid == b->guid && a->line_offset == b->line_offset &&
	       a->column == b->column && a->inlined == b->inlined;
}

/*
 * The GUID of function NAME, from its MD5 the first time the name comes:
 * the names of a big profile's frames are a few thousand, its frames
 * millions (cppcheck's four profiles: MD5 was a third of the export).
 */
static enum mp_errcode name_guid(struct exp_llvm *x, const char *name,
				 uint64_t *guid)
{
	bool added;
	int64_t id;

	if (!x->names && !(x->names = calloc(1, sizeof(*x->names))))
		return MP_E_NOMEM;
	/* Room first: a name interned must have its GUID. */
	if (!MP_GROW(x->name_guids, x->aname_guids, x->names->n + 1) ||
	    (id = exp_intern(x->names, name, strlen(name), &added)) < 0)
		return MP_E_NOMEM;
	if (added)
		x->name_guids[id] = llvm_guid(name);
	*guid = x->name_guids[id];
	return MP_OK;
}

static enum mp_errcode intern_frame(struct exp_llvm *x, const struct mp_frame *f,
				    uint32_t *out)
{
	struct exp_llvm_frame k = {
		.line_offset = f->line - f->start_line,
		.column = f->column,
		.inlined = mp_frame_inlined(f),
	};
	enum mp_errcode rc = name_guid(x, f->function, &k.guid);
	uint64_t h;
	uint32_t id;

	if (rc)
		return rc;
	h = mp_hash_bytes(&k.guid, 8, k.line_offset ^
			  ((uint64_t)k.column << 32) ^ k.inlined);
	id = ht_find(&x->frame_ht, h, same_frame, &k, x);

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

/* Is call stack STACK the N frames IDS? */
static bool same_ids(const struct exp_llvm *x, uint32_t stack,
		     const uint32_t *ids, uint32_t n)
{
	const struct exp_llvm_stack *s = &x->stacks[stack];

	return s->n == n &&
	       memcmp(x->stack_ids + s->first, ids, (size_t)n * 4) == 0;
}

static bool same_stack(const void *key, uint32_t id, const void *arg)
{
	const struct stack_key *k = key;

	(void)arg;
	return same_ids(k->x, id, k->ids, k->n);
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
		(uint32_t)x->nstack_ids, n, 0, 0 };
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

/* What a frame is to the export, as flags (0: not known yet). */
enum {
	FR_KNOWN = 1,
	FR_FUNCTION = 2,	/* named: a frame of the stack when its PC is kept */
	FR_INLINED = 4,
	FR_KEPT = 8,		/* as a PC's innermost frame: pc_kept() */
	/* As the innermost frame of a PC whose frames are site1's stack:
	 * every function of it has that call site, or all but the first. */
	FR_SITES_ALL = 16,
	FR_SITES_TAIL = 32,
};

static uint8_t frame_flags(const struct mp_frame *f)
{
	return FR_KNOWN | (f->function ? FR_FUNCTION : 0) |
	       (mp_frame_inlined(f) ? FR_INLINED : 0) |
	       (pc_kept(f) ? FR_KEPT : 0);
}

/*
 * What an export from an indexed file knows of each of its stack entries,
 * reset when the contexts move to another file: the frame's flags, its
 * id here (+ 1; 0: not interned yet) and, for a PC's innermost frame,
 * the PC's call sites.  A frame shared by thousands of stacks is then
 * built, tested, hashed and looked up once, and a context costs a walk
 * of its entries (cppcheck's four profiles: 197k contexts, 7 M frames,
 * 10k call sites).
 */
struct entry_info {
	uint32_t id1;
	uint32_t site1;		/* the call stack of its PC's frames + 1 */
	uint8_t flags;
};

struct entry_memo {
	const struct idx_file *file;
	struct entry_info *info;
	size_t n, alloc;
};

/* One context's frames: FRAMES, or ENTRIES of C's file with MEMO. */
struct ctx_frames {
	const struct mp_frame *frames;
	const uint32_t *entries;
	struct entry_memo *memo;
	struct view *v;
	const struct view_context *c;
};

/* Frame K itself; NULL when out of memory. */
static const struct mp_frame *frame_at(const struct ctx_frames *cf, uint32_t k)
{
	return cf->frames ? &cf->frames[k]
			  : view_entry_frame(cf->v, cf->c, cf->entries[k]);
}

/* Frame K's memo, or NULL (frames of their own; an entry past the
 * table, which the view gives as a frame of zeros). */
static struct entry_info *info_at(const struct ctx_frames *cf, uint32_t k)
{
	return cf->entries && cf->entries[k] < cf->memo->n
	       ? &cf->memo->info[cf->entries[k]] : NULL;
}

/* Frame K's flags; 0 when out of memory. */
static uint8_t flags_at(const struct ctx_frames *cf, uint32_t k)
{
	struct entry_info *e = info_at(cf, k);
	const struct mp_frame *f;

	if (e && e->flags)
		return e->flags;
	if (!(f = frame_at(cf, k)))
		return 0;
	if (!e)
		return frame_flags(f);
	return e->flags = frame_flags(f);
}

/* Frame K's id here, interned if new. */
static enum mp_errcode id_at(struct exp_llvm *x, const struct ctx_frames *cf,
			     uint32_t k, uint32_t *id)
{
	struct entry_info *e = info_at(cf, k);
	const struct mp_frame *f;
	enum mp_errcode rc;

	if (e && e->id1) {
		*id = e->id1 - 1;
		return MP_OK;
	}
	if (!(f = frame_at(cf, k)))
		return MP_E_NOMEM;
	if ((rc = intern_frame(x, f, id)))
		return rc;
	if (e)
		e->id1 = *id + 1;
	return MP_OK;
}

/* The context of CF's N frames (exp_llvm_add()). */
static enum mp_errcode add_context(struct exp_llvm *x,
				   const struct ctx_frames *cf, uint32_t n,
				   const struct mp_mib *mib, struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;
	uint32_t nids = 0, stack, id, key[2];
	const struct mp_frame *root = n ? frame_at(cf, n - 1) : NULL;
	int cls = root ? mp_frame_class(root) : -1;
	uint64_t h;

	if (n && !root)
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * A merge for this format keeps records of different allocation
	 * classes apart, as llvm-profdata keeps every record: clang then
	 * sees a context both cold and not cold where it is, not the type
	 * of the sums.  Records of one class fold (their sums stay in the
	 * class).
	 */
	if (cls >= 0)
		n--;
	if (!MP_GROW(x->scratch, x->ascratch, (size_t)n + 1) ||
	    !MP_GROW(x->scratch_at, x->ascratch_at, (size_t)n + 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/* The kept PCs' frames, as frame ids. */
	for (uint32_t i = 0, end; i < n; i = end) {
		uint8_t fl = 0, innermost = 0;

		for (end = i; end < n; end++) {
			if (!(fl = flags_at(cf, end)))
				return mp_fail(err, MP_E_NOMEM, NULL);
			innermost = end == i ? fl : innermost;
			if (!(fl & FR_INLINED))
				break;
		}
		end = end < n ? end + 1 : n;	/* past the PC's outermost */
		if (!(innermost & FR_KEPT))
			continue;
		for (uint32_t k = i; k < end; k++) {
			if (!(flags_at(cf, k) & FR_FUNCTION))
				continue;
			x->scratch_at[nids] = k;
			if ((rc = id_at(x, cf, k, &x->scratch[nids++])))
				return mp_fail(err, rc, NULL);
		}
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
		uint8_t done = i == 0 ? FR_SITES_TAIL : FR_SITES_ALL;
		struct entry_info *e = info_at(cf, x->scratch_at[i]);
		bool known;

		for (end = i; end < nids && x->frames[x->scratch[end]].inlined; end++)
			;
		end = end < nids ? end + 1 : nids;
		if (k >= end)
			continue;
		/* The memo's site, if these are its frames (a PC's frames
		 * after its innermost are the same in every stack of a
		 * sound file; the memo checks). */
		known = e && e->site1 && same_ids(x, e->site1 - 1, x->scratch + i,
						   end - i);
		if (known && (e->flags & done))
			continue;
		if (known)
			site = e->site1 - 1;
		else if ((rc = intern_stack(x, x->scratch + i, end - i, &site)))
			return mp_fail(err, rc, NULL);
		for (; k < end; k++)
			if ((rc = add_site(x, x->frames[x->scratch[k]].guid, site)))
				return mp_fail(err, rc, NULL);
		if (e && !e->site1) {
			e->site1 = site + 1;
			known = true;
		}
		if (known)
			e->flags |= done | FR_SITES_TAIL;
	}
	return MP_OK;
}

enum mp_errcode exp_llvm_add(struct exp_llvm *x, const struct mp_frame *frames,
			     uint32_t n, const struct mp_mib *mib,
			     struct mp_err *err)
{
	struct ctx_frames cf = { .frames = frames };

	return add_context(x, &cf, n, mib, err);
}

/* MEMO made ready for context C's file, or false when out of memory. */
static bool memo_for(struct entry_memo *memo, const struct view_context *c)
{
	if (!c->idx || c->idx == memo->file)
		return true;
	if (!MP_GROW(memo->info, memo->alloc, c->idx->nframes))
		return false;
	memo->file = c->idx;
	memo->n = c->idx->nframes;
	memset(memo->info, 0, memo->n * sizeof(*memo->info));
	return true;
}

enum mp_errcode exp_llvm_add_view(struct exp_llvm *x, struct view *v,
				  const uint64_t *weights, struct mp_err *err)
{
	struct view_scratch scratch = { 0 };
	struct entry_memo memo = { 0 };
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
	/* At most one context each: their array made once, not copied as
	 * it doubles (fresh pages cost more than the copying here). */
	if (!MP_GROW(x->ctxs, x->actxs, x->nctxs + v->ncontexts))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * Each stack walked into scratch as stack entries, not kept in the
	 * view: the export keeps what it needs of a frame, and an indexed
	 * profile's contexts expanded all at once were hundreds of MB
	 * (cppcheck, 197k contexts: 869 -> 386 MB peak, the same bytes).
	 */
	for (size_t i = 0; i < v->ncontexts && !rc; i++) {
		const struct view_context *c = &v->contexts[i];
		struct ctx_frames cf = { .memo = &memo, .v = v, .c = c };
		struct mp_mib m = c->mib;
		uint32_t n;

		if ((rc = view_stack_scratch(v, c, &scratch, &cf.frames,
					     &cf.entries, &n, err)))
			break;
		if (!memo_for(&memo, c)) {
			rc = mp_fail(err, MP_E_NOMEM, NULL);
			break;
		}
		if (weights && weights[c->input] != 1)
			mib_scale(&m, weights[c->input]);
		rc = add_context(x, &cf, n, &m, err);
	}
	view_scratch_release(&scratch);
	free(memo.info);
	return rc;
}

/* ---- writing ---- */

/*
 * The file is laid out first (every section's size follows from the
 * counts), then written front to back through a small buffer: no offset
 * is patched afterwards, so the output may be a pipe, and a file of tens
 * of MB is never held in memory (cppcheck's four profiles: 64 MB, which
 * cost more in fresh pages than in writing).  The write checks that it
 * ended where the layout said.
 */
#define OUT_BUF (1u << 20)

struct out {
	FILE *fp;
	unsigned char *buf;
	size_t len;		/* bytes in buf */
	uint64_t n;		/* bytes put so far: the next one's offset */
	enum mp_errcode rc;	/* the first failure */
	int errnum;		/* its errno, for MP_E_IO */
};

static void flush_out(struct out *o)
{
	if (o->rc || !o->len)
		return;
	if (fwrite(o->buf, 1, o->len, o->fp) != o->len) {
		o->rc = MP_E_IO;
		o->errnum = errno ? errno : EIO;
	}
	o->len = 0;
}

/* Room for LEN <= OUT_BUF bytes at offset o->n; after a failure, a
 * scratch place that goes nowhere. */
static unsigned char *put(struct out *o, size_t len)
{
	if (o->len + len > OUT_BUF)
		flush_out(o);
	if (o->rc)
		o->len = 0;
	o->len += len;
	o->n += len;
	return o->buf + o->len - len;
}

static void put64(struct out *o, uint64_t v)
{
	mp_put_le64(put(o, 8), v);
}

static void put32(struct out *o, uint32_t v)
{
	mp_put_le32(put(o, 4), v);
}

static void put16(struct out *o, uint16_t v)
{
	unsigned char *p = put(o, 2);

	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

/* The MIB schema as LLVM's PortableMemInfoBlock serializes it. */
struct mib_cols {
	struct {
		int field;	/* -1: the histogram (a pointer in LLVM's
				 * struct, written as 0) */
		unsigned width;
	} col[LLVM_TAG_HISTOGRAM];
	size_t n;
	uint64_t size;		/* bytes per MIB */
};

static void mib_cols(struct mib_cols *c, const int *schema, size_t n)
{
	c->n = n;
	c->size = 0;
	for (size_t i = 0; i < n; i++) {
		int f = schema[i] == LLVM_TAG_HISTOGRAM
			? -1 : mib_field_by_tag((unsigned)schema[i]);

		c->col[i].field = f;
		c->col[i].width = f < 0 ? 8 : mib_fields[f].width == 8 ? 8 : 4;
		c->size += c->col[i].width;
	}
}

static void put_mib(struct out *o, const struct mp_mib *m,
		    const struct mib_cols *c)
{
	unsigned char *p = put(o, c->size);

	for (size_t i = 0; i < c->n; i++) {
		uint64_t v = c->col[i].field < 0 ? 0 : m->v[c->col[i].field];

		if (c->col[i].width == 8) {
			mp_put_le64(p, v);
			p += 8;
		} else {
			mp_put_le32(p, v > UINT32_MAX ? UINT32_MAX : (uint32_t)v);
			p += 4;
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

/*
 * Put X's frames in their output order (by content), and every call
 * stack's frame ids with them: from here on a frame's id is its place in
 * the output, and X takes no more contexts.  ORDER: room for the frames.
 */
static enum mp_errcode renumber_frames(struct exp_llvm *x, uint32_t *order)
{
	struct exp_llvm_frame *sorted;

	for (size_t i = 0; i < x->nframes; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, x->nframes, sizeof(*order), by_frame, x->frames);
	sorted = malloc((x->nframes + 1) * sizeof(*sorted));
	if (!sorted)
		return MP_E_NOMEM;
	for (size_t i = 0; i < x->nframes; i++) {
		x->frames[order[i]].out = (uint32_t)i;
		sorted[i] = x->frames[order[i]];
	}
	for (size_t i = 0; i < x->nstack_ids; i++)
		x->stack_ids[i] = x->frames[x->stack_ids[i]].out;
	free(x->frames);
	x->frames = sorted;
	x->aframes = x->nframes + 1;
	ht_release(&x->frame_ht);
	ht_release(&x->stack_ht);
	return MP_OK;
}

/* Call stacks by their frames' output ids (renumber_frames()), leaf
 * first. */
static int by_stack(const void *a, const void *b, void *arg)
{
	const struct exp_llvm *x = arg;
	const struct exp_llvm_stack *s = &x->stacks[*(const uint32_t *)a];
	const struct exp_llvm_stack *t = &x->stacks[*(const uint32_t *)b];
	const uint32_t *p = x->stack_ids + s->first, *q = x->stack_ids + t->first;
	uint32_t n = s->n < t->n ? s->n : t->n;

	for (uint32_t i = 0; i < n; i++)
		if (p[i] != q[i])
			return p[i] < q[i] ? -1 : 1;
	return s->n < t->n ? -1 : s->n > t->n;
}

/* Call stacks by their frames from the root, a stack before those it is
 * the root end of. */
static int by_stack_root(const void *a, const void *b, void *arg)
{
	const struct exp_llvm *x = arg;
	const struct exp_llvm_stack *s = &x->stacks[*(const uint32_t *)a];
	const struct exp_llvm_stack *t = &x->stacks[*(const uint32_t *)b];
	const uint32_t *p = x->stack_ids + s->first + s->n;
	const uint32_t *q = x->stack_ids + t->first + t->n;
	uint32_t n = s->n < t->n ? s->n : t->n;

	for (uint32_t i = 1; i <= n; i++)
		if (p[-(ptrdiff_t)i] != q[-(ptrdiff_t)i])
			return p[-(ptrdiff_t)i] < q[-(ptrdiff_t)i] ? -1 : 1;
	return s->n < t->n ? -1 : s->n > t->n;
}

/* The stacks' ranks in content order (by_stack), ORDER room for them:
 * on a thread of its own beside radix_build(), which sorts the other way
 * round (they write different fields of the stacks). */
struct ranking {
	struct exp_llvm *x;
	uint32_t *order;
};

static void *rank_stacks(void *arg)
{
	struct ranking *r = arg;
	struct exp_llvm *x = r->x;

	for (size_t i = 0; i < x->nstacks; i++)
		r->order[i] = (uint32_t)i;
	qsort_r(r->order, x->nstacks, sizeof(*r->order), by_stack, x);
	for (size_t i = 0; i < x->nstacks; i++)
		x->stacks[r->order[i]].rank = (uint32_t)i;
	return NULL;
}

/*
 * Version 3's radix array of the call stacks, into *OUT (*NOUT words),
 * each stack's id (the place of its length word) into its pos.  A stack
 * reads forward: its length, then its frames leaf first, where an
 * element negative as an i32 jumps forward by its magnitude to the rest,
 * a suffix another stack has spelled out (LLVM's LinearCallStackIdConverter).
 *
 * Built back to front: the stacks in order from the root, each pushed
 * root end first (so its root lies at the higher places), only past what
 * it shares with the stack before it, with a jump to that shared part,
 * then its length.  The array is then read in reverse.  A stack shares
 * its longest root end with the one before it in that order, so every
 * trie node is spelled once, plus a length and at most a jump per stack
 * (cppcheck's four profiles: 7.2 M words -> 2.2 M).  ORDER: room for
 * the stacks.
 */
static enum mp_errcode radix_build(struct exp_llvm *x, uint32_t *order,
				   uint32_t **out, size_t *nout)
{
	uint32_t *r = NULL, *at = NULL;	/* at[d]: where depth d of the path is */
	size_t n = 0, ar = 0, aat = 0;
	const struct exp_llvm_stack *prev = NULL;

	for (size_t i = 0; i < x->nstacks; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, x->nstacks, sizeof(*order), by_stack_root, x);
	for (size_t i = 0; i < x->nstacks; i++) {
		struct exp_llvm_stack *s = &x->stacks[order[i]];
		const uint32_t *ids = x->stack_ids + s->first;
		uint32_t shared = 0;

		if (prev) {
			const uint32_t *p = x->stack_ids + prev->first;

			while (shared < s->n && shared < prev->n &&
			       ids[s->n - 1 - shared] == p[prev->n - 1 - shared])
				shared++;
		}
		if (n + s->n + 2 > INT32_MAX ||
		    !MP_GROW(r, ar, n + s->n + 2) || !MP_GROW(at, aat, s->n)) {
			free(r);
			free(at);
			return n + s->n + 2 > INT32_MAX ? MP_E_TOO_LARGE
							 : MP_E_NOMEM;
		}
		/* Read in reverse, the jump follows the stack's own part. */
		if (shared) {
			r[n] = 0u - (uint32_t)(n - at[shared - 1]);
			n++;
		}
		for (uint32_t d = shared; d < s->n; d++) {
			at[d] = (uint32_t)n;
			r[n++] = ids[s->n - 1 - d];
		}
		s->pos = (uint32_t)n;
		r[n++] = s->n;
		prev = s;
	}
	for (size_t i = 0; i < x->nstacks; i++)
		x->stacks[i].pos = (uint32_t)(n - 1 - x->stacks[i].pos);
	free(at);
	*out = r;
	*nout = n;
	return MP_OK;
}

/*
 * A record's entry, its sort key packed in one word: its function's rank
 * among the GUIDs (which orders as the GUID), its kind (0: alloc site, 1:
 * call site), its call stack's rank (< 2^31) and its context's class
 * (< 2^5; 0 for a call site); CTX: an alloc site's context, a call site's
 * stack.  The records are then a radix sort away, where qsort() of a
 * million entries was a seventh of the export.
 */
struct rec_ent {
	uint64_t key;
	uint32_t ctx;
};

#define REC_CLS_BITS 5
#define REC_POS_SHIFT REC_CLS_BITS
#define REC_KIND_SHIFT (REC_POS_SHIFT + 31)
#define REC_RANK_SHIFT (REC_KIND_SHIFT + 1)
#define REC_RANKS ((uint64_t)1 << (64 - REC_RANK_SHIFT))

static uint64_t rec_key(uint64_t rank, unsigned kind, uint32_t pos,
			uint32_t cls)
{
	return rank << REC_RANK_SHIFT | (uint64_t)kind << REC_KIND_SHIFT |
	       (uint64_t)pos << REC_POS_SHIFT | cls;
}

static unsigned rec_kind(const struct rec_ent *e)
{
	return (unsigned)(e->key >> REC_KIND_SHIFT) & 1;
}


static uint64_t rec_rank(const struct rec_ent *e)
{
	return e->key >> REC_RANK_SHIFT;
}

static int by_rec_key(const void *a, const void *b)
{
	const struct rec_ent *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Sort E[0..N-1] by key, TMP room for N: least significant 16 bits
 * first, a pass skipped where every key has the same digit. */
static void radix_sort(struct rec_ent *e, struct rec_ent *tmp, size_t n)
{
	static const unsigned digits = 4;
	size_t (*count)[65536] = calloc(digits, sizeof(*count));
	struct rec_ent *from = e, *to = tmp;

	if (!count) {
		/* Out of memory for the counts: the slow way, same order. */
		qsort(e, n, sizeof(*e), by_rec_key);
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < digits; d++)
			count[d][(e[i].key >> (16 * d)) & 0xffff]++;
	for (unsigned d = 0; d < digits; d++) {
		size_t at = 0;
		bool one = false;

		for (size_t v = 0; v < 65536; v++) {
			size_t c = count[d][v];

			one |= c == n;
			count[d][v] = at;
			at += c;
		}
		if (one)
			continue;
		for (size_t i = 0; i < n; i++)
			to[count[d][(from[i].key >> (16 * d)) & 0xffff]++] = from[i];
		struct rec_ent *t = from;
		from = to;
		to = t;
	}
	if (from != e)
		memcpy(e, from, n * sizeof(*e));
	free(count);
}

/* The rank of GUID among X's (frames are in GUID order); false if none
 * of them has it. */
static bool guid_rank(const uint64_t *guids, size_t n, uint64_t guid,
		      uint64_t *rank)
{
	size_t at;
	bool found = mp_u64_find(guids, n, guid, &at);

	*rank = at;
	return found;
}

/*
 * The records' entries, sorted, into *OUT (*NOUT of them), and the
 * distinct GUIDs of X's frames in order into *GUIDS: rank -> GUID.
 */
static enum mp_errcode gather_records(struct exp_llvm *x, struct rec_ent **out,
				      size_t *nout, uint64_t **guids)
{
	struct rec_ent *e = NULL, *tmp = NULL;
	uint32_t *rank = malloc((x->nframes + 1) * sizeof(*rank));
	size_t n = 0, cap = x->nsites + 1, nguids = 0;
	uint64_t *g = malloc((x->nframes + 1) * sizeof(*g));
	enum mp_errcode rc = MP_E_NOMEM;

	if (!rank || !g)
		goto out;
	for (size_t i = 0; i < x->nframes; i++) {
		if (i == 0 || x->frames[i].guid != g[nguids - 1])
			g[nguids++] = x->frames[i].guid;
		rank[i] = (uint32_t)(nguids - 1);
	}
	if (nguids > REC_RANKS) {
		rc = MP_E_TOO_LARGE;
		goto out;
	}
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
	tmp = malloc(cap * sizeof(*tmp));
	if (!e || !tmp)
		goto out;
	for (size_t c = 0; c < x->nctxs; c++) {
		const struct exp_llvm_stack *s = &x->stacks[x->ctxs[c].stack];

		for (uint32_t i = 0; i < s->n; i++) {
			uint32_t f = x->stack_ids[s->first + i];

			e[n++] = (struct rec_ent){
				rec_key(rank[f], 0, s->rank, x->ctxs[c].cls),
				(uint32_t)c };
			if (!x->frames[f].inlined)
				break;
		}
	}
	for (size_t i = 0; i < x->nsites; i++) {
		uint64_t r;

		if (!guid_rank(g, nguids, x->sites[i].guid, &r)) {
			rc = MP_E_INVALID;
			goto out;
		}
		e[n++] = (struct rec_ent){
			rec_key(r, 1, x->stacks[x->sites[i].stack].rank, 0),
			x->sites[i].stack };
	}
	radix_sort(e, tmp, n);
	*out = e;
	*nout = n;
	*guids = g;
	e = NULL;
	g = NULL;
	rc = MP_OK;
out:
	free(e);
	free(tmp);
	free(rank);
	free(g);
	return rc;
}

/*
 * An on-disk chained hash table as LLVM's OnDiskChainedHashTableGenerator
 * lays it out: for each non-empty bucket, a u16 item count and its items
 * (u64 hash, u64 key length 8, u64 data length, u64 key, the data); zero
 * padding to 8; then the bucket count, the item count and each bucket's
 * offset from the start of the file (0: empty).  In MemProf's tables the
 * hash is the key.  The N items' keys come from KEY, the length of their
 * data from SIZE; EMIT writes item I's data.
 */
struct table_items {
	size_t n;
	uint64_t (*key)(const void *ctx, size_t i);
	uint64_t (*size)(const void *ctx, size_t i);
	void (*emit)(struct out *o, const void *ctx, size_t i);
	const void *ctx;
};

/* Where a table's parts go, from its first byte START on. */
struct table_plan {
	size_t nbuckets;
	size_t *head, *next;	/* each bucket's items, in item order */
	uint64_t *size;		/* each item's data length */
	uint64_t *bucket_off;
	uint64_t payload, table, end;
};

static void table_plan_release(struct table_plan *p)
{
	free(p->head);
	free(p->next);
	free(p->size);
	free(p->bucket_off);
	memset(p, 0, sizeof(*p));
}

static enum mp_errcode table_plan(struct table_plan *p,
				  const struct table_items *t, uint64_t start)
{
	uint64_t at = start;

	memset(p, 0, sizeof(*p));
	p->nbuckets = 1;
	while (p->nbuckets * 3 < t->n * 4)
		p->nbuckets *= 2;
	p->head = malloc(p->nbuckets * sizeof(*p->head));
	p->next = malloc((t->n + 1) * sizeof(*p->next));
	p->size = malloc((t->n + 1) * sizeof(*p->size));
	p->bucket_off = calloc(p->nbuckets, sizeof(*p->bucket_off));
	if (!p->head || !p->next || !p->size || !p->bucket_off) {
		table_plan_release(p);
		return MP_E_NOMEM;
	}
	/* Chains in item order: a bucket lists its items as they come. */
	for (size_t b = 0; b < p->nbuckets; b++)
		p->head[b] = SIZE_MAX;
	for (size_t i = t->n; i-- > 0;) {
		size_t b = t->key(t->ctx, i) & (p->nbuckets - 1);

		p->next[i] = p->head[b];
		p->head[b] = i;
	}
	p->payload = start;
	for (size_t b = 0; b < p->nbuckets; b++) {
		if (p->head[b] == SIZE_MAX)
			continue;
		p->bucket_off[b] = at;
		at += 2;
		for (size_t i = p->head[b]; i != SIZE_MAX; i = p->next[i])
			at += 32 + (p->size[i] = t->size(t->ctx, i));
	}
	p->table = (at + 7) & ~(uint64_t)7;
	p->end = p->table + 16 + 8 * (uint64_t)p->nbuckets;
	return MP_OK;
}

static void table_emit(struct out *o, const struct table_items *t,
		       const struct table_plan *p)
{
	for (size_t b = 0; b < p->nbuckets; b++) {
		uint16_t count = 0;

		if (p->head[b] == SIZE_MAX)
			continue;
		for (size_t i = p->head[b]; i != SIZE_MAX; i = p->next[i])
			count++;
		put16(o, count);
		for (size_t i = p->head[b]; i != SIZE_MAX; i = p->next[i]) {
			uint64_t key = t->key(t->ctx, i);

			put64(o, key);		/* hash */
			put64(o, 8);		/* key length */
			put64(o, p->size[i]);
			put64(o, key);
			t->emit(o, t->ctx, i);
		}
	}
	while (o->n % 8)
		put(o, 1)[0] = 0;
	put64(o, p->nbuckets);
	put64(o, t->n);
	for (size_t b = 0; b < p->nbuckets; b++)
		put64(o, p->bucket_off[b]);
}

/* The records: e[] sorted by GUID, kind and stack, split by GUID. */
struct records {
	const struct exp_llvm *x;
	const struct rec_ent *e;
	const uint64_t *guids;	/* by rank */
	size_t *starts;		/* record r is e[starts[r] .. starts[r + 1]) */
	struct mib_cols cols;
	unsigned version;	/* 0 or 3 */
	struct table_items items;
	struct table_plan plan;
};

static uint64_t record_key(const void *ctx, size_t r)
{
	const struct records *R = ctx;

	return R->guids[rec_rank(&R->e[R->starts[r]])];
}

/* The bytes of a call stack of N frames as version 0 stores it (u64
 * count, u64 frame ids) or as version 3 refers to it (u32 position). */
static uint64_t stack_size(const struct records *R, uint32_t n)
{
	return R->version == 0 ? 8 + 8 * (uint64_t)n : 4;
}

static uint64_t record_size(const void *ctx, size_t r)
{
	const struct records *R = ctx;
	const struct exp_llvm *x = R->x;
	uint64_t size = 16;

	for (size_t k = R->starts[r]; k < R->starts[r + 1]; k++) {
		const struct rec_ent *e = &R->e[k];

		if (rec_kind(e) == 0)
			size += stack_size(R, x->stacks[x->ctxs[e->ctx].stack].n) +
				R->cols.size;
		else
			size += stack_size(R, x->stacks[e->ctx].n);
	}
	return size;
}

static void put_stack_v0(struct out *o, const struct exp_llvm *x,
			 const struct exp_llvm_stack *s)
{
	put64(o, s->n);
	for (uint32_t k = 0; k < s->n; k++)
		put64(o, x->stack_ids[s->first + k]);
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

	while (i + na < end && rec_kind(&R->e[i + na]) == 0)
		na++;
	put64(o, na);
	for (size_t k = i; k < i + na; k++) {
		const struct exp_llvm_ctx *c = &x->ctxs[R->e[k].ctx];

		if (R->version == 0)
			put_stack_v0(o, x, &x->stacks[c->stack]);
		else
			put32(o, x->stacks[c->stack].pos);
		put_mib(o, &c->mib, &R->cols);
	}
	put64(o, end - i - na);
	for (size_t k = i + na; k < end; k++) {
		if (R->version == 0)
			put_stack_v0(o, x, &x->stacks[R->e[k].ctx]);
		else
			put32(o, x->stacks[R->e[k].ctx].pos);
	}
}

/* R's records split and laid out from START on. */
static enum mp_errcode records_plan(struct records *R, size_t n, uint64_t start)
{
	R->starts = malloc((n + 2) * sizeof(*R->starts));
	if (!R->starts)
		return MP_E_NOMEM;
	R->items = (struct table_items){ 0, record_key, record_size,
					 emit_record, R };
	for (size_t i = 0; i < n; i++)
		if (i == 0 || rec_rank(&R->e[i]) != rec_rank(&R->e[i - 1]))
			R->starts[R->items.n++] = i;
	R->starts[R->items.n] = n;
	return table_plan(&R->plan, &R->items, start);
}

static void records_release(struct records *R)
{
	free(R->starts);
	table_plan_release(&R->plan);
}

/* Version 0's frame table: frame id -> its bytes; the context is X
 * (its frames in output order, renumber_frames()). */
static uint64_t frame_key(const void *ctx, size_t i)
{
	(void)ctx;
	return i;
}

static uint64_t frame_size(const void *ctx, size_t i)
{
	(void)ctx;
	(void)i;
	return LLVM_FRAME_SIZE;
}

static void put_frame(struct out *o, const struct exp_llvm_frame *f)
{
	unsigned char *p = put(o, LLVM_FRAME_SIZE);

	mp_put_le64(p, f->guid);
	mp_put_le32(p + 8, f->line_offset);
	mp_put_le32(p + 12, f->column);
	p[16] = f->inlined;
}

static void emit_frame(struct out *o, const void *ctx, size_t i)
{
	const struct exp_llvm *x = ctx;

	put_frame(o, &x->frames[i]);
}

/* The whole file's layout. */
struct layout {
	unsigned hv, mv;
	size_t hdr_size;
	uint64_t hash_off, memprof_off;
	/* MemProf version 3 */
	uint64_t cs_off;
	const uint32_t *radix;	/* the call stacks, back to front */
	size_t nradix;
	/* version 0 */
	struct table_items fitems;
	struct table_plan fplan;
	struct records R;
	uint64_t end;		/* of the MemProf section */
	uint64_t size;
};

#define SUMMARY_SIZE (8 * (2 + 6 + 16 * 3))
#define COUNTERS_SIZE 24

static enum mp_errcode lay_out(struct layout *l, const struct exp_llvm *x,
			       size_t nrec)
{
	enum mp_errcode rc;
	uint64_t at;

	l->hash_off = l->hdr_size + SUMMARY_SIZE;
	l->memprof_off = l->hash_off + COUNTERS_SIZE;
	at = l->memprof_off;
	if (l->mv == 0) {
		/* RecordTableOffset, FramePayloadOffset, FrameTableOffset,
		 * the full schema; the records; the frames' table. */
		at += 24 + 8 + 8 * (uint64_t)LLVM_TAG_HISTOGRAM;
		if ((rc = records_plan(&l->R, nrec, at)))
			return rc;
		l->fitems = (struct table_items){ x->nframes, frame_key,
						  frame_size, emit_frame, x };
		if ((rc = table_plan(&l->fplan, &l->fitems, l->R.plan.end)))
			return rc;
		l->end = l->fplan.end;
	} else {
		/* The version; three offsets; the schema; the frames; the
		 * call stacks' radix array. */
		at += 8 + 24 + 8 + 8 * (uint64_t)l->R.cols.n +
		      LLVM_FRAME_SIZE * (uint64_t)x->nframes;
		l->cs_off = at;
		at += 4 * (uint64_t)l->nradix;
		if ((rc = records_plan(&l->R, nrec, at)))
			return rc;
		l->end = l->R.plan.end;
	}
	l->size = l->end + (l->hv == 12 ? 16 : 0);
	return MP_OK;
}

static void write_header(struct out *o, const struct layout *l)
{
	static const uint64_t cutoffs[16] = {
		10000, 100000, 200000, 300000, 400000, 500000, 600000, 700000,
		800000, 900000, 950000, 990000, 999000, 999900, 999990, 999999,
	};
	unsigned char *h = put(o, l->hdr_size);

	memset(h, 0, l->hdr_size);
	mp_put_le64(h + LLVM_HDR_MAGIC, LLVM_MAGIC);
	mp_put_le64(h + LLVM_HDR_VERSION, l->hv | LLVM_VARIANT_MEMPROF);
	/* hash type 0: MD5 */
	mp_put_le64(h + LLVM_HDR_HASH_OFFSET, l->hash_off);
	mp_put_le64(h + LLVM_HDR_MEMPROF_OFFSET, l->memprof_off);
	if (l->hv == 12) {
		/* No binary ids, no vtable names: a u64 0 each, at the end. */
		mp_put_le64(h + LLVM_HDR_BINARY_ID_OFFSET, l->end);
		mp_put_le64(h + LLVM_HDR_VTABLE_NAMES_OFFSET, l->end + 8);
	}
	/* The summary: no counters, so every count is 0. */
	put64(o, 6);
	put64(o, 16);
	for (int i = 0; i < 6; i++)
		put64(o, 0);
	for (int i = 0; i < 16; i++) {
		put64(o, cutoffs[i]);
		put64(o, 0);
		put64(o, 0);
	}
	/* The counters' table: one empty bucket. */
	put64(o, 1);
	put64(o, 0);
	put64(o, 0);
}

/*
 * MemProf version 3: u64 3, CallStackPayloadOffset, RecordPayloadOffset,
 * RecordTableOffset; the schema; the frames at their linear ids; the call
 * stacks (ORDER: stacks in output order); the records.
 */
static void write_memprof_v3(struct out *o, const struct layout *l,
			     const struct exp_llvm *x, const int *schema)
{
	put64(o, LLVM_MEMPROF_VERSION);
	put64(o, l->cs_off);
	put64(o, l->R.plan.payload);
	put64(o, l->R.plan.table);
	put64(o, l->R.cols.n);
	for (size_t i = 0; i < l->R.cols.n; i++)
		put64(o, (uint64_t)schema[i]);
	for (size_t i = 0; i < x->nframes; i++)
		put_frame(o, &x->frames[i]);
	for (size_t i = l->nradix; i-- > 0;)
		put32(o, l->radix[i]);
	table_emit(o, &l->R.items, &l->R.plan);
}

/*
 * MemProf version 0, the RFC's layout (read by clang 19, not later): no
 * version word; RecordTableOffset, FramePayloadOffset, FrameTableOffset;
 * the full schema; the records, each alloc site and call site holding its
 * frame ids; the frames in a table of their own keyed by frame id.
 */
static void write_memprof_v0(struct out *o, const struct layout *l)
{
	put64(o, l->R.plan.table);
	put64(o, l->fplan.payload);
	put64(o, l->fplan.table);
	put64(o, LLVM_TAG_HISTOGRAM);
	for (int i = 0; i < LLVM_TAG_HISTOGRAM; i++)
		put64(o, (uint64_t)i + 1);
	table_emit(o, &l->R.items, &l->R.plan);
	table_emit(o, &l->fitems, &l->fplan);
}

enum mp_errcode exp_llvm_write(struct exp_llvm *x,
			       const struct exp_llvm_opts *opts, FILE *out,
			       struct mp_err *err)
{
	static const int hot_cold[] = { 1, 5, 10, 23 };
	unsigned hv = opts && opts->header_version ? opts->header_version : 8;
	unsigned mv = opts ? opts->memprof_version : LLVM_MEMPROF_VERSION;
	int full[LLVM_TAG_HISTOGRAM];
	const int *schema = hot_cold;
	size_t nschema = 4, nrec = 0;
	struct layout l = { .hv = hv, .mv = mv };
	struct out o = { .fp = out };
	uint32_t *order = NULL;
	struct rec_ent *recs = NULL;
	uint64_t *guids = NULL;
	uint32_t *radix = NULL;
	enum mp_errcode rc = MP_E_NOMEM;

	if (hv != 8 && hv != 12)
		return mp_fail(err, MP_E_INVALID,
			       "LLVM indexed profile header version %u (8 or 12)",
			       hv);
	if (mv != 0 && mv != LLVM_MEMPROF_VERSION)
		return mp_fail(err, MP_E_INVALID, "MemProf version %u (0 or 3)",
			       mv);
	for (int i = 0; i < LLVM_TAG_HISTOGRAM; i++)
		full[i] = i + 1;
	if (mv == 0 || (opts && opts->full_schema)) {
		schema = full;
		nschema = LLVM_TAG_HISTOGRAM;
	}
	/* Frames and call stacks numbered by their contents. */
	order = malloc((x->nframes + 2 * x->nstacks + 1) * sizeof(*order));
	if (!order || renumber_frames(x, order))
		goto fail;
	/*
	 * The records list their sites by stack, in content order (the
	 * ranks); version 3 names the stacks by their places in the radix
	 * array, built in another order.  Two sorts of every stack, at the
	 * same time given two threads (cppcheck's four profiles: 191k
	 * stacks, 60 to 70 ms each).
	 */
	{
		struct ranking rk = { x, order };
		pthread_t t;
		bool beside = mv != 0 && opts && opts->jobs > 1 &&
			      mp_thread_beside(&t, rank_stacks, &rk) == 0;

		if (!beside)
			rank_stacks(&rk);
		if (mv != 0)
			rc = radix_build(x, order + x->nstacks, &radix, &l.nradix);
		if (beside)
			pthread_join(t, NULL);
		if (mv != 0 && rc)
			goto fail;
	}
	l.radix = radix;
	if ((rc = gather_records(x, &recs, &nrec, &guids))) {
		if (rc == MP_E_NOMEM)
			goto fail;
		mp_fail(err, rc, rc == MP_E_TOO_LARGE
			? "more functions than the writer's record keys hold "
			  "(%llu)" : "a call site's function has no frame",
			(unsigned long long)REC_RANKS);
		goto done;
	}
	l.hdr_size = llvm_header_size(hv);
	l.R = (struct records){ .x = x, .e = recs, .guids = guids,
				.version = mv };
	mib_cols(&l.R.cols, schema, nschema);
	if ((rc = lay_out(&l, x, nrec)))
		goto fail;
	rc = MP_E_NOMEM;
	if (!(o.buf = malloc(OUT_BUF)))
		goto fail;

	write_header(&o, &l);
	if (mv == 0)
		write_memprof_v0(&o, &l);
	else
		write_memprof_v3(&o, &l, x, schema);
	if (hv == 12) {
		put64(&o, 0);		/* no binary ids */
		put64(&o, 0);		/* no vtable names */
	}
	flush_out(&o);
	if (o.rc) {
		rc = mp_fail(err, o.rc, "cannot write output: %s",
			     strerror(o.errnum));
		goto done;
	}
	if (o.n != l.size) {
		rc = mp_fail(err, MP_E_INVALID, "the LLVM profile came out at "
			     "%llu bytes where its layout had %llu",
			     (unsigned long long)o.n,
			     (unsigned long long)l.size);
		goto done;
	}
	rc = MP_OK;
	goto done;
fail:
	mp_fail(err, rc, rc == MP_E_TOO_LARGE
		? "the profile is too large for LLVM's 32-bit call stack ids"
		: NULL);
done:
	free(o.buf);
	free(order);
	free(recs);
	free(guids);
	free(radix);
	records_release(&l.R);
	table_plan_release(&l.fplan);
	return rc;
}
