#include "report.h"

#include "symbolize/sym.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const sort_names[] = {
	[REPORT_SORT_ALLOCS] = "allocs",
	[REPORT_SORT_BYTES] = "bytes",
	[REPORT_SORT_ACCESSES] = "accesses",
	[REPORT_SORT_LIFETIME] = "lifetime",
};

static const enum mib_field sort_fields[] = {
	[REPORT_SORT_ALLOCS] = MIB_AllocCount,
	[REPORT_SORT_BYTES] = MIB_TotalSize,
	[REPORT_SORT_ACCESSES] = MIB_TotalAccessCount,
	[REPORT_SORT_LIFETIME] = MIB_TotalLifetime,
};

/* The fields the summary totals: the ones a reader asks for first. */
static const enum mib_field summary_fields[] = {
	MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount, MIB_TotalLifetime,
};

bool report_sort_parse(const char *name, enum report_sort *out)
{
	for (size_t i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++) {
		if (strcmp(name, sort_names[i]) == 0) {
			*out = (enum report_sort)i;
			return true;
		}
	}
	return false;
}

enum mib_field report_sort_field(enum report_sort s)
{
	return sort_fields[s];
}


char *report_frame_string(const struct mp_frame *f, struct sym_demangler *dm,
			  size_t *len)
{
	const char *pretty = dm && f->function ? sym_demangled(dm, f->function)
					       : NULL;
	char line[1024], *s;

	/* Formatted on the stack; mp_frame_string() for a longer one. */
	*len = mp_frame_format(f, pretty, line, sizeof(line));
	if (*len >= sizeof(line))
		return mp_frame_string(f, pretty);
	if ((s = malloc(*len + 1)))
		memcpy(s, line, *len + 1);
	return s;
}

static bool emit_frame(struct emit *e, const struct mp_frame *f,
		       struct sym_demangler *dm)
{
	char bid[2 * 255 + 1], line[1024];
	const char *pretty = dm && f->function
			     ? sym_demangled(dm, f->function) : NULL;
	/* The display in LINE, or malloc'ed when longer (a C++ name). */
	size_t n = mp_frame_format(f, pretty, line, sizeof(line));
	char *display = n < sizeof(line) ? line : mp_frame_string(f, pretty);

	if (!display)
		return false;
	emit_row(e, NULL, display);
	if (display != line)
		free(display);
	if (f->flags & MP_FRAME_ADDRESS)
		emit_hex(e, "address", f->address);
	if (mp_frame_symbolized(f)) {
		emit_str(e, "function", f->function);
		if (pretty && pretty != f->function)
			emit_str(e, "demangled", pretty);
		emit_str(e, "file", f->file);
		if (f->flags & MP_FRAME_GUID)
			emit_i64(e, "line", mp_frame_line_offset(f));
		else
			emit_u64(e, "line", f->line);
		emit_u64(e, "column", f->column);
		emit_u64(e, "discriminator", f->discriminator);
		emit_bool(e, "inlined", mp_frame_inlined(f));
	} else if (f->build_id_size || !(f->flags & MP_FRAME_ADDRESS)) {
		/* An indexed frame without a build id: "" and the address. */
		emit_str(e, "build_id", mp_frame_build_id_hex(f, bid, sizeof(bid)));
		emit_hex(e, "offset", f->offset);
	}
	emit_end(e);
	return true;
}

/*
 * FRAMES[0..N-1], all or, past MAX (> 0), the MAX / 2 leaf-side ones
 * (rounded up) and the rest on the root side, with one row in between
 * saying how many were left out.
 */
static bool emit_frames(struct emit *e, const struct mp_frame *frames,
			size_t n, size_t max, struct sym_demangler *dm)
{
	size_t head = n, tail = 0;
	char display[64];

	if (max && n > max) {
		head = (max + 1) / 2;
		tail = max - head;
	}
	emit_list(e, "frames");
	for (size_t k = 0; k < head; k++)
		if (!emit_frame(e, &frames[k], dm))
			return false;
	if (head < n) {
		snprintf(display, sizeof(display), "... %zu frames elided ...",
			 n - head - tail);
		emit_row(e, NULL, display);
		emit_u64(e, "elided", n - head - tail);
		emit_end(e);
	}
	for (size_t k = n - tail; k < n && head < n; k++)
		if (!emit_frame(e, &frames[k], dm))
			return false;
	emit_end(e);
	return true;
}

