/*
 * view.h - the profile model (src/profile/): the profiles a command was
 * given, in one shape for reporting and exporting.
 *
 * Raw and indexed inputs differ on disk; once loaded, `show`, `overlap`
 * and `diff` see the same thing: inputs, the memory maps of raw inputs,
 * and contexts, each a list of frames (struct mp_frame, leaf first) with
 * a MIB and an optional access histogram.  A frame carries its address
 * when it has one (raw) and its symbolic location when it is known.
 *
 *	struct view v;
 *	view_init(&v);
 *	if (view_add_file(&v, path, NULL, &err) ||
 *	    view_expand_all(&v, &err))
 *		return fail(path, &err);
 *	... v.contexts[i].frames[0 .. nframes - 1] ...
 *	view_release(&v);
 *
 * Ownership: the view owns everything it points to (raw files, indexed
 * files' bytes, frames, strings) until view_release; a symbolizer given
 * to view_symbolize must outlive it, its strings being borrowed.  Not
 * thread-safe: one thread uses a view.  Library code: returns error codes
 * with details, never prints.
 */
#ifndef VIEW_H
#define VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"
#include "common/mp_file.h"
#include "common/mp_frame.h"
#include "common/mp_mib.h"
#include "common/mp_util.h"
#include "indexed/idx.h"
#include "llvm/llvm.h"
#include "raw/raw.h"
#include "symbolize/sym.h"


struct view_input {
	const char *path;
	const char *kind;	/* "raw", "indexed" or "llvm" */
	uint32_t version;	/* highest version among its profiles */
	uint32_t min_version;
	uint32_t nprofiles;
	bool compressed;
	/* Bit f: MIB field f is in the input (an LLVM file keeps its
	 * schema's, the others 0; other inputs have them all: VIEW_ALL_MIB). */
	uint64_t mib_mask;
	size_t ncontexts;
	size_t nsampled;	/* contexts with sample entries */
	uint64_t sample_interval;	/* raw: the largest R at a dump */
	/* Raw: the most addresses of a stack, and how many contexts have
	 * that many (a runtime's malloc_context_size cuts stacks there). */
	uint32_t deepest;
	size_t at_deepest;
	const struct idx_file *idx;	/* indexed inputs: the file */
	const struct llvm_file *llvm;	/* LLVM inputs: the file */
	uint64_t frames_expanded;	/* indexed: idx_stack_begin's budget */
	/* Indexed: each stack entry's frame, built the first time a stack
	 * reaches it (its file path and build id copied into the arena),
	 * and which are built. */
	struct mp_frame *entry_frames;
	uint8_t *entry_built;
};

#define VIEW_ALL_MIB (((uint64_t)1 << MIB__COUNT) - 1)
_Static_assert(MIB__COUNT < 64, "view_input.mib_mask holds a bit a field");

struct view_segment {
	uint32_t input, profile;
	const struct raw_segment *seg;
};

struct view_context {
	uint64_t id;		/* raw: the stack id; indexed: the trie node;
				 * LLVM: its alloc site's offset in the file */
	uint32_t input;
	uint32_t nframes;
	struct mp_frame *frames;	/* leaf first; NULL until view_frames()
					 * (raw: no frames before
					 * view_symbolize()) */
	const struct idx_file *idx;	/* indexed: the file */
	const struct llvm_file *llvm;	/* LLVM: the file, and where in it */
	struct llvm_site site;		/* its call stack is */
	struct mp_mib mib;
	const uint64_t *hist;
	uint32_t nhist;
	const struct mp_samp *samp;	/* sample entries; nsamp 0: exact */
	uint32_t nsamp;
	/* Raw contexts: the file and profile whose map the PCs are in. */
	const struct raw_file *raw;
	uint32_t profile;
	uint32_t id_index;	/* index in raw->contexts */
};

/* Room for one stack's frames, reused: view_frames_scratch(). */
struct view_scratch {
	struct mp_frame *frames;
	uint32_t *entries;
	struct llvm_frame *llvm;	/* an LLVM stack as its file has it */
	size_t alloc, aentries, allvm;
	struct sym_stack raw;		/* a raw stack, symbolized */
};

/* An LLVM function GUID as LLVM inputs' frames name it: "guid:HEX", or
 * the function of that GUID in the binaries view_symbolize() was given. */
struct view_guid {
	const char *name;
	bool named;		/* by a binary */
	bool alloc_lib;		/* named, and of the allocator library */
};

