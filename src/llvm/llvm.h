/*
 * llvm.h - LLVM's indexed profile with a MemProf section: the format's
 * facts, shared with the writer (src/export/exp_llvm.c), and a reader.
 *
 * llvm-profdata-19 writes these files but cannot show them (its `show
 * --memory` reads raw profiles only, and merging an indexed one drops its
 * MemProf data); this reader lets show, overlap and diff read them,
 * written by us or by llvm-profdata.  Every offset, count and length is
 * checked against the file before it is followed; LLVM's own reader
 * trusts its input.
 *
 *	struct llvm_file f;
 *	if (llvm_open(&f, data, size, &err))	// DATA must outlive F
 *		return err.code;
 *	rc = llvm_foreach_context(&f, fn, arg, &err);
 *
 * A context is an allocation site: its call stack (frames leaf first) and
 * its MIB.  LLVM files list each under the record of every function from
 * the leaf to the first frame that is not inlined; llvm_foreach_context
 * gives each once, from its leaf function's record.  Frames are LLVM's:
 * a function GUID, a line offset from the function's first line, a
 * column and an inline flag; no names.
 *
 * Header versions 8 to 12 are read, MemProf versions 0 to 3 (0 is
 * llvm-profdata-19's default; 3 what clang 19 and later read best).
 * Reading is linear in the file's size, and a file whose call stacks
 * would expand to more than 16 frames per byte is refused.  Not
 * thread-safe per file; files are independent.  Never prints.
 */
#ifndef LLVM_H
#define LLVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"
#include "common/mp_mib.h"

#define LLVM_MAGIC 0x8169666f72706cffULL	/* ff 6c 70 72 6f 66 69 81 */
#define LLVM_VARIANT_MEMPROF (1ULL << 62)
#define LLVM_VERSION_MASK 0xffffffffULL
#define LLVM_MEMPROF_VERSION 3
#define LLVM_FRAME_SIZE 17	/* u64 GUID, u32 line offset, u32 column, u8 */
#define LLVM_TAG_HISTOGRAM 27	/* the last MIB schema tag */
#define LLVM_SUMMARY_SIZE 448	/* 6 fields and 16 cutoff entries */

/* Header fields (u64) by offset; version 8 stops after MemProfOffset. */
#define LLVM_HDR_MAGIC 0
#define LLVM_HDR_VERSION 8
#define LLVM_HDR_HASH_TYPE 24
#define LLVM_HDR_HASH_OFFSET 32
#define LLVM_HDR_MEMPROF_OFFSET 40
#define LLVM_HDR_BINARY_ID_OFFSET 48		/* version 9 and later */
#define LLVM_HDR_TEMPORAL_OFFSET 56		/* version 10 and later */
#define LLVM_HDR_VTABLE_NAMES_OFFSET 64		/* version 12 */

/* The size of the header of VERSION (8..12). */
static inline size_t llvm_header_size(unsigned version)
{
	return version >= 12 ? 72 : version >= 10 ? 64 : version >= 9 ? 56 : 48;
}

struct llvm_frame {
	uint64_t guid;
	uint32_t line_offset, column;
	bool inlined;
};

/*
 * An on-disk chained hash table: items in [payload, table).  An item is
 * u64 hash, u64 key length (8; absent in version 2's call stack table,
 * whose writer leaves it implicit), u64 data length, u64 key, data.
 */
struct llvm_table {
	size_t payload, table;
	uint64_t nbuckets, nentries;
	bool no_key_length;
};

struct llvm_file {
	const unsigned char *data;
	size_t size;
	unsigned version;		/* the header's, 8..12 */
	unsigned memprof_version;	/* 0..3 */
	uint8_t schema[LLVM_TAG_HISTOGRAM];	/* tags, in stored order */
	size_t nschema, mib_size;
	struct llvm_table record_table;	/* function GUID -> record */
	/* Version 3: the frame array and the call stacks' array. */
	size_t frames, nframes;
	size_t stacks, stacks_end;
	/* Versions 0 to 2: frame id -> frame; version 2: stack id -> ids. */
	struct llvm_table frame_table, stack_table;
	uint64_t ncontexts;		/* alloc sites under their leaf */
};

/*
 * The function GUID LLVM keys MemProf records and frames by: the first 8
 * bytes of the MD5 of the canonical name, read little-endian.
 */
uint64_t llvm_guid(const char *linkage_name);

/*
 * NAME as LLVM hashes it: a ".llvm.NNN" or ".part.N" suffix dropped when
 * the last '.' of NAME is the suffix's own; ".__uniq." kept.  Returns the
 * length of the canonical prefix.
 */
size_t llvm_canonical_len(const char *name);

/* Does DATA start with LLVM's indexed profile magic? */
bool llvm_is_llvm(const void *data, size_t size);

/*
 * Check the SIZE bytes at DATA whole: header, MemProf section, schema,
 * frames, every call stack, every record and hash-table bucket.  Fails
 * with MP_E_BAD_VERSION (a header version out of 8..12, no MemProf data),
 * MP_E_TRUNCATED, MP_E_CORRUPT or MP_E_TOO_LARGE, each with the offset
 * and the reason.
 */
enum mp_errcode llvm_open(struct llvm_file *f, const void *data, size_t size,
			  struct mp_err *err);

/* Where an alloc site's call stack is told: llvm_stack() reads it. */
struct llvm_site {
	size_t off, end;	/* its stack reference; its record's end */
};

/* One allocation context, as llvm_foreach_context hands it over. */
struct llvm_context {
	uint64_t function;		/* its record's GUID: the leaf's */
	const struct llvm_frame *frames;	/* n frames, leaf first; valid
						 * during the call only */
	uint32_t n;
	struct mp_mib mib;		/* the schema's fields, others 0 */
	struct llvm_site site;		/* to read the frames again later */
};

typedef enum mp_errcode (*llvm_context_fn)(void *arg,
					   const struct llvm_context *c,
					   struct mp_err *err);

/*
 * Call FN for every context of F (opened), records in file order; FN's
 * error stops the walk and is returned.  MP_E_NOMEM otherwise.
 */
enum mp_errcode llvm_foreach_context(const struct llvm_file *f,
				     llvm_context_fn fn, void *arg,
				     struct mp_err *err);

/*
 * Call FN for the contexts of F whose leaf is function GUID (an
 * llvm_guid()), found through the record table: MP_E_NOT_FOUND, with
 * nothing in ERR, when F has no record of GUID.  Else as
 * llvm_foreach_context.
 */
enum mp_errcode llvm_function_contexts(const struct llvm_file *f,
				       uint64_t guid, llvm_context_fn fn,
				       void *arg, struct mp_err *err);

/*
 * The call stack of SITE (from a context of F, opened) into OUT, leaf
 * first: its first NOUT frames when it has more.  Returns its length, or
 * -1 with ERR set (a site that is not one of F's).  A reader that keeps
 * only the MIBs of a big file reads the frames of those it prints.
 */
int64_t llvm_stack(const struct llvm_file *f, struct llvm_site site,
		   struct llvm_frame *out, size_t nout, struct mp_err *err);

#endif /* LLVM_H */