/*
 * The frame table: each distinct frame of the printed contexts once, in
 * order of first appearance.  Frames are told apart by everything that
 * is printed of them (their strings by address: one symbolizer or one
 * file hands out one pointer per string), so a frame costs one lookup.
 */
struct frame_table {
	struct ht ht;
	const struct mp_frame **f;	/* the distinct frames */
	size_t n, alloc;
	uint32_t *idx;			/* every printed frame's index */
	size_t nidx, aidx;
};

static uint64_t frame_hash(const struct mp_frame *f)
{
	uint64_t h = mp_hash64((uint64_t)(uintptr_t)f->function ^
			       (uint64_t)(uintptr_t)f->file * 31);

	h = mp_hash64(h ^ f->line ^ (uint64_t)f->column << 32);
	h = mp_hash64(h ^ f->discriminator ^ (uint64_t)f->flags << 32);
	h = mp_hash64(h ^ f->address ^ f->offset * 7);
	if (f->build_id_size)
		h ^= mp_hash_bytes(f->build_id, f->build_id_size, 5);
	return h;
}

static bool same_frame(const void *key, uint32_t id, const void *arg)
{
	const struct mp_frame *a = key, *b = ((const struct frame_table *)arg)->f[id];

	return a->function == b->function && a->file == b->file &&
	       a->line == b->line && a->column == b->column &&
	       a->discriminator == b->discriminator &&
	       mp_frame_inlined(a) == mp_frame_inlined(b) &&
	       (a->flags & MP_FRAME_ADDRESS) == (b->flags & MP_FRAME_ADDRESS) &&
	       a->address == b->address && a->offset == b->offset &&
	       a->build_id_size == b->build_id_size &&
	       (!a->build_id_size ||
		memcmp(a->build_id, b->build_id, a->build_id_size) == 0);
}

static bool table_add(struct frame_table *t, const struct mp_frame *f)
{
	uint64_t h = frame_hash(f);
	uint32_t id = ht_find(&t->ht, h, same_frame, f, t);

	if (id == HT_NONE) {
		if (t->n >= UINT32_MAX - 1 || !MP_GROW(t->f, t->alloc, t->n + 1) ||
		    ht_insert(&t->ht, h, (uint32_t)t->n))
			return false;
		t->f[t->n] = f;
		id = (uint32_t)t->n++;
	}
	if (!MP_GROW(t->idx, t->aidx, t->nidx + 1))
		return false;
	t->idx[t->nidx++] = id;
	return true;
}

static void table_release(struct frame_table *t)
{
	ht_release(&t->ht);
	free(t->f);
	free(t->idx);
}

/* The frames of C that emit_frames() would print: [0, head), [n - tail, n). */
static void printed(const struct view_context *c, size_t max, size_t *head,
		    size_t *tail)
{
	*head = c->nframes;
	*tail = 0;
	if (max && c->nframes > max) {
		*head = (max + 1) / 2;
		*tail = max - *head;
	}
}

/* M's fields that MASK has (view_input's mib_mask): an LLVM file's
 * schema, not zeros for what it does not keep. */
static void emit_mib(struct emit *e, const struct mp_mib *m, uint64_t mask)
{
	emit_object(e, "mib");
	for (int i = 0; i < MIB__COUNT; i++)
		if (mask >> i & 1)
			emit_u64(e, mib_fields[i].name, m->v[i]);
	emit_end(e);
}

/* The fields every input of V has. */
static uint64_t common_fields(const struct view *v)
{
	uint64_t mask = ~(uint64_t)0;

	for (size_t i = 0; i < v->ninputs; i++)
		mask &= v->inputs[i].mib_mask;
	return mask;
}

