/*
 * raw.h - reader of compiler-rt MemProf raw profiles, versions 1 to 5.
 *
 * A raw file holds one or more profiles back to back (a process that dumps
 * twice writes two), plain or zstd-compressed.  raw_parse() decodes and
 * validates a whole file at once: every offset, count and length is
 * checked against its profile and the file before it is followed, and the
 * walk by TotalSize must end exactly at the end of the file.  On success
 * the file is described by plain arrays; nothing points into the input
 * buffer, which the caller may free.
 *
 *	struct raw_file rf;
 *	struct mp_err err = { 0 };
 *
 *	raw_file_init(&rf);
 *	if (raw_load(&rf, "memprof.profraw.123", &err))
 *		fail(mp_errmsg(&err));
 *	for (size_t i = 0; i < rf.ncontexts; i++) {
 *		const struct raw_context *c = &rf.contexts[i];
 *		// c->pcs[0 .. c->npcs-1], leaf first; c->mib.v[MIB_AllocCount]
 *	}
 *	raw_file_release(&rf);
 *
 * Contexts.  MIB records with the same stack id, the same PCs and the same
 * memory map are one context, within a profile and across the profiles of
 * the file (one process dumping several times).  They merge by
 * compiler-rt's rule (mib_merge_runtime) in file order, later records
 * being the newer, as llvm-profdata does; so a dump followed by exit
 * counts an object live at the first dump twice, as the runtime itself
 * does.  Contexts are listed in order of first appearance.
 */
#ifndef RAW_H
#define RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"
#include "common/mp_mib.h"
#include "common/mp_samp.h"
#include "common/mp_util.h"
#include "memprof/raw_format.h"

struct raw_segment {
	uint64_t start, end;
	/*
	 * v3+: the module's load bias (PC - offset = ELF address).
	 * v1/v2: the mapping's file offset.
	 */
	uint64_t offset;
	uint32_t build_id_size;	/* 0 when the profile carries none */
	uint8_t build_id[RAW_BUILD_ID_MAX];
};

/* A stretch of addresses and the segment that holds them (see below). */
struct raw_seg_range {
	uint64_t start, end;	/* [start, end) */
	uint32_t segment;	/* index into the profile's segments */
};

struct raw_profile {
	uint64_t file_offset;	/* where its header starts in the file */
	uint64_t total_size;
	uint32_t version;
	uint32_t layout;	/* equal for profiles with equal memory maps */
	struct raw_segment *segments;
	size_t nsegments;
	/* The segments as disjoint ranges by address, for raw_segment_of. */
	struct raw_seg_range *ranges;
	size_t nranges;
	uint64_t nrecords;	/* MIB records as written */
	uint64_t nstacks;	/* stack entries as written */
	/* Sampled (libmemprof's sample block, raw_format.h): the MIBs hold
	 * estimates, and sample_interval is the process's R at the dump. */
	bool sampled;
	uint64_t sample_interval;
};

struct raw_context {
	uint64_t stack_id;
	const uint64_t *pcs;	/* npcs PCs, leaf first, already ret - 1 */
	uint32_t npcs;
	uint32_t profile;	/* index of the profile it first appears in */
	uint64_t *hist;		/* nhist access counts per 8 bytes, or NULL */
	uint32_t nhist;
	struct mp_samp *samp;	/* nsamp entries by interval; 0: exact */
	uint32_t nsamp;
	struct mp_mib mib;
};

struct raw_scratch;

struct raw_file {
	struct raw_profile *profiles;
	size_t nprofiles;
	struct raw_context *contexts;
	size_t ncontexts;
	size_t size;		/* decoded bytes */
	bool compressed;	/* the file was zstd-compressed */
	uint32_t min_version, max_version;
	bool sampled;		/* some profile is */
	struct mp_arena arena;	/* owns everything above */
	struct raw_scratch *scratch;	/* private: reused by the next parse */
};


void raw_file_init(struct raw_file *rf);
/* Do the SIZE bytes at DATA start with the raw profile magic? */
bool raw_is_raw(const void *data, size_t size);
/*
 * Decode SIZE bytes at DATA (already decompressed) into RF.  RF may hold
 * an earlier file: it is emptied first, keeping memory for reuse.
 */
enum mp_errcode raw_parse(struct raw_file *rf, const void *data, size_t size,
			  struct mp_err *err);
