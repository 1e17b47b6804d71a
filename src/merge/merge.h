/*
 * merge.h - the merge engine (src/merge/): raw and indexed profiles
 * folded into one indexed profile.  What `memprof-data merge` runs, with
 * no command line in it: it returns error codes with details and reports
 * each input's outcome through a callback; it never prints.
 *
 * 1. Fold.  -j worker threads take the inputs one at a time.  A raw input
 *    is read and validated whole, then each of its contexts is folded into
 *    a table shared by the workers (ctab.h), keyed by its stack with every
 *    PC named independently of the process (a location key: module and
 *    ELF address, see merge.c).  Nothing is symbolized yet: a PC costs a
 *    compare and an addition (a range of the memory map used just
 *    before), or else a segment lookup.  An indexed input, already
 *    symbolized, is folded straight into the builder.
 * 2. Symbolize and place.  Each distinct location of the table is
 *    symbolized once and its frames interned in the builder, by one
 *    worker at a time while the others fold: a worker hands over the
 *    keys and the entries of the new stacks of each input it finishes,
 *    and they go in batches, most of them in one beside the last inputs'
 *    folding (merge.c, drain_now()); with one thread, all at the end.
 *    Once its locations are symbolized, each new stack becomes
 *    its frames, less the allocation runtime's leading ones, and gets its
 *    node in the builder's trie (two stacks may differ only in the
 *    runtime's frames, and share a node).
 * 3. Build.  When every input is folded, each entry's MIB is lent to
 *    the builder as its node's context (folded into the one there when
 *    two stacks share a node): the only step left after the folding, with
 *    the write, which reads the MIBs where the table holds them.  With
 *    two threads or more and opts.indexed_output, the lending runs on a
 *    thread of its own while the calling one begins the write
 *    (idx_write_begin(): the sections of the stacks, all in by then).
 * Every fold is order-independent, so the output is the same whatever the
 * number of threads and the order in which they finish.  Memory holds the
 * folded table and the builder, plus one input per worker.
 *
 * Ownership and threads.  A struct merge owns its table, builder and
 * scratch; SYM is borrowed (and released by merge_run once every location
 * is symbolized, to free its debug information early).  One thread calls
 * the functions below; merge_run starts and joins its own workers, and
 * calls opts.report on the calling thread only.
 *
 *	struct merge m;
 *	merge_init(&m, &opts, &sym);
 *	rc = merge_run(&m, inputs, n, &err);	// per opts.failure_mode
 *	if (!rc)
 *		rc = merge_write(&m, "out.memprof", &err);	// temp + rename
 *	merge_release(&m);
 */
#ifndef MERGE_H
#define MERGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_file.h"
#include "hashtable/ht.h"
#include "indexed/idx.h"
#include "symbolize/sym.h"
#include "ctab.h"

enum merge_failure_mode {
	MERGE_FAIL_ANY,		/* the first bad input fails the merge */
	MERGE_FAIL_ALL,		/* fail only if every input is bad */
	MERGE_FAIL_WARN,	/* bad inputs are warnings, never failures */
};

/*
 * What became of one input, told to the caller's report function in input
 * order, once per input, on the calling thread: the place to print a
 * warning, an error or a progress line.
 */
struct merge_result {
	size_t index, ninputs;	/* this input, of how many */
	const char *path;
	enum mp_errcode rc;	/* MP_OK: merged */
	const struct mp_err *err;	/* why not; valid during the call */
	bool fatal;		/* the merge stops here (else: skipped) */
	size_t contexts;	/* distinct raw contexts folded so far */
	/* An indexed input's unsymbolized stack entries that no binary of
	 * this merge resolves (their stacks match only unsymbolized ones),
	 * and the build id of the first. */
	uint64_t unresolved;
	uint8_t unresolved_bid[RAW_BUILD_ID_MAX];
	uint32_t unresolved_bid_size;
	bool unresolved_more_bids;	/* some of another build id too */
	/* An indexed input of several runs merged without --keep-types, in
	 * a merge that keeps allocation classes apart (opts.llvm_types): its
	 * contexts' records of different classes were folded already, and
	 * each context takes the class of its sums. */
	bool unclassed;
	/* A raw input of another program than the main --binary's, none of
	 * whose binaries is here (sym_other_program()): its frames in its
	 * main segment, build id OTHER_BID, stay unsymbolized. */
	bool other_program;
	uint8_t other_bid[RAW_BUILD_ID_MAX];
	uint32_t other_bid_size;
	/* A raw input's records (contexts of each of its profiles), and the
	 * most addresses of one's stack: a runtime following frame pointers
	 * through code built without them gives stacks of a few. */
	uint64_t records;
	uint32_t deepest;
};