struct view {
	struct view_input *inputs;
	size_t ninputs;
	struct view_segment *segments;
	size_t nsegments;
	struct view_context *contexts;
	size_t ncontexts;
	struct raw_file **raws;	/* owned raw files */
	size_t nraws;
	size_t nllvm;		/* LLVM inputs, whose frames are GUIDs */
	struct ht_map guid_map;	/* GUID -> index in guids + 1 */
	struct view_guid *guids;
	size_t nguids;
	struct mp_buf *bufs;	/* owned indexed files' bytes */
	size_t nbufs, alloc_bufs;
	struct mp_arena arena;
	struct view_scratch scratch;	/* where view_frames() walks a stack */
	/* view_symbolize()'s: raw stacks are symbolized through it when
	 * their frames are asked for. */
	struct sym_ctx *sym;
	unsigned sym_flags;
	struct sym_ctx *names;		/* view_set_function_names() */
	const struct sym_alloc_rules *alloc;	/* view_set_frame_rules */
	bool keep_runtime;			/* likewise */
	/* Keep an indexed stack's class frame at its root (mp_frame_class(),
	 * merge --keep-types), which only the LLVM export reads; people see
	 * the stack without it. */
	bool class_frames;
	/* Every context added, kept or not (view_keep_top()): how many,
	 * their MIBs folded (mib_fold(): sums stop at 2^64 - 1, minima and
	 * maxima stay so), and their sample entries folded by interval, in
	 * the order added. */
	size_t nall;
	struct mp_mib sums;
	struct mp_samp *samp;
	uint32_t nsamp;
	/* view_keep_top()'s: keep this many per input (0: all). */
	size_t keep_top;
	enum mib_field keep_key;
	/* How view_add_file() reads: set max_size to raise the cap. */
	struct mp_read_opts read;
	size_t alloc_inputs, alloc_segments, alloc_contexts, alloc_raws,
	       alloc_samp, alloc_guids;
};

void view_init(struct view *v);
void view_release(struct view *v);

/*
 * From now on keep, of each input's contexts, only the N that
 * come first by MIB field KEY in view_rank()'s order, as `show --top=N`
 * prints them; the others count in the input's and the view's totals
 * (nall, sums, samp) but are not kept, so that a file of 100k contexts
 * costs the memory of N (a raw file is held whole and parsed).  Those
 * kept are in v->contexts in the order of the file; view_symbolize()
 * still symbolizes every raw stack for its figures.  N == 0 keeps
 * everything (the default).
 */
void view_keep_top(struct view *v, enum mib_field key, size_t n);

/*
 * V's contexts in order of their MIB field KEY, as `show` prints them:
 * the larger first, then by input, stack id and place in V.  All of
 * them, or with TOP > 0 the first TOP, found with a heap of TOP entries
 * (n log TOP steps, where sorting all would take n log n).  *N gets the
 * count; the array is malloc'ed, NULL when out of memory.
 */
struct view_context **view_rank(const struct view *v, enum mib_field key,
				size_t top, size_t *n);

/* May a file starting with the N bytes at HEAD be one we read? */
bool view_known_format(const void *head, size_t n);

/*
 * Load PATH, raw (plain or zstd), indexed or LLVM's, and add its
 * contexts.  With FUNCTION set, only that function's contexts of an
 * indexed or LLVM file are added, found through its hash table (of an
 * LLVM file by linkage name, or see view_set_function_names()).
 */
enum mp_errcode view_add_file(struct view *v, const char *path,
			      const char *function, struct mp_err *err);

/*
 * view_add_file() of PATH[0] into V[0] and of PATH[1] into V[1] (two
 * different views), the two files read and decoded at once on two
 * threads: a comparison's sides.  RC[i] and ERR[i] tell how side i went.
 */
void view_add_file_pair(struct view *v[2], const char *path[2],
			enum mp_errcode rc[2], struct mp_err err[2]);

/*
 * The same for a file already in memory: BUF is taken over (emptied),
 * whatever the outcome; PATH names the input.
 */
enum mp_errcode view_add_buf(struct view *v, const char *path,
			     struct mp_buf *buf, const char *function,
			     struct mp_err *err);

/*
 * Symbolize every raw stack through SYM (which must outlive V), for
 * STATS and to check them (--strict), dropping the allocation runtime's
 * leading frames and cutting stacks at a PC in no segment as FLAGS
 * (SYM_STACK_*) say: their frames are symbolized again, from SYM's
 * answers, when asked for (view_frames()); and
 * name the GUID frames of LLVM inputs by the functions of SYM's binaries
 * (a GUID no binary defines stays "guid:HEX"), dropping the leading named
 * frames that the rules of view_set_frame_rules(), called before, hide
 * (in the stacks expanded from then on; call it before view_frames()).
 * STATS may be NULL.
 */
enum mp_errcode view_symbolize(struct view *v, struct sym_ctx *sym,
			       unsigned flags, struct sym_stack_stats *stats,
			       struct mp_err *err);

/*
 * Indexed contexts come with their MIBs only; their frames are expanded
 * from the file on demand, at most 16 frames per byte of the file in all
 * (a trie of N nodes can describe N^2/2 frames).  So do LLVM contexts,
 * whose file was checked whole (llvm_open(): the same cap), each frame
 * named by its GUID's entry in V->guids, and raw contexts, symbolized
 * through view_symbolize()'s symbolizer (none before it).
 *
 * view_frames() makes C's frames available (c->frames, c->nframes);
 * view_expand_all() does it for every context.  Both fail with
 * MP_E_TOO_LARGE past the cap, naming it, or MP_E_NOMEM.
 */
