/*
 * llvm_read.c - reading LLVM's indexed profile with MemProf versions 0 to
 * 3 (llvm.h).  Everything is checked in llvm_open; the walk afterwards
 * relies on those checks.
 *
 * The MemProf versions differ in where call stacks live:
 *	0, 1	each record spells its stacks out as u64 frame ids, which a
 *		frame table (on-disk hash table: id -> 17-byte frame) maps;
 *		version 1 only adds a version word in front
 *	2	records name stacks by u64 ids, which a call stack table (id ->
 *		u64 count, u64 frame ids) maps; frames as in 0 and 1
 *	3	records name stacks by u32 positions in an array of u32 frame
 *		indices into a plain frame array
 */
#include "llvm.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_util.h"

/* A call stack may be read at most this many frames per byte of file. */
#define FRAMES_PER_BYTE 16

bool llvm_is_llvm(const void *data, size_t size)
{
	return size >= 8 && mp_le64(data) == LLVM_MAGIC;
}

static uint64_t get64(const struct llvm_file *f, size_t off)
{
	return mp_le64(f->data + off);
}

/* The width of schema tag TAG's field in a serialized MIB. */
static size_t tag_width(unsigned tag)
{
	int i = mib_field_by_tag(tag);

	return tag == LLVM_TAG_HISTOGRAM ? 8 : i < 0 ? 0 : mib_fields[i].width;
}

/* ---- on-disk chained hash tables ---- */

/*
 * Check the table whose bucket array is at T->table and whose items lie
 * in [T->payload, T->table): a power-of-two bucket count, every bucket
 * offset inside the payload, every item (u64 hash, u64 key length 8, u64
 * data length, u64 key, data) inside it with its hash equal to its key
 * and in its own bucket, data of DATA_LEN bytes when DATA_LEN is not 0,
 * and as many items as the table says.
 */
static enum mp_errcode table_check(const struct llvm_file *f,
				   struct llvm_table *t, uint64_t data_len,
				   const char *what, struct mp_err *err)
{
	uint64_t items = 0;

	if (t->table % 8 || t->table > f->size || f->size - t->table < 16 ||
	    t->payload > t->table)
		return mp_fail(err, MP_E_CORRUPT, "%s table at 0x%zx is "
			       "misaligned or outside the file", what, t->table);
	t->nbuckets = get64(f, t->table);
	t->nentries = get64(f, t->table + 8);
	if (t->nbuckets > (f->size - t->table - 16) / 8)
		return mp_fail(err, MP_E_TRUNCATED, "%s table at 0x%zx: its %"
			       PRIu64 " buckets run past the end of the file "
			       "(%zu bytes)", what, t->table, t->nbuckets,
			       f->size);
	if (t->nbuckets == 0 || (t->nbuckets & (t->nbuckets - 1)))
		return mp_fail(err, MP_E_CORRUPT, "%s table at 0x%zx has %"
			       PRIu64 " buckets, not a power of two", what,
			       t->table, t->nbuckets);
	for (uint64_t b = 0; b < t->nbuckets; b++) {
		uint64_t off = get64(f, t->table + 16 + b * 8), count;

		if (!off)
			continue;
		if (off < t->payload || off > t->table - 2)
			return mp_fail(err, MP_E_CORRUPT, "%s table: bucket %"
				       PRIu64 " at 0x%" PRIx64 " is outside its "
				       "items", what, b, off);
		count = f->data[off] | (uint64_t)f->data[off + 1] << 8;
		off += 2;
		for (uint64_t i = 0; i < count; i++) {
			size_t h = t->no_key_length ? 24 : 32;
			uint64_t hash, klen, dlen;

			if (t->table - off < h)
				return mp_fail(err, MP_E_CORRUPT, "%s table: item "
					       "at 0x%" PRIx64 " runs past its "
					       "items", what, off);
			hash = get64(f, off);
			klen = t->no_key_length ? 8 : get64(f, off + 8);
			dlen = get64(f, off + h - 16);
			if (klen != 8 || hash != get64(f, off + h - 8) ||
			    (hash & (t->nbuckets - 1)) != b ||
			    dlen > t->table - off - h ||
			    (data_len && dlen != data_len))
				return mp_fail(err, MP_E_CORRUPT, "%s table: item "
					       "at 0x%" PRIx64 " has a bad key, "
					       "bucket or length", what, off);
			off += h + dlen;
			items++;
		}
	}
	if (items != t->nentries)
		return mp_fail(err, MP_E_CORRUPT, "%s table says %" PRIu64
			       " items, its buckets hold %" PRIu64, what,
			       t->nentries, items);
	return MP_OK;
}

