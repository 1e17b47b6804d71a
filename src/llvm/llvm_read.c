/*
 * llvm_read.c - reading LLVM's indexed profile with MemProf version 3
 * (llvm.h).  Everything is checked in llvm_open; the walk afterwards
 * relies on those checks.
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

/*
 * Read call stack POS (a position in 32-bit units from the array's
 * start) into OUT (at most NOUT frames, or count only with OUT NULL):
 * its length, then its frame ids going forward, where a negative element
 * jumps forward by its magnitude to a shared suffix.  Returns the length,
 * or -1 with ERR set.
 */
static int64_t read_stack(const struct llvm_file *f, uint64_t pos,
			  struct llvm_frame *out, size_t nout,
			  struct mp_err *err)
{
	uint64_t words = (f->stacks_end - f->stacks) / 4, n;
	uint64_t at;

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
		uint32_t id;

		if (at >= words)
			return mp_fail(err, MP_E_CORRUPT, "call stack %" PRIu64
				       " runs past the array", pos), -1;
		e = (int32_t)mp_le32(f->data + f->stacks + at * 4);
		if (e < 0) {
			/* A jump must go forward and land on a frame id. */
			at += (uint64_t)-(int64_t)e;
			if (at >= words ||
			    (int32_t)mp_le32(f->data + f->stacks + at * 4) < 0)
				return mp_fail(err, MP_E_CORRUPT, "call stack %"
					       PRIu64 " jumps outside the array or "
					       "onto another jump", pos), -1;
			e = (int32_t)mp_le32(f->data + f->stacks + at * 4);
		}
		id = (uint32_t)e;
		if (id >= f->nframes)
			return mp_fail(err, MP_E_CORRUPT, "call stack %" PRIu64
				       " names frame %" PRIu32 " of %zu", pos, id,
				       f->nframes), -1;
		if (out && k < nout) {
			const unsigned char *p = f->data + f->frames +
						 (size_t)id * LLVM_FRAME_SIZE;

			out[k].guid = mp_le64(p);
			out[k].line_offset = mp_le32(p + 8);
			out[k].column = mp_le32(p + 12);
			out[k].inlined = p[16] != 0;
		}
	}
	return (int64_t)n;
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

/*
 * The records, bucket by bucket.  With CHECK, every item is validated
 * (ERR says what is wrong); with FN, each context is handed over.
 */
struct walk {
	llvm_context_fn fn;
	void *arg;
	struct llvm_frame *frames;
	size_t aframes;
	uint64_t budget, records, contexts;
};

static enum mp_errcode walk_records(const struct llvm_file *f, bool check,
				   struct walk *w, struct mp_err *err)
{
	for (uint64_t b = 0; b < f->nbuckets; b++) {
		uint64_t off = get64(f, f->table + 16 + b * 8), count;

		if (!off)
			continue;
		if (check && (off < f->stacks_end || off + 2 > f->table))
			return mp_fail(err, MP_E_CORRUPT, "bucket %" PRIu64
				       " at offset 0x%" PRIx64 " is outside the "
				       "record payload", b, off);
		count = f->data[off] | (uint64_t)f->data[off + 1] << 8;
		off += 2;
		for (uint64_t i = 0; i < count; i++) {
			uint64_t hash, klen, dlen, guid, na, ns, end;

			if (check && off + 32 > f->table)
				return mp_fail(err, MP_E_CORRUPT, "record at "
					       "offset 0x%" PRIx64 " runs past the "
					       "payload", off);
			hash = get64(f, off);
			klen = get64(f, off + 8);
			dlen = get64(f, off + 16);
			guid = get64(f, off + 24);
			if (check && (klen != 8 || hash != guid ||
				      (hash & (f->nbuckets - 1)) != b ||
				      dlen > f->table - off - 32 || dlen < 16))
				return mp_fail(err, MP_E_CORRUPT, "record at "
					       "offset 0x%" PRIx64 " has a bad key, "
					       "bucket or length", off);
			off += 32;
			end = off + dlen;
			na = get64(f, off);
			off += 8;
			if (check && na > (end - off - 8) / (4 + f->mib_size))
				return mp_fail(err, MP_E_CORRUPT, "record of GUID "
					       "0x%" PRIx64 " claims %" PRIu64
					       " allocation sites", guid, na);
			for (uint64_t k = 0; k < na; k++, off += 4 + f->mib_size) {
				uint64_t pos = mp_le32(f->data + off);
				int64_t n = read_stack(f, pos, NULL, 0, err);

				if (n < 0)
					return err ? err->code : MP_E_CORRUPT;
				w->budget += (uint64_t)n;
				if (w->budget > (uint64_t)f->size * FRAMES_PER_BYTE)
					return mp_fail(err, MP_E_TOO_LARGE,
						       "its call stacks expand to "
						       "more than %d frames per byte",
						       FRAMES_PER_BYTE);
				if (!MP_GROW(w->frames, w->aframes, (size_t)n))
					return mp_fail(err, MP_E_NOMEM, NULL);
				read_stack(f, pos, w->frames, (size_t)n, err);
				/* A context once: under its leaf's record. */
				if (w->frames[0].guid != guid)
					continue;
				w->contexts++;
				if (w->fn) {
					struct llvm_context c = {
						guid, w->frames, (uint32_t)n,
						{ { 0 } },
					};
					enum mp_errcode rc;

					read_mib(f, f->data + off + 4, &c.mib);
					if ((rc = w->fn(w->arg, &c, err)))
						return rc;
				}
			}
			if (check && end - off < 8)
				return mp_fail(err, MP_E_CORRUPT, "record of GUID "
					       "0x%" PRIx64 " is cut short", guid);
			ns = get64(f, off);
			off += 8;
			if (check && (ns != (end - off) / 4 || (end - off) % 4))
				return mp_fail(err, MP_E_CORRUPT, "record of GUID "
					       "0x%" PRIx64 " has %" PRIu64 " call "
					       "sites in %" PRIu64 " bytes", guid, ns,
					       end - off);
			for (uint64_t k = 0; check && k < ns; k++)
				if (read_stack(f, mp_le32(f->data + off + 4 * k),
					       NULL, 0, err) < 0)
					return err ? err->code : MP_E_CORRUPT;
			off = end;
			w->records++;
		}
	}
	return MP_OK;
}