typedef void merge_report_fn(void *arg, const struct merge_result *r);

struct merge_opts {
	enum merge_failure_mode failure_mode;
	unsigned jobs;		/* worker threads, >= 1 */
	bool keep_runtime;
	bool keep_bad_frames;	/* no cut at a PC in no segment */
	/*
	 * For LLVM's format: a PC that lies in no module with a build id (in
	 * no segment, or in one without) is looked up in the main binary at
	 * its own value, as llvm-profdata looks up every PC outside the
	 * profiled binary's text, and takes the frames its DWARF gives.
	 */
	bool bad_in_main;
	/* The program's own allocation wrappers, flagged in indexed inputs
	 * as the symbolizer flags them in raw ones (allocator-library
	 * frames: kept, hidden by show). */
	const struct sym_alloc_rules *alloc;
	/* Every frame's file path as --prefix-map rewrites it, from raw
	 * and indexed inputs alike; NULL or empty: as the build wrote it. */
	const struct mp_prefix_map *prefix_map;
	/* Refuse indexed inputs without function start lines (format 9):
	 * the result is for LLVM's format, whose frames need them. */
	bool need_start_lines;
	/* The result goes to merge_write() or merge_bytes(): their write may
	 * begin during the build (step 3). */
	bool indexed_output;
	struct mp_read_opts read;	/* how inputs are read (merge_init
					 * sets the defaults) */
	/*
	 * For LLVM's format: raw records of one stack fold by allocation
	 * class under these thresholds (mib_alloc_class()), each class a
	 * context of its own, marked by a root frame (MP_FRAME_CLASS_BASE),
	 * so that the export gives clang the types of llvm-profdata's
	 * unfolded records.  NULL: all fold.
	 */
	const struct mib_thresholds *llvm_types;
	merge_report_fn *report;	/* may be NULL */
	void *report_arg;
};

struct merge_input {
	const char *path;
	uint64_t weight;	/* >= 1 */
};

struct merge_space;
struct merge_escape;

/* A --binary that no raw input's memory map holds. */
struct merge_unmapped {
	char *path;
	uint8_t build_id[RAW_BUILD_ID_MAX];
	uint32_t build_id_size;
};

/* A build id some raw inputs have as their main segment's, and how many. */
struct merge_program {
	uint8_t build_id[RAW_BUILD_ID_MAX];
	uint32_t build_id_size;
	uint64_t inputs;
};

/*
 * A thread's arena, on cache lines of its own: a worker writes its
 * arena's fields at every new entry, tens of thousands of times an
 * input early in a merge, and two arenas on one line made each of those
 * writes wait for the line to come back from the other core.
 */
struct merge_arena {
	_Alignas(128) struct mp_arena a;
};

/* What merge.runtime says of a frame. */
enum {
	RT_LEADING = 1,	/* the runtime's: dropped at the start of a stack */
	RT_CODE = 2,	/* MP_FRAME_RUNTIME_CODE */
};

