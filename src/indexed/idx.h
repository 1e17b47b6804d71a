/*
 * idx.h - the indexed profile (memprof-data-format(5)): building one from
 * contexts, writing it, and reading it back.
 *
 * Building.  An idx_builder folds contexts: each is a call stack (frames,
 * leaf first) with a MIB and an optional access histogram.  Contexts with
 * equal stacks become one, their MIBs combined by mib_fold() (order-
 * independent) after scaling by the input's weight.  Internally every
 * string, path component, frame and call-stack prefix is stored once and
 * named by a 32-bit index, so a context costs its trie node, one MIB and
 * a hash slot, whatever its depth.
 *
 *	struct idx_builder b;
 *	idx_builder_init(&b);
 *	for each context:
 *		idx_builder_add(&b, frames, n, &mib, hist, nhist, weight, &err);
 *	idx_builder_count_inputs(&b, ninputs);
 *	idx_builder_write(&b, fp, &err);	// deterministic bytes
 *	idx_builder_release(&b);
 *
 * Reading.  idx_open() validates the whole file before anything is
 * followed (see VALIDATION in memprof-data-format(5)); afterwards lookups
 * and iteration need no further checks.  The idx_file points into the
 * caller's buffer, which must outlive it, and owns no memory (there is
 * nothing to release): what the checks need is freed before idx_open()
 * returns, and a stack is read straight from the trie's bytes.
 *
 *	struct idx_file f;
 *	if (idx_open(&f, data, size, &err))
 *		fail(mp_errmsg(&err));
 *	idx_foreach_context(&f, print_one, arg);
 *	idx_find_function(&f, "_Z9hot_allocv", print_one, arg);
 */
#ifndef IDX_H
#define IDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/mp_err.h"
#include "common/mp_frame.h"
#include "common/mp_mib.h"
#include "common/mp_samp.h"
#include "common/mp_util.h"
#include "hashtable/ht.h"

#define IDX_VERSION 13		/* written when a context is sampled */
#define IDX_VERSION_FOUND 12	/* else when a frame is MP_FRAME_FOUND */
#define IDX_VERSION_EXACT 10	/* otherwise: the same bytes as before
				 * either existed */
#define IDX_VERSION_SAMPLED_F64 11	/* read: sample sums as binary64 */
#define IDX_VERSION_MIN 9	/* read: 9 has no start lines */
#define IDX_MAGIC "\x89MPIDX\r\n"
#define IDX_MAGIC_SIZE 8

/*
 * Frames go in and come out as struct mp_frame (common/mp_frame.h).  The
 * file keeps a symbolized frame's function, file, line, column,
 * discriminator and inline flag; an unsymbolized one as its module's
 * build id (at most IDX_BUILD_ID_MAX bytes, stored as hex) and its
 * offset there, or, without a build id, its address in the offset.
 */
#define IDX_BUILD_ID_MAX 32
#define IDX_PATH_MAX 4096

/* Room for what a frame read from a file holds outside the file. */
struct idx_frame_buf {
	char path[IDX_PATH_MAX];		/* the file path, joined */
	uint8_t build_id[IDX_BUILD_ID_MAX];	/* the build id, decoded */
};

/* What the builder holds, for --stats and the benchmarks. */
struct idx_stats {
	uint64_t contexts, functions, strings, string_bytes, paths, frames,
		 trie_nodes, inputs;
};

struct idx_bstr;
struct idx_bctx;
struct idx_rec;
struct idx_last_use;
struct idx_first_child;

