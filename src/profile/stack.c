#include "stack.h"

#include <stdlib.h>
#include <string.h>

void stack_buf_release(struct stack_buf *buf)
{
	if (!buf)
		return;
	free(buf->f);
	free(buf->sf);
	free(buf->idx);
	free(buf->hex);
	memset(buf, 0, sizeof(*buf));
}

static bool push(struct stack_buf *buf, const struct mp_frame *f,
		 const struct sym_frame *sf)
{
	if (!MP_GROW(buf->f, buf->alloc, buf->n + 1) ||
	    !MP_GROW(buf->sf, buf->asf, buf->n + 1))
		return false;
	buf->f[buf->n] = *f;
	buf->sf[buf->n] = sf;
	buf->n++;
	return true;
}

enum mp_errcode stack_add_addr(struct sym_ctx *sym, const struct sym_addr *a,
			       uint64_t address, const uint8_t *build_id,
			       struct stack_buf *buf, struct mp_err *err)
{
	const struct sym_frames *fr;
	struct mp_frame vf = { 0 };
	enum mp_errcode rc;

	rc = sym_lookup(sym, a, &fr, err);
	if (rc)
		return rc;
	vf.address = address;
	vf.flags = MP_FRAME_ADDRESS;
	if (fr->n == 0) {
		/* Unsymbolized: keep where it was, to symbolize later. */
		vf.build_id = a->build_id_size ? build_id : NULL;
		vf.build_id_size = (uint8_t)a->build_id_size;
		vf.offset = a->offset;
		if (a->segment < 0)
			vf.flags |= MP_FRAME_UNMAPPED;
		if (!push(buf, &vf, NULL))
			return mp_fail(err, MP_E_NOMEM, NULL);
		return MP_OK;
	}
	for (uint32_t i = 0; i < fr->n; i++) {
		const struct sym_frame *s = &fr->f[i];

		vf.function = s->function;
		vf.file = s->file;
		vf.line = s->line;
		vf.column = s->column;
		vf.discriminator = s->discriminator;
		vf.start_line = s->start_line;
		vf.flags = MP_FRAME_ADDRESS |
			   (s->inlined ? MP_FRAME_INLINED : 0) |
			   (s->runtime ? MP_FRAME_RUNTIME : 0);
		if (!push(buf, &vf, s))
			return mp_fail(err, MP_E_NOMEM, NULL);
	}
	return MP_OK;
}

enum mp_errcode stack_add_pc(struct sym_ctx *sym,
			     const struct raw_profile *prof,
			     const struct sym_addr *a, uint64_t pc,
			     struct stack_buf *buf, struct mp_err *err)
{
	return stack_add_addr(sym, a, pc,
			      a->segment >= 0 ? prof->segments[a->segment].build_id
					      : NULL, buf, err);
}

enum mp_errcode stack_symbolize(struct sym_ctx *sym,
				const struct raw_profile *prof,
				const uint64_t *pcs, uint32_t npcs,
				bool keep_runtime, struct stack_buf *buf,
				struct stack_stats *stats, struct mp_err *err)
{
	enum mp_errcode rc;
	size_t start;

	buf->n = 0;
	for (uint32_t k = 0; k < npcs; k++) {
		struct sym_addr a;

		rc = sym_map_pc(sym, prof, pcs[k], &a, err);
		if (!rc)
			rc = stack_add_pc(sym, prof, &a, pcs[k], buf, err);
		if (rc)
			return rc;
	}
	start = keep_runtime ? 0 : sym_user_start(buf->sf, buf->n);
	if (start == buf->n && buf->n) {
		/* Nothing but the runtime: keep it all rather than lose it. */
		if (stats)
			stats->all_runtime++;
		start = 0;
	}
	if (start) {
		memmove(buf->f, buf->f + start, (buf->n - start) * sizeof(*buf->f));
		memmove(buf->sf, buf->sf + start,
			(buf->n - start) * sizeof(*buf->sf));
		buf->n -= start;
	}
	if (stats) {
		stats->runtime_dropped += start;
		stats->frames += buf->n;
		for (size_t i = 0; i < buf->n; i++)
			stats->symbolized += buf->sf[i] != NULL;
	}
	return MP_OK;
}

enum mp_errcode stack_to_idx(struct stack_buf *buf)
{
	if (!MP_GROW(buf->idx, buf->aidx, buf->n + 1) ||
	    !MP_GROW(buf->hex, buf->ahex, buf->n + 1))
		return MP_E_NOMEM;
	for (size_t i = 0; i < buf->n; i++) {
		const struct mp_frame *v = &buf->f[i];
		struct idx_frame *x = &buf->idx[i];

		memset(x, 0, sizeof(*x));
		if (v->function || v->file) {
			x->function = v->function;
			x->file = v->file;
			x->line = v->line;
			x->column = v->column;
			x->discriminator = v->discriminator;
			x->flags = mp_frame_inlined(v) ? IDX_FRAME_INLINED : 0;
			continue;
		}
		/*
		 * Unsymbolized frames compare by build id and offset in the
		 * module, the same in every process.  Without a build id
		 * (raw v1/v2, or a PC in no segment) only the address itself
		 * is safe: two modules may share a file offset.
		 */
		mp_hex(v->build_id, v->build_id_size, buf->hex[i],
				    sizeof(buf->hex[i]));
		x->function = buf->hex[i];
		x->flags = IDX_FRAME_UNSYMBOLIZED;
		x->offset = v->build_id_size ? v->offset : v->address;
	}
	return MP_OK;
}