/* The data of KEY in checked table T: its offset and length, or false. */
static bool table_find(const struct llvm_file *f, const struct llvm_table *t,
		       uint64_t key, size_t *data, uint64_t *len)
{
	uint64_t off = get64(f, t->table + 16 + (key & (t->nbuckets - 1)) * 8);
	uint64_t count;

	if (!off)
		return false;
	count = f->data[off] | (uint64_t)f->data[off + 1] << 8;
	off += 2;
	for (uint64_t i = 0; i < count; i++) {
		size_t h = t->no_key_length ? 24 : 32;
		uint64_t dlen = get64(f, off + h - 16);

		if (get64(f, off + h - 8) == key) {
			*data = (size_t)off + h;
			*len = dlen;
			return true;
		}
		off += h + dlen;
	}
	return false;
}

/* ---- frames and call stacks ---- */

static void frame_at(const struct llvm_file *f, size_t off,
		     struct llvm_frame *out)
{
	const unsigned char *p = f->data + off;

	out->guid = mp_le64(p);
	out->line_offset = mp_le32(p + 8);
	out->column = mp_le32(p + 12);
	out->inlined = p[16] != 0;
}

/* Frame ID of versions 0 to 2, through the frame table. */
static enum mp_errcode frame_by_id(const struct llvm_file *f, uint64_t id,
				   struct llvm_frame *out, struct mp_err *err)
{
	size_t data;
	uint64_t len;

	if (!table_find(f, &f->frame_table, id, &data, &len))
		return mp_fail(err, MP_E_CORRUPT, "frame id 0x%" PRIx64 " is not "
			       "in the frame table", id);
	if (out)
		frame_at(f, data, out);
	return MP_OK;
}

/*
 * Version 3's call stack POS (a position in 32-bit units from the
 * array's start) into OUT (at most NOUT frames; OUT NULL: only check):
 * its length, then its frame indices going forward, where a negative
 * element jumps forward by its magnitude to a shared suffix.  Returns the
 * length, or -1 with ERR set.
 */
static int64_t stack_v3(const struct llvm_file *f, uint64_t pos,
			struct llvm_frame *out, size_t nout, struct mp_err *err)
{
	uint64_t words = (f->stacks_end - f->stacks) / 4, n, at;

