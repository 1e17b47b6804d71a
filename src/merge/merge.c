#include "merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/mp_file.h"
#include "common/mp_thread.h"
#include "llvm/llvm.h"

/*
 * Location keys.  A PC means different things in different processes
 * (ASLR), so a stack is keyed by where its PCs lie instead: a space (a
 * module of the symbolizer, a build id that no module has, or bare
 * addresses) and a value in it (ELF address, offset in the module, PC),
 * packed as space << 48 | value.  Within one segment of one memory map the
 * value is the PC plus a constant, found once per segment and input
 * (learn_segment: from the segment's build id when it was seen before,
 * else by sym_map_pc() on its first PC, which also gives the warnings and
 * --strict errors), so a PC costs a segment lookup and an addition, or
 * only the addition in one of the two ranges used last (key_of_pc).
 * A value of 48 bits or more, or a space number past 16 bits, is escaped:
 * interned in a table, the key being SPACE_ESCAPE << 48 | its index.
 */
#define LOC_BITS 48
#define LOC_MASK ((UINT64_C(1) << LOC_BITS) - 1)
#define LOC_MAX_SPACE 0xffffu

enum { SPACE_ESCAPE, SPACE_ADDRESS, SPACE_FIRST };

/*
 * With opts.llvm_types, a stack's last key is its record's allocation
 * class: CLASS_KEY + class, the escapes' last values, which no escape
 * reaches.  It is no location: it becomes the class's root frame.
 */
#define CLASS_KEY (LOC_MASK - (MIB__CLASSES - 1))

static bool is_class_key(uint64_t key)
{
	return key >= CLASS_KEY && key <= LOC_MASK;
}

struct merge_space {
	int32_t module;		/* sym module, or -1: a bare build id */
	uint32_t build_id_size;
	uint8_t build_id[RAW_BUILD_ID_MAX];
};

struct merge_escape {
	uint64_t space, value;
};

/* A segment's location space and PC-to-value constant, once known. */
struct segmap {
	uint64_t space, delta;
	bool known;
};

/*
 * Contexts folded at once by ctab_fold_batch(): enough that each of the
 * table's 64 shards gets a run of them under one lock, for the prefetches
 * to overlap (about 1.5 MB of scratch per worker).
 */
#define MERGE_BATCH 4096

/*
 * A range of a profile's memory map where a PC's location key is the PC
 * plus a constant: PCs in [lo, lo + span) have the key pc + add, which is
 * space << LOC_BITS | value with the value below 2^LOC_BITS, no escape
 * needed.  A span of 0 holds no PC.
 */
struct fast_range {
	uint64_t lo, span, add;
};

/* What a worker reuses from one raw input to the next. */
struct scratch {
	struct segmap *segs;		/* every profile's, back to back */
	size_t asegs;
	size_t *base;			/* profile -> its first segment */
	size_t abase;
	struct mp_buf in;		/* its bytes, the memory kept for the
					 * next input */
	struct raw_file rf;		/* the input being folded */
	struct mp_arena *arena;		/* the table's entries it made */
	/* Location keys this worker has seen in new stacks, and those of
	 * them not yet handed to the main thread for symbolization. */
	struct ht_map seen;
	uint64_t *seen_recent;		/* SEEN_RECENT slots: key + 1, or 0 */
	uint64_t *fresh;
	size_t nfresh, afresh;
	struct ctab_entry **fresh_e;	/* new stacks, not yet handed over */
	size_t nfresh_e, afresh_e;
	/* Contexts without histograms waiting to be folded together. */
	struct ctab_item *batch;
	struct mp_mib *batch_mib;
	uint32_t *batch_order;		/* ctab_fold_batch()'s scratch */
	size_t nbatch;
	uint64_t *batch_keys;		/* their keys, back to back */
	size_t nbatch_keys, abatch_keys;
	/* The profile being folded, its last segment, the two ranges of its
	 * map last used, and whether a PC in no segment was reported for
	 * this input. */
	size_t cur, hint;
	struct fast_range fast[2];
	bool warned_unmapped;
	/* The input is another program's (sym_other_program()): its first
	 * such profile's main build id. */
	bool other;
	uint8_t other_bid[RAW_BUILD_ID_MAX];
	uint32_t other_bid_size;
	/* The input's records, and the most addresses of one's stack. */
	uint64_t records;
	uint32_t deepest;
	/* Its first profile's main segment's build id (size 0: none). */
	uint8_t main_bid[RAW_BUILD_ID_MAX];
	uint32_t main_bid_size;
};

static void scratch_release(struct scratch *s)
{
	free(s->segs);
	free(s->base);
	mp_buf_release(&s->in);
	raw_file_release(&s->rf);
	ht_map_release(&s->seen);
	free(s->seen_recent);
	free(s->fresh);
	free(s->fresh_e);
	free(s->batch);
	free(s->batch_mib);
	free(s->batch_order);
	free(s->batch_keys);
	memset(s, 0, sizeof(*s));
}

/* Could the first N bytes at HEAD begin an input?  (LLVM's files are
 * let through to be refused by name.) */
static bool known_input(const void *head, size_t n)
{
	return n < 8 || raw_is_raw(head, n) || idx_is_indexed(head, n) ||
	       llvm_is_llvm(head, n);
}

void merge_init(struct merge *m, const struct merge_opts *opts,
		struct sym_ctx *sym)
{
	memset(m, 0, sizeof(*m));
	m->opts = *opts;
	if (!m->opts.read.known)
		m->opts.read.known = known_input;
	if (m->opts.jobs == 0)
		m->opts.jobs = 1;
	m->sym = sym;
	m->program = -1;
	ctab_init(&m->tab);
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->sym_lock, NULL);
	pthread_mutex_init(&m->b_lock, NULL);
	idx_builder_init(&m->b);
	idx_builder_set_jobs(&m->b, m->opts.jobs);
	if (m->opts.llvm_types)
		idx_builder_set_classes(&m->b, m->opts.llvm_types);
}

/*
 * An indexed input whose records were kept apart by class under other
 * thresholds than this merge's cannot be classed again (records of one
 * class are folded): the classes, and so the export's types, would be
 * neither the inputs' nor these.  A merge that keeps no classes takes it.
 */
static enum mp_errcode same_classes(const struct merge *m,
				    const struct idx_file *f,
				    struct mp_err *err)
{
	const struct mib_thresholds *t = m->opts.llvm_types, *u = &f->thresholds;

	if (!t || !f->classes ||
	    (t->cold_density == u->cold_density &&
	     t->cold_lifetime == u->cold_lifetime &&
	     t->hot_density == u->hot_density))
		return MP_OK;
	return mp_fail(err, MP_E_INVALID, "its records' types were kept apart "
		       "under --cold-density=%g --cold-lifetime=%g "
		       "--hot-density=%g, this merge's are %g, %g and %g: give "
		       "every merge of the shards, and clang, the same "
		       "thresholds", (double)u->cold_density,
		       (double)u->cold_lifetime, (double)u->hot_density,
		       (double)t->cold_density, (double)t->cold_lifetime,
		       (double)t->hot_density);
}

/*
 * Free what M has folded and built, leaving its locks and options: what
 * merge_release() frees.  M may then only be released (which frees
 * nothing twice: each pointer is left NULL).
 */
static void free_folded(struct merge *m)
{
	ctab_release(&m->tab);
	for (size_t a = 0; a < m->narenas; a++)
		mp_arena_release(&m->arenas[a].a);
	free(m->arenas);
	m->arenas = NULL;
	m->narenas = 0;
	free(m->spaces);
	free(m->escapes);
	ht_release(&m->space_ht);
	ht_release(&m->escape_ht);
	idx_write_free(m->w);
	idx_builder_release(&m->b);
	sym_stack_release(&m->buf);
	ht_map_release(&m->loc_map);
	free(m->pending);
	free(m->taken);
	free(m->pending_e);
	free(m->taken_e);
	free(m->taken_mod);
	free(m->loc_first);
	free(m->loc_n);
	free(m->ids);
	free(m->runtime);
	free(m->stack);
	m->spaces = NULL;
	m->escapes = NULL;
	m->w = NULL;
	m->pending = m->taken = NULL;
	m->pending_e = m->taken_e = NULL;
	m->taken_mod = NULL;
	m->loc_first = m->loc_n = m->ids = NULL;
	m->runtime = NULL;
	m->stack = NULL;
}

void merge_release(struct merge *m)
{
	if (!m || !m->opts.jobs)
		return;
	free_folded(m);
	for (size_t k = 0; k < m->nmodules; k++) {
		free((char *)m->modules[k].path);
		free((uint8_t *)m->modules[k].build_id);
	}
	free(m->modules);
	free(m->programs);
	ht_map_release(&m->mapped);
	for (size_t k = 0; k < m->nunmapped; k++)
		free(m->unmapped[k].path);
	free(m->unmapped);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->sym_lock);
	pthread_mutex_destroy(&m->b_lock);
	memset(m, 0, sizeof(*m));
}

static bool space_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct merge_space *k = key;
	const struct merge_space *s = &((const struct merge *)ctx)->spaces[id];

	return s->module == k->module && s->build_id_size == k->build_id_size &&
	       memcmp(s->build_id, k->build_id, k->build_id_size) == 0;
}

/*
 * Spaces are hashed by build id alone when they have one: a build id
 * names one space (a module's, or else its own), so a segment's build id
 * finds its space without the symbolizer (learn_segment).
 */
static uint64_t space_hash(const uint8_t *build_id, uint32_t n, int32_t module)
{
	return n ? mp_hash_bytes(build_id, n, 0) : mp_hash64((uint32_t)module);
}

/* The space number of K, interned if new.  m->lock held. */
static enum mp_errcode space_of(struct merge *m, const struct merge_space *k,
				uint64_t *out)
{
	uint64_t h = space_hash(k->build_id, k->build_id_size, k->module);
	uint32_t id = ht_find(&m->space_ht, h, space_eq, k, m);

	if (id == HT_NONE) {
		if (m->nspaces >= UINT32_MAX - 1)
			return MP_E_TOO_LARGE;
		if (!MP_GROW(m->spaces, m->aspaces, m->nspaces + 1) ||
		    ht_insert(&m->space_ht, h, (uint32_t)m->nspaces))
			return MP_E_NOMEM;
		m->spaces[m->nspaces] = *k;
		id = (uint32_t)m->nspaces++;
	}
	*out = SPACE_FIRST + (uint64_t)id;
	return MP_OK;
}

static bool escape_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct merge_escape *k = key;
	const struct merge_escape *e = &((const struct merge *)ctx)->escapes[id];

	return e->space == k->space && e->value == k->value;
}