struct merge {
	struct merge_opts opts;
	size_t good, bad;	/* inputs merged, inputs rejected */
	size_t saturated;	/* contexts with a field clamped at 2^64 - 1,
				 * known once written */
	uint64_t cut;		/* raw stacks cut at a PC in no segment */
	uint64_t kept_bad;	/* and those kept whole (keep_bad_frames) */
	uint64_t unmapped_code;	/* raw stacks through code unmapped before
				 * the profile was written, kept
				 * (raw_unmapped_run_end()) */
	/* Locations left out of stacks past their first frame of the
	 * program: stale return addresses in the runtime's code
	 * (MP_FRAME_RUNTIME_CODE), as llvm-profdata leaves them out. */
	uint64_t stale;
	uint64_t resymbolized;	/* indexed inputs' unsymbolized stack entries
				 * symbolized by this merge's binaries */
	const char *failed_input;	/* the input that stopped the merge */
	/*
	 * The modules addresses were looked up in, described as the
	 * symbolizer had them before its release (their strings the
	 * merge's), for the exports; PROGRAM the program's, or -1: the
	 * module of the build id most raw inputs have as their main
	 * segment (their executable), else the main binary's.
	 */
	struct sym_module_info *modules;
	size_t nmodules;
	int32_t program;
	struct merge_program *programs;	/* raw inputs' main build ids */
	size_t nprograms, aprograms;
	/*
	 * Every build id in the raw inputs' memory maps (a hash of it:
	 * m->lock), and the indexed inputs merged: a --binary none of the
	 * maps holds is another build of the file (UNMAPPED: their paths,
	 * known once merge_run() has returned, only when every input was
	 * raw with build ids).
	 */
	struct ht_map mapped;
	bool unnamed_maps;		/* a segment had no build id */
	size_t indexed;
	struct merge_unmapped *unmapped;
	size_t nunmapped;
	/* Step 1: raw contexts by stack of location keys. */
	struct ctab tab;
	struct merge_arena *arenas;	/* its entries: the main thread's, then
					 * each worker's */
	size_t narenas;
	/* The symbolizer, shared by the workers and the main thread. */
	pthread_mutex_t sym_lock;
	struct sym_ctx *sym;
	/* lock: spaces, escapes and pending keys. */
	pthread_mutex_t lock;
	struct merge_space *spaces;	/* modules and bare build ids */
	size_t nspaces, aspaces;
	struct ht space_ht;		/* by build id, or module if none */
	struct merge_escape *escapes;	/* locations too wide for a key */
	size_t nescapes, aescapes;
	struct ht escape_ht;
	/* The builder; workers fold indexed inputs into it under b_lock. */
	pthread_mutex_t b_lock;
	struct idx_builder b;
	struct idx_write *w;		/* its write, begun in step 3, or NULL */
	struct sym_stack buf;		/* one location's frames */
	/* Keys of new stacks the workers found, to symbolize, and the new
	 * stacks' entries, to place in the builder's trie (m->lock). */
	uint64_t *pending;
	size_t npending, apending;
	struct ctab_entry **pending_e;
	size_t npending_e, apending_e;
	uint64_t *taken;		/* the main thread's: being symbolized */
	size_t ataken;
	struct ctab_entry **taken_e;	/* and being placed */
	size_t ataken_e;
	int32_t *taken_mod;		/* and the module of each key */
	size_t ataken_mod;
	/* Step 2: each distinct location's frames, as builder frame ids. */
	struct ht_map loc_map;		/* location key -> location */
	uint32_t *loc_first, *loc_n;	/* its frames in ids[] */
	size_t nlocs, aloc_first, aloc_n;
	uint32_t *ids;			/* frame ids of all locations */
	uint8_t *runtime;		/* the same frames' RT_* flags */
	size_t nids, aids, aruntime;
	uint32_t *stack;		/* one stack's frame ids */
	size_t astack;
	uint32_t class_frame[MIB__CLASSES];	/* opts.llvm_types: the
						 * classes' frame ids + 1 */
};

void merge_init(struct merge *m, const struct merge_opts *opts,
		struct sym_ctx *sym);
void merge_release(struct merge *m);

/*
 * Merge the N inputs into M's builder, reporting each input's outcome
 * through opts.report.  Fails with the code of an input that stops the
 * merge (then m->failed_input names it and ERR says why: the report has
 * already been told), MP_E_NO_INPUT when no input could be merged and the
 * failure mode is not "warn", or the code of a failure of the merge itself
 * (MP_E_NOMEM, MP_E_TOO_LARGE, a --strict symbolization error).
 */
enum mp_errcode merge_run(struct merge *m, const struct merge_input *in,
			  size_t n, struct mp_err *err);

/*
 * Write the result to PATH (".zst": compressed) through a temporary file
 * renamed into place (mp_file.h); on failure nothing is left at PATH but
 * what was there.  Once the bytes are out, the folded state is freed
 * (beside the file's fsync, given two threads): after the call M may
 * only be released.
 */
enum mp_errcode merge_write(struct merge *m, const char *path,
			    struct mp_err *err);

/*
 * The result as an indexed profile in memory, for a caller that exports
 * it in another format: OUT's bytes are malloc'ed, the caller's (release
 * with mp_buf_release).  Once they are made, the folded state is freed:
 * after the call M may only be released.  Fails with MP_E_NOMEM or the
 * writer's codes.
 */
enum mp_errcode merge_bytes(struct merge *m, struct mp_buf *out,
			    struct mp_err *err);

#endif /* MERGE_H */
