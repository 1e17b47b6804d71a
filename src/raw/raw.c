#include "raw.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_file.h"
#include "hashtable/ht.h"

/*
 * Decoding walks a file profile by profile.  Within a profile, the three
 * sections are bounded by the header's offsets (segments up to the MIB
 * offset, MIBs up to the stack offset, stacks up to TotalSize); a count is
 * believed only after count x minimum entry size fits in its section, so
 * a corrupt count can neither read past the buffer nor make us allocate
 * more than the input's size justifies.
 */

void raw_file_init(struct raw_file *rf)
{
	memset(rf, 0, sizeof(*rf));
}

static void scratch_free(struct raw_scratch *sc);

void raw_file_release(struct raw_file *rf)
{
	if (!rf)
		return;
	free(rf->profiles);
	free(rf->contexts);
	mp_arena_release(&rf->arena);
	scratch_free(rf->scratch);
	memset(rf, 0, sizeof(*rf));
}

/* An entry of a profile's sample block. */
struct samp_ref {
	uint64_t id;			/* stack id */
	bool used;			/* a MIB record took it */
	struct mp_samp s;
};

/* A stack of the stack section, before contexts are built. */
struct stack_ref {
	uint64_t id;
	const unsigned char *pcs;	/* into the input buffer */
	uint32_t npcs;
	uint32_t ctx1;			/* its context + 1, once looked up */
	bool first;			/* the first entry with its id: the
					 * one the ids map names */
};

/*
 * What a pass over the MIB records does: check them only (raw_walk's first
 * pass, which also learns whether any context has several records), hand
 * each to the caller (its second pass), or build contexts (raw_parse).
 */
enum parse_mode { MODE_CHECK, MODE_WALK, MODE_CONTEXTS };

/*
 * The stack index of the profile being parsed, kept in the raw_file from
 * one parse to the next: a merge parses hundreds of files, and fresh
 * megabytes for each cost a page fault every 4 KiB.
 */
struct raw_scratch {
	struct stack_ref *stacks;
	size_t nstacks, astacks;
	struct ht_map ids;		/* stack id -> index in stacks + 1 */
	uint32_t *rec_stack;		/* MODE_CHECK: each record's stack */
	size_t arec_stack;
	struct samp_ref *samp;		/* the profile's sample block, */
	size_t nsamp, asamp;		/* by stack id, then interval */
	struct mp_samp *samp_s;		/* samp[i].s, contiguous */
	size_t asamp_s;
};

static void scratch_free(struct raw_scratch *sc)
{
	if (!sc)
		return;
	free(sc->stacks);
	free(sc->rec_stack);
	free(sc->samp);
	free(sc->samp_s);
	ht_map_release(&sc->ids);
	free(sc);
}

/* Empty RF for the next file, keeping its scratch tables. */
static enum mp_errcode begin(struct raw_file *rf, struct mp_err *err)
{
	struct raw_scratch *sc = rf->scratch;

	rf->scratch = NULL;
	raw_file_release(rf);
	rf->scratch = sc ? sc : calloc(1, sizeof(*sc));
	return rf->scratch ? MP_OK : mp_fail(err, MP_E_NOMEM, NULL);
}

struct parse {
	enum parse_mode mode;
	raw_record_fn fn;		/* MODE_WALK */
	void *arg;
	bool repeated;			/* MODE_CHECK: a stack has two records */
	struct raw_file *rf;
	struct mp_err *err;
	const unsigned char *base;	/* the profile's first byte */
	uint64_t poff;			/* its offset in the file */
	uint64_t psize;			/* its TotalSize */
	uint64_t used;			/* where the section parsed last ends */
	uint32_t version;
	size_t ctx_alloc;
	/* Contexts of earlier profiles, keyed by a hash of their identity. */
	struct ht file_ctx;		/* contexts by identity (context_key) */
};

