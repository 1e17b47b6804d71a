/*
 * idx_format.h - private to src/indexed/: the constants of the indexed
 * format as memprof-data-format(5) names them, and the builder's records
 * that idx_build.c makes and idx_write.c lays out.  The reader
 * (idx_read.c) and the writer take every offset and size from here.
 */
#ifndef IDX_FORMAT_H
#define IDX_FORMAT_H

#include "idx.h"

/* Section ids, in the order they are written.  SEC_CLASSES, the last,
 * only in files whose records are kept apart by allocation class. */
enum {
	SEC_SUMMARY = 1, SEC_STRINGS, SEC_PATHS, SEC_FRAMES, SEC_TRIE,
	SEC_SCHEMA, SEC_RECORDS, SEC_HASH, SEC_CLASSES, SEC__COUNT
};
/* SEC_CLASSES: the thresholds, each a binary32 bit pattern. */
#define CLASSES_SIZE 12

/* The header: fields at these offsets, little-endian. */
#define HEADER_SIZE 64
#define IDX_HDR_MAGIC 0		/* IDX_MAGIC_SIZE bytes */
#define IDX_HDR_VERSION 8	/* u32 */
#define IDX_HDR_HASH_TYPE 12	/* u32 */
#define IDX_HDR_FILE_SIZE 16	/* u64 */
#define IDX_HDR_NSECTIONS 24	/* u32 */
#define IDX_HDR_FLAGS 28	/* u32: IDX_FLAG_* */
#define IDX_HDR_CONTEXTS 32	/* u64 */
#define IDX_HDR_FUNCTIONS 40	/* u64 */
#define IDX_HDR_INPUTS 48	/* u64 */
#define IDX_HDR_CHECKSUM 56	/* u32 with IDX_FLAG_CHECKSUM, then u32 0;
				 * else u64 0 */

/* Header flags.  Readers before the flag existed ignore the field and
 * the checksum, so a file that carries one reads as before. */
#define IDX_FLAG_CHECKSUM 1u	/* the checksum field holds idx_checksum() */
#define IDX_FLAGS_KNOWN IDX_FLAG_CHECKSUM

/* The section table, right after the header: one entry per section. */
#define SECTION_ENTRY_SIZE 24
#define IDX_SEC_ID 0		/* u32 (then 4 reserved bytes) */
#define IDX_SEC_OFFSET 8	/* u64, from the start of the file */
#define IDX_SEC_SIZE 16		/* u64 */
#define MAX_SECTIONS 16

/* A stack entry's flags column. */
#define IDX_FRAME_INLINED 1u		/* inlined into the next frame */
#define IDX_FRAME_UNSYMBOLIZED 2u	/* function = build id hex */
#define IDX_FRAME_ALLOC 4u		/* an allocator library's frame
					 * (version 10 on) */
#define IDX_FRAME_FOUND 8u		/* its module found by build id, not
					 * given (version 12 on) */

#define PATH_NODE_SIZE 8
#define FRAMES_HEADER 12	/* count, seven column widths, reserved */
#define FRAME_COLUMNS 7		/* version 9: six, then a reserved 0 */
#define TRIE_HEADER 4		/* count; the first node is at offset 4 */
#define HASH_TYPE_FNV1A 1
#define TYPE_VARINT 1
#define TYPE_VARINT_ARRAY 2
#define TAG_HISTOGRAM 27
/* Versions 11 and 12: a sampled context's entries, 3 + 2K varints each
 * (interval, n, u, then K estimates and K variances as binary64 bit
 * patterns, K the field count of RAW_SAMPLE_FIELDS).  Not delta-coded:
 * absent = exact.  Read only: binary64 rounds the sums, so that merging a
 * merged file gave other bytes than merging its inputs. */
#define TAG_SAMPLES 28
#define SAMPLE_WORDS (3 + 2 * MP_SAMP_NFIELDS)
/* Version 13: the same, each estimate and variance the exact fixed-point
 * sum (mp_fixed, units of 2^-20) as two varints, its low and high 64
 * bits: 3 + 4K varints. */
#define TAG_SAMPLE_SUMS 29
#define SAMPLE_SUM_WORDS (3 + 4 * MP_SAMP_NFIELDS)

/* The summary's totals. */
static const enum mib_field summary_fields[] = {
	MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount, MIB_TotalLifetime,
};
#define NSUMMARY (sizeof(summary_fields) / sizeof(summary_fields[0]))

/* The builder's interned strings, forest records and contexts. */
struct idx_bstr {
	const char *s;
	uint32_t len;
	uint32_t out;		/* string id in the output */
};

struct idx_rec {
	uint32_t a, b;		/* paths: name, parent+1; trie: frame, parent+1 */
};

/* A frame's last trie node: under parent2 - 1 (0: none yet). */
struct idx_last_use {
	uint32_t parent2, node;
};

/* A trie node's first child, node1 - 1 (0: none yet), and its frame. */
struct idx_first_child {
	uint32_t node1, frame;
};

/*
 * A context: its MIB, histogram and sample entries are the builder's own
 * (the MIB in b->arena, the others malloc'ed, as OWN says), or lent by
 * the caller (idx_builder_lend_node()) and changed in place.
 */
struct idx_bctx {
	uint32_t node;
	uint32_t nhist;
	uint32_t nsamp;
	uint32_t own;		/* BCTX_OWN_*: what release frees */
	uint64_t *hist;		/* nhist access counts */
	struct mp_samp *samp;	/* nsamp entries by interval */
	struct mp_mib *mib;
};

#define BCTX_OWN_HIST 1u
#define BCTX_OWN_SAMP 2u

#endif /* IDX_FORMAT_H */
