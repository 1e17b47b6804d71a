/*
 * merge.h - what `memprof-data merge` does, step by step.
 *
 * Inputs are decoded (read, decompressed, validated) by -j worker threads
 * while the main thread symbolizes them and folds their contexts into one
 * idx_builder, in input order.  Decoding runs at most a few inputs ahead,
 * so memory holds the folded result plus a small window of inputs, not
 * every input at once.
 *
 *	struct merge m;
 *	merge_init(&m, &opts, &sym);
 *	rc = merge_inputs(&m, inputs, n);	// per opts.failure_mode
 *	rc = merge_write(&m, "out.memprof");	// temp file + rename
 *	merge_release(&m);
 */
#ifndef MERGE_H
#define MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../hashtable/ht.h"
#include "../indexed/idx.h"
#include "../symbolize/sym.h"
#include "stack.h"

enum merge_failure_mode {
	FAIL_ANY,	/* the first bad input fails the merge */
	FAIL_ALL,	/* fail only if every input is bad */
	FAIL_WARN,	/* bad inputs are warnings, never failures */
};

struct merge_opts {
	enum merge_failure_mode failure_mode;
	unsigned jobs;		/* decoding threads, >= 1 */
	bool keep_runtime;
	bool progress;		/* show progress on stderr (a TTY) */
};

struct merge_input {
	const char *path;
	uint64_t weight;	/* >= 1 */
};

struct merge_pc;

struct merge {
	struct merge_opts opts;
	struct sym_ctx *sym;
	struct idx_builder b;
	struct stack_buf buf;
	struct stack_stats stats;
	size_t good, bad;	/* inputs merged, inputs rejected */
	/*
	 * The frames of each distinct PC location (module and address, the
	 * same in every process), as builder frame ids with a flag for the
	 * allocation runtime's frames: most PCs recur in thousands of
	 * contexts and in every input, and are symbolized and interned once.
	 */
	struct merge_pc *pcs;
	size_t npcs, apcs;
	struct ht pc_ht;
	uint32_t *ids;		/* frame ids of all cached PCs, back to back */
	uint8_t *runtime;	/* the same frames' runtime flags */
	size_t nids, aids, aruntime;
	uint32_t *stack;	/* one context's frame ids */
	uint8_t *stack_rt;
	size_t astack, astack_rt;
};

void merge_init(struct merge *m, const struct merge_opts *opts,
		struct sym_ctx *sym);
void merge_release(struct merge *m);

/*
 * Merge the N inputs.  Bad inputs are reported on stderr; returns
 * EXIT_OK or EXIT_ERROR as the failure mode says.
 */
int merge_inputs(struct merge *m, const struct merge_input *in, size_t n);

/* Write the result to PATH (".zst": compressed) through a temporary. */
int merge_write(struct merge *m, const char *path);

/*
 * Parse "W,FILE" into IN (W a whole number >= 1); false if malformed.
 * FILE points into S.
 */
bool merge_parse_weighted(const char *s, struct merge_input *in);

#endif /* MERGE_H */