static enum mp_errcode parse_segments(struct parse *p, struct raw_profile *prof,
				      uint64_t off, uint64_t end)
{
	uint64_t count, entry = p->version >= 3 ? RAW_SEGMENT_SIZE_V3
						: RAW_SEGMENT_SIZE_V1;
	const unsigned char *s;

	if (end - off < 8)
		return mp_fail(p->err, MP_E_CORRUPT,
			       "segment section at offset 0x%" PRIx64
			       " is too small for its count",
			       p->poff + off);
	count = mp_le64(p->base + off);
	if (count > (end - off - 8) / entry)
		return mp_fail(p->err, MP_E_CORRUPT,
			       "segment section at offset 0x%" PRIx64
			       " claims %" PRIu64 " entries of %" PRIu64
			       " bytes but holds %" PRIu64 " bytes",
			       p->poff + off, count, entry, end - off - 8);
	prof->nsegments = (size_t)count;
	prof->segments = mp_arena_alloc(&p->rf->arena,
					(size_t)count * sizeof(*prof->segments) + 1);
	if (!prof->segments)
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	s = p->base + off + 8;
	p->used = off + 8 + count * entry;
	for (uint64_t i = 0; i < count; i++, s += entry) {
		struct raw_segment *seg = &prof->segments[i];

		seg->start = mp_le64(s);
		seg->end = mp_le64(s + 8);
		seg->offset = mp_le64(s + 16);
		if (p->version >= 3) {
			uint64_t n = mp_le64(s + 24);

			if (n > RAW_BUILD_ID_MAX)
				return mp_fail(p->err, MP_E_CORRUPT,
					       "segment %" PRIu64 " has a build id of %"
					       PRIu64 " bytes (at most %d)",
					       i, n, RAW_BUILD_ID_MAX);
			seg->build_id_size = (uint32_t)n;
			memcpy(seg->build_id, s + 32, (size_t)n);
		}
		if (seg->end < seg->start)
			return mp_fail(p->err, MP_E_CORRUPT,
				       "segment %" PRIu64 " ends (0x%" PRIx64
				       ") before it starts (0x%" PRIx64 ")",
				       i, seg->end, seg->start);
	}
	return MP_OK;
}

/*
 * Index PROF's segments as disjoint ranges, each given to the first
 * segment (lowest index) that holds it: a sweep over the segments'
 * boundaries in address order with a heap of the segments open there,
 * O(n log n) whatever the overlaps.  A well-formed map (disjoint
 * segments) comes out as its non-empty segments sorted.
 */
struct seg_event {
	uint64_t at;
	uint32_t segment;
	bool open;
};

static int by_event(const void *x, const void *y)
{
	const struct seg_event *a = x, *b = y;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->open - b->open;	/* closes first */
}

static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

enum mp_errcode raw_profile_index(struct raw_profile *prof,
				  struct mp_arena *arena, struct mp_err *err)
{
	size_t n = prof->nsegments, nev = 0, nheap = 0, nr = 0;
	struct seg_event *ev = malloc((2 * n + 1) * sizeof(*ev));
	uint32_t *heap = malloc((n + 1) * sizeof(*heap));
	uint8_t *closed = calloc(n + 1, 1);
	struct raw_seg_range *r;
	enum mp_errcode rc = MP_OK;

	r = mp_arena_alloc(arena, (2 * n + 1) * sizeof(*r));
	if (!ev || !heap || !closed || !r || n > UINT32_MAX) {
		rc = mp_fail(err, MP_E_NOMEM, NULL);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct raw_segment *s = &prof->segments[i];

		if (s->start == s->end)
			continue;
		ev[nev++] = (struct seg_event){ s->start, (uint32_t)i, true };
		ev[nev++] = (struct seg_event){ s->end, (uint32_t)i, false };
	}
	qsort(ev, nev, sizeof(*ev), by_event);
	for (size_t k = 0; k < nev;) {
		uint64_t at = ev[k].at;

		for (; k < nev && ev[k].at == at; k++) {
			if (ev[k].open)
				heap_push(heap, &nheap, ev[k].segment);
			else
				closed[ev[k].segment] = 1;
		}
		while (nheap && closed[heap[0]])
			heap_pop(heap, &nheap);
		if (!nheap || k == nev)
			continue;
		/* [at, next boundary) belongs to the lowest open segment. */
		if (nr && r[nr - 1].end == at && r[nr - 1].segment == heap[0])
			r[nr - 1].end = ev[k].at;
		else
			r[nr++] = (struct raw_seg_range){ at, ev[k].at, heap[0] };
	}
	prof->ranges = r;
	prof->nranges = nr;
out:
	free(ev);
	free(heap);
	free(closed);
	return rc;
}

uint32_t raw_unmapped_run_end(const struct raw_profile *prof, const void *pcs,
			      bool le_bytes, uint32_t npcs, uint32_t k,
			      size_t *hint)
{
	uint32_t end;

#define PC_AT(i) (le_bytes ? mp_le64((const unsigned char *)pcs + 8 * (size_t)(i)) \
			   : ((const uint64_t *)pcs)[i])
	for (end = k; end < npcs && raw_segment_of(prof, PC_AT(end), hint) < 0;)
		end++;
	if (npcs - end < RAW_RETURN_MIN)
		return 0;
	for (uint32_t i = end; i < npcs; i++)
		if (raw_segment_of(prof, PC_AT(i), hint) < 0)
			return 0;
#undef PC_AT
	return end;
}

/* raw_segment_of() past its hint: a binary search of the ranges. */
int64_t raw_segment_search(const struct raw_profile *prof, uint64_t pc,
			   size_t *hint)
{
	const struct raw_seg_range *r = prof->ranges;
	size_t lo = 0, hi = prof->nranges;

	while (lo < hi) {	/* the first range starting after PC */
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= r[lo - 1].end)
		return -1;
	*hint = lo - 1;
	return r[lo - 1].segment;
}