/* One MIB record of a file, as raw_walk() hands it over. */
struct raw_record {
	uint32_t profile;		/* index into rf->profiles */
	uint32_t npcs;
	uint64_t stack_id;
	const unsigned char *pcs;	/* npcs PCs, leaf first, u64 little-endian,
					 * in the input buffer */
	const struct mp_mib *mib;
	const uint64_t *hist;		/* nhist access counts, or NULL */
	uint32_t nhist;
	const struct mp_samp *samp;	/* nsamp sample entries; 0: exact */
	uint32_t nsamp;
};

typedef enum mp_errcode (*raw_record_fn)(void *arg, const struct raw_record *r,
					 struct mp_err *err);

/*
 * The lean reader, for callers that fold records into their own tables
 * (merge).  Validates the SIZE bytes at DATA whole first, as raw_parse()
 * does, with the same errors, and fills RF's profiles but no contexts.
 * Then, if each context of the file is a single record (as in any
 * one-profile file compiler-rt writes: its runtime merges the records of a
 * stack before it dumps), calls FN on every record in file order and sets
 * *WALKED; FN's error stops the walk and is returned.  Otherwise FN is not
 * called and *WALKED is false: such a file needs raw_parse(), which merges
 * the records of a context by the runtime's rule first.  Nothing in RF
 * points into DATA; R's pointers are valid during the call to FN only.
 * Like raw_parse(), it empties an RF holding an earlier file first.
 */
enum mp_errcode raw_walk(struct raw_file *rf, const void *data, size_t size,
			 raw_record_fn fn, void *arg, bool *walked,
			 struct mp_err *err);

/*
 * Which segment of PROF holds PC: the index of the first segment in the
 * profile's table whose [start, end) holds it (segments may overlap in a
 * hostile or odd file; the first one wins, as for the runtime's map), or
 * -1 when none does.  O(log segments), or O(1) when PC lies in the range
 * of the previous answer: *HINT carries it from call to call (start it at
 * 0; one per profile).  This is the one place that answers the question.
 */
int64_t raw_segment_search(const struct raw_profile *prof, uint64_t pc,
			   size_t *hint);

static inline int64_t raw_segment_of(const struct raw_profile *prof,
				     uint64_t pc, size_t *hint)
{
	const struct raw_seg_range *r = prof->ranges;

	/* Inline: a merge asks for every PC, mostly in the same range. */
	if (*hint < prof->nranges && r[*hint].start <= pc && pc < r[*hint].end)
		return r[*hint].segment;
	return raw_segment_search(prof, pc, hint);
}

/*
 * A PC past a stack's leaf in no segment is most often garbage an unwinder
 * read past code without frame pointers, and the stack is cut there; but
 * code that was unmapped before the profile was written (a library closed
 * with dlclose, code made at run time) is in no segment either, and its
 * callers are real.  The run of such PCs that starts at index K of the
 * NPCS at PCS (uint64_t values, or little-endian bytes when LE_BYTES) is
 * taken for such code when the stack comes back to mapped code and stays
 * there to its root, for RAW_RETURN_MIN PCs at least: then the index past
 * the run, else 0.  Garbage seldom does: in 127,831 garbage stacks of
 * protoc (static and shared builds), the stack came back to mapped code
 * in 1,967, for one PC in 1,344 and for a while before more garbage in
 * 623.
 */
#define RAW_RETURN_MIN 2
uint32_t raw_unmapped_run_end(const struct raw_profile *prof, const void *pcs,
			      bool le_bytes, uint32_t npcs, uint32_t k,
			      size_t *hint);

/*
 * Index PROF's segments for raw_segment_of(), in memory from ARENA:
 * raw_parse() and raw_walk() do it; this is for a profile made by hand.
 * Fails only with MP_E_NOMEM.
 */
enum mp_errcode raw_profile_index(struct raw_profile *prof,
				  struct mp_arena *arena, struct mp_err *err);

/* Read PATH (plain or zstd, under mp_file_read()'s default limits) and
 * decode it into RF. */
enum mp_errcode raw_load(struct raw_file *rf, const char *path,
			 struct mp_err *err);
/* Free everything RF holds; accepts an initialized or zeroed struct. */
void raw_file_release(struct raw_file *rf);

/* Decode a v5 histogram entry: 12-bit mantissa, 4-bit exponent. */
static inline uint64_t raw_hist_v5_decode(uint16_t e)
{
	return (uint64_t)(e & 0xfff) << (e >> 12);
}

#endif /* RAW_H */
