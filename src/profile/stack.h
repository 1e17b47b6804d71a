/*
 * stack.h - a raw context's PCs as logical frames, for show and merge.
 *
 * Each PC is mapped to its module and symbolized (src/symbolize); a PC
 * whose module has inlined code becomes several frames, innermost first.
 * A PC that cannot be symbolized stays one frame holding its address and,
 * when known, its module's build id and offset in the module.
 *
 * Then the leading frames of the allocation runtime (the malloc or
 * operator-new interceptor and allocator internals; sym_is_runtime() has
 * the rule) are dropped, so the first frame is the user's allocation site.
 * A stack made only of runtime frames is kept whole, and counted.
 */
#ifndef STACK_H
#define STACK_H

#include <stdbool.h>
#include <stddef.h>

#include "indexed/idx.h"
#include "raw/raw.h"
#include "symbolize/sym.h"
#include "view.h"

/* Frames of one stack; reused from one context to the next. */
struct stack_buf {
	struct mp_frame *f;
	size_t n, alloc;
	const struct sym_frame **sf;	/* the same frames, for sym_user_start */
	size_t asf;
	struct idx_frame *idx;		/* the same frames, for the indexed builder */
	size_t aidx;
	char (*hex)[2 * RAW_BUILD_ID_MAX + 1];	/* build ids of unsymbolized frames */
	size_t ahex;
};

struct stack_stats {
	uint64_t frames, symbolized;	/* logical frames kept */
	uint64_t runtime_dropped;	/* frames removed */
	uint64_t all_runtime;		/* contexts that were all runtime */
};

/*
 * Symbolize the NPCS PCS of a context of profile PROF into BUF (replacing
 * its contents).  Strings point into SYM and stay valid as long as it.
 * KEEP_RUNTIME keeps the runtime's frames.
 */
enum mp_errcode stack_symbolize(struct sym_ctx *sym,
				const struct raw_profile *prof,
				const uint64_t *pcs, uint32_t npcs,
				bool keep_runtime, struct stack_buf *buf,
				struct stack_stats *stats, struct mp_err *err);

/*
 * One PC already mapped by sym_map_pc() to A: append its frames to BUF
 * (innermost first), symbolized when its module allows.
 */
enum mp_errcode stack_add_pc(struct sym_ctx *sym,
			     const struct raw_profile *prof,
			     const struct sym_addr *a, uint64_t pc,
			     struct stack_buf *buf, struct mp_err *err);

/*
 * The same for a PC known only by A (module and address, or build id and
 * offset; segment >= 0 when it lay in a segment): ADDRESS stands for the
 * PC, BUILD_ID (A->build_id_size bytes) must outlive BUF's frames.
 */
enum mp_errcode stack_add_addr(struct sym_ctx *sym, const struct sym_addr *a,
			       uint64_t address, const uint8_t *build_id,
			       struct stack_buf *buf, struct mp_err *err);

/* BUF's frames as idx_frames (in buf->idx), for idx_builder_add(). */
enum mp_errcode stack_to_idx(struct stack_buf *buf);

void stack_buf_release(struct stack_buf *buf);

#endif /* STACK_H */