/* Fields are private. */
struct idx_builder {
	struct mp_arena arena;
	/* Strings, path nodes, frames and trie nodes, each interned. */
	struct idx_bstr *strs;
	size_t nstrs, astrs;
	struct ht str_ht;
	struct idx_rec *paths;		/* name, parent + 1 */
	size_t npaths, apaths;
	struct ht_map path_map;		/* (name, parent + 1) -> path */
	uint32_t (*frames)[7];		/* function, path+1, line, col, disc,
					 * flags, start line */
	size_t nframes, aframes;
	struct ht frame_ht;
	struct idx_rec *trie;		/* frame, parent + 1 */
	size_t ntrie, atrie;
	/* Per node + 1 (0: the roots), its first child; the trie map has
	 * the others, (frame, parent + 1) -> node. */
	struct idx_first_child *first_child;
	size_t afirst_child;
	struct ht_map trie_map;
	/* The last stack added, outermost frame first, and its nodes. */
	uint32_t *path_frames, *path_nodes;
	size_t npath, apath_frames, apath_nodes;
	/* Per frame, the trie node it was last found or made at. */
	struct idx_last_use *last_use;
	size_t alast_use;
	bool sealed;			/* idx_builder_seal_stacks() */
	/* Contexts, and for each trie node its context + 1. */
	struct idx_bctx *ctxs;
	size_t nctxs, actxs;
	/* Per context (actxs of them), the string id of its node's function:
	 * the write groups the records by it, and looked it up through the
	 * trie and the frames, three loads from memory per context in the
	 * serial tail of a merge; kept when the context is made (by the
	 * thread that lends it) it is one. */
	uint32_t *ctx_owner;
	struct idx_bctx *last;		/* the context added last */
	size_t nsampled;		/* contexts with sample entries */
	size_t nfound;			/* frames with MP_FRAME_FOUND */
	uint32_t *node_ctx;
	size_t anode_ctx;
	uint64_t inputs;
	unsigned write_jobs;		/* threads the write may use */
	bool classes;			/* idx_builder_set_classes() */
	struct mib_thresholds thresholds;
};

void idx_builder_init(struct idx_builder *b);
void idx_builder_release(struct idx_builder *b);

/*
 * Fold one context into B: FRAMES[0..N-1] leaf first (N >= 1), its MIB
 * scaled by WEIGHT (>= 1), and its histogram (may be NULL).  Strings are
 * copied.
 */
enum mp_errcode idx_builder_add(struct idx_builder *b,
				const struct mp_frame *frames, uint32_t n,
				const struct mp_mib *mib, const uint64_t *hist,
				uint32_t nhist, uint64_t weight,
				struct mp_err *err);
/*
 * The same in two steps, for callers that see the same frames again and
 * again: intern a frame once and keep its id, then add stacks of ids
 * (leaf first).  Ids stay valid for the builder's life.
 */
enum mp_errcode idx_builder_frame(struct idx_builder *b,
				  const struct mp_frame *f, uint32_t *id);
enum mp_errcode idx_builder_add_stack(struct idx_builder *b,
				      const uint32_t *frames, uint32_t n,
				      const struct mp_mib *mib,
				      const uint64_t *hist, uint32_t nhist,
				      uint64_t weight, struct mp_err *err);

/*
 * idx_builder_add_stack() in two halves, for a caller that knows a stack
 * long before its MIB is final (merge places each new stack as soon as it
 * is symbolized, while inputs are still being folded): the trie node of
 * stack FRAMES[0..N-1] (leaf first, N >= 1), made if new, then the context
 * of node NODE folded in.  Nodes stay valid for the builder's life.
 */
enum mp_errcode idx_builder_node(struct idx_builder *b, const uint32_t *frames,
				 uint32_t n, uint32_t *node, struct mp_err *err);
enum mp_errcode idx_builder_add_node(struct idx_builder *b, uint32_t node,
				     const struct mp_mib *mib,
				     const uint64_t *hist, uint32_t nhist,
				     uint64_t weight, struct mp_err *err);

/*
 * idx_builder_add_node() without the copies, for a caller whose contexts
 * outlive the write (merge's table, tens of MB the builder would
 * otherwise copy into fresh memory): a node without a context gets MIB,
 * HIST[0..NHIST-1] and SAMP[0..NSAMP-1] themselves as its context
 * (weight 1; MIB's AccessHistogramSize must be NHIST).  From then on they
 * are the builder's to change in place (other contexts of the node are
 * folded into them): the caller must neither change nor free them before
 * idx_builder_release().  A node that has a context gets them folded in,
 * copied as idx_builder_add_node() would.
 */
enum mp_errcode idx_builder_lend_node(struct idx_builder *b, uint32_t node,
				      struct mp_mib *mib, uint64_t *hist,
				      uint32_t nhist, struct mp_samp *samp,
				      uint32_t nsamp, struct mp_err *err);