	if (pos >= words)
		return mp_fail(err, MP_E_CORRUPT, "call stack %" PRIu64
			       " lies past the call stack array (%" PRIu64
			       " entries)", pos, words), -1;
	n = mp_le32(f->data + f->stacks + pos * 4);
	/* Each frame moves at least one entry forward. */
	if (n == 0 || n > words - pos - 1)
		return mp_fail(err, MP_E_CORRUPT, "call stack %" PRIu64
			       " claims %" PRIu64 " frames", pos, n), -1;
	at = pos + 1;
	for (uint64_t k = 0; k < n; k++, at++) {
		int32_t e;

		if (at >= words)
			return mp_fail(err, MP_E_CORRUPT, "call stack %" PRIu64
				       " runs past the array", pos), -1;
		e = (int32_t)mp_le32(f->data + f->stacks + at * 4);
		if (e < 0) {
			/* A jump must go forward and land on a frame index. */
			at += (uint64_t)-(int64_t)e;
			if (at >= words ||
			    (int32_t)mp_le32(f->data + f->stacks + at * 4) < 0)
				return mp_fail(err, MP_E_CORRUPT, "call stack %"
					       PRIu64 " jumps outside the array or "
					       "onto another jump", pos), -1;
			e = (int32_t)mp_le32(f->data + f->stacks + at * 4);
		}
		if ((uint32_t)e >= f->nframes)
			return mp_fail(err, MP_E_CORRUPT, "call stack %" PRIu64
				       " names frame %" PRIu32 " of %zu", pos,
				       (uint32_t)e, f->nframes), -1;
		if (out && k < nout)
			frame_at(f, f->frames + (size_t)e * LLVM_FRAME_SIZE,
				 &out[k]);
	}
	return (int64_t)n;
}

/*
 * A call stack of versions 0 to 2 spelled out at OFF: u64 count, then
 * that many u64 frame ids, all before END.  Returns the length, or -1.
 */
static int64_t stack_ids(const struct llvm_file *f, size_t off, size_t end,
			 struct llvm_frame *out, size_t nout, struct mp_err *err)
{
	uint64_t n;

	if (end - off < 8)
		return mp_fail(err, MP_E_CORRUPT, "call stack at 0x%zx is cut "
			       "short", off), -1;
	n = get64(f, off);
	if (n == 0 || n > (end - off - 8) / 8)
		return mp_fail(err, MP_E_CORRUPT, "call stack at 0x%zx claims %"
			       PRIu64 " frames", off, n), -1;
	for (uint64_t k = 0; k < n; k++)
		if (frame_by_id(f, get64(f, off + 8 + 8 * k),
				out && k < nout ? &out[k] : NULL, err))
			return -1;
	return (int64_t)n;
}

/* Version 2's call stack ID, through the call stack table, whose data
 * is the frame ids alone (their count is the length / 8). */
static int64_t stack_v2(const struct llvm_file *f, uint64_t id,
			struct llvm_frame *out, size_t nout, struct mp_err *err)
{
	size_t data;
	uint64_t len;

	if (!table_find(f, &f->stack_table, id, &data, &len))
		return mp_fail(err, MP_E_CORRUPT, "call stack id 0x%" PRIx64
			       " is not in the call stack table", id), -1;
	if (len == 0 || len % 8)
		return mp_fail(err, MP_E_CORRUPT, "call stack id 0x%" PRIx64
			       " has %" PRIu64 " bytes of frame ids", id, len), -1;
	for (uint64_t k = 0; k < len / 8; k++)
		if (frame_by_id(f, get64(f, data + 8 * k),
				out && k < nout ? &out[k] : NULL, err))
			return -1;
	return (int64_t)(len / 8);
}

/*
 * An alloc site's or call site's stack reference at *OFF (u32 position,
 * u64 id, or the stack itself), read into OUT; *OFF moves past it.
 */
static int64_t site_stack(const struct llvm_file *f, size_t *off, size_t end,
			  struct llvm_frame *out, size_t nout,
			  struct mp_err *err)
{
	int64_t n;

	switch (f->memprof_version) {
	case 3:
		if (end - *off < 4)
			break;
		n = stack_v3(f, mp_le32(f->data + *off), out, nout, err);
		*off += 4;
		return n;
	case 2:
		if (end - *off < 8)
			break;
		n = stack_v2(f, get64(f, *off), out, nout, err);
		*off += 8;
		return n;
	default:
		n = stack_ids(f, *off, end, out, nout, err);
		if (n > 0)
			*off += 8 + 8 * (size_t)n;
		return n;
	}
	return mp_fail(err, MP_E_CORRUPT, "record item at 0x%zx is cut short",
		       *off), -1;
}

