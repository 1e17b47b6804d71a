/*
 * idx_read.c - opening an indexed profile: every offset, count and
 * length checked before it is followed, then contexts and frames read in
 * place (idx.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "idx_format.h"
#include "idx_varint.h"

const char *const idx_section_names[10] = {
	"", "summary", "strings", "paths", "frames", "trie", "schema",
	"records", "hash", "classes",
};

bool idx_is_indexed(const void *data, size_t size)
{
	return size >= IDX_MAGIC_SIZE && memcmp(data, IDX_MAGIC, IDX_MAGIC_SIZE) == 0;
}

uint32_t idx_checksum(const void *data, size_t size)
{
	static const unsigned char zero[8];
	const unsigned char *d = data;
	uLong c = crc32_z(0L, Z_NULL, 0);

	c = crc32_z(c, d, IDX_HDR_CHECKSUM);
	c = crc32_z(c, zero, sizeof(zero));
	c = crc32_z(c, d + IDX_HDR_CHECKSUM + 8, size - IDX_HDR_CHECKSUM - 8);
	return (uint32_t)c;
}

/*
 * The header's checksum, when its flags say it has one (and nothing else):
 * checked before the version and the sections, so that a damaged file is
 * told as such, not by whichever check its damage trips first.
 */
static enum mp_errcode check_checksum(struct idx_file *f, struct mp_err *err)
{
	const unsigned char *d = f->data;
	uint32_t want, got;

	if (mp_le32(d + IDX_HDR_FLAGS) != IDX_FLAG_CHECKSUM)
		return MP_OK;
	want = mp_le32(d + IDX_HDR_CHECKSUM);
	got = idx_checksum(d, f->size);
	if (mp_le32(d + IDX_HDR_CHECKSUM + 4) || want != got)
		return mp_fail(err, MP_E_CORRUPT,
			       "checksum mismatch (header %08" PRIx32 ", contents "
			       "%08" PRIx32 "): the file was damaged or changed "
			       "after it was written", want, got);
	f->checksum = true;
	return MP_OK;
}

/* Flags other than the checksum's, or a checksum without its flag. */
static enum mp_errcode check_flags(const struct idx_file *f,
				   struct mp_err *err)
{
	uint32_t flags = mp_le32(f->data + IDX_HDR_FLAGS);

	if (flags & ~IDX_FLAGS_KNOWN)
		return mp_fail(err, MP_E_BAD_VERSION,
			       "unknown header flags 0x%" PRIx32, flags);
	if (!(flags & IDX_FLAG_CHECKSUM) && mp_le64(f->data + IDX_HDR_CHECKSUM))
		return mp_fail(err, MP_E_CORRUPT,
			       "header has a checksum but no flag for it");
	return MP_OK;
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
	    !(p = next_varint(p, end, &fr)) || !(p = next_varint(p, end, &up)))
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

/*
 * What idx_open() learns of the trie for checking the records: where
 * nodes start (bit i % 64 of word i / 64: a node begins at offset i), so
 * that a node's number in file order is the count of bits before its own
 * (RANK holding the count before each word), each node's depth by number,
 * and the frames the contexts checked so far expand to.  About 2 bits
 * per byte of trie plus 4 bytes per node.
 */
struct trie_check {
	void *block;		/* the three arrays below, one allocation */
	uint64_t *starts;
	uint32_t *rank;
	uint32_t *depth;
	uint64_t node_frames;	/* the depths of all nodes, summed */
	bool count_frames;	/* more than idx_frames_max(): sum the contexts' */
	uint64_t frames;	/* the depths of the contexts' nodes, summed */
	uint32_t *ids;		/* the stack ids of the record being checked */
	size_t nids, aids;
};

static bool is_node(const struct trie_check *tc, uint64_t off)
{
	return tc->starts[off / 64] >> (off % 64) & 1;
}