/*
 * Start fetching what idx_builder_lend_node(B, NODE, ...) reads of B
 * (node NODE and its slot in the node-to-context map): a caller lending
 * many contexts of nodes in no order names the one a few on, or each
 * lending waits for memory twice.
 */
void idx_builder_prefetch_node(const struct idx_builder *b, uint32_t node);

/*
 * Fold the sample entries S[0..NS-1] (struct mp_samp, sorted by interval)
 * of the context just added, scaled by WEIGHT like its MIB, into it.
 */
enum mp_errcode idx_builder_add_samples(struct idx_builder *b,
					const struct mp_samp *s, uint32_t ns,
					uint64_t weight, struct mp_err *err);

/* Record that N more inputs went into B (the header's input count). */
void idx_builder_count_inputs(struct idx_builder *b, uint64_t n);
/*
 * Make room for N more contexts at once (a caller that knows how many
 * are coming saves the copies and the slack of growing by doubling).
 * MP_E_NOMEM on failure, which leaves B as it was.
 */
enum mp_errcode idx_builder_reserve(struct idx_builder *b, size_t n);
/*
 * No stack will be added to B any more: free the trie's index (16 bytes
 * a slot at load <= 1/2: 8 MB for a trie of 221k nodes, the largest of
 * the builder's lookup tables) and the walk's caches, so that the
 * write's memory can take their place.  idx_builder_node() and the calls
 * that make nodes then fail with MP_E_INVALID; contexts can still be
 * added to the nodes there are.
 */
void idx_builder_seal_stacks(struct idx_builder *b);
void idx_builder_stats(const struct idx_builder *b, struct idx_stats *out);

/*
 * Let the write use up to N threads (default 1): a big profile's records
 * are then encoded in parts at once.  The bytes are the same.
 */
void idx_builder_set_jobs(struct idx_builder *b, unsigned n);
/*
 * Say that B's records of one stack are kept apart by allocation class
 * under thresholds T (merge --keep-types): the file records T, for a
 * later merge of it to check its own against.
 */
void idx_builder_set_classes(struct idx_builder *b,
			     const struct mib_thresholds *t);
/* Write the indexed profile to OUT. */
enum mp_errcode idx_builder_write(struct idx_builder *b, FILE *out,
				  struct mp_err *err);

/*
 * idx_builder_write() in two steps, for a caller whose stacks are all in
 * but whose contexts are still coming: idx_write_begin() numbers what
 * depends on the stacks only and lays out its sections (strings, paths,
 * stack entries; the trie's bytes are written by the end, beside the
 * records' order), and may run on a thread of its own while the caller
 * adds contexts to nodes that exist (idx_builder_add_node(),
 * idx_builder_lend_node(), idx_builder_add_samples(),
 * idx_builder_count_inputs()) and does nothing else with B;
 * idx_write_end(), when the contexts are all in, writes the file to OUT
 * (MP_E_INVALID if the stacks changed meanwhile).  NCTX is about how many
 * contexts the file will hold, which sizes the output buffer (the
 * begin reads nothing of the contexts); the caller reserves them
 * (idx_builder_reserve()) before it starts, so that adding them never
 * moves what the begin reads.  The bytes are idx_builder_write()'s.
 * idx_write_begin() returns NULL when out of memory, which
 * idx_write_end() then reports like any failure of the first step.  End
 * a write once, then free it (idx_write_free() takes NULL).
 *
 *	idx_builder_reserve(&b, n);
 *	w = idx_write_begin(&b, n);	// meanwhile, on another thread:
 *	idx_builder_lend_node(&b, ...);	// n times
 *	rc = idx_write_end(w, fp, &err);
 *	idx_write_free(w);
 *
 * After a successful end, idx_write_saturated() tells how many contexts
 * have a MIB field at 2^64 - 1, where sums stop (seen as they were
 * written).
 */
struct idx_write;
struct idx_write *idx_write_begin(struct idx_builder *b, size_t nctx);
enum mp_errcode idx_write_end(struct idx_write *w, FILE *out,
			      struct mp_err *err);