/* Decode one serialized MIB at P into M. */
static void read_mib(const struct llvm_file *f, const unsigned char *p,
		     struct mp_mib *m)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < f->nschema; i++) {
		unsigned tag = f->schema[i];
		int fi = mib_field_by_tag(tag);
		size_t w = tag_width(tag);

		if (fi >= 0)
			m->v[fi] = w == 8 ? mp_le64(p) : mp_le32(p);
		p += w;
	}
}

/* ---- records ---- */

struct walk {
	llvm_context_fn fn;
	void *arg;
	struct llvm_frame *frames;
	size_t aframes;
	uint64_t budget, contexts;
};

/*
 * Expand the stack at *OFF into W's buffer, within the budget: in one
 * pass, but for a stack longer than any before it (read again once the
 * buffer has grown).
 */
static int64_t walk_stack(const struct llvm_file *f, struct walk *w,
			  size_t *off, size_t end, struct mp_err *err)
{
	size_t at = *off;
	int64_t n = site_stack(f, off, end, w->frames, w->aframes, err);

	if (n < 0)
		return -1;
	w->budget += (uint64_t)n;
	if (w->budget > (uint64_t)f->size * FRAMES_PER_BYTE)
		return mp_fail(err, MP_E_TOO_LARGE, "its call stacks expand to "
			       "more than %d frames per byte", FRAMES_PER_BYTE), -1;
	if ((size_t)n <= w->aframes)
		return n;
	if (!MP_GROW(w->frames, w->aframes, (size_t)n))
		return mp_fail(err, MP_E_NOMEM, NULL), -1;
	return site_stack(f, &at, end, w->frames, (size_t)n, err);
}

/*
 * One record: GUID and its data at [OFF, END).  Hands each alloc site
 * whose leaf frame is the record's function to W's callback (each
 * context once: under its leaf's record).
 */
static enum mp_errcode walk_record(const struct llvm_file *f, struct walk *w,
				   uint64_t guid, size_t off, size_t end,
				   struct mp_err *err)
{
	uint64_t na, ns;

	if (end - off < 16)
		return mp_fail(err, MP_E_CORRUPT, "record of GUID 0x%" PRIx64
			       " is cut short", guid);
	na = get64(f, off);
	off += 8;
	if (na > (end - off) / (4 + f->mib_size))
		return mp_fail(err, MP_E_CORRUPT, "record of GUID 0x%" PRIx64
			       " claims %" PRIu64 " allocation sites", guid, na);
	for (uint64_t k = 0; k < na; k++) {
		struct llvm_site site = { off, end };
		int64_t n = walk_stack(f, w, &off, end, err);

		if (n < 0)
			return err ? err->code : MP_E_CORRUPT;
		if (end - off < f->mib_size)
			return mp_fail(err, MP_E_CORRUPT, "record of GUID 0x%"
				       PRIx64 ": a MIB runs past it", guid);
		if (w->frames[0].guid == guid) {
			w->contexts++;
			if (w->fn) {
				struct llvm_context c = {
					guid, w->frames, (uint32_t)n, { { 0 } },
					site,
				};
				enum mp_errcode rc;

				read_mib(f, f->data + off, &c.mib);
				if ((rc = w->fn(w->arg, &c, err)))
					return rc;
			}
		}
		off += f->mib_size;
	}
	if (end - off < 8)
		return mp_fail(err, MP_E_CORRUPT, "record of GUID 0x%" PRIx64
			       " is cut short", guid);
	ns = get64(f, off);
	off += 8;
	if (ns > (end - off) / 4)
		return mp_fail(err, MP_E_CORRUPT, "record of GUID 0x%" PRIx64
			       " claims %" PRIu64 " call sites", guid, ns);
	/* Call sites are checked when the file is opened (within the same
	 * budget), not expanded again afterwards. */
	for (uint64_t k = 0; !w->fn && k < ns; k++) {
		int64_t n = site_stack(f, &off, end, NULL, 0, err);

		if (n < 0)
			return err ? err->code : MP_E_CORRUPT;
		w->budget += (uint64_t)n;
		if (w->budget > (uint64_t)f->size * FRAMES_PER_BYTE)
			return mp_fail(err, MP_E_TOO_LARGE, "its call stacks "
				       "expand to more than %d frames per byte",
				       FRAMES_PER_BYTE);
	}
	if (!w->fn && off != end)
		return mp_fail(err, MP_E_CORRUPT, "record of GUID 0x%" PRIx64
			       " has %zu bytes after its call sites", guid,
			       end - off);
	return MP_OK;
}