/*
 * A sampled MIB's estimated fields, each with its 95 % interval and the
 * number of samples behind it (mp_samp_ci95): "estimates", a key per
 * field, only for sampled contexts (and the summary of sampled inputs).
 */
static void emit_estimates(struct emit *e, const struct mp_mib *m,
			   const struct mp_samp *s, uint32_t ns,
			   const enum mib_field *fields, size_t nfields)
{
	uint64_t n = mp_samp_count(s, ns);
	char display[160];

	emit_object(e, "estimates");
	for (size_t k = 0; k < nfields; k++) {
		enum mib_field f = fields[k];
		double lo, hi;

		mp_samp_ci95(m, s, ns, f, &lo, &hi);
		snprintf(display, sizeof(display), "%" PRIu64 " (95%% CI %.0f"
			 "..%.0f, %" PRIu64 " sample%s)", m->v[f], lo, hi, n,
			 n == 1 ? "" : "s");
		emit_row(e, mib_fields[f].name, display);
		emit_u64(e, "estimate", m->v[f]);
		emit_vector(e, "ci95");
		emit_f64(e, NULL, lo, 0);
		emit_f64(e, NULL, hi, 0);
		emit_end(e);
		emit_u64(e, "samples", n);
		emit_end(e);
	}
	emit_end(e);
}

static void emit_inputs(struct emit *e, const struct view *v)
{
	char display[4200];

	emit_list(e, "inputs");
	for (size_t i = 0; i < v->ninputs; i++) {
		const struct view_input *in = &v->inputs[i];
		char samp[96] = "";

		if (in->nsampled && in->sample_interval)
			snprintf(samp, sizeof(samp), ", sampled (1 byte in %"
				 PRIu64 "; %zu contexts estimated)",
				 in->sample_interval, in->nsampled);
		else if (in->nsampled)
			snprintf(samp, sizeof(samp), ", sampled (%zu contexts "
				 "estimated)", in->nsampled);
		snprintf(display, sizeof(display),
			 "%s: %s v%u%s, %u profile%s, %zu context%s%s", in->path,
			 in->kind, in->version, in->compressed ? " (zstd)" : "",
			 in->nprofiles, in->nprofiles == 1 ? "" : "s",
			 in->ncontexts, in->ncontexts == 1 ? "" : "s", samp);
		if (in->deepest) {
			size_t at = strlen(display);

			snprintf(display + at, sizeof(display) - at, ", deepest "
				 "stack %" PRIu32 " address%s (%zu context%s)",
				 in->deepest, in->deepest == 1 ? "" : "es",
				 in->at_deepest, in->at_deepest == 1 ? "" : "s");
		}
		if (in->idx && in->idx->classes) {
			const struct mib_thresholds *t = &in->idx->thresholds;
			size_t at = strlen(display);

			snprintf(display + at, sizeof(display) - at, ", types kept "
				 "apart (--keep-types: cold density %g, cold "
				 "lifetime %g s, hot density %g)",
				 (double)t->cold_density, (double)t->cold_lifetime,
				 (double)t->hot_density);
		}
		if (in->mib_mask != VIEW_ALL_MIB) {
			size_t at = strlen(display);
			const char *sep = ", MIB fields: ";

			for (int f = 0; f < MIB__COUNT && at < sizeof(display); f++)
				if (in->mib_mask >> f & 1) {
					at += (size_t)snprintf(display + at,
							       sizeof(display) - at,
							       "%s%s", sep,
							       mib_fields[f].name);
					sep = " ";
				}
		}
		emit_row(e, NULL, display);
		emit_str(e, "path", in->path);
		emit_str(e, "kind", in->kind);
		emit_u64(e, "version", in->version);
		emit_u64(e, "profiles", in->nprofiles);
		emit_bool(e, "compressed", in->compressed);
		emit_bool(e, "sampled", in->nsampled != 0);
		if (in->deepest) {
			emit_u64(e, "deepest_stack", in->deepest);
			emit_u64(e, "deepest_stack_contexts", in->at_deepest);
		}
		if (in->nsampled) {
			emit_u64(e, "sampled_contexts", in->nsampled);
			emit_u64(e, "sample_interval", in->sample_interval);
		}
		if (in->idx && in->idx->classes) {
			emit_object(e, "classes");
			emit_f64(e, "cold_density", in->idx->thresholds.cold_density, 6);
			emit_f64(e, "cold_lifetime_s",
				 in->idx->thresholds.cold_lifetime, 3);
			emit_f64(e, "hot_density", in->idx->thresholds.hot_density, 6);
			emit_end(e);
		}
		if (in->mib_mask != VIEW_ALL_MIB) {
			emit_vector(e, "mib_fields");
			for (int f = 0; f < MIB__COUNT; f++)
				if (in->mib_mask >> f & 1)
					emit_str(e, NULL, mib_fields[f].name);
			emit_end(e);
		}
		emit_end(e);
	}
	emit_end(e);
}