size_t idx_write_saturated(const struct idx_write *w);
/*
 * Have idx_write_end() write W's sections to its OUT as they are ready
 * instead of all at the end, calling PUSH(ARG) after each part, so that
 * the first bytes may go on to the disk while the rest is encoded
 * (mp_outfile_push()).  The header and summary, at the start, are
 * written last: OUT must be a seekable file that the profile starts at
 * (else the end writes at once, as without this).  W may be NULL.
 */
void idx_write_push(struct idx_write *w, void (*push)(void *), void *arg);
void idx_write_free(struct idx_write *w);

/*
 * A validated indexed file. Fields are private but for the counts and
 * trie_size: a stack id (the offset of a trie node) is below trie_size.
 */
struct idx_file {
	unsigned version;		/* 9 to 13 */
	bool checksum;			/* the header's checksum held */
	const unsigned char *data;
	size_t size;
	const unsigned char *sec[10];	/* by section id; [0] unused */
	size_t sec_size[10];
	/* Records kept apart by allocation class under these thresholds
	 * (merge --keep-types), when CLASSES. */
	bool classes;
	struct mib_thresholds thresholds;
	uint32_t npaths, nframes, ntrie, nschema;
	uint32_t trie_size;
	uint64_t ncontexts, nfunctions, ninputs;
	struct ht_disk hash;
	uint8_t schema_tag[64], schema_type[64];
	uint64_t schema_varints;	/* bit i: field i is one varint */
	uint8_t schema_field[64];	/* MIB field of a tag, or MIB__COUNT */
	/* Stack-entry columns: byte width and offset in an entry. */
	uint8_t frame_width[7], frame_col[7];
	uint32_t frame_size;
};

/* One context as read back. */
struct idx_context {
	uint32_t stack_id;		/* offset of the leaf's trie node */
	const char *function;		/* the record's function name */
	struct mp_mib mib;
	const uint64_t *hist;		/* valid during the callback only */
	uint32_t nhist;
	const struct mp_samp *samp;	/* likewise; nsamp 0: exact */
	uint32_t nsamp;
};

typedef int (*idx_context_fn)(void *arg, const struct idx_file *f,
			      const struct idx_context *c);

bool idx_is_indexed(const void *data, size_t size);
/*
 * The checksum the header of the SIZE bytes at DATA (SIZE at least the
 * header's) must hold: CRC-32 as zlib computes it, over the whole file
 * with the header's 8 checksum bytes taken as zero.
 */
uint32_t idx_checksum(const void *data, size_t size);
/*
 * Validate the SIZE bytes at DATA as an indexed file (they must outlive
 * F).  A file whose header carries a checksum is refused when its bytes
 * do not give it, before anything else is read; the checks after that
 * hold for any bytes, a file made to pass the checksum included.
 */
enum mp_errcode idx_open(struct idx_file *f, const void *data, size_t size,
			 struct mp_err *err);

/*
 * Call FN for every context, records in function-name order; stops at the
 * first non-zero return of FN, which is returned.  Returns -1 when out of
 * memory.
 */
int idx_foreach_context(const struct idx_file *f, idx_context_fn fn,
			void *arg);
/*
 * The same for the contexts of function NAME, found through the hash
 * table; returns -2 when there is no such function.
 */
/*
 * Call FN on the name of every function of F, in name order; stops at FN's
 * first non-zero result, which it returns (-1: out of memory).
 */
int idx_foreach_function(const struct idx_file *f,
			 int (*fn)(void *arg, const char *name), void *arg);
int idx_find_function(const struct idx_file *f, const char *name,
		      idx_context_fn fn, void *arg);

/*
 * The parent of trie node NODE (a stack id), plus one; 0 for an outermost
 * frame.  To read a whole stack, walk up with it and read frame 0 of each
 * node: O(depth), where asking for frame k of the leaf k times is
 * O(depth^2).  Node ids are byte offsets, so they are not consecutive.
 */
uint32_t idx_node_parent1(const struct idx_file *f, uint32_t node);
/*
 * The stack entry of trie node NODE: its index in the file's table of
 * frames, below f->nframes when there is one.  Equal entries, equal
 * frames: a reader that computes something per frame (a match key, a
 * rule) computes it once per entry, where a file has fewer entries than
 * nodes.
 */