/* The location key of VALUE in SPACE.  Takes m->lock to escape. */
static enum mp_errcode loc_key(struct merge *m, uint64_t space, uint64_t value,
			       uint64_t *key)
{
	struct merge_escape k = { space, value };
	enum mp_errcode rc = MP_OK;
	uint64_t h;
	uint32_t id;

	if (space <= LOC_MAX_SPACE && value <= LOC_MASK) {
		*key = space << LOC_BITS | value;
		return MP_OK;
	}
	h = mp_hash64(value ^ mp_hash64(space));
	pthread_mutex_lock(&m->lock);
	id = ht_find(&m->escape_ht, h, escape_eq, &k, m);
	if (id == HT_NONE) {
		if (m->nescapes >= CLASS_KEY || m->nescapes >= UINT32_MAX - 1)
			rc = MP_E_TOO_LARGE;
		else if (!MP_GROW(m->escapes, m->aescapes, m->nescapes + 1) ||
			 ht_insert(&m->escape_ht, h, (uint32_t)m->nescapes))
			rc = MP_E_NOMEM;
		else {
			m->escapes[m->nescapes] = k;
			id = (uint32_t)m->nescapes++;
		}
	}
	pthread_mutex_unlock(&m->lock);
	*key = (uint64_t)SPACE_ESCAPE << LOC_BITS | id;
	return rc;
}

/* Does space ID have segment KEY's build id? */
static bool same_build_id(const void *key, uint32_t id, const void *ctx)
{
	const struct raw_segment *k = key;
	const struct merge_space *s = &((const struct merge *)ctx)->spaces[id];

	return s->build_id_size == k->build_id_size &&
	       memcmp(s->build_id, k->build_id, k->build_id_size) == 0;
}

/*
 * Find the space and constant of segment SEG of PROF from its first PC,
 * PC.  A segment with a build id (v3+) gets its module's space, and PC -
 * load bias as its value, in every process: once its build id is known,
 * the symbolizer is not asked again (its warnings and --strict errors
 * are once per build id too).  Otherwise sym_map_pc() decides, under
 * sym_lock.
 */
static enum mp_errcode learn_segment(struct merge *m,
				     const struct raw_profile *prof,
				     const struct raw_segment *seg, uint64_t pc,
				     struct segmap *sm, struct mp_err *err)
{
	struct merge_space k = { -1, 0, { 0 } };
	struct sym_addr a;
	enum mp_errcode rc;
	uint32_t id;

	if (prof->version >= 3 && seg->build_id_size > 0) {
		pthread_mutex_lock(&m->lock);
		id = ht_find(&m->space_ht,
			     space_hash(seg->build_id, seg->build_id_size, -1),
			     same_build_id, seg, m);
		if (id != HT_NONE)
			sm->space = SPACE_FIRST + (uint64_t)id;
		pthread_mutex_unlock(&m->lock);
		if (id != HT_NONE) {
			sm->delta = -seg->offset;
			sm->known = true;
			return MP_OK;
		}
	}
	pthread_mutex_lock(&m->sym_lock);
	rc = sym_map_pc(m->sym, prof, pc, &a, err);
	if (rc == MP_OK && a.module >= 0) {
		struct sym_module_info info;

		k.module = a.module;
		if (sym_module_info(m->sym, a.module, &info) &&
		    info.build_id_size <= RAW_BUILD_ID_MAX) {
			k.build_id_size = info.build_id_size;
			memcpy(k.build_id, info.build_id, info.build_id_size);
		}
	}
	pthread_mutex_unlock(&m->sym_lock);
	if (rc)
		return rc;
	if (a.module >= 0) {
		sm->delta = a.addr - pc;
	} else if (a.segment >= 0 && a.build_id_size) {
		k.build_id_size = a.build_id_size;
		memcpy(k.build_id, a.build_id, a.build_id_size);
		sm->delta = a.offset - pc;
	} else {
		/* No build id to name the module by: the address itself. */
		sm->space = SPACE_ADDRESS;
		sm->delta = 0;
		sm->known = true;
		return MP_OK;
	}
	pthread_mutex_lock(&m->lock);
	rc = space_of(m, &k, &sm->space);
	pthread_mutex_unlock(&m->lock);
	if (rc)
		return mp_fail(err, rc, NULL);
	sm->known = true;
	return MP_OK;
}

/* Size S's segment maps for RF's profiles. */
static enum mp_errcode prepare(struct scratch *s, const struct raw_file *rf)
{
	size_t total = 0;

	if (!MP_GROW(s->base, s->abase, rf->nprofiles + 1))
		return MP_E_NOMEM;
	for (size_t p = 0; p < rf->nprofiles; p++) {
		s->base[p] = total;
		total += rf->profiles[p].nsegments;
	}
	if (!MP_GROW(s->segs, s->asegs, total + 1))
		return MP_E_NOMEM;
	memset(s->segs, 0, (total + 1) * sizeof(*s->segs));
	return MP_OK;
}

/*
 * Would sym_check_profile() have nothing to say about PROF?  So it is
 * when PROF (v3+) has a main segment whose build id is a module's, as
 * learn_segment() found for an earlier input of the same program: the
 * check only looks for a main segment that no binary covers.  Asking
 * here instead needs m->lock only, not the symbolizer's lock, which the
 * main thread may hold for tens of milliseconds while it opens a
 * module's debug information: the workers would wait at every input.
 */
static bool main_segment_known(struct merge *m, const struct raw_profile *prof)
{
	const struct raw_segment *s0 = prof->nsegments ? &prof->segments[0] : NULL;
	uint32_t id;
	bool known;

	if (prof->version < 3 || !s0 || !s0->build_id_size)
		return false;
	pthread_mutex_lock(&m->lock);
	id = ht_find(&m->space_ht, space_hash(s0->build_id, s0->build_id_size, -1),
		     same_build_id, s0, m);
	known = id != HT_NONE && m->spaces[id].module >= 0;
	pthread_mutex_unlock(&m->lock);
	return known;
}