static enum mp_errcode parse_stacks(struct parse *p, uint64_t off, uint64_t end)
{
	struct raw_scratch *sc = p->rf->scratch;
	struct ht_map *ids = &sc->ids;
	uint64_t count, pos;
	struct stack_ref *st;

	if (end - off < 8)
		return mp_fail(p->err, MP_E_CORRUPT,
			       "stack section at offset 0x%" PRIx64
			       " is too small for its count", p->poff + off);
	count = mp_le64(p->base + off);
	/* Each entry is at least an id and a length. */
	if (count > (end - off - 8) / 16)
		return mp_fail(p->err, MP_E_CORRUPT,
			       "stack section at offset 0x%" PRIx64
			       " claims %" PRIu64 " stacks but holds %" PRIu64
			       " bytes", p->poff + off, count, end - off - 8);
	sc->nstacks = 0;
	if (!MP_GROW(sc->stacks, sc->astacks, (size_t)count + 1) ||
	    ht_map_reset(ids, (size_t)count))
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	st = sc->stacks;
	memset(st, 0, ((size_t)count + 1) * sizeof(*st));
	pos = off + 8;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t id, n;
		uint32_t *slot;
		bool added;

		if (end - pos < 16) {
			return mp_fail(p->err, MP_E_CORRUPT,
				       "stack %" PRIu64 " of %" PRIu64 " at offset 0x%"
				       PRIx64 " runs past the end of the stack section",
				       i, count, p->poff + pos);
		}
		id = mp_le64(p->base + pos);
		n = mp_le64(p->base + pos + 8);
		pos += 16;
		if (n > (end - pos) / 8) {
			return mp_fail(p->err, MP_E_CORRUPT,
				       "stack id %" PRIu64 " claims %" PRIu64
				       " PCs but only %" PRIu64 " bytes remain",
				       id, n, end - pos);
		}
		if (n > UINT32_MAX) {
			return mp_fail(p->err, MP_E_CORRUPT,
				       "stack id %" PRIu64 " has %" PRIu64 " PCs",
				       id, n);
		}
		/* Room for COUNT keys was made: no allocation here. */
		slot = ht_map_find_or_add(ids, id, &added);
		if (!added) {
			const struct stack_ref *prev = &st[*slot - 1];

			if (prev->npcs != n ||
			    memcmp(prev->pcs, p->base + pos, (size_t)n * 8)) {
				return mp_fail(p->err, MP_E_CORRUPT,
					       "stack id %" PRIu64 " appears twice "
					       "with different stacks", id);
			}
		} else {
			*slot = (uint32_t)i + 1;
		}
		st[i].first = added;
		st[i].id = id;
		st[i].pcs = p->base + pos;
		st[i].npcs = (uint32_t)n;
		pos += n * 8;
	}
	sc->nstacks = (size_t)count;
	p->used = pos;
	return MP_OK;
}

/*
 * The hash of a context's identity across the profiles of one file.  A
 * stack id names one stack within a process (checked in parse_stacks), so
 * the id and the memory map make a good hash; same_context() still
 * compares the PCs.
 */
static uint64_t context_key(uint32_t layout, uint64_t stack_id)
{
	return mp_hash64(stack_id ^ ((uint64_t)layout << 40));
}

static bool same_context(const struct raw_file *rf, const struct raw_context *c,
			 uint32_t layout, uint64_t stack_id,
			 const uint64_t *pcs, uint32_t npcs)
{
	return c->stack_id == stack_id && c->npcs == npcs &&
	       rf->profiles[c->profile].layout == layout &&
	       memcmp(c->pcs, pcs, (size_t)npcs * 8) == 0;
}

/*
 * Look up or create the context for STACK in the file-wide table.
 * *FRESH tells whether it was created.
 */
/* What file_context looks a context up by, for same_ctx(). */
struct ctx_key {
	const struct raw_file *rf;
	uint32_t layout;
	uint64_t stack_id;
	const uint64_t *pcs;
	uint32_t npcs;
};

static bool same_ctx(const void *key, uint32_t id, const void *arg)
{
	const struct ctx_key *k = key;

	(void)arg;
	return same_context(k->rf, &k->rf->contexts[id], k->layout,
			    k->stack_id, k->pcs, k->npcs);
}

static enum mp_errcode file_context(struct parse *p, uint32_t pidx,
				    const struct stack_ref *stack,
				    struct raw_context **out, bool *fresh)
{
	struct raw_file *rf = p->rf;
	struct ctx_key k = { rf, rf->profiles[pidx].layout, stack->id, NULL,
			     stack->npcs };
	uint64_t *pcs, h;
	struct raw_context *c;
	uint32_t id;

