/*
 * fuzz_roundtrip - raw profile in, indexed profile out, read back.
 *
 * For any input raw_parse() accepts, every context with PCs becomes an
 * unsymbolized stack (function "", offset = PC, as merge writes frames it
 * cannot symbolize), goes through idx_builder_add() and idx_builder_write(),
 * and the bytes must pass idx_open().  What comes back must be what went
 * in, with contexts of equal PC sequences folded into one: the number of
 * contexts, every MIB field (the expected value folded with mib_fold(),
 * which the format promises is order-independent) and every histogram
 * entry.  Building again from the contexts in reverse order must give the
 * same bytes.  Any difference aborts.
 */
#include "fuzz.h"

#include "common/mp_file.h"
#include "indexed/idx.h"
#include "raw/raw.h"

/* Builder, two outputs and the expectation: each a few times the input. */
const size_t fuzz_mem_per_byte = 64;

/* One distinct PC sequence and what its contexts fold to. */
struct group {
	const uint64_t *pcs;
	uint32_t npcs;
	bool seen;		/* read back already */
	bool has_mib;		/* mib holds a context's MIB */
	struct mp_mib mib;
	uint64_t *hist;
	uint32_t nhist;
	uint64_t samples;	/* objects sampled, over its entries */
};

struct expect {
	struct group *g;
	size_t n;
	size_t *slot;		/* open addressing over g, index + 1 */
	size_t cap;
	uint64_t got[2];	/* AllocCount and TotalSize read back */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t pcs_hash(const uint64_t *pcs, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ pcs[i]) * 0x100000001b3ULL;
	return h ^ n;
}

/* The group of PCS, created when absent. */
static struct group *group_of(struct expect *e, const uint64_t *pcs,
			      uint32_t n, bool create)
{
	size_t i = pcs_hash(pcs, n) & (e->cap - 1);

	for (; e->slot[i]; i = (i + 1) & (e->cap - 1)) {
		struct group *g = &e->g[e->slot[i] - 1];

		if (g->npcs == n && memcmp(g->pcs, pcs, (size_t)n * 8) == 0)
			return g;
	}
	if (!create)
		return NULL;
	e->slot[i] = ++e->n;
	e->g[e->n - 1] = (struct group){ .pcs = pcs, .npcs = n };
	return &e->g[e->n - 1];
}

static void expect_add(struct expect *e, const struct raw_context *c)
{
	struct group *g = group_of(e, c->pcs, c->npcs, true);

	/* The builder takes the first MIB as is and folds the rest. */
	if (!g->has_mib)
		g->mib = c->mib;
	else
		mib_fold(&g->mib, &c->mib);
	g->has_mib = true;
	if (c->nhist > g->nhist) {
		g->hist = realloc(g->hist, (size_t)c->nhist * 8);
		FUZZ_ASSERT(g->hist);
		memset(g->hist + g->nhist, 0, (size_t)(c->nhist - g->nhist) * 8);
		g->nhist = c->nhist;
	}
	for (uint32_t k = 0; k < c->nhist; k++)
		g->hist[k] = sat_add(g->hist[k], c->hist[k]);
	g->mib.v[MIB_AccessHistogramSize] = g->nhist;
	g->samples = sat_add(g->samples, mp_samp_count(c->samp, c->nsamp));
}

/* Build, write and return the indexed bytes of RF's contexts. */
static char *build(const struct raw_file *rf, bool reverse, size_t *len)
{
	struct idx_builder b;
	struct mp_frame *fr = NULL;
	size_t afr = 0;
	struct mp_err err = { 0 };
	char *buf = NULL;
	FILE *fp;

	idx_builder_init(&b);
	for (size_t j = 0; j < rf->ncontexts; j++) {
		const struct raw_context *c =
			&rf->contexts[reverse ? rf->ncontexts - 1 - j : j];

		if (c->npcs == 0)
			continue;	/* merge drops these too */
		FUZZ_ASSERT(MP_GROW(fr, afr, c->npcs));
		for (uint32_t k = 0; k < c->npcs; k++)
			fr[k] = (struct mp_frame){ .offset = c->pcs[k] };
		FUZZ_ASSERT(idx_builder_add(&b, fr, c->npcs, &c->mib, c->hist,
					    c->nhist, 1, &err) == MP_OK);
		FUZZ_ASSERT(idx_builder_add_samples(&b, c->samp, c->nsamp, 1,
						    &err) == MP_OK);
	}
	idx_builder_count_inputs(&b, 1);
	fp = open_memstream(&buf, len);
	FUZZ_ASSERT(fp);
	FUZZ_ASSERT(idx_builder_write(&b, fp, &err) == MP_OK);
	FUZZ_ASSERT(fclose(fp) == 0);
	idx_builder_release(&b);
	free(fr);
	return buf;
}