/* Note the build ids of PROF's memory map in m->mapped. */
static enum mp_errcode note_mapped(struct merge *m, const struct raw_profile *prof)
{
	enum mp_errcode rc = MP_OK;
	bool added;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < prof->nsegments && !rc; i++) {
		const struct raw_segment *g = &prof->segments[i];

		if (!g->build_id_size)
			m->unnamed_maps = true;	/* raw v1, v2: no build ids */
		else if (!ht_map_find_or_add(&m->mapped,
					     mp_hash_bytes(g->build_id,
							   g->build_id_size, 7),
					     &added))
			rc = MP_E_NOMEM;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* Before folding RF: check its memory maps, size the segment maps. */
static enum mp_errcode setup_raw(struct merge *m, struct scratch *s,
				 const struct raw_file *rf, struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;

	for (size_t p = 0; p < rf->nprofiles; p++)
		if (note_mapped(m, &rf->profiles[p]))
			return mp_fail(err, MP_E_NOMEM, NULL);

	for (size_t p = 0; p < rf->nprofiles && !rc; p++) {
		if (main_segment_known(m, &rf->profiles[p]))
			continue;
		pthread_mutex_lock(&m->sym_lock);
		rc = sym_check_profile(m->sym, &rf->profiles[p], err);
		/* The first such profile's build id is the input's. */
		if (!rc && !s->other)
			rc = sym_other_program(m->sym, &rf->profiles[p], &s->other,
					       s->other_bid, &s->other_bid_size,
					       err);
		pthread_mutex_unlock(&m->sym_lock);
	}
	if (rc)
		return rc;
	s->main_bid_size = 0;
	if (rf->nprofiles && rf->profiles[0].version >= 3 &&
	    rf->profiles[0].nsegments) {
		const struct raw_segment *s0 = &rf->profiles[0].segments[0];

		if (s0->build_id_size <= sizeof(s->main_bid)) {
			memcpy(s->main_bid, s0->build_id, s0->build_id_size);
			s->main_bid_size = s0->build_id_size;
		}
	}
	if ((rc = prepare(s, rf)))
		return mp_fail(err, rc, NULL);
	s->cur = SIZE_MAX;
	s->warned_unmapped = false;
	return MP_OK;
}

/*
 * The keys of new stacks met last, direct-mapped by a hash (32 KiB, in
 * the first-level cache): a new stack's keys are mostly those of stacks
 * before it, and this answers "seen" without the seen map, a probe in
 * hundreds of KiB, for 1.05 M of the 1.17 M keys of a 64-input merge's
 * new stacks.
 */
#define SEEN_RECENT_BITS 12

/* Note a stack new to the table, and its keys not seen yet, for publish(). */
static enum mp_errcode note_new(struct scratch *s, struct ctab_entry *e)
{
	if (!MP_GROW(s->fresh_e, s->afresh_e, s->nfresh_e + 1) ||
	    (!s->seen_recent &&
	     !(s->seen_recent = calloc((size_t)1 << SEEN_RECENT_BITS,
				       sizeof(*s->seen_recent)))))
		return MP_E_NOMEM;
	s->fresh_e[s->nfresh_e++] = e;
	for (uint32_t k = 0; k < e->nkeys; k++) {
		uint64_t key = e->keys[k], tag = key + 1;
		uint64_t *recent = &s->seen_recent[mp_hash64(key) >>
						   (64 - SEEN_RECENT_BITS)];
		uint32_t dummy;

		if (is_class_key(key))
			continue;

		/* Tag 0 is an empty slot: key 2^64 - 1 goes to the map. */
		if (tag && *recent == tag)
			continue;
		*recent = tag;
		if (ht_map_get(&s->seen, key, &dummy))
			continue;
		if (ht_map_put(&s->seen, key, 0) ||
		    !MP_GROW(s->fresh, s->afresh, s->nfresh + 1))
			return MP_E_NOMEM;
		s->fresh[s->nfresh++] = key;
	}
	return MP_OK;
}

/* Fold the batched contexts. */
static enum mp_errcode flush(struct merge *m, struct scratch *s,
			     uint64_t weight, struct mp_err *err)
{
	enum mp_errcode rc;
	size_t off = 0;

	for (size_t i = 0; i < s->nbatch; i++) {
		s->batch[i].keys = s->batch_keys + off;
		s->batch[i].mib = &s->batch_mib[i];
		off += s->batch[i].n;
	}
	rc = ctab_fold_batch(&m->tab, s->arena, s->batch, s->batch_order,
			     s->nbatch, weight);
	for (size_t i = 0; i < s->nbatch && !rc; i++)
		if (s->batch[i].added)
			rc = note_new(s, s->batch[i].added);
	s->nbatch = s->nbatch_keys = 0;
	return rc ? mp_fail(err, rc, NULL) : MP_OK;
}

/*
 * The location key of PC, the K-th of a stack of profile P, the slow way:
 * its segment found (and learnt, the first time), an escape interned if
 * need be.  *BAD: PC lies in no segment past the leaf, and the stack
 * ends before it (BAD_CUT) or keeps it (BAD_KEPT: KEEP, or
 * opts.keep_bad_frames).
 * A range whose keys need no escape becomes S's first fast range, the
 * other one its second.
 */
enum { BAD_NONE, BAD_CUT, BAD_KEPT };

static __attribute__((noinline)) enum mp_errcode
key_of_pc(struct merge *m, struct scratch *s, const struct raw_profile *prof,
	  size_t p, uint64_t pc, uint32_t k, bool keep, uint64_t *key, int *bad,
	  struct mp_err *err)
{
	uint64_t space = SPACE_ADDRESS, value = pc;
	int64_t seg = raw_segment_of(prof, pc, &s->hint);
	enum mp_errcode rc;

	*bad = BAD_NONE;
	if (seg >= 0) {
		const struct raw_seg_range *r = &prof->ranges[s->hint];
		struct segmap *sm = &s->segs[s->base[p] + (size_t)seg];
		uint64_t first, last;

		if (!sm->known &&
		    (rc = learn_segment(m, prof, &prof->segments[seg], pc, sm,
					err)))
			return rc;
		space = sm->space;
		value = pc + sm->delta;
		first = r->start + sm->delta;
		last = r->end - 1 + sm->delta;
		if (space <= LOC_MAX_SPACE && r->end > r->start &&
		    first <= last && last <= LOC_MASK) {
			s->fast[1] = s->fast[0];
			s->fast[0] = (struct fast_range){
				r->start, r->end - r->start,
				sm->delta + (space << LOC_BITS),
			};
		}
	} else if (k > 0 && prof->nranges) {
		/*
		 * Past code without frame pointers an unwinder reads garbage:
		 * cut the stack at its first PC after the leaf in no segment
		 * (as sym_stack_symbolize() does for show), unless told to
		 * keep it; either way counted, not warned about PC by PC.
		 */
		*bad = keep || m->opts.keep_bad_frames ? BAD_KEPT : BAD_CUT;
		if (*bad == BAD_CUT)
			return MP_OK;
	} else if (!s->warned_unmapped) {
		/* For sym_map_pc()'s warning, once per input. */
		struct sym_addr a;

		s->warned_unmapped = true;
		pthread_mutex_lock(&m->sym_lock);
		rc = sym_map_pc(m->sym, prof, pc, &a, err);
		pthread_mutex_unlock(&m->sym_lock);
		if (rc)
			return rc;
	}
	if ((rc = loc_key(m, space, value, key)))
		return mp_fail(err, rc, NULL);
	return MP_OK;
}

/*
 * Fold a context of profile P of RF (its NPCS PCs, MIB and histogram)
 * into the table, its stack as location keys: at once if it has a
 * histogram, else in a batch (flush() folds the rest).  The PCs are
 * u64 values at PCS, or little-endian bytes there if BYTES (straight from
 * the input: no copy).  Runs in a worker; takes m->lock only to learn a
 * segment.
 */
static inline __attribute__((always_inline)) enum mp_errcode
fold_pcs(struct merge *m, struct scratch *s, const struct raw_file *rf,
	 size_t p, const void *pcs, bool bytes, uint32_t npcs,
	 const struct mp_mib *mib, const uint64_t *hist, uint32_t nhist,
	 const struct mp_samp *samp, uint32_t nsamp, uint64_t weight,
	 struct mp_err *err)
{
	const struct raw_profile *prof = &rf->profiles[p];
	uint64_t *keys, hash = CTAB_HASH_SEED;
	struct fast_range f0, f1;
	enum mp_errcode rc;
	struct ctab_entry *added;
	bool kept_bad = false;
	uint32_t keep_until = 0;	/* a run of unmapped code ends there */

	if (npcs == 0)
		return MP_OK;	/* no stack: nothing to attach it to */
	if (p != s->cur) {
		s->cur = p;
		s->hint = 0;
		memset(s->fast, 0, sizeof(s->fast));
	}
	if (!s->batch && (!(s->batch = malloc(MERGE_BATCH * sizeof(*s->batch))) ||
			  !(s->batch_mib = malloc(MERGE_BATCH * sizeof(*s->batch_mib))) ||
			  !(s->batch_order = malloc(MERGE_BATCH * sizeof(*s->batch_order)))))
		return mp_fail(err, MP_E_NOMEM, NULL);
	if (!MP_GROW(s->batch_keys, s->abatch_keys, s->nbatch_keys + npcs + 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * One pass over the PCs: the key, the hash.  Most PCs fall in one of
	 * the two ranges of the map used last (the program's code, and the C
	 * library's at a stack's root), whose keys are the PC plus a
	 * constant; key_of_pc() does the rest.
	 */
	keys = s->batch_keys + s->nbatch_keys;
	f0 = s->fast[0];
	f1 = s->fast[1];
	for (uint32_t k = 0; k < npcs; k++) {
		uint64_t pc = bytes ? mp_le64((const unsigned char *)pcs + 8 * (size_t)k)
				    : ((const uint64_t *)pcs)[k];
		uint64_t key;

		if (pc - f0.lo < f0.span) {
			key = pc + f0.add;
		} else if (pc - f1.lo < f1.span) {
			key = pc + f1.add;
		} else {
			int bad;

			rc = key_of_pc(m, s, prof, p, pc, k, k < keep_until,
				       &key, &bad, err);
			if (rc)
				return rc;
			/* Garbage, or code unmapped before the profile was
			 * written (raw_unmapped_run_end()): then kept. */
			if (bad == BAD_CUT &&
			    (keep_until = raw_unmapped_run_end(prof, pcs, bytes,
								npcs, k,
								&s->hint))) {
				__atomic_fetch_add(&m->unmapped_code, 1,
						   __ATOMIC_RELAXED);
				rc = key_of_pc(m, s, prof, p, pc, k, true, &key,
					       &bad, err);
				if (rc)
					return rc;
			}
			if (bad == BAD_CUT) {
				npcs = k;
				__atomic_fetch_add(&m->cut, 1, __ATOMIC_RELAXED);
				break;
			}
			kept_bad |= bad == BAD_KEPT && k >= keep_until;
			f0 = s->fast[0];
			f1 = s->fast[1];
		}
		keys[k] = key;
		hash = ctab_hash_step(hash, key);
	}
	if (kept_bad)
		__atomic_fetch_add(&m->kept_bad, 1, __ATOMIC_RELAXED);
	if (m->opts.llvm_types) {
		keys[npcs] = CLASS_KEY + mib_alloc_class(mib, m->opts.llvm_types);
		hash = ctab_hash_step(hash, keys[npcs++]);
	}
	hash = ctab_hash_end(hash, npcs);
	if (nhist == 0 && nsamp == 0) {
		s->batch[s->nbatch] = (struct ctab_item){
			.n = npcs, .hash = hash,
		};
		s->batch_mib[s->nbatch++] = *mib;
		s->nbatch_keys += npcs;
		return s->nbatch == MERGE_BATCH ? flush(m, s, weight, err) : MP_OK;
	}
	rc = ctab_fold(&m->tab, s->arena, keys, npcs, mib, hist, nhist, samp,
		       nsamp, weight, &added);
	if (rc == MP_OK && added)
		rc = note_new(s, added);
	return rc ? mp_fail(err, rc, NULL) : MP_OK;
}

/* raw_walk()'s callback: fold one record of a file. */
struct walk {
	struct merge *m;
	struct scratch *s;
	const struct raw_file *rf;
	uint64_t weight;
	bool ready;
};

/*
 * Is RC, setup_raw()'s failure, the input's fault: its main segment fits
 * no binary given, which an LLVM export needs (sym_options.strict_main),
 * before anything of it is folded?  Then it follows --failure-mode: a
 * fleet's profiles of another program are skipped with a warning under
 * all or warn.  Not with --strict, whose every failure fails the merge.
 */
static bool input_fault(const struct merge *m, enum mp_errcode rc)
{
	return (rc == MP_E_BUILD_ID || rc == MP_E_NO_BINARY) &&
	       !m->sym->opt.strict;
}

static enum mp_errcode fold_record(void *arg, const struct raw_record *r,
				   struct mp_err *err)
{
	struct walk *w = arg;
	struct scratch *s = w->s;
	enum mp_errcode rc;

	s->records++;
	if (r->npcs > s->deepest)
		s->deepest = r->npcs;
	if (!w->ready) {
		if ((rc = setup_raw(w->m, s, w->rf, err))) {
			w->ready = !input_fault(w->m, rc);
			return rc;
		}
		w->ready = true;
	}
	return fold_pcs(w->m, s, w->rf, r->profile, r->pcs, true, r->npcs,
			r->mib, r->hist, r->nhist, r->samp, r->nsamp, w->weight,
			err);
}

/*
 * Read and fold a raw file.  The common file (one profile, one record per
 * context) is folded record by record straight from DATA; any other is
 * decoded into contexts first.  *DECODED tells whether DATA was valid:
 * an error after that left the input half folded.
 */
static enum mp_errcode fold_raw(struct merge *m, struct scratch *s,
				const void *data, size_t size, uint64_t weight,
				bool *decoded, struct mp_err *err)
{
	struct raw_file *rf = &s->rf;
	struct walk w = { m, s, rf, weight, false };
	enum mp_errcode rc;
	bool walked;

	*decoded = false;
	s->nbatch = s->nbatch_keys = 0;
	s->records = 0;
	s->deepest = 0;
	s->main_bid_size = 0;
	rc = raw_walk(rf, data, size, fold_record, &w, &walked, err);
	if (rc) {
		*decoded = w.ready;
		return rc;
	}
	if (!walked && (rc = raw_parse(rf, data, size, err)))
		return rc;
	*decoded = true;
	if (!w.ready && (rc = setup_raw(m, s, rf, err))) {
		*decoded = !input_fault(m, rc);
		return rc;
	}
	for (size_t i = 0; !walked && i < rf->ncontexts; i++) {
		const struct raw_context *c = &rf->contexts[i];

		s->records++;
		if (c->npcs > s->deepest)
			s->deepest = c->npcs;
		rc = fold_pcs(m, s, rf, c->profile, c->pcs, false, c->npcs,
			      &c->mib, c->hist, c->nhist, c->samp, c->nsamp,
			      weight, err);
		if (rc)
			return rc;
	}
	return flush(m, s, weight, err);
}

/*
 * Location KEY's space, and its value in *VALUE, an escape followed.
 * m->lock held: workers may be growing the spaces and escapes.
 */
static uint64_t key_space(const struct merge *m, uint64_t key,
			  uint64_t *value)
{
	uint64_t space = key >> LOC_BITS;

	*value = key & LOC_MASK;
	if (space == SPACE_ESCAPE) {
		space = m->escapes[*value].space;
		*value = m->escapes[*value].value;
	}
	return space;
}

/* Frame F's RT_* flags (merge.runtime). */
static uint8_t rt_flags(const struct mp_frame *f)
{
	return ((f->flags & MP_FRAME_RUNTIME) && !(f->flags & MP_FRAME_ALLOC_LIB)
		? RT_LEADING : 0) |
	       (f->flags & MP_FRAME_RUNTIME_CODE ? RT_CODE : 0);
}

/*
 * MODULE for a bare address VALUE (opts.bad_in_main): the main binary if
 * its DWARF names a function at VALUE taken as an ELF address, else -1.
 * llvm-profdata adjusts only the PCs inside the profiled binary's text
 * segment and gives every other value to the symbolizer as it is, as an
 * address of that binary, keeping the frames whose DWARF names a
 * function.  An unwinder's garbage past code without frame pointers is
 * such a value, and often a small number, inside a PIE's addresses: in
 * protoc's profiles 15,440 of 16,148 stacks held one, 4,904 of 28,427
 * contexts gained a frame from it, and clang built other IR in 40 of 40
 * files from our export than from llvm-profdata-19's file until the
 * export took the same frames.
 */
static enum mp_errcode bad_in_main(struct merge *m, uint64_t value,
				   int32_t *module, struct mp_err *err)
{
	int32_t main_module = sym_main_module(m->sym);
	const struct sym_frames *fr;
	enum mp_errcode rc;

	*module = -1;
	if (main_module < 0)
		return MP_OK;
	if ((rc = sym_lookup(m->sym, main_module, value, &fr, err)))
		return rc;
	if (fr->n && !fr->from_symtab && fr->f[0].function)
		*module = main_module;
	return MP_OK;
}

/*
 * Intern frame F as --prefix-map rewrites its file path (merge_opts): the
 * one place a frame of any input enters the output, so that the map folds
 * raw and indexed inputs alike.
 */
static enum mp_errcode add_frame(struct merge *m, const struct mp_frame *f,
				 uint32_t *id, struct mp_err *err)
{
	char buf[IDX_PATH_MAX];
	struct mp_frame mapped = *f;
	enum mp_errcode rc;

	if (m->opts.prefix_map && m->opts.prefix_map->n && f->file &&
	    !(mapped.file = mp_prefix_map_apply(m->opts.prefix_map, f->file,
						buf, sizeof(buf))))
		return mp_fail(err, MP_E_TOO_LARGE, "--prefix-map makes '%.200s' "
			       "longer than %d bytes", f->file, IDX_PATH_MAX - 1);
	rc = idx_builder_frame(&m->b, &mapped, id);
	return rc ? mp_fail(err, rc, NULL) : MP_OK;
}

/* Symbolize location KEY and intern its frames: location m->nlocs. */
static enum mp_errcode add_location(struct merge *m, uint64_t key,
				    struct mp_err *err)
{
	uint64_t space, value;
	struct merge_space sp = { -1, 0, { 0 } };
	struct sym_location loc = { .module = -1 };
	enum mp_errcode rc;

	/* Copied out under the lock, as the workers may grow them. */
	pthread_mutex_lock(&m->lock);
	space = key_space(m, key, &value);
	if (space != SPACE_ADDRESS)
		sp = m->spaces[space - SPACE_FIRST];
	pthread_mutex_unlock(&m->lock);
	/*
	 * A location is an ELF address in a module with a binary, an offset
	 * in a module known by its build id only, or a bare address.
	 */
	loc.pc = loc.addr = loc.offset = value;
	if (space != SPACE_ADDRESS) {
		loc.module = sp.module;
		loc.build_id = sp.build_id;
		loc.build_id_size = (uint8_t)sp.build_id_size;
	} else if (m->opts.bad_in_main &&
		   (rc = bad_in_main(m, value, &loc.module, err))) {
		return rc;
	}
	m->buf.n = 0;
	rc = sym_stack_add(m->sym, &loc, &m->buf, err);
	if (rc)
		return rc;
	if (!MP_GROW(m->ids, m->aids, m->nids + m->buf.n) ||
	    !MP_GROW(m->runtime, m->aruntime, m->nids + m->buf.n) ||
	    !MP_GROW(m->loc_first, m->aloc_first, m->nlocs + 1) ||
	    !MP_GROW(m->loc_n, m->aloc_n, m->nlocs + 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	m->loc_first[m->nlocs] = (uint32_t)m->nids;
	m->loc_n[m->nlocs] = (uint32_t)m->buf.n;
	for (size_t i = 0; i < m->buf.n; i++) {
		rc = add_frame(m, &m->buf.f[i], &m->ids[m->nids], err);
		if (rc)
			return rc;
		/*
		 * Only the runtime's own frames go; the allocator library's
		 * stay, flagged, for the compiler's matching (show hides
		 * them).
		 */
		m->runtime[m->nids++] = rt_flags(&m->buf.f[i]);
	}
	if (ht_map_put(&m->loc_map, key, (uint32_t)m->nlocs))
		return mp_fail(err, MP_E_NOMEM, NULL);
	m->nlocs++;
	return MP_OK;
}

/*
 * Hand the new stacks a worker found, and their keys, to the main thread,
 * which symbolizes and places them while the workers go on
 * (symbolize_pending).
 */
static enum mp_errcode publish(struct merge *m, struct scratch *s)
{
	enum mp_errcode rc = MP_OK;

	if (!s->nfresh_e)
		return MP_OK;
	pthread_mutex_lock(&m->lock);
	if (MP_GROW(m->pending, m->apending, m->npending + s->nfresh) &&
	    MP_GROW(m->pending_e, m->apending_e, m->npending_e + s->nfresh_e)) {
		/* No new key: the stacks are new, their locations not (and
		 * PENDING may be none yet, the symbolizer's swapped in). */
		if (s->nfresh)
			memcpy(m->pending + m->npending, s->fresh,
			       s->nfresh * sizeof(*s->fresh));
		memcpy(m->pending_e + m->npending_e, s->fresh_e,
		       s->nfresh_e * sizeof(*s->fresh_e));
		m->npending += s->nfresh;
		__atomic_store_n(&m->npending_e, m->npending_e + s->nfresh_e,
				 __ATOMIC_RELEASE);
		s->nfresh = s->nfresh_e = 0;
	} else {
		rc = MP_E_NOMEM;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* The frame id of class CLS's root frame (MP_FRAME_CLASS_BASE). */
static enum mp_errcode class_frame(struct merge *m, uint32_t cls,
				   uint32_t *id)
{
	struct mp_frame f = { .offset = MP_FRAME_CLASS_BASE + cls };
	enum mp_errcode rc;

	if (!m->class_frame[cls]) {
		if ((rc = idx_builder_frame(&m->b, &f, id)))
			return rc;
		m->class_frame[cls] = *id + 1;
	}
	*id = m->class_frame[cls] - 1;
	return MP_OK;
}

/*
 * Give entry E its node in the builder's trie: its stack as frames, less
 * the runtime's leading ones (all of them if there is nothing else), and
 * its class's root frame if its last key is a class.  Every location key
 * of E is symbolized.  b_lock held.
 */
static enum mp_errcode place(struct merge *m, struct ctab_entry *e,
			     struct mp_err *err)
{
	bool leading = !m->opts.keep_runtime;
	size_t n = 0, start = 0;
	uint32_t nkeys = e->nkeys, node;
	int cls = -1;
	enum mp_errcode rc;

	if (nkeys && is_class_key(e->keys[nkeys - 1]))
		cls = (int)(e->keys[--nkeys] - CLASS_KEY);
	for (uint32_t k = 0; k < nkeys; k++) {
		uint32_t loc, first, len;

		if (!ht_map_get(&m->loc_map, e->keys[k], &loc))
			return mp_fail(err, MP_E_INVALID,
				       "location 0x%llx was not symbolized",
				       (unsigned long long)e->keys[k]);
		first = m->loc_first[loc];
		len = m->loc_n[loc];
		/* Past the program's first frame, the runtime's own code is a
		 * stale return address (MP_FRAME_RUNTIME_CODE). */
		if (!leading && !m->opts.keep_runtime && len &&
		    (m->runtime[first] & RT_CODE)) {
			m->stale++;
			continue;
		}
		if (!MP_GROW(m->stack, m->astack, n + len))
			return mp_fail(err, MP_E_NOMEM, NULL);
		for (uint32_t f = first; f < first + len; f++) {
			if (leading && (m->runtime[f] & RT_LEADING))
				start++;
			else
				leading = false;
			m->stack[n++] = m->ids[f];
		}
	}
	if (start == n)
		start = 0;	/* all runtime: keep it all */
	if (cls >= 0) {
		if (!MP_GROW(m->stack, m->astack, n + 1))
			return mp_fail(err, MP_E_NOMEM, NULL);
		if ((rc = class_frame(m, (uint32_t)cls, &m->stack[n++])))
			return mp_fail(err, rc, NULL);
	}
	if ((rc = idx_builder_node(&m->b, m->stack + start,
				   (uint32_t)(n - start), &node, err)))
		return rc;
	e->node1 = node + 1;
	return MP_OK;
}

/*
 * The first lookup in a module reads its DWARF: for a C library's debug
 * file, whose sections are compressed, a third of a cold merge of eight
 * inputs, for the two or three frames above main.  When a batch of keys
 * would open several modules, all but the one with the most keys are
 * opened by a helper thread (-j 2 and up) while this one symbolizes the
 * other keys; theirs come after (sym_open_dwarf()).
 */
#define OPEN_BESIDE 8

struct opener {
	struct sym_module *mod[OPEN_BESIDE];
	int32_t module[OPEN_BESIDE];
	size_t n;
	pthread_t thread;
};

static void *open_modules(void *arg)
{
	struct opener *o = arg;

	for (size_t i = 0; i < o->n; i++)
		sym_open_dwarf(o->mod[i]);
	return NULL;
}

static bool opening(const struct opener *o, int32_t module)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->module[i] == module)
			return true;
	return false;
}

/*
 * Note each of the N KEYS' module in MOD and start O on the modules to
 * open beside, if any (O->n).  The caller holds m->sym_lock, and keeps it
 * until O is joined: nothing else may use the symbolizer meanwhile.
 */
static void open_beside(struct merge *m, const uint64_t *keys, size_t n,
			int32_t *mod, struct opener *o)
{
	int32_t seen[2 * OPEN_BESIDE];
	size_t count[2 * OPEN_BESIDE] = { 0 }, nseen = 0, most = SIZE_MAX;

	o->n = 0;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < n; i++) {
		uint64_t value, space = key_space(m, keys[i], &value);

		mod[i] = space == SPACE_ADDRESS ? -1
			 : m->spaces[space - SPACE_FIRST].module;
	}
	pthread_mutex_unlock(&m->lock);
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (mod[i] < 0)
			continue;
		while (k < nseen && seen[k] != mod[i])
			k++;
		if (k == nseen) {
			if (nseen == 2 * OPEN_BESIDE)
				continue;	/* that many: no guess */
			seen[nseen++] = mod[i];
		}
		count[k]++;
	}
	/* Of the modules to open, the one with the most keys stays here. */
	for (size_t k = 0; k < nseen; k++) {
		struct sym_module *x = sym_dwarf_to_open(m->sym, seen[k]);

		if (!x)
			continue;
		if (most == SIZE_MAX || count[k] > count[most])
			most = k;
		if (o->n < OPEN_BESIDE) {
			o->mod[o->n] = x;
			o->module[o->n++] = seen[k];
		}
	}
	for (size_t i = 0; most != SIZE_MAX && i < o->n; i++)
		if (o->module[i] == seen[most]) {
			o->mod[i] = o->mod[--o->n];
			o->module[i] = o->module[o->n];
			break;
		}
	if (o->n && mp_thread_beside(&o->thread, open_modules, o) != 0)
		o->n = 0;	/* then the lookups open them */
}

/* Placing a stack, the keys of the one this many on are fetched. */
#define PLACE_AHEAD 4

/*
 * Step 2 (merge.h), run by a worker (drain) or the main thread:
 * symbolize each location not seen yet, then place the new stacks.
 * Workers may need the symbolizer (sym_lock) to learn a new input's
 * segments, so it is taken location by location, but for the whole of
 * the first pass while a helper reads modules' DWARF (open_beside());
 * b_lock guards the builder's frames and trie.  A stack's keys are
 * handed over with it or before, so they are symbolized by the time it
 * is placed.  *PLACED (if not NULL) gets the number of stacks taken.
 */
static enum mp_errcode symbolize_pending(struct merge *m, size_t *placed,
					 struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;
	struct ctab_entry **entries;
	struct opener o = { .n = 0 };
	uint64_t *keys;
	size_t n, alloc, ne, alloc_e;
	bool held = false;

	/* Take the pending work, leaving the workers empty arrays. */
	pthread_mutex_lock(&m->lock);
	keys = m->pending;
	n = m->npending;
	alloc = m->apending;
	m->pending = m->taken;
	m->apending = m->ataken;
	m->npending = 0;
	entries = m->pending_e;
	ne = m->npending_e;
	alloc_e = m->apending_e;
	m->pending_e = m->taken_e;
	m->apending_e = m->ataken_e;
	__atomic_store_n(&m->npending_e, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->lock);
	m->taken = keys;
	m->ataken = alloc;
	m->taken_e = entries;
	m->ataken_e = alloc_e;
	if (placed)
		*placed = ne;

	if (m->opts.jobs >= 2 && n > 1 &&
	    MP_GROW(m->taken_mod, m->ataken_mod, n)) {
		pthread_mutex_lock(&m->sym_lock);
		open_beside(m, keys, n, m->taken_mod, &o);
		held = o.n > 0;
		if (!held)
			pthread_mutex_unlock(&m->sym_lock);
	}
	/* Pass 0: keys of modules not being opened beside; 1: the rest. */
	for (int pass = 0; pass < (held ? 2 : 1) && !rc; pass++) {
		if (pass == 1) {
			pthread_join(o.thread, NULL);
			pthread_mutex_unlock(&m->sym_lock);
			held = false;
		}
		for (size_t i = 0; i < n && !rc; i++) {
			uint32_t loc;

			if (o.n && opening(&o, m->taken_mod[i]) != (pass == 1))
				continue;
			if (ht_map_get(&m->loc_map, keys[i], &loc))
				continue;
			if (m->nlocs >= UINT32_MAX - 1) {
				rc = mp_fail(err, MP_E_TOO_LARGE,
					     "too many PC locations");
				break;
			}
			if (!held)
				pthread_mutex_lock(&m->sym_lock);
			pthread_mutex_lock(&m->b_lock);
			rc = add_location(m, keys[i], err);
			pthread_mutex_unlock(&m->b_lock);
			if (!held)
				pthread_mutex_unlock(&m->sym_lock);
		}
	}
	if (held) {
		/* Failed in pass 0: the helper is still to be joined. */
		pthread_join(o.thread, NULL);
		pthread_mutex_unlock(&m->sym_lock);
	}
	if (rc)
		return rc;
	pthread_mutex_lock(&m->b_lock);
	for (size_t i = 0; i < ne && !rc; i++) {
		/*
		 * The entries were made a while ago, most by another worker:
		 * fetch the keys of the one a few on (past its MIB) and its
		 * header, or each stack waits for memory before its frames.
		 */
		if (i + PLACE_AHEAD < ne) {
			const struct ctab_entry *x = entries[i + PLACE_AHEAD];
			const char *k = (const char *)x->keys;

			__builtin_prefetch(x);
			for (int line = 0; line < 3; line++)
				__builtin_prefetch(k + 64 * line);
		}
		rc = place(m, entries[i], err);
	}
	pthread_mutex_unlock(&m->b_lock);
	return rc;
}

/*
 * Step 3 (merge.h): lend each entry's MIB, histogram and sample entries
 * to the builder as the context of its stack's node (frames without the
 * runtime's leading ones), freeing the table's index shard by shard.
 * The entries stay in their arenas until merge_release(): a copy would
 * be tens of MB of fresh memory, which a virtual machine makes slower to
 * fill than to read where it is.  Every stack is placed by now.
 */
#define BUILD_AHEAD 8

static enum mp_errcode lend_all(struct merge *m, struct mp_err *err)
{
	enum mp_errcode rc;

	for (size_t s = 0; s < CTAB_SHARDS; s++) {
		struct ctab_shard *sh = &m->tab.shard[s];

		for (size_t i = 0; i < sh->n; i++) {
			struct ctab_entry *e = sh->list[i];

			/*
			 * A shard's entries lie all over the workers' arenas,
			 * tens of MB past the caches at hundreds of inputs:
			 * fetch the header of the one a few on.
			 */
			if (i + 2 * BUILD_AHEAD < sh->n)
				__builtin_prefetch(sh->list[i + 2 * BUILD_AHEAD]);
			if (i + BUILD_AHEAD < sh->n && sh->list[i + BUILD_AHEAD]->node1)
				idx_builder_prefetch_node(&m->b,
					sh->list[i + BUILD_AHEAD]->node1 - 1);
			if (!e->node1)
				return mp_fail(err, MP_E_INVALID, "a stack was "
					       "never placed in the trie");
			if ((rc = idx_builder_lend_node(&m->b, e->node1 - 1, &e->mib,
							e->hist, e->nhist, e->samp,
							e->nsamp, err)))
				return rc;
		}
		ctab_release_shard(&m->tab, s);
	}
	return MP_OK;
}

struct lending {
	struct merge *m;
	enum mp_errcode rc;
	struct mp_err err;
};

static void *lend_thread(void *arg)
{
	struct lending *l = arg;

	l->rc = lend_all(l->m, &l->err);
	return NULL;
}

static enum mp_errcode build(struct merge *m, struct mp_err *err)
{
	/* At most one context per stack (fewer when only runtime frames
	 * told two apart); the lending empties the table as it goes. */
	size_t n = ctab_count(&m->tab);
	struct lending l = { .m = m };
	pthread_t lender;

	if (idx_builder_reserve(&m->b, n))
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * Every stack is placed (lend_all() checks): a worker hands over each
	 * input's new stacks once it is folded, merge_run() places the last
	 * ones, and an input that failed after folding anything stopped the
	 * merge.  So the trie's index (8 MB at 64 inputs) can go before the
	 * write's memory comes: the write reuses those pages, just freed,
	 * instead of the host's cold ones (bench/RESULTS.md), and the peak
	 * is lower.
	 */
	idx_builder_seal_stacks(&m->b);
	/*
	 * The write's sections of the stacks on this thread while a second
	 * one (-j gave two) lends: the write is the serial tail of a merge,
	 * and this is a third of it.  The lending is the shorter of the two,
	 * and the one to wait for a thread to start.
	 */
	if (!m->opts.indexed_output || m->opts.jobs < 2 ||
	    mp_thread_beside(&lender, lend_thread, &l) != 0)
		return lend_all(m, err);
	m->w = idx_write_begin(&m->b, n);
	pthread_join(lender, NULL);
	if (l.rc)
		*err = l.err;
	return l.rc;
}

/* The outcome of one input. */
struct job {
	enum mp_errcode rc;
	struct mp_err err;
	bool fatal;		/* failed while being folded in */
	bool raw;		/* a raw input (indexed ones count themselves) */
	bool done;
	uint64_t unresolved;	/* merge_result's */
	uint8_t bid[RAW_BUILD_ID_MAX];
	uint32_t bid_size;
	bool unclassed;		/* merge_result's */
	bool more_bids;		/* likewise */
	bool other_program;	/* likewise, with other_bid */
	uint8_t other_bid[RAW_BUILD_ID_MAX];
	uint32_t other_bid_size;
	uint64_t records;	/* likewise */
	uint32_t deepest;
	uint8_t main_bid[RAW_BUILD_ID_MAX];	/* struct scratch's */
	uint32_t main_bid_size;
};

/*
 * As for show (view.c), an indexed input may expand to at most 16 frames
 * per byte of it: a trie lets N nodes describe N^2/2 frames.
 */
struct idx_add {
	struct merge *m;
	uint64_t weight;
	struct mp_err *err;
	enum mp_errcode rc;
	/* Contexts given their class's root frame by their MIB: a merge
	 * keeping classes apart (opts.llvm_types) of a file without them. */
	uint64_t classified;
	uint32_t *ids;		/* one stack's frames, as builder ids */
	size_t aids;
	/* The builder id of each of the input's stack entries, + 1 (0: not
	 * yet seen): a frame's strings are hashed once per input, not once
	 * per time a stack passes through it. */
	uint32_t *map;
	uint64_t frames;	/* idx_stack_begin's budget */
	/* Unsymbolized stack entries whose binary this merge has: each
	 * expands to the frames of its address, which go to xids as a count
	 * then the builder ids; map holds their place there + 1 with
	 * XMAP set. */
	uint32_t *xids;
	size_t nxids, axids;
	uint8_t *xrt;		/* per xids slot: its RT_* flags */
	size_t axrt;
	uint64_t resymbolized;	/* frames symbolized here */
	uint64_t unresolved;	/* and those that stay as they are */
	uint8_t bid[RAW_BUILD_ID_MAX];	/* the first one's build id */
	uint32_t bid_size;
	bool more_bids;			/* and others of other ones */
};

#define XMAP 0x80000000u

/*
 * An unsymbolized frame FR (build id and ELF address) of an indexed input
 * whose binary this merge knows: its frames, symbolized now, go to the
 * builder and to a->xids (as XMAP | place + 1 in *SLOT).  False when it
 * stays as it is (no such binary).  So an input merged without --binary
 * and merged again with it comes out as if merged with it from the start,
 * instead of keeping its stacks apart from the same stacks symbolized.
 */
static bool resymbolize(struct idx_add *a, const struct mp_frame *fr,
			uint32_t *slot)
{
	struct merge *m = a->m;
	struct sym_location loc = { .module = -1 };
	int32_t module;
	size_t at;

	if (mp_frame_symbolized(fr) || !fr->build_id_size)
		return false;
	if ((a->rc = sym_module_of_build_id(m->sym, fr->build_id,
					    fr->build_id_size, &module, a->err)))
		return false;
	if (module < 0) {
		uint32_t size = fr->build_id_size < RAW_BUILD_ID_MAX ?
				fr->build_id_size : RAW_BUILD_ID_MAX;

		if (!a->unresolved++) {
			a->bid_size = size;
			memcpy(a->bid, fr->build_id, size);
		} else if (size != a->bid_size ||
			   memcmp(a->bid, fr->build_id, size) != 0) {
			a->more_bids = true;
		}
		return false;
	}
	loc.module = module;
	loc.pc = loc.addr = loc.offset = fr->offset;
	loc.build_id = fr->build_id;
	loc.build_id_size = (uint8_t)fr->build_id_size;
	m->buf.n = 0;
	if ((a->rc = sym_stack_add(m->sym, &loc, &m->buf, a->err)) || !m->buf.n)
		return false;
	if (a->nxids + 1 + m->buf.n > XMAP - 1 ||
	    !MP_GROW(a->xids, a->axids, a->nxids + 1 + m->buf.n) ||
	    !MP_GROW(a->xrt, a->axrt, a->nxids + 1 + m->buf.n)) {
		a->rc = mp_fail(a->err, MP_E_NOMEM, NULL);
		return false;
	}
	at = a->nxids;
	a->xids[a->nxids++] = (uint32_t)m->buf.n;
	for (size_t i = 0; i < m->buf.n; i++) {
		struct mp_frame f = m->buf.f[i];

		if (sym_alloc_match(m->opts.alloc, f.function))
			f.flags |= MP_FRAME_RUNTIME | MP_FRAME_ALLOC_LIB;
		if ((a->rc = add_frame(m, &f, &a->xids[a->nxids], a->err)))
			return false;
		/* As place() does for raw stacks: the runtime's own frames
		 * go, the allocator library's stay. */
		a->xrt[a->nxids++] = rt_flags(&f);
	}
	*slot = XMAP | (uint32_t)(at + 1);
	/* Its binary may have nothing for this address either. */
	if (mp_frame_symbolized(&m->buf.f[0]))
		a->resymbolized++;
	return true;
}

/*
 * Fold one context of an indexed input into the builder (called under
 * b_lock), its frames interned as they are read.
 */
static int add_idx_context(void *arg, const struct idx_file *f,
			   const struct idx_context *c)
{
	struct idx_add *a = arg;
	struct idx_stack_iter it;
	struct idx_frame_buf fb;
	struct mp_frame fr;
	uint32_t n = 0, lead = 0;
	bool classed = false;	/* its root frame is a class's */

	if ((a->rc = idx_stack_begin(&it, f, c->stack_id, &a->frames, a->err)))
		return 1;
	if (!MP_GROW(a->ids, a->aids, it.depth + 1)) {
		a->rc = mp_fail(a->err, MP_E_NOMEM, NULL);
		return 1;
	}
	while (idx_stack_next(&it, &fr, &fb)) {
		uint32_t *known = it.frame < f->nframes ? &a->map[it.frame] : NULL;
		uint32_t spare;

		classed = mp_frame_class(&fr) >= 0;	/* the last: the root */

		if (known && !*known && resymbolize(a, &fr, known))
			;	/* *known now names its frames in xids */
		else if (a->rc)
			return 1;
		else if (!known && resymbolize(a, &fr, &spare))
			known = &spare;
		else if (a->rc)
			return 1;
		if (known && (*known & XMAP)) {
			size_t at = (*known & ~XMAP) - 1;
			const uint32_t *x = &a->xids[at];

			/* A stale return address, as place() leaves out. */
			if (n > lead && x[0] && (a->xrt[at + 1] & RT_CODE) &&
			    !a->m->opts.keep_runtime) {
				a->m->stale++;
				continue;
			}

			if (!MP_GROW(a->ids, a->aids, (size_t)n + x[0] + it.left + 1)) {
				a->rc = mp_fail(a->err, MP_E_NOMEM, NULL);
				return 1;
			}
			for (uint32_t k = 0; k < x[0]; k++) {
				/* Leading runtime frames, newly named, go. */
				if (n == lead && (a->xrt[at + 1 + k] & RT_LEADING) &&
				    !a->m->opts.keep_runtime)
					lead++;
				a->ids[n++] = x[1 + k];
			}
			continue;
		}
		/* A leading run of runtime frames that resymbolized ones
		 * began goes on through the runtime's named frames (ld.so's
		 * calloc below the interceptor). */
		if (lead && n == lead && !a->m->opts.keep_runtime &&
		    !(fr.flags & MP_FRAME_ALLOC_LIB) &&
		    sym_is_runtime(fr.function, fr.file))
			lead++;
		if (known && *known) {
			a->ids[n++] = *known - 1;
			continue;
		}
		/*
		 * The program's own allocation wrappers are flagged as the
		 * allocator library's, as the symbolizer flags them in raw
		 * inputs: kept for the compiler, hidden by show.
		 */
		if (sym_alloc_match(a->m->opts.alloc, fr.function))
			fr.flags |= MP_FRAME_RUNTIME | MP_FRAME_ALLOC_LIB;
		if ((a->rc = add_frame(a->m, &fr, &a->ids[n], a->err)))
			return 1;
		if (known)
			*known = a->ids[n] + 1;
		n++;
	}
	if (lead == n)
		lead = 0;	/* all runtime: keep it all, as build() does */
	/*
	 * A merge keeping classes apart, of a context merged without them
	 * (--keep-types): classed by its MIB, which is a raw record's where
	 * one raw stack made the context; records folded into it (of more
	 * runs, which the caller is told, or stacks that symbolize alike)
	 * stay folded whatever their classes.
	 */
	if (a->m->opts.llvm_types && !classed) {
		enum mib_class cls = mib_alloc_class(&c->mib, a->m->opts.llvm_types);

		if (!MP_GROW(a->ids, a->aids, (size_t)n + 1)) {
			a->rc = mp_fail(a->err, MP_E_NOMEM, NULL);
			return 1;
		}
		if ((a->rc = class_frame(a->m, cls, &a->ids[n++]))) {
			mp_fail(a->err, a->rc, NULL);
			return 1;
		}
		a->classified++;
	}
	a->rc = idx_builder_add_stack(&a->m->b, a->ids + lead, n - lead, &c->mib,
				      c->hist, c->nhist, a->weight, a->err);
	if (a->rc == MP_OK)
		a->rc = idx_builder_add_samples(&a->m->b, c->samp, c->nsamp,
						a->weight, a->err);
	return a->rc != MP_OK;
}

static enum mp_errcode add_indexed(struct merge *m, const struct idx_file *f,
				   uint64_t weight, struct job *j,
				   struct mp_err *err)
{
	struct idx_add a = { .m = m, .weight = weight, .err = err };
	int r;

	a.map = calloc(f->nframes ? f->nframes : 1, sizeof(*a.map));
	if (!a.map)
		return mp_fail(err, MP_E_NOMEM, NULL);
	r = idx_foreach_context(f, add_idx_context, &a);

	free(a.ids);
	free(a.map);
	free(a.xids);
	free(a.xrt);
	__atomic_fetch_add(&m->resymbolized, a.resymbolized, __ATOMIC_RELAXED);
	j->unclassed = a.classified && f->ninputs > 1;
	j->unresolved = a.unresolved;
	j->bid_size = a.bid_size;
	j->more_bids = a.more_bids;
	memcpy(j->bid, a.bid, sizeof(j->bid));
	if (r && !a.rc)
		a.rc = mp_fail(err, MP_E_NOMEM, NULL);
	if (a.rc == MP_OK)
		idx_builder_count_inputs(&m->b, f->ninputs ? f->ninputs : 1);
	return a.rc;
}

struct pipeline {
	struct merge *m;
	const struct merge_input *in;
	struct job *jobs;
	size_t n;
	const size_t *order;	/* the inputs in the order workers take them */
	size_t next;		/* the next place in ORDER a worker takes */
	unsigned workers;	/* started: worker k has arena k */
	/*
	 * For drain_now(): each input's size (by input), what the inputs not
	 * taken yet hold, the recent folding rate (fold_rate()) and the wall
	 * time spent so far placing how many stacks.
	 */
	const uint64_t *size;
	uint64_t left_bytes;
	double fold_ns_per_byte;
	uint64_t place_ns, placed;
	bool stop;
	/* A worker is in symbolize_pending(); and its failure, if any. */
	bool symbolizing;
	enum mp_errcode sym_rc;
	struct mp_err sym_err;
	pthread_mutex_t lock;
	pthread_cond_t done;
};

/* Read, validate and fold one input: what a worker does. */
static void run_input(struct merge *m, struct scratch *s,
		      const struct merge_input *in, struct job *j)
{
	struct mp_buf *buf = &s->in;

	j->rc = mp_file_reread(buf, in->path, &m->opts.read, &j->err);
	if (j->rc)
		return;
	if (llvm_is_llvm(buf->data, buf->size)) {
		j->rc = mp_fail(&j->err, MP_E_BAD_MAGIC, "an LLVM indexed "
				"profile: merge reads raw profiles and ours (show, "
				"overlap and diff read LLVM's too)");
	} else if (idx_is_indexed(buf->data, buf->size)) {
		struct idx_file f;

		j->rc = idx_open(&f, buf->data, buf->size, &j->err);
		if (j->rc == MP_OK)
			j->rc = same_classes(m, &f, &j->err);
		if (j->rc == MP_OK && m->opts.need_start_lines && f.version < 10)
			j->rc = mp_fail(&j->err, MP_E_INVALID,
					"an indexed profile of format %u keeps no "
					"function start lines, which LLVM's line "
					"offsets need; merge its raw profiles again",
					f.version);
		if (j->rc == MP_OK) {
			/* The symbolizer too (resymbolize), in the order
			 * symbolize_pending() takes the two. */
			pthread_mutex_lock(&m->sym_lock);
			pthread_mutex_lock(&m->b_lock);
			j->rc = add_indexed(m, &f, in->weight, j, &j->err);
			pthread_mutex_unlock(&m->b_lock);
			pthread_mutex_unlock(&m->sym_lock);
			j->fatal = j->rc != MP_OK;
		}
	} else {
		bool decoded;

		s->other = false;	/* (setup_raw() says, if it runs) */
		j->rc = fold_raw(m, s, buf->data, buf->size, in->weight, &decoded,
				 &j->err);
		j->fatal = j->rc != MP_OK && decoded;
		j->records = s->records;
		j->deepest = s->deepest;
		memcpy(j->main_bid, s->main_bid, s->main_bid_size);
		j->main_bid_size = s->main_bid_size;
		if ((j->other_program = j->rc == MP_OK && s->other)) {
			memcpy(j->other_bid, s->other_bid, sizeof(j->other_bid));
			j->other_bid_size = s->other_bid_size;
		}
		if (j->rc == MP_OK && publish(m, s)) {
			j->rc = mp_fail(&j->err, MP_E_NOMEM, NULL);
			j->fatal = true;
		}
		j->raw = true;
	}
}

/*
 * While inputs are left to take, new stacks wait until at least this
 * many are pending (drain_now() says when past that): each batch finds
 * the builder's tables (the trie's map and arrays, the locations:
 * megabytes) pushed out of the caches by the folding beside it, and
 * fewer, larger batches pay that less often.  At N = 64, -j 2, against a
 * batch per input (41 alternating runs): 151.5 -> 146.8 ms, CPU 280 ->
 * 270 ms; N = 500 789 -> 755 ms (bench/RESULTS.md).  Once no input is
 * left, whatever is pending goes, beside the last inputs' folding.
 */
#define DRAIN_BATCH 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Is it time to place the PENDING new stacks?  p->lock held.  Once no
 * input is left to take, whenever any are pending.  Before, the first
 * batch goes as soon as there is one (it starts the symbolizer's reading
 * of debug information, and measures how fast stacks are placed); later
 * ones once placing them would take as long as the other workers need to
 * fold the inputs not taken yet, at the placing rate measured so far and
 * the folding rate of the last inputs (fold_rate()).  Each batch starts
 * cold, its tables pushed out of the caches by the folding before it: at
 * N = 64, -j 2, twenty batches of 4096 or more placed late
 * stacks at 350 to 550 ns each where -j 1's one batch placed them at 210
 * (bench/RESULTS.md, Analysis).  Waiting, most stacks go in one batch
 * beside the later half of the folding, in three or four batches in all,
 * and the placing took 33.6 ms of CPU instead of 41.5 (medians of 9).
 * The more workers, the less folding is left beside a batch, and the
 * more often batches go: on many cores the one placing thread keeps up
 * as before.  Inputs of unknown size (pipes) count as empty: with only
 * those left, a batch goes as soon as it is pending, as before.
 */
static bool drain_now(const struct pipeline *p, size_t pending)
{
	double place, fold;

	if (p->next >= p->n)
		return pending > 0;
	if (pending < DRAIN_BATCH)
		return false;
	if (p->workers < 2 || !p->placed || !p->fold_ns_per_byte)
		return true;
	place = (double)pending * (double)p->place_ns / (double)p->placed;
	fold = (double)p->left_bytes * p->fold_ns_per_byte /
	       (p->workers - 1);
	return place >= fold;
}

/*
 * Symbolize and place the new stacks found so far, unless another worker
 * is at it (then it goes back to folding) or it is not time yet
 * (drain_now()).
 * Step 2 is serial, but it runs beside the other workers' folding on
 * whichever worker is free, not on a thread of its own: on a machine with
 * as many cores as workers, a third busy thread would only take turns
 * with them.  The first failure stops the merge.
 */
static void drain(struct pipeline *p)
{
	struct mp_err err = { 0 };
	enum mp_errcode rc = MP_OK;
	size_t pending, placed = 0;

	pthread_mutex_lock(&p->lock);
	if (p->symbolizing || p->sym_rc) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	p->symbolizing = true;
	pending = __atomic_load_n(&p->m->npending_e, __ATOMIC_ACQUIRE);
	for (; !rc && drain_now(p, pending);
	     pending = __atomic_load_n(&p->m->npending_e, __ATOMIC_ACQUIRE)) {
		uint64_t t0 = now_ns();

		pthread_mutex_unlock(&p->lock);
		rc = symbolize_pending(p->m, &placed, &err);
		pthread_mutex_lock(&p->lock);
		p->place_ns += now_ns() - t0;
		p->placed += placed;
	}
	p->symbolizing = false;
	if (rc) {
		p->sym_rc = rc;
		p->sym_err = err;
		p->stop = true;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
}

/*
 * How fast inputs fold, in nanoseconds per byte, for drain_now(); p->lock
 * held.  A mean over the inputs folded last, weighted by size: an input
 * of SIZE bytes moves the mean by SIZE / (SIZE + FOLD_RATE_SPAN) of the
 * way to its own rate.  Later inputs fold faster than the first ones,
 * which find most of their contexts new: at N = 64 the rate over every
 * input so far overstated the folding left by half, and the batch of new
 * stacks it started went on 10 to 17 ms after the other worker had run
 * out of inputs in 3 of 25 runs (the gap between the two workers' ends:
 * median 2.7 ms, at most 17.0, against 1.2 and 2.7 with this mean;
 * bench/RESULTS.md, Analysis).
 */
#define FOLD_RATE_SPAN 8e6

static void fold_rate(struct pipeline *p, uint64_t ns, uint64_t size)
{
	double rate, bytes = (double)size;

	if (!size)
		return;
	rate = (double)ns / bytes;
	if (!p->fold_ns_per_byte)
		p->fold_ns_per_byte = rate;
	else
		p->fold_ns_per_byte += (rate - p->fold_ns_per_byte) * bytes /
				       (bytes + FOLD_RATE_SPAN);
}

static void *worker(void *arg)
{
	struct pipeline *p = arg;
	struct scratch s = { 0 };

	pthread_mutex_lock(&p->lock);
	s.arena = &p->m->arenas[++p->workers].a;
	pthread_mutex_unlock(&p->lock);
	for (;;) {
		uint64_t t0;
		size_t i;

		pthread_mutex_lock(&p->lock);
		if (p->stop || p->next >= p->n) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		i = p->order[p->next++];
		p->left_bytes -= p->size[i];
		pthread_mutex_unlock(&p->lock);

		t0 = now_ns();
		run_input(p->m, &s, &p->in[i], &p->jobs[i]);

		pthread_mutex_lock(&p->lock);
		fold_rate(p, now_ns() - t0, p->size[i]);
		p->jobs[i].done = true;
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->lock);
		drain(p);
	}
	scratch_release(&s);
	return NULL;
}

/*
 * Count J's main build id among the raw inputs' (merge.programs), for
 * keep_modules().  At most MAX_PROGRAMS distinct ones are counted, the
 * first met: past that many programs in one merge, which one pprof's
 * header names may depend on the inputs' order.
 */
#define MAX_PROGRAMS 4096

static enum mp_errcode count_program(struct merge *m, const struct job *j)
{
	struct merge_program *p;
	size_t k;

	for (k = 0; k < m->nprograms; k++) {
		p = &m->programs[k];
		if (p->build_id_size == j->main_bid_size &&
		    !memcmp(p->build_id, j->main_bid, j->main_bid_size))
			break;
	}
	if (k == m->nprograms) {
		if (k == MAX_PROGRAMS)
			return MP_OK;
		if (!MP_GROW(m->programs, m->aprograms, k + 1))
			return MP_E_NOMEM;
		p = &m->programs[m->nprograms++];
		memset(p, 0, sizeof(*p));
		memcpy(p->build_id, j->main_bid, j->main_bid_size);
		p->build_id_size = j->main_bid_size;
	}
	m->programs[k].inputs++;
	return MP_OK;
}

/*
 * Account for input I's outcome and tell the caller.  Only a failure to
 * read or decode an input is the input's fault and follows the failure
 * mode; a failure while folding it in (out of memory, a limit of the
 * format, a --strict symbolization error) leaves it half merged, so it
 * always stops the merge.  Returns the code that stops the merge, or MP_OK.
 */
static enum mp_errcode account(struct merge *m, const struct merge_input *in,
			       size_t i, size_t n, const struct job *j,
			       struct mp_err *err)
{
	struct merge_result r = {
		.index = i, .ninputs = n, .path = in->path, .rc = j->rc,
		.err = &j->err, .unresolved = j->unresolved,
		.unresolved_bid_size = j->bid_size, .unclassed = j->unclassed,
		.unresolved_more_bids = j->more_bids,
	};

	memcpy(r.unresolved_bid, j->bid, sizeof(r.unresolved_bid));
	r.other_program = j->other_program;
	memcpy(r.other_bid, j->other_bid, sizeof(r.other_bid));
	r.other_bid_size = j->other_bid_size;
	r.records = j->records;
	r.deepest = j->deepest;
	if (j->rc == MP_OK) {
		m->good++;
		if (j->raw && j->main_bid_size && count_program(m, j))
			return mp_fail(err, MP_E_NOMEM, NULL);
		m->indexed += !j->raw;
		if (j->raw) {
			pthread_mutex_lock(&m->b_lock);
			idx_builder_count_inputs(&m->b, 1);
			pthread_mutex_unlock(&m->b_lock);
		}
	} else {
		if (!j->fatal)
			m->bad++;
		r.fatal = j->fatal ||
			  m->opts.failure_mode == MERGE_FAIL_ANY;
	}
	r.contexts = ctab_count(&m->tab);
	if (m->opts.report)
		m->opts.report(m->opts.report_arg, &r);
	if (!r.fatal)
		return MP_OK;
	m->failed_input = in->path;
	*err = j->err;
	return j->rc;
}

/*
 * How many inputs per worker, at the end of the list, are taken largest
 * first.  A merge ends when the last input a worker took is folded, the
 * other workers idle meanwhile: ending on the small ones, they idle less
 * (at 64 inputs and -j 2, half an input's fold on average, else).  Only
 * the last few, so that a bad input still stops the merge about when its
 * turn comes, and the progress moves on evenly.
 */
#define SIZED_TAIL 4

/* Inputs X and Y (indices) by SIZES, largest first; ties in order. */
static int by_size_down(const void *x, const void *y, void *sizes)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	const uint64_t *size = sizes;

	if (size[a] != size[b])
		return size[a] > size[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * The order the workers take the N inputs in (ORDER, N entries): as
 * given, but the last SIZED_TAIL per worker largest first (inputs that
 * are no regular file count as empty), never the first input of each
 * worker: the first input folded starts the symbolizing, which at a few
 * inputs is the longer half of the merge, and the largest would delay
 * it most (at 8 inputs, 19 ms instead of 3).  SIZES gets each input's
 * size (by input, 0 for no regular file).  Returns the size of the
 * largest input, for the workers' read buffers (mp_read_opts.expect):
 * each then takes its memory once instead of again at every new largest
 * input.  A stat per input, a microsecond each.
 */
static uint64_t plan_inputs(const struct merge_input *in, size_t n,
			    unsigned workers, size_t *order, uint64_t *sizes)
{
	size_t tail = workers > 1 ? (size_t)workers * SIZED_TAIL : 0;
	size_t rest = n > workers ? n - workers : 0;	/* past the first ones */
	uint64_t max = 0;
	struct stat st;

	if (tail > rest)
		tail = rest;
	for (size_t i = 0; i < n; i++) {
		uint64_t size = 0;

		if (strcmp(in[i].path, "-") != 0 && stat(in[i].path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			size = (uint64_t)st.st_size;
		if (size > max)
			max = size;
		order[i] = i;
		sizes[i] = size;
	}
	qsort_r(order + n - tail, tail, sizeof(*order), by_size_down, sizes);
	return max;
}

/*
 * Describe the modules addresses were looked up in (m->modules).  When no
 * raw stack was (indexed inputs only, their frames symbolized already),
 * the main binary, the first --binary, stands for the program all the
 * same: a pprof export names it first, where it named the first module
 * any frame had a build id of (a PostgreSQL merge: the C library's debug
 * file, found by build id for the indexed input's unsymbolized frames).
 */
/* The build id most raw inputs have as their main segment's (ties: the
 * lesser bytes, so that the order of the inputs does not matter), or
 * NULL. */
static const struct merge_program *most_inputs(const struct merge *m)
{
	const struct merge_program *best = NULL;

	for (size_t k = 0; k < m->nprograms; k++) {
		const struct merge_program *p = &m->programs[k];

		if (!best || p->inputs > best->inputs ||
		    (p->inputs == best->inputs &&
		     (p->build_id_size < best->build_id_size ||
		      (p->build_id_size == best->build_id_size &&
		       memcmp(p->build_id, best->build_id,
			      p->build_id_size) < 0))))
			best = p;
	}
	return best;
}

/* MI to m->unmapped (*ALLOC entries allocated). */
static enum mp_errcode add_unmapped(struct merge *m,
				    const struct sym_module_info *mi,
				    size_t *alloc)
{
	struct merge_unmapped *u;

	if (!MP_GROW(m->unmapped, *alloc, m->nunmapped + 1))
		return MP_E_NOMEM;
	u = &m->unmapped[m->nunmapped];
	memset(u, 0, sizeof(*u));
	if (!(u->path = strdup(mi->path)))
		return MP_E_NOMEM;
	m->nunmapped++;
	u->build_id_size = mi->build_id_size < RAW_BUILD_ID_MAX
			   ? mi->build_id_size : RAW_BUILD_ID_MAX;
	memcpy(u->build_id, mi->build_id, u->build_id_size);
	return MP_OK;
}

static enum mp_errcode keep_modules(struct merge *m, struct mp_err *err)
{
	const struct merge_program *prog = most_inputs(m);
	/* Only then is a --binary no map holds likely another build. */
	bool missing = !m->indexed && !m->unnamed_maps && m->good &&
		       sym_binary_missing(m->sym);
	struct sym_module_info mi;
	size_t amodules = 0, aunmapped = 0;
	int32_t main_binary = -1;

	for (int32_t k = 0; sym_module_info(m->sym, k, &mi); k++) {
		struct sym_module_info *c;
		uint8_t *bid = NULL;
		uint32_t one;
		char *path;

		/* A binary given that no raw input mapped, where some map
		 * had a build id no binary has: another build? */
		if (missing && !mi.from_debug_dir && mi.build_id_size &&
		    !ht_map_get(&m->mapped, mp_hash_bytes(mi.build_id,
				mi.build_id_size, 7), &one) &&
		    add_unmapped(m, &mi, &aunmapped))
			return mp_fail(err, MP_E_NOMEM, NULL);
		if (!mi.addrs && (m->nlocs || k != sym_main_module(m->sym)))
			continue;
		if (!MP_GROW(m->modules, amodules, m->nmodules + 1) ||
		    !(path = strdup(mi.path)))
			return mp_fail(err, MP_E_NOMEM, NULL);
		if (mi.build_id_size && !(bid = malloc(mi.build_id_size))) {
			free(path);
			return mp_fail(err, MP_E_NOMEM, NULL);
		}
		if (bid)
			memcpy(bid, mi.build_id, mi.build_id_size);
		if (k == sym_main_module(m->sym))
			main_binary = (int32_t)m->nmodules;
		if (prog && m->program < 0 &&
		    mi.build_id_size == prog->build_id_size &&
		    !memcmp(mi.build_id, prog->build_id, mi.build_id_size))
			m->program = (int32_t)m->nmodules;
		c = &m->modules[m->nmodules++];
		*c = mi;
		c->path = path;
		c->build_id = bid;
	}
	/* Without raw inputs that say (indexed ones), the first --binary;
	 * an executable none of the binaries is, none. */
	if (!prog)
		m->program = main_binary;
	return MP_OK;
}

enum mp_errcode merge_run(struct merge *m, const struct merge_input *in,
			  size_t n, struct mp_err *err)
{
	struct pipeline p = { .m = m, .in = in, .n = n };
	struct scratch own = { 0 };
	pthread_t *threads = NULL;
	unsigned nthreads = 0, want = m->opts.jobs;
	enum mp_errcode rc = MP_OK;
	bool sym_failed = false;
	size_t i = 0, *order;
	uint64_t largest, *sizes;

	if (want > n)
		want = (unsigned)n;
	p.jobs = calloc(n ? n : 1, sizeof(*p.jobs));
	m->arenas = aligned_alloc(_Alignof(struct merge_arena),
				  (want + 1) * sizeof(*m->arenas));
	if (m->arenas)
		memset(m->arenas, 0, (want + 1) * sizeof(*m->arenas));
	p.order = order = malloc((n ? n : 1) * sizeof(*order));
	p.size = sizes = malloc((n ? n : 1) * sizeof(*sizes));
	if (!p.jobs || !m->arenas || !order || !sizes) {
		free(p.jobs);
		free(order);
		free(sizes);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	m->narenas = want + 1;
	largest = plan_inputs(in, n, want, order, sizes);
	for (i = 0; i < n; i++)
		p.left_bytes += sizes[i];
	if (!m->opts.read.expect)
		m->opts.read.expect = largest;
	/*
	 * A thread folding raw inputs fills megabytes of table: start its
	 * arena with a block big enough for huge pages (page faults cost
	 * microseconds each on virtual machines).
	 */
	for (size_t a = 0; a < m->narenas; a++)
		m->arenas[a].a.first = 4 << 20;
	own.arena = &m->arenas[0].a;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.done, NULL);
	if (want > 1) {
		threads = calloc(want, sizeof(*threads));
		for (unsigned t = 0; threads && t < want; t++)
			if (pthread_create(&threads[t], NULL, worker, &p) == 0)
				nthreads++;
	}
	for (i = 0; i < n && rc == MP_OK; i++) {
		if (nthreads) {
			/* The workers fold and symbolize; this thread reports. */
			pthread_mutex_lock(&p.lock);
			while (!p.jobs[i].done && !p.sym_rc)
				pthread_cond_wait(&p.done, &p.lock);
			if (p.sym_rc) {
				rc = p.sym_rc;
				*err = p.sym_err;
				sym_failed = true;
			}
			pthread_mutex_unlock(&p.lock);
		} else {
			run_input(m, &own, &in[i], &p.jobs[i]);
		}
		if (sym_failed)
			break;
		rc = account(m, &in[i], i, n, &p.jobs[i], err);
	}
	/* On an early failure, the workers take no more inputs. */
	pthread_mutex_lock(&p.lock);
	p.stop = true;
	pthread_mutex_unlock(&p.lock);
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	scratch_release(&own);
	free(p.jobs);
	free(order);
	free(sizes);
	free(threads);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.done);
	if (rc)
		return rc;
	if ((rc = symbolize_pending(m, NULL, err)))
		return rc;
	/*
	 * Every frame is interned (strings copied): the debug information,
	 * tens of MiB for a C library, can go before the builder grows.
	 */
	if ((rc = keep_modules(m, err)))
		return rc;
	sym_release(m->sym);
	if (m->good == 0 && m->opts.failure_mode != MERGE_FAIL_WARN)
		return mp_fail(err, MP_E_NO_INPUT, "no input could be merged");
	return build(m, err);
}

static void push_out(void *of)
{
	mp_outfile_push(of);
}

/*
 * The builder's write to FP, finishing the one begun in step 3 if any;
 * OF, if not NULL, the output file FP is the stream of.  Sums and
 * weighted counts stop at 2^64 - 1 (mp_mib's rules): the write counts
 * the contexts where one did, for the caller to say so.
 */
static enum mp_errcode write_to(struct merge *m, FILE *fp,
				struct mp_outfile *of, struct mp_err *err)
{
	enum mp_errcode rc;

	if (!m->w)
		m->w = idx_write_begin(&m->b, m->b.nctxs);
	/* Into a file of its own: written as it goes, its first megabytes
	 * on their way to the disk while the rest is encoded. */
	if (of && !of->direct)
		idx_write_push(m->w, push_out, of);
	rc = idx_write_end(m->w, fp, err);
	m->saturated = idx_write_saturated(m->w);
	idx_write_free(m->w);
	m->w = NULL;
	return rc;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

enum mp_errcode merge_bytes(struct merge *m, struct mp_buf *out,
			    struct mp_err *err)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&mem, &len);
	enum mp_errcode rc;
	int crc;

	memset(out, 0, sizeof(*out));
	if (!fp)
		return mp_fail(err, MP_E_NOMEM, NULL);
	rc = write_to(m, fp, NULL, err);
	crc = fclose(fp);
	/* glibc's memstream fclose() reports success even when its final
	 * realloc fails, leaving MEM NULL. */
	if (!rc && (crc || !mem))
		rc = mp_fail(err, MP_E_NOMEM, NULL);
	if (rc) {
		free(mem);
		return rc;
	}
	out->data = (unsigned char *)mem;
	out->size = len;
	/* What it was made from goes before the caller's export grows
	 * (cppcheck's four profiles: 211 of the LLVM export's 327 MB). */
	free_folded(m);
	return MP_OK;
}

static void *free_folded_thread(void *arg)
{
	free_folded(arg);
	return NULL;
}

enum mp_errcode merge_write(struct merge *m, const char *path,
			    struct mp_err *err)
{
	struct mp_outfile of = { 0 };
	struct mp_buf mem = { 0 }, z = { 0 };
	enum mp_errcode rc;
	pthread_t freer;
	bool freeing;

	if ((rc = mp_outfile_open(&of, path, err)))
		goto out;
	if (!has_suffix(path, ".zst")) {
		/* Straight to the temporary file: the result is not held twice. */
		if ((rc = write_to(m, of.fp, &of, err)))
			goto out;
	} else {
		if ((rc = merge_bytes(m, &mem, err)) ||
		    (rc = mp_zstd_compress(&z, mem.data, mem.size, 19, err)))
			goto out;
		mp_buf_release(&mem);
		if (fwrite(z.data, 1, z.size, of.fp) != z.size) {
			rc = mp_fail(err, MP_E_IO, "cannot write output: %s",
				     strerror(errno));
			goto out;
		}
	}
	/*
	 * The result is written: what it was made from (tens of MB at
	 * hundreds of inputs) is freed, given -j 2 or more on a second
	 * thread while this one waits for the file's fsync.
	 */
	freeing = m->opts.jobs > 1 &&
		  mp_thread_beside(&freer, free_folded_thread, m) == 0;
	if (!freeing)
		free_folded(m);
	rc = mp_outfile_commit(&of, err);
	if (freeing)
		pthread_join(freer, NULL);
out:
	mp_outfile_abort(&of);
	mp_buf_release(&mem);
	mp_buf_release(&z);
	return rc;
}