	pcs = mp_arena_alloc(&rf->arena, (size_t)stack->npcs * 8 + 1);
	if (!pcs)
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	for (uint32_t i = 0; i < stack->npcs; i++)
		pcs[i] = mp_le64(stack->pcs + (size_t)i * 8);
	k.pcs = pcs;
	h = context_key(k.layout, stack->id);
	id = ht_find(&p->file_ctx, h, same_ctx, &k, NULL);
	if (id != HT_NONE) {
		*out = &rf->contexts[id];
		*fresh = false;
		return MP_OK;
	}
	if (rf->ncontexts >= UINT32_MAX - 1)
		return mp_fail(p->err, MP_E_TOO_LARGE, "too many contexts");
	if (!MP_GROW(rf->contexts, p->ctx_alloc, rf->ncontexts + 1) ||
	    ht_insert(&p->file_ctx, h, (uint32_t)rf->ncontexts))
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	c = &rf->contexts[rf->ncontexts++];
	memset(c, 0, sizeof(*c));
	c->stack_id = stack->id;
	c->pcs = pcs;
	c->npcs = stack->npcs;
	c->profile = pidx;
	*out = c;
	*fresh = true;
	return MP_OK;
}

#define LOAD_4(p) mp_le32(p)
#define LOAD_8(p) mp_le64(p)

/*
 * Spelled out field by field from RAW_MIB_FIELDS, not looped over
 * mib_fields[]: a merge decodes millions of records.
 */