static enum mp_errcode walk_records(const struct llvm_file *f, struct walk *w,
				    struct mp_err *err)
{
	const struct llvm_table *t = &f->record_table;

	for (uint64_t b = 0; b < t->nbuckets; b++) {
		uint64_t off = get64(f, t->table + 16 + b * 8), count;

		if (!off)
			continue;
		count = f->data[off] | (uint64_t)f->data[off + 1] << 8;
		off += 2;
		for (uint64_t i = 0; i < count; i++) {
			uint64_t dlen = get64(f, off + 16);
			enum mp_errcode rc;

			rc = walk_record(f, w, get64(f, off + 24), off + 32,
					 off + 32 + dlen, err);
			if (rc)
				return rc;
			off += 32 + dlen;
		}
	}
	return MP_OK;
}

/* ---- opening ---- */

/* The MemProf section's header and schema, from offset MP. */
static enum mp_errcode open_memprof(struct llvm_file *f, uint64_t mp,
				    struct mp_err *err)
{
	uint64_t w = get64(f, mp), n, seen = 0, off[5] = { 0 };
	size_t noff, p;

	/* Version 0 has no version word: it starts with an offset. */
	f->memprof_version = w >= 1 && w <= 3 ? (unsigned)w : 0;
	p = (size_t)mp + (f->memprof_version ? 8 : 0);
	noff = f->memprof_version == 2 ? 5 : 3;
	if (f->size - p < noff * 8 + 8)
		return mp_fail(err, MP_E_TRUNCATED, "MemProf header is cut short");
	for (size_t i = 0; i < noff; i++, p += 8)
		off[i] = get64(f, p);
	n = get64(f, p);
	p += 8;
	if (n == 0 || n > LLVM_TAG_HISTOGRAM || n > (f->size - p) / 8)
		return mp_fail(err, MP_E_CORRUPT, "MemProf schema of %" PRIu64
			       " fields", n);
	f->nschema = (size_t)n;
	for (size_t i = 0; i < f->nschema; i++, p += 8) {
		uint64_t tag = get64(f, p);

		if (tag < 1 || tag > LLVM_TAG_HISTOGRAM || (seen >> tag & 1))
			return mp_fail(err, MP_E_CORRUPT, "MemProf schema field %zu"
				       " has tag %" PRIu64 " (1 to 27, once)", i,
				       tag);
		seen |= 1ULL << tag;
		f->schema[i] = (uint8_t)tag;
		f->mib_size += tag_width((unsigned)tag);
	}
	for (size_t i = 0; i < noff; i++)
		if (off[i] < p || off[i] > f->size)
			return mp_fail(err, MP_E_CORRUPT, "MemProf offset %zu (0x%"
				       PRIx64 ") is outside the section", i, off[i]);
	if (f->memprof_version == 3) {
		/* CallStackPayloadOffset, RecordPayloadOffset, RecordTableOffset */
		if ((off[0] - p) % LLVM_FRAME_SIZE || off[1] < off[0] ||
		    (off[1] - off[0]) % 4 || off[2] < off[1])
			return mp_fail(err, MP_E_CORRUPT, "MemProf offsets out of "
				       "order (frames 0x%zx, call stacks 0x%" PRIx64
				       ", records 0x%" PRIx64 ", table 0x%" PRIx64
				       ")", p, off[0], off[1], off[2]);
		f->frames = p;
		f->nframes = (size_t)(off[0] - p) / LLVM_FRAME_SIZE;
		f->stacks = (size_t)off[0];
		f->stacks_end = (size_t)off[1];
		f->record_table = (struct llvm_table){ (size_t)off[1],
						       (size_t)off[2], 0, 0 };
		return table_check(f, &f->record_table, 0, "record", err);
	}
	/*
	 * Versions 0 to 2: RecordTableOffset, FramePayloadOffset,
	 * FrameTableOffset (2: CallStackPayloadOffset, CallStackTableOffset);
	 * the records follow the schema.
	 */
	if (off[0] > off[1] || off[1] > off[2] ||
	    (noff == 5 && (off[2] > off[3] || off[3] > off[4])))
		return mp_fail(err, MP_E_CORRUPT, "MemProf offsets out of order");
	f->record_table = (struct llvm_table){ p, (size_t)off[0], 0, 0 };
	f->frame_table = (struct llvm_table){ (size_t)off[1], (size_t)off[2],
					      0, 0 };
	if (table_check(f, &f->record_table, 0, "record", err) ||
	    table_check(f, &f->frame_table, LLVM_FRAME_SIZE, "frame", err))
		return err ? err->code : MP_E_CORRUPT;
	if (noff == 5) {
		f->stack_table = (struct llvm_table){ (size_t)off[3],
						      (size_t)off[4], 0, 0, true };
		return table_check(f, &f->stack_table, 0, "call stack", err);
	}
	return MP_OK;
}