uint32_t idx_node_entry(const struct idx_file *f, uint32_t node);
/* Both at once, from one decoding of the node: the parent plus one is
 * returned, the entry put in *ENTRY. */
uint32_t idx_node_step(const struct idx_file *f, uint32_t node,
		       uint32_t *entry);

/* Depth of the stack STACK_ID (number of frames). */
uint32_t idx_stack_depth(const struct idx_file *f, uint32_t stack_id);
/*
 * Frame K (0 = leaf) of the stack STACK_ID into OUT; the strings point
 * into F, except the file path and the build id, which point into BUF.
 */
void idx_stack_frame(const struct idx_file *f, uint32_t stack_id, uint32_t k,
		     struct mp_frame *out, struct idx_frame_buf *buf);
/*
 * The frame of stack entry ENTRY (idx_node_entry(), or an iterator's)
 * into OUT, as idx_stack_frame(); a zeroed frame when there is no such
 * entry.  A reader that keeps frames by entry builds each once.
 */
void idx_entry_frame(const struct idx_file *f, uint32_t entry,
		     struct mp_frame *out, struct idx_frame_buf *buf);

/*
 * Reading whole stacks, with the one limit on what a file may expand to:
 * a trie of N nodes can describe N^2/2 frames, so every reader that
 * expands stacks charges them to a budget of IDX_FRAMES_PER_BYTE frames
 * per byte of the file (IDX_FRAMES_MIN at least).  idx_open() already
 * refuses a file whose contexts, all expanded, would pass it (node depths
 * are computed in one pass over the trie), so only a reader that expands
 * some stacks twice meets the budget's error.  Real profiles stay far
 * below (the fixtures: under one frame per 10 bytes).
 *
 *	struct idx_stack_iter it;
 *	uint64_t budget = 0;		// frames expanded from F so far
 *	struct mp_frame fr;
 *	struct idx_frame_buf buf;
 *	if (idx_stack_begin(&it, f, ctx->stack_id, &budget, &err))
 *		return err.code;	// MP_E_TOO_LARGE, with a detail
 *	while (idx_stack_next(&it, &fr, &buf))
 *		use(&fr);		// leaf first; it.depth frames in all
 */
#define IDX_FRAMES_PER_BYTE 16
#define IDX_FRAMES_MIN 65536

/* The most frames the stacks of F may expand to. */
uint64_t idx_frames_max(const struct idx_file *f);
/*
 * Charge N frames of F to *BUDGET: MP_E_TOO_LARGE, with a detail, when
 * that passes idx_frames_max() (idx_stack_begin() charges a stack's).
 */
enum mp_errcode idx_charge_frames(const struct idx_file *f, uint64_t *budget,
				  uint64_t n, struct mp_err *err);

struct idx_stack_iter {
	const struct idx_file *f;
	uint32_t node;		/* the next frame's trie node */
	uint32_t depth;		/* frames in the stack */
	uint32_t left;		/* frames still to read */
	uint32_t frame;		/* the stack-entry index of the frame
				 * idx_stack_next() gave last: equal
				 * indices, equal frames */
};

/*
 * Start reading stack STACK_ID of F, charging its depth to *BUDGET.
 * Fails with MP_E_TOO_LARGE when that passes F's limit.
 */
enum mp_errcode idx_stack_begin(struct idx_stack_iter *it,
				const struct idx_file *f, uint32_t stack_id,
				uint64_t *budget, struct mp_err *err);
/*
 * The next frame into OUT (as idx_stack_frame, BUF holding what is not
 * in the file), leaf first; false when the stack is done.
 */
bool idx_stack_next(struct idx_stack_iter *it, struct mp_frame *out,
		    struct idx_frame_buf *buf);

/* Bytes per section and table counts, for --stats. */
struct idx_file_stats {
	uint64_t size, section_size[10];
	uint64_t strings, paths, frames, trie_nodes, contexts, functions,
		 buckets, inputs;
	bool checksum;		/* the file has one (and it held) */
	uint32_t crc;		/* then: its value */
};
void idx_file_stats(const struct idx_file *f, struct idx_file_stats *out);
extern const char *const idx_section_names[10];

#endif /* IDX_H */