static void emit_segments(struct emit *e, const struct view *v)
{
	char bid[2 * RAW_BUILD_ID_MAX + 1], display[256];

	emit_list(e, "segments");
	for (size_t i = 0; i < v->nsegments; i++) {
		const struct raw_segment *s = v->segments[i].seg;

		mp_hex(s->build_id, s->build_id_size, bid, sizeof(bid));
		snprintf(display, sizeof(display),
			 "0x%" PRIx64 "-0x%" PRIx64 " offset 0x%" PRIx64 " %s",
			 s->start, s->end, s->offset,
			 s->build_id_size ? bid : "(no build id)");
		emit_row(e, NULL, display);
		emit_str(e, "build_id", bid);
		emit_hex(e, "start", s->start);
		emit_hex(e, "end", s->end);
		emit_hex(e, "offset", s->offset);
		emit_u64(e, "input", v->segments[i].input);
		emit_u64(e, "profile", v->segments[i].profile);
		emit_end(e);
	}
	emit_end(e);
}

/* The summary: V's totals over every context added (view.h). */
static void emit_summary(struct emit *e, const struct view *v)
{
	size_t nf = sizeof(summary_fields) / sizeof(summary_fields[0]);
	uint64_t mask = common_fields(v);

	emit_object(e, "summary");
	emit_u64(e, "contexts", v->nall);
	/* A total is shown where every input has the field. */
	for (size_t f = 0; f < nf; f++)
		if (mask >> summary_fields[f] & 1)
			emit_u64(e, mib_fields[summary_fields[f]].name,
				 v->sums.v[summary_fields[f]]);
	emit_bool(e, "sampled", v->nsamp != 0);
	/*
	 * Over a whole profile only the bytes have an interval: objects much
	 * smaller than the sampling interval can go unseen altogether, and
	 * no interval drawn from the samples bounds their count, accesses or
	 * lifetimes; the bytes are a Bernoulli draw per byte whatever the
	 * sizes (the seed's interval).
	 */
	if (v->nsamp) {
		static const enum mib_field bytes[] = { MIB_TotalSize };

		emit_estimates(e, &v->sums, v->samp, v->nsamp, bytes, 1);
	}
	emit_end(e);
}

/* The plural ending ENDING unless N is 1. */
static const char *plural(uint64_t n, const char *ending)
{
	return n == 1 ? "" : ending;
}

