/*
 * fuzz_raw - the raw profile reader on any bytes.
 *
 * The input is what raw_load() would see: zstd input is decompressed first
 * (bounded, as for a file), then raw_parse() decodes it.  A rejected input
 * must carry a precise message; an accepted one must describe itself
 * consistently, and every array it points to is read in full so that
 * AddressSanitizer sees any pointer that leads outside its allocation.
 * raw_walk(), merge's lean reader, must then agree: the same verdict and
 * message, and when it walks, raw_parse()'s contexts one record each.
 */
#include "fuzz.h"

#include "common/mp_file.h"
#include "raw/raw.h"
#include "../unit/rawcheck.h"

/* The reader keeps contexts, PCs and histograms: a few times the input. */
const size_t fuzz_mem_per_byte = 16;

static void check_file(const struct raw_file *rf, size_t size)
{
	uint64_t end = 0, sink = 0;

	FUZZ_ASSERT(rf->nprofiles >= 1);
	FUZZ_ASSERT(rf->size == size);
	FUZZ_ASSERT(rf->min_version >= RAW_VERSION_MIN &&
		    rf->max_version <= RAW_VERSION_MAX &&
		    rf->min_version <= rf->max_version);
	for (size_t p = 0; p < rf->nprofiles; p++) {
		const struct raw_profile *pr = &rf->profiles[p];

		/* Profiles tile the file exactly, in order. */
		FUZZ_ASSERT(pr->file_offset == end);
		end += pr->total_size;
		FUZZ_ASSERT(pr->layout <= p);
		for (size_t s = 0; s < pr->nsegments; s++) {
			const struct raw_segment *seg = &pr->segments[s];

			FUZZ_ASSERT(seg->start <= seg->end);
			FUZZ_ASSERT(seg->build_id_size <= RAW_BUILD_ID_MAX);
			for (uint32_t k = 0; k < seg->build_id_size; k++)
				sink += seg->build_id[k];
		}
	}
	FUZZ_ASSERT(end == size);
	for (size_t i = 0; i < rf->ncontexts; i++) {
		const struct raw_context *c = &rf->contexts[i];

		FUZZ_ASSERT(c->profile < rf->nprofiles);
		FUZZ_ASSERT(c->npcs == 0 || c->pcs != NULL);
		FUZZ_ASSERT(c->nhist == 0 || c->hist != NULL);
		FUZZ_ASSERT(c->mib.v[MIB_AccessHistogramSize] == c->nhist);
		/* Versions before 4 have no histograms. */
		FUZZ_ASSERT(c->nhist == 0 || rf->max_version >= 4);
		for (uint32_t k = 0; k < c->npcs; k++)
			sink += c->pcs[k];
		for (uint32_t k = 0; k < c->nhist; k++)
			sink += c->hist[k];
	}
	/* Keep the reads. */
	__asm__ volatile("" : : "r"(sink));
}

/* raw_walk()'s records, checked against the contexts as they come. */
struct walk {
	const struct raw_file *parsed;
	size_t n;
};

static enum mp_errcode walk_one(void *arg, const struct raw_record *r,
				struct mp_err *err)
{
	struct walk *w = arg;
	const struct raw_context *c;

	(void)err;
	FUZZ_ASSERT(w->n < w->parsed->ncontexts);
	c = &w->parsed->contexts[w->n++];
	FUZZ_ASSERT(raw_record_is_context(r, c));
	return MP_OK;
}

static void check_walk(const void *data, size_t size, enum mp_errcode parse_rc,
		       const struct mp_err *parse_err, const struct raw_file *rf)
{
	struct raw_file wf;
	struct walk w = { rf, 0 };
	struct mp_err err = { 0 };
	enum mp_errcode rc;
	bool walked;

	raw_file_init(&wf);
	rc = raw_walk(&wf, data, size, walk_one, &w, &walked, &err);
	FUZZ_ASSERT(rc == parse_rc);
	if (rc)
		FUZZ_ASSERT(strcmp(mp_errmsg(&err), mp_errmsg(parse_err)) == 0);
	else if (walked)
		FUZZ_ASSERT(w.n == rf->ncontexts);
	else
		FUZZ_ASSERT(w.n == 0 && rf->nprofiles >= 1);
	raw_file_release(&wf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct raw_file rf;
	struct mp_err err = { 0 };
	struct mp_buf z = { 0 };
	enum mp_errcode rc;

	if (mp_is_zstd(data, size)) {
		rc = mp_zstd_decompress(&z, data, size, &err);
		if (rc) {
			FUZZ_ASSERT_REJECTED(rc, err);
			return 0;
		}
		fuzz_decoded(z.size);
		data = z.data;
		size = z.size;
		FUZZ_ASSERT(z.was_compressed);
	}
	raw_file_init(&rf);
	rc = raw_parse(&rf, data, size, &err);
	if (rc == MP_OK)
		check_file(&rf, size);
	else
		FUZZ_ASSERT_REJECTED(rc, err);
	check_walk(data, size, rc, &err, &rf);
	raw_file_release(&rf);
	mp_buf_release(&z);
	return 0;
}
