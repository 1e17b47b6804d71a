/*
 * sym_stack.c - a raw context's PCs, or locations already placed in their
 * modules, as logical frames (struct mp_frame), for show and merge
 * (sym.h, struct sym_stack).
 */
#include "sym.h"

#include <stdlib.h>
#include <string.h>

void sym_stack_release(struct sym_stack *st)
{
	if (!st)
		return;
	free(st->f);
	memset(st, 0, sizeof(*st));
}

static bool push(struct sym_stack *st, const struct mp_frame *f)
{
	if (!MP_GROW(st->f, st->alloc, st->n + 1))
		return false;
	st->f[st->n++] = *f;
	return true;
}

/*
 * Is S the profiling runtime's own code: in its source, or, with no
 * source known (compiler-rt as Debian ships it has no DWARF), named as
 * the runtime's (an interceptor, operator new or delete, malloc and its
 * kin), not an allocator library's?
 */
static bool runtime_code(const struct sym_frame *s)
{
	return s->runtime_code || (s->runtime && !s->file && !s->alloc_lib);
}

enum mp_errcode sym_stack_add(struct sym_ctx *sym, const struct sym_location *loc,
			      struct sym_stack *st, struct mp_err *err)
{
	const struct sym_frames *fr;
	struct mp_frame f = { .address = loc->pc, .flags = MP_FRAME_ADDRESS };
	struct sym_module_info mi;
	unsigned found;
	enum mp_errcode rc;

	rc = sym_lookup(sym, loc->module, loc->addr, &fr, err);
	if (rc)
		return rc;
	if (fr->n == 0) {
		/* Unsymbolized: keep where it was, to symbolize later. */
		f.build_id = loc->build_id_size ? loc->build_id : NULL;
		f.build_id_size = loc->build_id_size;
		f.offset = loc->offset;
		if (loc->unmapped)
			f.flags |= MP_FRAME_UNMAPPED;
		return push(st, &f) ? MP_OK : mp_fail(err, MP_E_NOMEM, NULL);
	}
	found = sym_module_info(sym, loc->module, &mi) && mi.from_debug_dir
		? MP_FRAME_FOUND : 0;
	for (uint32_t i = 0; i < fr->n; i++) {
		const struct sym_frame *s = &fr->f[i];

		f.function = s->function;
		f.file = s->file;
		f.line = s->line;
		f.column = s->column;
		f.discriminator = s->discriminator;
		f.start_line = s->start_line;
		f.flags = MP_FRAME_ADDRESS | found |
			  (s->inlined ? MP_FRAME_INLINED : 0) |
			  (s->runtime ? MP_FRAME_RUNTIME : 0) |
			  (s->runtime && s->alloc_lib ? MP_FRAME_ALLOC_LIB : 0) |
			  (runtime_code(s) ? MP_FRAME_RUNTIME_CODE : 0);
		if (!push(st, &f))
			return mp_fail(err, MP_E_NOMEM, NULL);
	}
	return MP_OK;
}

/*
 * Leave out of ST, whose leading runtime frames are gone, each PC whose
 * innermost frame is the runtime's own code (MP_FRAME_RUNTIME_CODE): a
 * stale return address, as llvm-profdata leaves it out.  A PC's frames
 * run to the first one not inlined into the next.
 */
static void drop_stale(struct sym_stack *st, struct sym_stack_stats *stats)
{
	size_t to = 0;

	for (size_t i = 0, end; i < st->n; i = end) {
		for (end = i; end + 1 < st->n && mp_frame_inlined(&st->f[end]);
		     end++)
			;
		end++;
		if (st->f[i].flags & MP_FRAME_RUNTIME_CODE) {
			if (stats)
				stats->stale++;
			continue;
		}
		if (to != i)
			memmove(st->f + to, st->f + i, (end - i) * sizeof(*st->f));
		to += end - i;
	}
	st->n = to;
}

enum mp_errcode sym_stack_symbolize(struct sym_ctx *sym,
				    const struct raw_profile *prof,
				    const uint64_t *pcs, uint32_t npcs,
				    unsigned flags, struct sym_stack *st,
				    struct sym_stack_stats *stats,
				    struct mp_err *err)
{
	bool keep_runtime = flags & SYM_STACK_KEEP_RUNTIME;
	/* A profile without a memory map has no PC in a segment: no cut. */
	bool cut = !(flags & SYM_STACK_KEEP_BAD) && prof->nranges;
	enum mp_errcode rc;
	size_t start = 0, hint = 0;
	uint32_t keep_until = 0;	/* a run of unmapped code ends there */

	st->n = 0;
	for (uint32_t k = 0; k < npcs; k++) {
		struct sym_location loc = { .pc = pcs[k] };
		struct sym_addr a;

		if (k >= keep_until && k && cut &&
		    raw_segment_of(prof, pcs[k], &hint) < 0) {
			keep_until = raw_unmapped_run_end(prof, pcs, false, npcs,
							  k, &hint);
			if (!keep_until) {
				if (stats)
					stats->cut++;
				break;
			}
			if (stats)
				stats->unmapped_code++;
		}
		rc = sym_map_pc(sym, prof, pcs[k], &a, err);
		if (rc)
			return rc;
		loc.module = a.module;
		loc.addr = a.addr;
		loc.offset = a.offset;
		loc.unmapped = a.segment < 0;
		if (a.segment >= 0 && a.build_id_size) {
			loc.build_id = prof->segments[a.segment].build_id;
			loc.build_id_size = (uint8_t)a.build_id_size;
		}
		if ((rc = sym_stack_add(sym, &loc, st, err)))
			return rc;
	}
	/* The runtime's leading frames go (see sym_is_runtime). */
	while (!keep_runtime && start < st->n &&
	       (st->f[start].flags & MP_FRAME_RUNTIME))
		start++;
	if (start == st->n && st->n) {
		/* Nothing but the runtime: keep it all rather than lose it. */
		if (stats)
			stats->all_runtime++;
		start = 0;
	} else if (!keep_runtime) {
		/* (An empty stack has no frames to move: F may be NULL.) */
		if (start) {
			memmove(st->f, st->f + start,
				(st->n - start) * sizeof(*st->f));
			st->n -= start;
		}
		drop_stale(st, stats);
	}
	if (stats) {
		stats->runtime_dropped += start;
		stats->frames += st->n;
		for (size_t i = 0; i < st->n; i++)
			stats->symbolized += mp_frame_symbolized(&st->f[i]);
	}
	return MP_OK;
}
