#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "../common/mp_file.h"

void view_init(struct view *v)
{
	memset(v, 0, sizeof(*v));
}

void view_release(struct view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nraws; i++) {
		raw_file_release(v->raws[i]);
		free(v->raws[i]);
	}
	free(v->raws);
	free(v->inputs);
	free(v->segments);
	free(v->contexts);
	mp_arena_release(&v->arena);
	memset(v, 0, sizeof(*v));
}

static enum mp_errcode add_raw(struct view *v, const char *path,
			       struct raw_file *rf, struct mp_err *err)
{
	uint32_t in = (uint32_t)v->ninputs;
	struct view_input *vi;
	size_t nseg = 0;

	for (size_t p = 0; p < rf->nprofiles; p++)
		nseg += rf->profiles[p].nsegments;
	if (!MP_GROW(v->inputs, v->alloc_inputs, v->ninputs + 1) ||
	    !MP_GROW(v->segments, v->alloc_segments, v->nsegments + nseg) ||
	    !MP_GROW(v->contexts, v->alloc_contexts,
		     v->ncontexts + rf->ncontexts))
		return mp_fail(err, MP_E_NOMEM, NULL);

	vi = &v->inputs[v->ninputs++];
	memset(vi, 0, sizeof(*vi));
	vi->path = mp_arena_strdup(&v->arena, path);
	if (!vi->path)
		return mp_fail(err, MP_E_NOMEM, NULL);
	vi->kind = "raw";
	vi->version = rf->max_version;
	vi->min_version = rf->min_version;
	vi->nprofiles = (uint32_t)rf->nprofiles;
	vi->compressed = rf->compressed;
	vi->ncontexts = rf->ncontexts;

	for (size_t p = 0; p < rf->nprofiles; p++)
		for (size_t s = 0; s < rf->profiles[p].nsegments; s++)
			v->segments[v->nsegments++] = (struct view_segment){
				in, (uint32_t)p, &rf->profiles[p].segments[s]
			};

	for (size_t i = 0; i < rf->ncontexts; i++) {
		const struct raw_context *rc = &rf->contexts[i];
		struct view_context *c = &v->contexts[v->ncontexts];

		memset(c, 0, sizeof(*c));
		c->id = rc->stack_id;
		c->input = in;
		c->mib = rc->mib;
		c->hist = rc->hist;
		c->nhist = rc->nhist;
		c->raw = rf;
		c->profile = rc->profile;
		c->nframes = rc->npcs;
		c->frames = mp_arena_alloc(&v->arena,
					   (size_t)rc->npcs * sizeof(*c->frames) + 1);
		if (!c->frames)
			return mp_fail(err, MP_E_NOMEM, NULL);
		for (uint32_t k = 0; k < rc->npcs; k++) {
			c->frames[k].address = rc->pcs[k];
			c->frames[k].has_address = true;
		}
		v->ncontexts++;
	}
	return MP_OK;
}

enum mp_errcode view_add_file(struct view *v, const char *path,
			      struct mp_err *err)
{
	struct mp_buf buf;
	struct raw_file *rf;
	enum mp_errcode rc;

	rc = mp_file_read(&buf, path, err);
	if (rc)
		return rc;
	/* Anything that is not an indexed profile is read as raw, whose
	 * reader names precisely what is wrong with it. */
	rf = malloc(sizeof(*rf));
	if (!rf || !MP_GROW(v->raws, v->alloc_raws, v->nraws + 1)) {
		free(rf);
		mp_buf_release(&buf);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	raw_file_init(rf);
	rc = raw_parse(rf, buf.data, buf.size, err);
	rf->compressed = buf.was_compressed;
	mp_buf_release(&buf);
	if (rc) {
		free(rf);
		return rc;
	}
	v->raws[v->nraws++] = rf;
	return add_raw(v, path, rf, err);
}