enum mp_errcode view_frames(struct view *v, struct view_context *c,
			    struct mp_err *err);
enum mp_errcode view_expand_all(struct view *v, struct mp_err *err);

/*
 * C's frames for a reader that prints each context once: a context not
 * yet expanded is expanded into SCRATCH (grown as needed,
 * reused from call to call, released with view_scratch_release()), not
 * kept, and *ENTRIES (when not NULL) gets each frame's stack entry in
 * C's indexed file, by which a reader can keep what it derives from a
 * frame; others give NULL entries.  *FRAMES and *ENTRIES
 * stay valid until the next call with SCRATCH.  The cap and errors are
 * view_frames()'s.
 */
enum mp_errcode view_frames_scratch(struct view *v,
				    const struct view_context *c,
				    struct view_scratch *scratch,
				    const struct mp_frame **frames,
				    const uint32_t **entries,
				    uint32_t *n, struct mp_err *err);
void view_scratch_release(struct view_scratch *scratch);

/*
 * For a reader that keeps what it derives from a frame (a line of text)
 * by stack entry: C's stack as stack entries of its indexed file, leaf
 * first, the rules applied, walked into SCRATCH without building a frame;
 * view_entry_frame() builds one when the reader needs it.  A context with
 * frames of its own (expanded by view_frames()) gives *ENTRIES NULL, and
 * its frames are C->frames[0 .. *N - 1]; an LLVM or symbolized raw
 * context not expanded fails (MP_E_INVALID): its frames are
 * view_frames_scratch()'s.
 * The cap and errors are view_frames()'s.
 */
enum mp_errcode view_entries_scratch(struct view *v,
				     const struct view_context *c,
				     struct view_scratch *scratch,
				     const uint32_t **entries, uint32_t *n,
				     struct mp_err *err);

/*
 * C's stack for a reader that prints each context once and keeps what it
 * derives from a stack entry: an indexed context as stack entries
 * (view_entries_scratch(); *FRAMES is C->frames, used when it was
 * expanded), any other as frames (view_frames_scratch(); *ENTRIES NULL).
 */
enum mp_errcode view_stack_scratch(struct view *v,
				   const struct view_context *c,
				   struct view_scratch *scratch,
				   const struct mp_frame **frames,
				   const uint32_t **entries, uint32_t *n,
				   struct mp_err *err);

/*
 * Does a raw input's memory map hold build id ID (N bytes)?  True too
 * when it cannot tell: an input that is not raw, or a segment without a
 * build id (raw versions 1 and 2).  A --binary it is false for is
 * another build of the file.
 */
bool view_maps_build_id(const struct view *v, const uint8_t *id, uint32_t n);

/* Stack entry E of indexed context C's file as a frame, built once and
 * kept as long as V.  NULL when out of memory. */
const struct mp_frame *view_entry_frame(struct view *v,
					const struct view_context *c,
					uint32_t e);

/*
 * From now on, view_add_file()'s FUNCTION may name a function of an LLVM
 * file by its demangled name too (with or without its parameters), found
 * among the functions of SYM's binaries: the file keeps no names, only
 * the MD5 of each linkage name.  SYM must outlive V.
 */
void view_set_function_names(struct view *v, struct sym_ctx *sym);

/*
 * Drop, from every indexed context expanded from now on, the leading
 * allocator-library frames (MP_FRAME_ALLOC_LIB) unless KEEP_RUNTIME, and
 * those whose function matches R (the program's own allocation wrappers,
 * --alloc-function; may be NULL); a context made only of such frames is
 * kept whole.  R must outlive V.  Raw contexts get the same from
 * view_symbolize() through its keep_runtime and the symbolizer's options.
 */
void view_set_frame_rules(struct view *v, const struct sym_alloc_rules *r,
			  bool keep_runtime);

/*
 * Is F one of the frames the rules above drop from the leaf end of an
 * indexed context?  For a reader that applies them without expanding
 * the stack (compare.c's match keys): the leading frames of a context
 * for which this is true are dropped, unless all of them are.
 */
bool view_frame_hidden(const struct view *v, const struct mp_frame *f);

/*
 * Match the name of every function of V's inputs against R, for its
 * record of the patterns that matched (sym_alloc_match()): the functions
 * of an indexed file's stack entries, and those that named the LLVM
 * inputs' GUIDs.  Raw inputs' names were matched as view_symbolize() made
 * them.  False when that record cannot be complete: a GUID that no binary
 * named might have been any function.
 */
bool view_match_functions(const struct view *v,
			  const struct sym_alloc_rules *r);

#endif /* VIEW_H */