/* Are LEN bytes at OFF inside F? */
static bool fits(const struct llvm_file *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

/* The sections from OFF on of LEN bytes, told as WHAT: inside F? */
static enum mp_errcode section_fits(const struct llvm_file *f, uint64_t off,
				    uint64_t len, const char *what,
				    struct mp_err *err)
{
	if (fits(f, off, len))
		return MP_OK;
	return mp_fail(err, MP_E_TRUNCATED, "%s at offset 0x%" PRIx64 " (%"
		       PRIu64 " bytes) runs past the end of the file (%zu "
		       "bytes)", what, off, len, f->size);
}

/*
 * The sections besides MemProf, which nothing here reads, lie inside the
 * file as their sizes say, as LLVM's reader checks: a file cut short in
 * them is truncated, not a profile to trust.  An offset of 0 is a section
 * left out.
 */
static enum mp_errcode check_other_sections(const struct llvm_file *f,
					    struct mp_err *err)
{
	enum mp_errcode rc;
	uint64_t off, n;

	/* The instrprof records' table: NumBuckets, NumEntries. */
	off = get64(f, LLVM_HDR_HASH_OFFSET);
	if ((rc = section_fits(f, off, 16, "the records' hash table", err)))
		return rc;
	/* Binary ids (9 and later), vtable names (12): u64 size, bytes. */
	if (f->version >= 9 && (off = get64(f, LLVM_HDR_BINARY_ID_OFFSET)) &&
	    ((rc = section_fits(f, off, 8, "the binary id section", err)) ||
	     (rc = section_fits(f, off + 8, get64(f, off),
				"the binary ids", err))))
		return rc;
	if (f->version >= 12 &&
	    (off = get64(f, LLVM_HDR_VTABLE_NAMES_OFFSET)) &&
	    ((rc = section_fits(f, off, 8, "the vtable name section", err)) ||
	     (rc = section_fits(f, off + 8, get64(f, off),
				"the vtable names", err))))
		return rc;
	/* Temporal traces (10 and later): u64 NumTraces, u64 stream size,
	 * then each trace's u64 weight, u64 NumFunctions and its names. */
	if (f->version < 10 || !(off = get64(f, LLVM_HDR_TEMPORAL_OFFSET)))
		return MP_OK;
	if ((rc = section_fits(f, off, 16, "the temporal trace section", err)))
		return rc;
	n = get64(f, off);
	off += 16;
	for (uint64_t t = 0; t < n; t++) {
		uint64_t names;

		if ((rc = section_fits(f, off, 16, "a temporal trace", err)))
			return rc;
		names = get64(f, off + 8);
		off += 16;
		if (names > (f->size - off) / 8)
			return mp_fail(err, MP_E_TRUNCATED, "a temporal trace "
				       "at offset 0x%" PRIx64 " claims %" PRIu64
				       " names, past the end of the file (%zu "
				       "bytes)", off - 16, names, f->size);
		off += names * 8;
	}
	return MP_OK;
}

enum mp_errcode llvm_open(struct llvm_file *f, const void *data, size_t size,
			  struct mp_err *err)
{
	struct walk w = { 0 };
	uint64_t mp, n;
	size_t hdr;
	enum mp_errcode rc;

	memset(f, 0, sizeof(*f));
	f->data = data;
	f->size = size;
	if (!llvm_is_llvm(data, size))
		return mp_fail(err, MP_E_BAD_MAGIC, "not an LLVM indexed profile");
	if (size < 16)
		return mp_fail(err, MP_E_TRUNCATED, "header is truncated");
	n = get64(f, LLVM_HDR_VERSION);
	f->version = (unsigned)(n & LLVM_VERSION_MASK);
	if (f->version < 8 || f->version > 12)
		return mp_fail(err, MP_E_BAD_VERSION, "LLVM indexed profile "
			       "version %u (read: 8 to 12)", f->version);
	if (!(n & LLVM_VARIANT_MEMPROF))
		return mp_fail(err, MP_E_BAD_VERSION,
			       "LLVM indexed profile without MemProf data");
	hdr = llvm_header_size(f->version);
	if (size < hdr)
		return mp_fail(err, MP_E_TRUNCATED, "header is truncated (%zu of "
			       "%zu bytes)", size, hdr);
	mp = get64(f, LLVM_HDR_MEMPROF_OFFSET);
	if (mp < hdr || mp > size || size - mp < 48)
		return mp_fail(err, MP_E_CORRUPT, "MemProf section at offset 0x%"
			       PRIx64 " is outside the file (%zu bytes)", mp, size);
	if ((rc = check_other_sections(f, err)) ||
	    (rc = open_memprof(f, mp, err)))
		return rc;
	/* Every record, every stack it names, once. */
	rc = walk_records(f, &w, err);
	free(w.frames);
	if (rc)
		return rc;
	f->ncontexts = w.contexts;
	return MP_OK;
}

enum mp_errcode llvm_foreach_context(const struct llvm_file *f,
				     llvm_context_fn fn, void *arg,
				     struct mp_err *err)
{
	struct walk w = { .fn = fn, .arg = arg };
	enum mp_errcode rc = walk_records(f, &w, err);

	free(w.frames);
	return rc;
}

enum mp_errcode llvm_function_contexts(const struct llvm_file *f,
				       uint64_t guid, llvm_context_fn fn,
				       void *arg, struct mp_err *err)
{
	struct walk w = { .fn = fn, .arg = arg };
	enum mp_errcode rc;
	size_t data;
	uint64_t len;

	if (!table_find(f, &f->record_table, guid, &data, &len))
		return MP_E_NOT_FOUND;
	rc = walk_record(f, &w, guid, data, data + (size_t)len, err);
	free(w.frames);
	return rc;
}

int64_t llvm_stack(const struct llvm_file *f, struct llvm_site site,
		   struct llvm_frame *out, size_t nout, struct mp_err *err)
{
	if (site.end > f->size || site.off >= site.end)
		return mp_fail(err, MP_E_INVALID, "no call stack at 0x%zx",
			       site.off), -1;
	return site_stack(f, &site.off, site.end, out, nout, err);
}