static int check_context(void *arg, const struct idx_file *f,
			 const struct idx_context *c)
{
	struct expect *e = arg;
	uint32_t d = idx_stack_depth(f, c->stack_id);
	uint64_t *pcs = malloc((size_t)d * 8 + 8);
	struct group *g;

	FUZZ_ASSERT(pcs);
	for (uint32_t k = 0, node = c->stack_id; k < d;
	     k++, node = idx_node_parent1(f, node) - 1) {
		struct mp_frame fr;
		struct idx_frame_buf fb;

		idx_stack_frame(f, node, 0, &fr, &fb);
		FUZZ_ASSERT(!mp_frame_symbolized(&fr) && fr.build_id_size == 0);
		pcs[k] = fr.offset;
	}
	g = group_of(e, pcs, d, false);
	FUZZ_ASSERT(g != NULL);		/* a stack that went in */
	FUZZ_ASSERT(!g->seen);		/* and comes back once */
	g->seen = true;
	for (int i = 0; i < MIB__COUNT; i++)
		FUZZ_ASSERT(c->mib.v[i] == g->mib.v[i]);
	FUZZ_ASSERT(c->nhist == g->nhist);
	for (uint32_t k = 0; k < c->nhist; k++)
		FUZZ_ASSERT(c->hist[k] == g->hist[k]);
	/* Sample entries fold with their context (the n of each adds). */
	FUZZ_ASSERT(mp_samp_count(c->samp, c->nsamp) == g->samples);
	e->got[0] = sat_add(e->got[0], c->mib.v[MIB_AllocCount]);
	e->got[1] = sat_add(e->got[1], c->mib.v[MIB_TotalSize]);
	free(pcs);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct raw_file rf;
	struct mp_err err = { 0 };
	struct idx_file f;
	struct expect e = { 0 };
	char *fwd, *rev;
	size_t nfwd, nrev, ncontexts = 0;
	uint64_t sums[2] = { 0 };

	raw_file_init(&rf);
	if (raw_parse(&rf, data, size, &err)) {
		raw_file_release(&rf);
		return 0;
	}
	for (size_t i = 0; i < rf.ncontexts; i++)
		ncontexts += rf.contexts[i].npcs != 0;
	e.cap = 16;
	while (e.cap < 2 * ncontexts + 1)
		e.cap *= 2;
	e.g = calloc(ncontexts + 1, sizeof(*e.g));
	e.slot = calloc(e.cap, sizeof(*e.slot));
	FUZZ_ASSERT(e.g && e.slot);
	for (size_t i = 0; i < rf.ncontexts; i++) {
		const struct raw_context *c = &rf.contexts[i];

		if (c->npcs == 0)
			continue;
		expect_add(&e, c);
		sums[0] = sat_add(sums[0], c->mib.v[MIB_AllocCount]);
		sums[1] = sat_add(sums[1], c->mib.v[MIB_TotalSize]);
	}

	fwd = build(&rf, false, &nfwd);
	rev = build(&rf, true, &nrev);
	FUZZ_ASSERT(nfwd == nrev && memcmp(fwd, rev, nfwd) == 0);
	if (idx_open(&f, fwd, nfwd, &err) != MP_OK) {
		fprintf(stderr, "written file rejected: %s\n", mp_errmsg(&err));
		abort();
	}
	FUZZ_ASSERT(f.ncontexts == e.n);
	FUZZ_ASSERT(f.ninputs == 1);
	FUZZ_ASSERT(idx_foreach_context(&f, check_context, &e) == 0);
	for (size_t i = 0; i < e.n; i++) {
		FUZZ_ASSERT(e.g[i].seen);
		free(e.g[i].hist);
	}
	/* Folding moves counts between contexts, never loses them. */
	FUZZ_ASSERT(e.got[0] == sums[0] && e.got[1] == sums[1]);
	free(e.g);
	free(e.slot);
	free(fwd);
	free(rev);
	raw_file_release(&rf);
	return 0;
}