static void decode_mib(const unsigned char *m, uint32_t version,
		       struct mp_mib *mib)
{
#define DECODE(name, tag, width, off, ver, rule) \
	mib->v[MIB_##name] = version >= (ver) ? LOAD_##width(m + (off)) : 0;
	RAW_MIB_FIELDS(DECODE)
#undef DECODE
}

/* Add histogram H (N entries) into context C. */
static enum mp_errcode add_hist(struct parse *p, struct raw_context *c,
				const uint64_t *h, uint32_t n)
{
	if (n > c->nhist) {
		uint64_t *bigger = mp_arena_alloc(&p->rf->arena, (size_t)n * 8);

		if (!bigger)
			return mp_fail(p->err, MP_E_NOMEM, NULL);
		if (c->nhist)
			memcpy(bigger, c->hist, (size_t)c->nhist * 8);
		c->hist = bigger;
	}
	c->nhist = mib_hist_add(c->hist, c->nhist, h, n);
	return MP_OK;
}

static const struct mp_samp *samples_of(struct raw_scratch *sc, uint64_t id,
					uint32_t *n);
static enum mp_errcode samples_all_used(struct parse *p);

static enum mp_errcode parse_mibs(struct parse *p, uint32_t pidx, uint64_t off,
				  uint64_t end, struct stack_ref *stacks,
				  const struct ht_map *ids)
{
	uint32_t v = p->version;
	uint64_t mib_size = v >= 4 ? RAW_MIB_SIZE_V4
				   : v >= 2 ? RAW_MIB_SIZE_V2 : RAW_MIB_SIZE_V1;
	uint64_t hent = v >= 5 ? RAW_HIST_ENTRY_SIZE_V5 : RAW_HIST_ENTRY_SIZE_V4;
	struct raw_scratch *sc = p->rf->scratch;
	uint64_t count, pos, *hist = NULL;
	size_t hist_alloc = 0;
	enum mp_errcode rc = MP_OK;

	if (end - off < 8)
		return mp_fail(p->err, MP_E_CORRUPT,
			       "MIB section at offset 0x%" PRIx64
			       " is too small for its count", p->poff + off);
	count = mp_le64(p->base + off);
	if (count > (end - off - 8) / (8 + mib_size))
		return mp_fail(p->err, MP_E_CORRUPT,
			       "MIB section at offset 0x%" PRIx64 " claims %" PRIu64
			       " records of %" PRIu64 " bytes but holds %" PRIu64
			       " bytes", p->poff + off, count, 8 + mib_size,
			       end - off - 8);
	p->rf->profiles[pidx].nrecords = count;
	/* At most one new context per record: size the array once. */
	if (p->mode == MODE_CONTEXTS &&
	    !MP_GROW(p->rf->contexts, p->ctx_alloc,
		     p->rf->ncontexts + (size_t)count + 1))
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	if (p->mode == MODE_CHECK &&
	    !MP_GROW(sc->rec_stack, sc->arec_stack, (size_t)count + 1))
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	pos = off + 8;
	for (uint64_t i = 0; i < count; i++) {
		const unsigned char *m;
		struct raw_context *c = NULL;
		struct stack_ref *sr;
		struct mp_mib mib;
		uint64_t id, nh = 0, hpos = 0;
		uint32_t s1 = 0;	/* the record's stack + 1 */
		bool fresh = false;
		const struct mp_samp *ss;
		uint32_t nss;

		if (end - pos < 8 + mib_size) {
			rc = mp_fail(p->err, MP_E_CORRUPT,
				     "MIB record %" PRIu64 " at offset 0x%" PRIx64
				     " runs past the end of the MIB section",
				     i, p->poff + pos);
			goto out;
		}
		id = mp_le64(p->base + pos);
		m = p->base + pos + 8;
		pos += 8 + mib_size;
		if (v >= 4) {
			nh = mp_le32(m + mib_fields[MIB_AccessHistogramSize].offset);
			if (nh > (end - pos) / hent) {
				rc = mp_fail(p->err, MP_E_CORRUPT,
					     "MIB record %" PRIu64 " (stack id %" PRIu64
					     ") claims %" PRIu64 " histogram entries"
					     " but only %" PRIu64 " bytes remain",
					     i, id, nh, end - pos);
				goto out;
			}
			hpos = pos;
			pos += nh * hent;
		}

		if (p->mode == MODE_WALK) {
			/* Checked in the first pass, which noted the stack. */
			sr = &stacks[sc->rec_stack[i]];
		} else if (i < sc->nstacks && stacks[i].id == id && stacks[i].first) {
			/*
			 * compiler-rt writes the records and the stacks in
			 * the same order: the record's stack is most often
			 * the entry at its own index, found without a probe.
			 */
			s1 = (uint32_t)i + 1;
			sr = &stacks[i];
		} else {
			if (!ht_map_get(ids, id, &s1)) {
				rc = mp_fail(p->err, MP_E_CORRUPT,
					     "MIB record %" PRIu64 " refers to stack id %"
					     PRIu64 ", which has no stack", i, id);
				goto out;
			}
			sr = &stacks[s1 - 1];
		}
		ss = samples_of(sc, id, &nss);
		if (p->mode == MODE_CHECK) {
			sc->rec_stack[i] = s1 - 1;
			/* ctx1 counts the stack's records in this pass. */
			if (sr->ctx1++)
				p->repeated = true;
			continue;
		}
		decode_mib(m, v, &mib);
		if (nh) {
			if (!MP_GROW(hist, hist_alloc, (size_t)nh + 1)) {
				rc = mp_fail(p->err, MP_E_NOMEM, NULL);
				goto out;
			}
			for (uint64_t k = 0; k < nh; k++)
				hist[k] = hent == 8
					? mp_le64(p->base + hpos + k * 8)
					: raw_hist_v5_decode(mp_le16(p->base + hpos + k * 2));
		}
		if (p->mode == MODE_WALK) {
			struct raw_record r = {
				.profile = pidx, .stack_id = id, .pcs = sr->pcs,
				.npcs = sr->npcs, .mib = &mib, .hist = hist,
				.nhist = (uint32_t)nh, .samp = ss, .nsamp = nss,
			};

			if ((rc = p->fn(p->arg, &r, p->err)))
				goto out;
			continue;
		}
		/*
		 * Every record of a stack has the same context: look it up
		 * once, or K records of an N-PC stack would cost K x N.
		 */
		if (sr->ctx1) {
			c = &p->rf->contexts[sr->ctx1 - 1];
			fresh = false;
		} else {
			rc = file_context(p, pidx, sr, &c, &fresh);
			if (rc)
				goto out;
			sr->ctx1 = (uint32_t)(c - p->rf->contexts) + 1;
		}
		/* One process wrote the whole file: later records are newer. */
		if (fresh)
			c->mib = mib;
		else
			mib_merge_runtime(&c->mib, &mib);
		if (nh) {
			rc = add_hist(p, c, hist, (uint32_t)nh);
			if (rc)
				goto out;
		}
		c->mib.v[MIB_AccessHistogramSize] = c->nhist;
		if (!mp_samp_fold_arena(&p->rf->arena, &c->samp, &c->nsamp, ss,
					nss, 1)) {
			rc = mp_fail(p->err, MP_E_NOMEM, NULL);
			goto out;
		}
	}
	p->used = pos;
	rc = samples_all_used(p);
out:
	free(hist);
	return rc;
}

static int by_samp(const void *x, const void *y)
{
	const struct samp_ref *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->s.interval < b->s.interval ? -1 : a->s.interval > b->s.interval;
}

static double get_f64(const unsigned char *p)
{
	uint64_t b = mp_le64(p);
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/*
 * The sample block between the header and the segments (OFF to END), if
 * there is one: bytes there without its magic are ignored, as compiler-
 * rt's readers ignore them.  Fields it lists that we do not estimate are
 * skipped; fields we estimate that it does not list stay 0.
 */
static enum mp_errcode parse_samples(struct parse *p, struct raw_profile *prof,
				     uint64_t off, uint64_t end)
{
	struct raw_scratch *sc = p->rf->scratch;
	const unsigned char *b = p->base + off;
	uint64_t size, nf, count, esize;
	int slot[64];

	sc->nsamp = 0;
	if (end - off < 8 || mp_le64(b) != RAW_SAMPLE_MAGIC)
		return MP_OK;
#define BAD(...) mp_fail(p->err, MP_E_CORRUPT, __VA_ARGS__)
	if (end - off < 40)
		return BAD("sample block at offset 0x%" PRIx64 " is truncated",
			   p->poff + off);
	size = mp_le64(b + 8);
	nf = mp_le64(b + 24);
	if (size > end - off || size < 40 || size % 8)
		return BAD("sample block at offset 0x%" PRIx64 " claims %" PRIu64
			   " bytes where %" PRIu64 " lie before the segments",
			   p->poff + off, size, end - off);
	if (nf > 64 || 40 + 8 * nf > size)
		return BAD("sample block at offset 0x%" PRIx64 " lists %" PRIu64
			   " fields", p->poff + off, nf);
	for (uint64_t k = 0; k < nf; k++) {
		int f = mib_field_by_tag((unsigned)mp_le64(b + 32 + 8 * k));

		slot[k] = f < 0 ? -1 : mp_samp_index((enum mib_field)f);
		for (uint64_t j = 0; j < k; j++)
			if (slot[k] >= 0 && slot[j] == slot[k])
				return BAD("sample block lists MIB tag %" PRIu64
					   " twice", mp_le64(b + 32 + 8 * k));
	}
	count = mp_le64(b + 32 + 8 * nf);
	esize = 32 + 16 * nf;
	if (count > (size - 40 - 8 * nf) / esize ||
	    40 + 8 * nf + count * esize != size)
		return BAD("sample block at offset 0x%" PRIx64 " claims %" PRIu64
			   " entries of %" PRIu64 " bytes in %" PRIu64 " bytes",
			   p->poff + off, count, esize, size - 40 - 8 * nf);
	if (!MP_GROW(sc->samp, sc->asamp, (size_t)count + 1))
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	b += 40 + 8 * nf;
	for (uint64_t i = 0; i < count; i++, b += esize) {
		struct samp_ref *r = &sc->samp[i];

		memset(r, 0, sizeof(*r));
		r->id = mp_le64(b);
		r->s.interval = mp_le64(b + 8);
		r->s.n = mp_le64(b + 16);
		r->s.u = mp_le64(b + 24);
		for (uint64_t k = 0; k < nf; k++)
			if (slot[k] >= 0 &&
			    !mp_samp_set(&r->s, slot[k], get_f64(b + 32 + 8 * k),
					 get_f64(b + 32 + 8 * (nf + k))))
				r->s.n = 0;	/* refused just below */
		if (!mp_samp_valid(&r->s))
			return BAD("sample entry %" PRIu64 " (stack id %" PRIu64
				   ") has a zero interval or count, or a "
				   "negative or non-finite sum", i, r->id);
	}
	if (!MP_GROW(sc->samp_s, sc->asamp_s, (size_t)count + 1))
		return mp_fail(p->err, MP_E_NOMEM, NULL);
	sc->nsamp = (size_t)count;
	qsort(sc->samp, sc->nsamp, sizeof(*sc->samp), by_samp);
	for (size_t i = 0; i < sc->nsamp; i++)
		sc->samp_s[i] = sc->samp[i].s;
	for (size_t i = 1; i < sc->nsamp; i++)
		if (by_samp(&sc->samp[i - 1], &sc->samp[i]) == 0)
			return BAD("sample block has two entries for stack id %"
				   PRIu64 " and interval %" PRIu64,
				   sc->samp[i].id, sc->samp[i].s.interval);
	prof->sampled = true;
	prof->sample_interval = mp_le64(p->base + off + 16);
	p->rf->sampled = true;
#undef BAD
	return MP_OK;
}

/* The sample entries of stack ID in the profile's block, *N of them,
 * marked as taken. */
static const struct mp_samp *samples_of(struct raw_scratch *sc, uint64_t id,
					uint32_t *n)
{
	size_t lo = 0, hi = sc->nsamp, e;

	*n = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc->samp[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (e = lo; e < sc->nsamp && sc->samp[e].id == id; e++)
		;
	*n = (uint32_t)(e - lo);
	for (size_t i = lo; i < e; i++)
		sc->samp[i].used = true;
	return *n ? &sc->samp_s[lo] : NULL;
}

/* Every entry of the block must belong to a MIB record. */
static enum mp_errcode samples_all_used(struct parse *p)
{
	struct raw_scratch *sc = p->rf->scratch;

	for (size_t i = 0; i < sc->nsamp; i++)
		if (!sc->samp[i].used)
			return mp_fail(p->err, MP_E_CORRUPT, "sample entry for "
				       "stack id %" PRIu64 " has no MIB record",
				       sc->samp[i].id);
	return MP_OK;
}

/* Give profiles with byte-identical segment tables the same layout id. */
static uint32_t layout_of(const struct raw_file *rf, size_t pidx)
{
	const struct raw_profile *p = &rf->profiles[pidx];

	for (size_t i = 0; i < pidx; i++) {
		const struct raw_profile *q = &rf->profiles[i];

		if (q->nsegments == p->nsegments &&
		    memcmp(q->segments, p->segments,
			   p->nsegments * sizeof(*p->segments)) == 0)
			return q->layout;
	}
	return (uint32_t)pidx;
}

/*
 * Compiler-rt writes a profile's sections back to back, each rounded up
 * to 8 bytes, and so does our runtime: 8 bytes or more between where the
 * section WHAT ended (P->used) and where the next one starts (NEXT) are
 * no part of either.  A damaged offset shows so: one changed byte moved
 * the MIB offset past its count, and the profile read as empty, its
 * records unread without a word (llvm-profdata-19 reads it so too).
 */
static enum mp_errcode section_ends(struct parse *p, const char *what,
				    uint64_t next, const char *next_what)
{
	if (next - p->used < 8)
		return MP_OK;
	return mp_fail(p->err, MP_E_CORRUPT,
		       "the %s of the profile at offset 0x%" PRIx64 " end at "
		       "0x%" PRIx64 ", %" PRIu64 " bytes before %s at 0x%" PRIx64
		       " (a damaged section offset?)", what, p->poff,
		       p->poff + p->used, next - p->used, next_what,
		       p->poff + next);
}

static enum mp_errcode parse_profile(struct parse *p, uint32_t pidx)
{
	struct raw_profile *prof = &p->rf->profiles[pidx];
	const unsigned char *h = p->base;
	uint64_t seg_off, mib_off, stack_off;
	struct raw_scratch *sc = p->rf->scratch;
	enum mp_errcode rc = MP_OK;

	seg_off = mp_le64(h + RAW_HDR_SEGMENT_OFFSET);
	mib_off = mp_le64(h + RAW_HDR_MIB_OFFSET);
	stack_off = mp_le64(h + RAW_HDR_STACK_OFFSET);
	if (seg_off < RAW_HEADER_SIZE || seg_off > mib_off ||
	    mib_off > stack_off || stack_off > p->psize)
		return mp_fail(p->err, MP_E_CORRUPT,
			       "profile at offset 0x%" PRIx64 " has sections out "
			       "of order or past its end (segments 0x%" PRIx64
			       ", MIBs 0x%" PRIx64 ", stacks 0x%" PRIx64
			       ", size 0x%" PRIx64 ")", p->poff, seg_off,
			       mib_off, stack_off, p->psize);

	if ((rc = parse_samples(p, prof, RAW_HEADER_SIZE, seg_off)))
		return rc;
	if (p->mode != MODE_WALK) {
		rc = parse_segments(p, prof, seg_off, mib_off);
		if (!rc)
			rc = section_ends(p, "segments", mib_off, "the MIBs");
		if (!rc)
			rc = raw_profile_index(prof, &p->rf->arena, p->err);
		if (rc)
			return rc;
		prof->layout = layout_of(p->rf, pidx);
	}
	/*
	 * raw_walk's second pass is over the only profile, whose stacks the
	 * first pass left indexed (and whose sections it checked).
	 */
	if (p->mode != MODE_WALK) {
		rc = parse_stacks(p, stack_off, p->psize);
		if (!rc)
			rc = section_ends(p, "stacks", p->psize,
					  "the end of the profile");
	}
	if (rc == MP_OK) {
		prof->nstacks = sc->nstacks;
		rc = parse_mibs(p, pidx, mib_off, stack_off, sc->stacks, &sc->ids);
	}
	if (rc == MP_OK && p->mode != MODE_WALK)
		rc = section_ends(p, "MIBs", stack_off, "the stacks");
	return rc;
}

/* Walk the profiles of a file, each parsed in P's mode, into RF. */
static enum mp_errcode parse_file(struct parse *p, const void *data, size_t size)
{
	struct raw_file *rf = p->rf;
	struct mp_err *err = p->err;
	const unsigned char *buf = data;
	size_t prof_alloc = 0;
	uint64_t off = 0;
	enum mp_errcode rc = MP_OK;

	rf->size = size;
	if (size == 0)
		return mp_fail(err, MP_E_EMPTY, "file is empty");
	while (off < size) {
		struct raw_profile *prof;
		const unsigned char *h = buf + off;
		uint64_t magic, version, total;

		/* The magic first: a short file that is no profile is "bad magic". */
		magic = size - off >= 8 ? mp_le64(h + RAW_HDR_MAGIC) : RAW_MAGIC;
		if (magic != RAW_MAGIC) {
			rc = off == 0
				? mp_fail(err, MP_E_BAD_MAGIC,
					  "bad magic 0x%016" PRIx64
					  " (not a MemProf raw profile)", magic)
				: mp_fail(err, MP_E_BAD_MAGIC,
					  "bad magic 0x%016" PRIx64 " in profile "
					  "%zu at offset 0x%" PRIx64 " (trailing "
					  "data after the last profile?)",
					  magic, rf->nprofiles + 1, off);
			goto out;
		}
		if (size - off < RAW_HEADER_SIZE) {
			rc = mp_fail(err, MP_E_TRUNCATED,
				     "profile header at offset 0x%" PRIx64
				     " is truncated (%zu of %d bytes)",
				     off, (size_t)(size - off), RAW_HEADER_SIZE);
			goto out;
		}
		version = mp_le64(h + RAW_HDR_VERSION);
		total = mp_le64(h + RAW_HDR_TOTAL_SIZE);
		if (version < RAW_VERSION_MIN || version > RAW_VERSION_MAX) {
			rc = mp_fail(err, MP_E_BAD_VERSION,
				     "unsupported raw profile version %" PRIu64
				     " (supported: %d to %d)", version,
				     RAW_VERSION_MIN, RAW_VERSION_MAX);
			goto out;
		}
		if (total < RAW_HEADER_SIZE + 24) {
			rc = mp_fail(err, MP_E_CORRUPT,
				     "profile at offset 0x%" PRIx64 " has TotalSize %"
				     PRIu64 ", smaller than its header and sections",
				     off, total);
			goto out;
		}
		if (total > size - off) {
			rc = mp_fail(err, MP_E_TRUNCATED,
				     "profile at offset 0x%" PRIx64 " has TotalSize %"
				     PRIu64 ", past the end of the file (%zu bytes)",
				     off, total, size);
			goto out;
		}
		if (!MP_GROW(rf->profiles, prof_alloc, rf->nprofiles + 1)) {
			rc = mp_fail(err, MP_E_NOMEM, NULL);
			goto out;
		}
		prof = &rf->profiles[rf->nprofiles];
		memset(prof, 0, sizeof(*prof));
		prof->file_offset = off;
		prof->total_size = total;
		prof->version = (uint32_t)version;
		rf->nprofiles++;
		if (rf->nprofiles == 1 || version < rf->min_version)
			rf->min_version = (uint32_t)version;
		if (version > rf->max_version)
			rf->max_version = (uint32_t)version;

		p->base = h;
		p->poff = off;
		p->psize = total;
		p->version = (uint32_t)version;
		rc = parse_profile(p, (uint32_t)(rf->nprofiles - 1));
		if (rc)
			goto out;
		off += total;
	}
out:
	ht_release(&p->file_ctx);
	return rc;
}

enum mp_errcode raw_parse(struct raw_file *rf, const void *data, size_t size,
			  struct mp_err *err)
{
	struct parse p = { .mode = MODE_CONTEXTS, .rf = rf, .err = err };
	enum mp_errcode rc = begin(rf, err);

	if (rc == MP_OK)
		rc = parse_file(&p, data, size);
	if (rc) {
		raw_file_release(rf);
		rf->size = size;
	}
	return rc;
}

enum mp_errcode raw_walk(struct raw_file *rf, const void *data, size_t size,
			 raw_record_fn fn, void *arg, bool *walked,
			 struct mp_err *err)
{
	struct parse p = { .mode = MODE_CHECK, .fn = fn, .arg = arg,
			   .rf = rf, .err = err };
	enum mp_errcode rc;

	*walked = false;
	rc = begin(rf, err);
	if (rc == MP_OK)
		rc = parse_file(&p, data, size);
	if (rc == MP_OK && rf->nprofiles == 1 && !p.repeated) {
		const struct raw_profile *prof = &rf->profiles[0];

		p.mode = MODE_WALK;
		p.base = (const unsigned char *)data + prof->file_offset;
		p.poff = prof->file_offset;
		p.psize = prof->total_size;
		p.version = prof->version;
		rc = parse_profile(&p, 0);
		*walked = rc == MP_OK;
	}
	if (rc) {
		raw_file_release(rf);
		rf->size = size;
	}
	return rc;
}

bool raw_is_raw(const void *data, size_t size)
{
	return size >= 8 && mp_le64(data) == RAW_MAGIC;
}

enum mp_errcode raw_load(struct raw_file *rf, const char *path,
			 struct mp_err *err)
{
	struct mp_buf buf;
	enum mp_errcode rc;

	rc = mp_file_read(&buf, path, NULL, err);
	if (rc)
		return rc;
	rc = raw_parse(rf, buf.data, buf.size, err);
	if (rc == MP_OK)
		rf->compressed = buf.was_compressed;
	mp_buf_release(&buf);
	return rc;
}