static void emit_symbolization(struct emit *e, const struct sym_ctx *sym,
			       const struct sym_stack_stats *st)
{
	struct sym_module_info mi;
	char bid[2 * RAW_BUILD_ID_MAX + 1], display[4300];

	int n = snprintf(display, sizeof(display),
			 "%" PRIu64 " of %" PRIu64 " frame%s symbolized; %" PRIu64
			 " allocator frame%s dropped; %" PRIu64 " context%s all "
			 "allocator; %" PRIu64 " stack%s cut at a PC in no segment; %"
			 PRIu64 " return address%s in the runtime's code dropped "
			 "past the first frame",
			 st->symbolized, st->frames, plural(st->frames, "s"),
			 st->runtime_dropped, plural(st->runtime_dropped, "s"),
			 st->all_runtime, plural(st->all_runtime, "s"),
			 st->cut, plural(st->cut, "s"),
			 st->stale, plural(st->stale, "es"));

	if (st->unmapped_code && n > 0 && (size_t)n < sizeof(display))
		snprintf(display + n, sizeof(display) - (size_t)n, "; %" PRIu64
			 " stack%s through code unmapped before the profile was "
			 "written, kept", st->unmapped_code,
			 plural(st->unmapped_code, "s"));
	emit_object(e, "symbolization");
	emit_row(e, "frames", display);
	emit_u64(e, "total", st->frames);
	emit_u64(e, "symbolized", st->symbolized);
	emit_u64(e, "runtime_dropped", st->runtime_dropped);
	emit_u64(e, "all_runtime_contexts", st->all_runtime);
	emit_u64(e, "stacks_cut", st->cut);
	emit_u64(e, "stacks_through_unmapped_code", st->unmapped_code);
	emit_u64(e, "stale_runtime_dropped", st->stale);
	emit_end(e);
	emit_list(e, "modules");
	for (int32_t m = 0; sym_module_info(sym, m, &mi); m++) {
		mp_hex(mi.build_id, mi.build_id_size, bid, sizeof(bid));
		snprintf(display, sizeof(display),
			 "%s: %" PRIu64 " of %" PRIu64 " addresses with a source "
			 "line, %" PRIu64 " with a symbol only%s", mi.path,
			 mi.with_line, mi.addrs, mi.symtab_only,
			 mi.has_dwarf || !mi.addrs ? "" : " (no DWARF)");
		emit_row(e, NULL, display);
		emit_str(e, "path", mi.path);
		emit_str(e, "build_id", bid);
		emit_u64(e, "addresses", mi.addrs);
		emit_u64(e, "with_line", mi.with_line);
		emit_u64(e, "symbol_only", mi.symtab_only);
		emit_bool(e, "dwarf", mi.has_dwarf);
		emit_end(e);
	}
	emit_end(e);
	emit_end(e);
}

static void emit_stats(struct emit *e, const struct view *v)
{
	emit_list(e, "stats");
	for (size_t i = 0; i < v->ninputs; i++) {
		struct idx_file_stats st;

		if (!v->inputs[i].idx)
			continue;
		idx_file_stats(v->inputs[i].idx, &st);
		emit_object(e, NULL);
		emit_str(e, "path", v->inputs[i].path);
		emit_u64(e, "bytes", st.size);
		if (st.checksum) {
			char crc[9];

			snprintf(crc, sizeof(crc), "%08" PRIx32, st.crc);
			emit_str(e, "checksum", crc);
		} else {
			emit_str(e, "checksum", NULL);	/* before checksums */
		}
		emit_u64(e, "inputs_merged", st.inputs);
		emit_u64(e, "contexts", st.contexts);
		emit_u64(e, "functions", st.functions);
		emit_u64(e, "hash_buckets", st.buckets);
		emit_u64(e, "strings", st.strings);
		emit_u64(e, "path_nodes", st.paths);
		emit_u64(e, "stack_entries", st.frames);
		emit_u64(e, "trie_nodes", st.trie_nodes);
		emit_f64(e, "bytes_per_context",
			 st.contexts ? (double)st.size / (double)st.contexts : 0, 1);
		emit_object(e, "section_bytes");
		/* Section 9, the classes' thresholds, only where there is one. */
		for (int s = 1; s < 10; s++)
			if (s < 9 || st.section_size[s])
				emit_u64(e, idx_section_names[s],
					 st.section_size[s]);
		emit_end(e);
		emit_end(e);
	}
	emit_end(e);
}