/* The number of the node at OFF, which is_node(). */
static uint32_t node_number(const struct trie_check *tc, uint64_t off)
{
	uint64_t below = (UINT64_C(1) << (off % 64)) - 1;

	return tc->rank[off / 64] +
	       mp_popcount64(tc->starts[off / 64] & below);
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
	uint32_t n = mp_le32(d + IDX_HDR_NSECTIONS);
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
		uint32_t id = mp_le32(e + IDX_SEC_ID);
		uint64_t off = mp_le64(e + IDX_SEC_OFFSET);
		uint64_t size = mp_le64(e + IDX_SEC_SIZE);

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
		if (!f->sec[id] && id != SEC_CLASSES)
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
/* An unsymbolized frame's build id: lowercase hex, as the writer makes. */
static bool build_id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n % 2 || n > 2 * IDX_BUILD_ID_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

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
	if (f->version < 10 && p[4 + FRAME_COLUMNS - 1])
		return mp_fail(err, MP_E_CORRUPT, "reserved byte of the frames "
			       "header is %u in a version %u file",
			       p[4 + FRAME_COLUMNS - 1], f->version);
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
		if (flags & ~(IDX_FRAME_INLINED | IDX_FRAME_UNSYMBOLIZED |
			      (f->version >= 10 ? IDX_FRAME_ALLOC : 0) |
			      (f->version >= 12 ? IDX_FRAME_FOUND : 0)) ||
		    ((flags & IDX_FRAME_UNSYMBOLIZED) &&
		     (flags & IDX_FRAME_FOUND)))
			return mp_fail(err, MP_E_CORRUPT,
				       "stack entry %" PRIu32 " has unknown "
				       "flags 0x%" PRIx32, i, flags);
		if ((flags & IDX_FRAME_UNSYMBOLIZED) &&
		    !build_id_ok(string_at(f, frame_get(f, i, 0))))
			return mp_fail(err, MP_E_CORRUPT,
				       "stack entry %" PRIu32 " is unsymbolized "
				       "but its build id is not lowercase hex of "
				       "at most %d bytes", i, IDX_BUILD_ID_MAX);
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
 * frame, and its parent, which must start an earlier node.  The writer
 * lays nodes out in depth-first pre-order, siblings by increasing frame
 * (memprof-data-format(5)), and that is checked too: a node's parent is
 * on the path from a root to the node before it, and its frame is above
 * that of the sibling before it.  The path is a stack, so the check costs
 * a few comparisons per node and no hashing, and it implies that no two
 * nodes are the same frame under the same parent.  TC gets the node
 * starts and depths, for the records' stack ids; the caller frees them,
 * also on failure.
 */
struct trie_path {
	uint32_t off, frame;
};

static enum mp_errcode check_trie(struct idx_file *f, struct trie_check *tc,
				  struct mp_err *err)
{
	const unsigned char *base = f->sec[SEC_TRIE], *p, *end;
	size_t size = f->sec_size[SEC_TRIE];
	struct trie_path *path = NULL;	/* a root first, the last node on top */
	size_t depth = 0, apath = 0, words;
	enum mp_errcode rc = MP_OK;
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
	/* A node takes at least two bytes; depth[] is written only as far
	 * as there are nodes.  One block: all of it is written soon, and a
	 * big one costs a page fault per 2 MiB (mp_alloc_big). */
	words = size / 64 + 1;
	tc->block = mp_alloc_big(words * (sizeof(*tc->starts) + sizeof(*tc->rank)) +
				 (size / 2 + 1) * sizeof(*tc->depth));
	if (!tc->block)
		return mp_fail(err, MP_E_NOMEM, NULL);
	tc->starts = tc->block;
	tc->rank = (uint32_t *)(tc->starts + words);
	tc->depth = tc->rank + words;
	memset(tc->starts, 0, words * sizeof(*tc->starts));
	end = base + size;
	for (p = base + TRIE_HEADER; p < end && !rc; n++) {
		uint32_t off = (uint32_t)(p - base), parent;
		uint64_t frame, up;
		size_t keep;	/* path entries the node keeps: its ancestors */

		if (!(p = next_varint(p, end, &frame)) ||
		    !(p = next_varint(p, end, &up))) {
			rc = mp_fail(err, MP_E_CORRUPT,
				     "trie node at offset %" PRIu32 " is malformed "
				     "or runs past the section", off);
			break;
		}
		if (frame >= f->nframes) {
			rc = mp_fail(err, MP_E_CORRUPT,
				     "trie node at offset %" PRIu32 " names stack "
				     "entry %" PRIu64 " of %" PRIu32, off, frame,
				     f->nframes);
			break;
		}
		if (up && (up > off - TRIE_HEADER ||
			   !is_node(tc, off - up))) {
			rc = mp_fail(err, MP_E_CORRUPT,
				     "trie node at offset %" PRIu32 " has its "
				     "parent %" PRIu64 " bytes back, not at an "
				     "earlier node", off, up);
			break;
		}
		/* A root keeps no path; another node its parent's, found
		 * from the top (offsets increase upwards). */
		keep = 0;
		if (up) {
			parent = off - (uint32_t)up;
			keep = depth;
			while (keep && path[keep - 1].off > parent)
				keep--;
			if (!keep || path[keep - 1].off != parent) {
				rc = mp_fail(err, MP_E_CORRUPT,
					     "trie node at offset %" PRIu32 " is "
					     "out of depth-first order: its parent "
					     "at offset %" PRIu32 " is not on the "
					     "path to the node before it", off,
					     parent);
				break;
			}
		}
		/* The entry above the parent, if any, was the sibling before. */
		if (keep < depth && frame <= path[keep].frame) {
			rc = mp_fail(err, MP_E_CORRUPT, frame == path[keep].frame
				     ? "trie nodes at offsets %" PRIu32 " and %"
				       PRIu32 " are the same frame under the "
				       "same parent"
				     : "trie nodes at offsets %" PRIu32 " and %"
				       PRIu32 " are siblings out of frame order",
				     path[keep].off, off);
			break;
		}
		if (!MP_GROW(path, apath, keep + 1)) {
			rc = mp_fail(err, MP_E_NOMEM, NULL);
			break;
		}
		path[keep] = (struct trie_path){ off, (uint32_t)frame };
		depth = keep + 1;
		tc->starts[off / 64] |= UINT64_C(1) << (off % 64);
		tc->depth[n] = (uint32_t)depth;
		tc->node_frames += depth;
	}
	free(path);
	for (size_t w = 0, nodes = 0; w <= size / 64; w++) {
		tc->rank[w] = (uint32_t)nodes;
		nodes += mp_popcount64(tc->starts[w]);
	}
	if (!rc && n != f->ntrie)
		rc = mp_fail(err, MP_E_CORRUPT,
			     "trie holds %" PRIu32 " nodes, its count says %"
			     PRIu32, n, f->ntrie);
	return rc;
}

/* Section 9, if any: three thresholds, each finite and not negative. */
static enum mp_errcode read_classes(struct idx_file *f, struct mp_err *err)
{
	const unsigned char *p = f->sec[SEC_CLASSES];
	float v[3];

	if (!p)
		return MP_OK;
	if (f->sec_size[SEC_CLASSES] != CLASSES_SIZE)
		return mp_fail(err, MP_E_CORRUPT, "section classes holds %zu "
			       "bytes, not %d", f->sec_size[SEC_CLASSES],
			       CLASSES_SIZE);
	for (int i = 0; i < 3; i++) {
		uint32_t bits = mp_le32(p + 4 * i);

		/* Sign clear and an exponent below all ones: finite, >= 0. */
		if (bits >> 31 || (bits >> 23 & 0xff) == 0xff)
			return mp_fail(err, MP_E_CORRUPT, "section classes: "
				       "threshold %d (0x%08" PRIx32 ") is negative "
				       "or not finite", i, bits);
		memcpy(&v[i], &bits, sizeof(v[i]));
	}
	f->classes = true;
	f->thresholds = (struct mib_thresholds){ v[0], v[1], v[2] };
	return MP_OK;
}

static enum mp_errcode check_tables(struct idx_file *f, struct trie_check *tc,
				    struct mp_err *err)
{
	uint32_t n;
	enum mp_errcode rc;

	if (f->sec_size[SEC_STRINGS] == 0 ||
	    f->sec[SEC_STRINGS][f->sec_size[SEC_STRINGS] - 1] != 0)
		return mp_fail(err, MP_E_CORRUPT,
			       "string table does not end with a NUL byte");
	if ((rc = table_fits(f, SEC_SUMMARY, 8, 16, &n, err)) ||
	    (rc = read_classes(f, err)))
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

	if ((rc = check_frames(f, err)) || (rc = check_trie(f, tc, err)))
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
		if (p[1] == TYPE_VARINT)
			f->schema_varints |= UINT64_C(1) << i;
		f->schema_field[i] = p[0] >= 1 && p[0] <= MIB__COUNT
				     ? p[0] - 1 : MIB__COUNT;
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
	struct mp_samp *s;	/* and the sample entries (not delta-coded) */
	size_t salloc;
};

static double bits_f64(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* Sum K of words W (tag 29's: low, high), as mp_fixed. */
static mp_fixed fixed_at(const uint64_t *w, int k)
{
	return (mp_fixed)((unsigned __int128)w[2 * k + 1] << 64 | w[2 * k]);
}

/*
 * Decode LEN varints at P of a context's sample entries into HB->s, the
 * sums exact (tag 29) or binary64 (tag 28, EXACT false); returns the
 * position after them, NULL when they are malformed.
 */
static const unsigned char *get_samples(const unsigned char *p,
					const unsigned char *end, uint64_t len,
					bool exact, struct hist_buf *hb,
					uint32_t *n)
{
	uint64_t w[SAMPLE_SUM_WORDS];
	int words = exact ? SAMPLE_SUM_WORDS : SAMPLE_WORDS;

	if (len % words || len / words > UINT32_MAX ||
	    !MP_GROW(hb->s, hb->salloc, (size_t)(len / words) + 1))
		return NULL;
	*n = (uint32_t)(len / words);
	for (uint32_t i = 0; i < *n; i++) {
		struct mp_samp *e = &hb->s[i];

		for (int k = 0; k < words; k++)
			if (!(p = next_varint(p, end, &w[k])))
				return NULL;
		e->interval = w[0];
		e->n = w[1];
		e->u = w[2];
		for (int k = 0; k < MP_SAMP_NFIELDS; k++)
			if (exact ? !mp_samp_set_fixed(e, k, fixed_at(w + 3, k),
						       fixed_at(w + 3, MP_SAMP_NFIELDS + k))
				  : !mp_samp_set(e, k, bits_f64(w[3 + k]),
						 bits_f64(w[3 + MP_SAMP_NFIELDS + k])))
				return NULL;
		if (!mp_samp_valid(e) || (i && e->interval <= e[-1].interval))
			return NULL;
	}
	return p;
}

/*
 * What is left to check of a record once its bytes are: that every
 * context belongs to the record's function NAME (its leaf frame's), and
 * the frames its stacks expand to.  Both read memory scattered over the
 * trie and the depths, so the ids were gathered first and each read
 * starts a few ids ahead: the cache misses overlap.
 */
#define LEAF_AHEAD 8

static enum mp_errcode check_leaves(const struct idx_file *f,
				    struct trie_check *tc, uint32_t name,
				    struct mp_err *err)
{
	for (size_t k = 0; k < tc->nids; k++) {
		uint32_t id = tc->ids[k], fr, parent1;

		if (k + LEAF_AHEAD < tc->nids) {
			uint32_t ahead = tc->ids[k + LEAF_AHEAD];

			__builtin_prefetch(f->sec[SEC_TRIE] + ahead);
			if (tc->count_frames)
				__builtin_prefetch(&tc->depth[node_number(tc, ahead)]);
		}
		if (tc->count_frames)
			tc->frames += tc->depth[node_number(tc, id)];
		node_at(f, id, &fr, &parent1);
		if (frame_get(f, fr, 0) != name)
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s' holds stack %" PRIu32
				       ", whose leaf is another function",
				       string_at(f, name), id);
	}
	tc->nids = 0;
	return MP_OK;
}

/*
 * Decode the record of ITEM: check it when FN is NULL (ERR set on the
 * first problem; TC is what check_trie() learnt), else call FN
 * on each context.  Returns MP_OK, an error code, or FN's non-zero result.
 *
 * A MIB stores only the fields its mask names; the others keep the value
 * they had in the MIB before (0 or empty in the first), which is why C,
 * and the histogram in HB, carry over from one context to the next.
 */
static int walk_record(const struct idx_file *f, const struct ht_disk_item *it,
		       idx_context_fn fn, void *arg, struct hist_buf *hb,
		       struct trie_check *tc, struct mp_err *err)
{
	const unsigned char *p, *end;
	uint64_t n, id = 0;
	struct idx_context c;
	/* The MIB as decoded so far, and a last slot for fields of tags
	 * this reader does not know (schema_field[]). */
	uint64_t fields[MIB__COUNT + 1];

	if (!mp_in_bounds(it->record_offset, it->record_size,
			  f->sec_size[SEC_RECORDS]))
		return mp_fail(err, MP_E_CORRUPT,
			       "record of '%s' (offset %" PRIu32 ", size %" PRIu32
			       ") lies outside the records section",
			       string_at(f, it->name), it->record_offset,
			       it->record_size);
	p = f->sec[SEC_RECORDS] + it->record_offset;
	end = p + it->record_size;
	if (!(p = next_varint(p, end, &n)) || n != it->contexts)
		return mp_fail(err, MP_E_CORRUPT,
			       "record of '%s' does not hold the %" PRIu32
			       " contexts its hash-table item says",
			       string_at(f, it->name), it->contexts);
	/* A context takes two bytes at least: the record's size bounds N. */
	if (n > it->record_size)
		return mp_fail(err, MP_E_CORRUPT,
			       "record of '%s' claims %" PRIu64 " contexts in %"
			       PRIu32 " bytes", string_at(f, it->name), n,
			       it->record_size);
	if (tc && !MP_GROW(tc->ids, tc->aids, (size_t)n))
		return mp_fail(err, MP_E_NOMEM, NULL);
	memset(&c, 0, sizeof(c));
	memset(fields, 0, sizeof(fields));
	c.function = string_at(f, it->name);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t step, mask;

		/* Stack ids increase: each after the first is a step >= 1. */
		if (!(p = next_varint(p, end, &step)) || (k && step == 0) ||
		    step >= f->trie_size - id)
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s': context %" PRIu64 " has a "
				       "bad or unsorted stack id", c.function, k);
		id += step;
		c.stack_id = (uint32_t)id;
		if (tc && !is_node(tc, id))
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s': context %" PRIu64 " has "
				       "stack id %" PRIu64 ", which is not a trie "
				       "node", c.function, k, id);
		if (tc)
			tc->ids[tc->nids++] = c.stack_id;
		if (!(p = next_varint(p, end, &mask)))
			goto bad_field;
		c.nsamp = 0;
		if (f->nschema < 64 && mask >> f->nschema)
			return mp_fail(err, MP_E_CORRUPT,
				       "record of '%s': context %" PRIu64 " stores "
				       "fields the schema does not have (mask 0x%"
				       PRIx64 ", %" PRIu32 " fields)", c.function,
				       k, mask, f->nschema);
		if (!(mask & ~f->schema_varints)) {
			/* Plain varints only, the common case: no types to look at. */
			if (!fn) {
				if (!(p = skip_varints(p, end,
						       mp_popcount64(mask))))
					goto bad_field;
				continue;
			}
			for (uint64_t left = mask; left; left &= left - 1) {
				uint64_t v;

				if (!(p = next_varint(p, end, &v)))
					goto bad_field;
				fields[f->schema_field[__builtin_ctzll(left)]] = v;
			}
			goto decoded;
		}
		for (uint64_t left = mask; left; left &= left - 1) {
			uint32_t s = (uint32_t)__builtin_ctzll(left);
			uint8_t tag = f->schema_tag[s];
			uint64_t v, len;

			if (f->schema_type[s] == TYPE_VARINT) {
				if (!(p = next_varint(p, end, &v)))
					goto bad_field;
				fields[f->schema_field[s]] = v;
				continue;
			}
			if (!(p = next_varint(p, end, &len)) ||
			    len > (uint64_t)(end - p))
				goto bad_field;
			if ((tag == TAG_SAMPLES && f->version >= 11 &&
			     f->version < 13) ||
			    (tag == TAG_SAMPLE_SUMS && f->version >= 13)) {
				if (!(p = get_samples(p, end, len,
						      tag == TAG_SAMPLE_SUMS,
						      hb, &c.nsamp)))
					return mp_fail(err, MP_E_CORRUPT,
						       "record of '%s': context %"
						       PRIu64 " has malformed sample "
						       "entries", c.function, k);
				continue;
			}
			if (tag == TAG_HISTOGRAM && fn &&
			    !MP_GROW(hb->v, hb->alloc, (size_t)len + 1))
				return -1;
			for (uint64_t i = 0; i < len; i++) {
				if (!(p = next_varint(p, end, &v)))
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
decoded:
		if (!fn)
			continue;
		memcpy(c.mib.v, fields, sizeof(c.mib.v));
		c.hist = hb->v;
		c.samp = hb->s;
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
	return tc ? check_leaves(f, tc, it->name, err) : MP_OK;
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
	struct trie_check tc = { 0 };
	struct hist_buf hb = { 0 };
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
	version = mp_le32(d + IDX_HDR_VERSION);
	hash_type = mp_le32(d + IDX_HDR_HASH_TYPE);
	file_size = mp_le64(d + IDX_HDR_FILE_SIZE);
	if (file_size != size)
		return mp_fail(err, file_size > size ? MP_E_TRUNCATED : MP_E_CORRUPT,
			       "header says the file has %" PRIu64 " bytes, "
			       "it has %zu", file_size, size);
	if ((rc = check_checksum(f, err)))
		return rc;
	if (version < IDX_VERSION_MIN || version > IDX_VERSION)
		return mp_fail(err, MP_E_BAD_VERSION,
			       "unsupported indexed profile version %" PRIu64
			       " (supported: %d to %d)", version,
			       IDX_VERSION_MIN, IDX_VERSION);
	f->version = (unsigned)version;
	if (hash_type != HASH_TYPE_FNV1A)
		return mp_fail(err, MP_E_BAD_VERSION,
			       "unsupported hash type %" PRIu64, hash_type);
	if ((rc = check_flags(f, err)))
		return rc;
	f->ncontexts = mp_le64(d + IDX_HDR_CONTEXTS);
	f->nfunctions = mp_le64(d + IDX_HDR_FUNCTIONS);
	f->ninputs = mp_le64(d + IDX_HDR_INPUTS);
	if ((rc = open_sections(f, err)) ||
	    (rc = check_tables(f, &tc, err)))
		goto out;
	/*
	 * The contexts' stacks are distinct nodes (a record's ids increase, a
	 * node's leaf names its record, a function has one record), so their
	 * depths sum to no more than all nodes' do: only a file whose nodes
	 * pass the budget needs its contexts' depths summed.
	 */
	tc.count_frames = tc.node_frames > idx_frames_max(f);
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
		int r = walk_record(f, &items[i], NULL, NULL, &hb, &tc, err);

		if (r) {
			rc = (enum mp_errcode)r;
			goto out;
		}
		contexts += items[i].contexts;
	}
	if (contexts != f->ncontexts) {
		rc = mp_fail(err, MP_E_CORRUPT,
			     "header says %" PRIu64 " contexts, the records "
			     "hold %" PRIu64, f->ncontexts, contexts);
		goto out;
	}
	/* Refused now, in time linear in the file, rather than after the
	 * stacks were built (the budget of idx_stack_begin()). */
	if (tc.count_frames && tc.frames > idx_frames_max(f))
		rc = mp_fail(err, MP_E_TOO_LARGE,
			     "its stacks expand to %" PRIu64 " frames, more than %"
			     PRIu64 " (%d per byte of the file)", tc.frames,
			     idx_frames_max(f), IDX_FRAMES_PER_BYTE);
out:
	free(items);
	free(tc.block);
	free(tc.ids);
	free(hb.s);
	return rc;
}

/* The hash table's items in function-name order (collect_items()'s). */
static bool sorted_items(const struct idx_file *f, struct ht_disk_item **out)
{
	if (!collect_items(f, out))
		return false;
	qsort_r(*out, f->hash.nentries, sizeof(**out), by_item_name, (void *)f);
	return true;
}

int idx_foreach_context(const struct idx_file *f, idx_context_fn fn, void *arg)
{
	struct ht_disk_item *items;
	struct hist_buf hb = { 0 };
	int r = 0;

	if (!sorted_items(f, &items))
		return -1;
	for (uint32_t i = 0; i < f->hash.nentries && !r; i++)
		r = walk_record(f, &items[i], fn, arg, &hb, NULL, NULL);
	free(items);
	free(hb.v);
	free(hb.s);
	return r;
}

int idx_foreach_function(const struct idx_file *f,
			 int (*fn)(void *arg, const char *name), void *arg)
{
	struct ht_disk_item *items;
	int r = 0;

	if (!sorted_items(f, &items))
		return -1;
	for (uint32_t i = 0; i < f->hash.nentries && !r; i++)
		r = fn(arg, string_at(f, items[i].name));
	free(items);
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
	free(hb.s);
	return r;
}

uint32_t idx_node_parent1(const struct idx_file *f, uint32_t node)
{
	uint32_t frame, parent1;

	node_at(f, node, &frame, &parent1);
	return parent1;
}

uint32_t idx_node_step(const struct idx_file *f, uint32_t node,
		       uint32_t *entry)
{
	uint32_t parent1;

	node_at(f, node, entry, &parent1);
	return parent1;
}

uint32_t idx_node_entry(const struct idx_file *f, uint32_t node)
{
	uint32_t frame, parent1;

	node_at(f, node, &frame, &parent1);
	return frame;
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
	/* By hand, not snprintf: show expands a path for every frame. */
	while (n-- > 0 && len < size - 1) {
		const char *s = string_at(f, comp[n]);
		size_t w = strlen(s);

		if (!first)
			buf[len++] = '/';
		first = false;
		if (w > size - 1 - len)
			w = size - 1 - len;	/* cut to fit, as before */
		memcpy(buf + len, s, w);
		len += w;
	}
	buf[len] = '\0';
}

void idx_stack_frame(const struct idx_file *f, uint32_t stack_id, uint32_t k,
		     struct mp_frame *out, struct idx_frame_buf *buf)
{
	uint32_t node = stack_id, fr, parent1;

	node_at(f, node, &fr, &parent1);
	while (k-- > 0 && parent1) {
		node = parent1 - 1;
		node_at(f, node, &fr, &parent1);
	}
	idx_entry_frame(f, fr, out, buf);
}

void idx_entry_frame(const struct idx_file *f, uint32_t fr,
		     struct mp_frame *out, struct idx_frame_buf *buf)
{
	uint32_t path1, flags;

	memset(out, 0, sizeof(*out));
	/* An empty table (no stack can then be asked for) has no entry 0. */
	if (fr >= f->nframes)
		return;
	flags = frame_get(f, fr, 5);
	path1 = frame_get(f, fr, 1);
	if (flags & IDX_FRAME_UNSYMBOLIZED) {
		/* Checked at open: hex of at most IDX_BUILD_ID_MAX bytes. */
		int n = mp_unhex(string_at(f, frame_get(f, fr, 0)),
				 buf->build_id, sizeof(buf->build_id));

		if (n > 0) {
			out->build_id = buf->build_id;
			out->build_id_size = (uint8_t)n;
		}
		out->offset = frame_get(f, fr, 2) |
			      (uint64_t)frame_get(f, fr, 3) << 32;
		return;
	}
	out->function = string_at(f, frame_get(f, fr, 0));
	out->line = frame_get(f, fr, 2);
	out->column = frame_get(f, fr, 3);
	out->discriminator = frame_get(f, fr, 4);
	out->start_line = frame_get(f, fr, 6);
	out->flags = (flags & IDX_FRAME_INLINED ? MP_FRAME_INLINED : 0) |
		     (flags & IDX_FRAME_ALLOC
		      ? MP_FRAME_RUNTIME | MP_FRAME_ALLOC_LIB : 0) |
		     (flags & IDX_FRAME_FOUND ? MP_FRAME_FOUND : 0);
	if (path1) {
		path_string(f, path1 - 1, buf->path, sizeof(buf->path));
		out->file = buf->path;
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
	out->checksum = f->checksum;
	if (f->checksum)
		out->crc = mp_le32(f->data + IDX_HDR_CHECKSUM);
}


uint64_t idx_frames_max(const struct idx_file *f)
{
	uint64_t max = (uint64_t)f->size * IDX_FRAMES_PER_BYTE;

	return max < IDX_FRAMES_MIN ? IDX_FRAMES_MIN : max;
}

enum mp_errcode idx_stack_begin(struct idx_stack_iter *it,
				const struct idx_file *f, uint32_t stack_id,
				uint64_t *budget, struct mp_err *err)
{
	it->f = f;
	it->node = stack_id;
	it->depth = it->left = idx_stack_depth(f, stack_id);
	return idx_charge_frames(f, budget, it->depth, err);
}

enum mp_errcode idx_charge_frames(const struct idx_file *f, uint64_t *budget,
				  uint64_t n, struct mp_err *err)
{
	uint64_t max = idx_frames_max(f);

	*budget += n;
	if (*budget > max)
		return mp_fail(err, MP_E_TOO_LARGE,
			       "its stacks expand to more than %llu frames (%d "
			       "per byte of the file)", (unsigned long long)max,
			       IDX_FRAMES_PER_BYTE);
	return MP_OK;
}

/* The next frame's stack entry (see idx_entry_frame()). */
static bool stack_next_entry(struct idx_stack_iter *it, uint32_t *entry)
{
	uint32_t parent1;

	if (!it->left)
		return false;
	node_at(it->f, it->node, &it->frame, &parent1);
	*entry = it->frame;
	it->left--;
	/* A stack's depth counted its parents: there is one while left. */
	if (it->left)
		it->node = parent1 - 1;
	return true;
}

bool idx_stack_next(struct idx_stack_iter *it, struct mp_frame *out,
		    struct idx_frame_buf *buf)
{
	uint32_t entry;

	if (!stack_next_entry(it, &entry))
		return false;
	idx_entry_frame(it->f, entry, out, buf);
	return true;
}