enum mp_errcode llvm_open(struct llvm_file *f, const void *data, size_t size,
			  struct mp_err *err)
{
	struct walk w = { 0 };
	uint64_t mp, n, cs, rp, rt, seen = 0;
	size_t hdr, p;
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
	if (mp < hdr || mp > size || size - mp < 40)
		return mp_fail(err, MP_E_CORRUPT, "MemProf section at offset 0x%"
			       PRIx64 " is outside the file (%zu bytes)", mp, size);
	/* Version 0 has no version word: it starts with an offset. */
	n = get64(f, mp);
	f->memprof_version = n >= 1 && n <= 3 ? (unsigned)n : 0;
	if (f->memprof_version != LLVM_MEMPROF_VERSION)
		return mp_fail(err, MP_E_BAD_VERSION, "MemProf version %u (read: "
			       "3, which llvm-profdata-19 writes with "
			       "--memprof-version=3)", f->memprof_version);
	cs = get64(f, mp + 8);
	rp = get64(f, mp + 16);
	rt = get64(f, mp + 24);
	n = get64(f, mp + 32);
	p = (size_t)mp + 40;
	if (n == 0 || n > LLVM_TAG_HISTOGRAM || n > (size - p) / 8)
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
	if (cs < p || rp < cs || rt < rp || rt > size || (cs - p) % LLVM_FRAME_SIZE ||
	    (rp - cs) % 4 || rt % 8 || size - rt < 16)
		return mp_fail(err, MP_E_CORRUPT, "MemProf offsets out of order "
			       "or outside the file (frames 0x%zx, call stacks 0x%"
			       PRIx64 ", records 0x%" PRIx64 ", table 0x%" PRIx64
			       ")", p, cs, rp, rt);
	f->frames = p;
	f->nframes = (size_t)(cs - p) / LLVM_FRAME_SIZE;
	f->stacks = (size_t)cs;
	f->stacks_end = (size_t)rp;
	f->table = (size_t)rt;
	f->nbuckets = get64(f, rt);
	f->nrecords = get64(f, rt + 8);
	if (f->nbuckets == 0 || (f->nbuckets & (f->nbuckets - 1)) ||
	    f->nbuckets > (size - rt - 16) / 8)
		return mp_fail(err, MP_E_CORRUPT, "record table at 0x%" PRIx64
			       " has %" PRIu64 " buckets", rt, f->nbuckets);
	rc = walk_records(f, true, &w, err);
	free(w.frames);
	if (rc)
		return rc;
	if (w.records != f->nrecords)
		return mp_fail(err, MP_E_CORRUPT, "record table says %" PRIu64
			       " records, its buckets hold %" PRIu64, f->nrecords,
			       w.records);
	f->ncontexts = w.contexts;
	return MP_OK;
}

enum mp_errcode llvm_foreach_context(const struct llvm_file *f,
				     llvm_context_fn fn, void *arg,
				     struct mp_err *err)
{
	struct walk w = { .fn = fn, .arg = arg };
	enum mp_errcode rc = walk_records(f, false, &w, err);

	free(w.frames);
	return rc;
}