enum mp_errcode report_show(struct emit *e, struct view *v,
			    const struct report_show_opts *opts,
			    struct mp_err *err)
{
	struct view_context **order;
	struct view_scratch scratch = { 0 };
	struct frame_table table = { 0 };
	enum mp_errcode rc = MP_OK;
	size_t n = v->ncontexts, used = 0;
	enum mib_field key;

	key = report_sort_field(opts->sort);
	order = view_rank(v, key, opts->top, &n);
	if (!order)
		return mp_fail(err, MP_E_NOMEM, NULL);
	/*
	 * The frame table needs the printed stacks before anything is
	 * printed, so they are expanded first (an input that cannot be
	 * expanded leaves an error document alone).  Otherwise each stack
	 * is expanded into a scratch as it is printed, and dropped: one pass
	 * cannot pass an input's expansion cap (idx_open() refused a file
	 * whose stacks, all expanded, would), so only memory can fail then.
	 */
	for (size_t i = 0; i < n && !rc && opts->frame_table; i++)
		rc = view_frames(v, order[i], err);
	if (rc) {
		free(order);
		return rc;
	}
	if (opts->frame_table) {
		for (size_t i = 0; i < n && !rc; i++) {
			size_t head, tail;

			printed(order[i], opts->max_frames, &head, &tail);
			for (size_t k = 0; k < order[i]->nframes && !rc; k++)
				if ((k < head || k >= order[i]->nframes - tail) &&
				    !table_add(&table, &order[i]->frames[k]))
					rc = mp_fail(err, MP_E_NOMEM, NULL);
		}
		if (rc) {
			table_release(&table);
			free(order);
			return rc;
		}
	}
	emit_object(e, NULL);
	emit_str(e, "schema", "memprof-data/show/2");
	emit_inputs(e, v);
	emit_segments(e, v);
	emit_summary(e, v);
	if (opts->sym && opts->sym_stats)
		emit_symbolization(e, opts->sym, opts->sym_stats);
	if (opts->stats)
		emit_stats(e, v);
	if (opts->frame_table) {
		emit_list(e, "frame_table");
		for (size_t i = 0; i < table.n && !rc; i++)
			if (!emit_frame(e, table.f[i], opts->demangler))
				rc = mp_fail(err, MP_E_NOMEM, NULL);
		emit_end(e);
	}
	emit_list(e, "contexts");
	for (size_t i = 0; i < n; i++) {
		struct view_context *c = order[i];
		const struct mp_frame *frames;
		const uint32_t *entries;
		uint32_t nframes;

		emit_object(e, NULL);
		emit_u64(e, "id", c->id);
		emit_u64(e, "input", c->input);
		emit_u64(e, "profile", c->profile);
		if (opts->frame_table) {
			size_t head, tail;

			printed(c, opts->max_frames, &head, &tail);
			emit_vector(e, "frames");
			for (size_t k = 0; k < head + tail; k++)
				emit_u64(e, NULL, table.idx[used++]);
			emit_end(e);
			if (head + tail < c->nframes)
				emit_u64(e, "frames_elided", c->nframes - head - tail);
		} else if ((rc = view_frames_scratch(v, c, &scratch, &frames,
						     &entries, &nframes, err))) {
			break;
		} else if (!emit_frames(e, frames, nframes, opts->max_frames,
					opts->demangler)) {
			rc = mp_fail(err, MP_E_NOMEM, NULL);
			break;
		}
		emit_mib(e, &c->mib, v->inputs[c->input].mib_mask);
		if (c->nsamp)
			emit_estimates(e, &c->mib, c->samp, c->nsamp,
				       mp_samp_field, MP_SAMP_NFIELDS);
		emit_vector(e, "histogram");
		for (uint32_t k = 0; k < c->nhist; k++)
			emit_u64(e, NULL, c->hist[k]);
		emit_end(e);
		emit_end(e);
	}
	free(order);
	table_release(&table);
	view_scratch_release(&scratch);
	if (rc)
		return rc;
	emit_end(e);
	if (opts->demangler)
		emit_u64(e, "demangle_failures", opts->demangler->failed);
	emit_end(e);
	return MP_OK;
}
