/*
 * rt_sample.c - sampled profiling: which allocations are recorded when
 * sample_interval=R is set, and the estimates a sampled object stands for.
 *
 * The model is the one in seeds/randomized-allocation-sampling.txt: every
 * allocated byte is a Bernoulli trial with p = 1/R.  Each thread keeps the
 * number of failed trials before its next success (samp_left), drawn from
 * the geometric distribution by inverse transform, so an allocation of s
 * bytes that is not sampled costs a compare and a subtraction (inline in
 * rt_alloc.c).  When samp_left < s the object is sampled: its byte
 * samp_left is the success, the trials for the rest of the object are not
 * made, and a new distance is drawn.  Discarding trials that way is sound
 * because the decision to discard does not depend on their outcome.
 *
 * A sampled object is recorded like an exact one, plus a weight
 * w = 1/(1 - q^s) in its context's sample entry (one per interval seen):
 * n, u = sum (s - offset), and per estimated field the Horvitz-Thompson
 * sum of w x and its plug-in variance sum (w x)^2 q^s.  A dump writes the
 * estimates into the MIB and the entries into the block described in
 * raw_format.h.
 *
 * The runtime links no libm (a program linked with -lmemprof -pthread must
 * not need -lm), so ln and expm1 are computed here; they run for sampled
 * objects only.
 */
#include "rt.h"

#include <string.h>
#include <sys/random.h>

_Atomic uint64_t memprof_rt_sample_interval;
_Atomic uint32_t memprof_rt_seed_seq;	/* bumped when every thread reseeds */
static uint64_t process_seed;
static _Atomic uint64_t thread_ordinal;
static uint64_t forks;			/* forks by this process (for seeds) */

/* ------------------------------------------------------------ numbers */

static inline uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xoshiro-style quality is not needed; splitmix64 passes BigCrush. */
static inline double uniform(uint64_t *s)
{
	return (double)(splitmix(s) >> 11) * 0x1p-53;	/* [0, 1) */
}

/* ln x for x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
 * ln m = 2 atanh((m - 1)/(m + 1)), whose series converges fast there. */
static double rt_ln(double x)
{
	uint64_t bits;
	int e;
	double m, t, t2, term, sum = 0;

	memcpy(&bits, &x, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof(m));	/* [1, 2) */
	if (m > 1.4142135623730951) {
		m /= 2;
		e++;
	}
	t = (m - 1) / (m + 1);
	t2 = t * t;
	term = t;
	for (int k = 1; k < 40; k += 2) {
		sum += term / k;
		term *= t2;
		if (term < 1e-18 && term > -1e-18)
			break;
	}
	return 2 * sum + e * 0.6931471805599453;
}

/* ln(1 - 1/r) for r >= 2, without the cancellation of ln(1 - small). */
static double ln_q(uint64_t r)
{
	double p = 1.0 / (double)r, sum = 0, pk = p;

	if (r < 16)
		return rt_ln(1 - p);
	for (int k = 1; k < 40 && pk > 1e-20; k++) {
		sum -= pk / k;
		pk *= p;
	}
	return sum;
}

/* e^x - 1 for x <= 0. */
static double rt_expm1(double x)
{
	double term = x, sum = 0;
	int k = 0;

	if (x < -0.5) {
		/* e^x = (e^(x/2^j))^2^j, halving until the series is short. */
		int j = 0;

		while (x < -0.5) {
			x /= 2;
			j++;
		}
		double y = rt_expm1(x) + 1;

		while (j--)
			y *= y;
		return y - 1;
	}
	while (k < 30) {
		sum += term;
		k++;
		term *= x / (k + 1);
		if (term < 1e-20 && term > -1e-20)
			break;
	}
	return sum;
}

/* ------------------------------------------------------------ per thread */

static void seed_thread(struct rt_tls *t)
{
	uint64_t s = process_seed ^
		     (atomic_fetch_add(&thread_ordinal, 1) * 0xd1b54a32d192ed03ull);

	t->rng = splitmix(&s);
	t->samp_seq = atomic_load_explicit(&memprof_rt_seed_seq, memory_order_relaxed);
	t->samp_ival = 0;
}

/* A fresh distance to the next sampled byte, drawn for interval R. */
static void draw(struct rt_tls *t, uint64_t r)
{
	double g;

	if (t->samp_ival != r) {
		t->samp_ival = r;
		t->samp_lnq = r > 1 ? ln_q(r) : 0;
	}
	if (r <= 1) {
		t->samp_left = 0;	/* every byte is a success */
		return;
	}
	g = rt_ln(1 - uniform(&t->rng)) / t->samp_lnq;
	t->samp_left = g < 0x1p62 ? (uint64_t)g : (uint64_t)1 << 62;
}

int memprof_rt_sample_slow(struct rt_tls *t, uint64_t size, uint64_t cur,
			   struct rt_sample_pick *pick)
{
	if (t->samp_seq != atomic_load_explicit(&memprof_rt_seed_seq,
						memory_order_relaxed) || !t->rng)
		seed_thread(t);
	if (t->samp_ival == 0) {
		/* Nothing drawn yet (or just reseeded): start the stream. */
		draw(t, cur);
		if (t->samp_left >= size) {
			t->samp_left -= size;
			return 0;
		}
	}
	/* The countdown that decided was drawn for samp_ival; a new interval
	 * set meanwhile takes over from the next draw. */
	pick->interval = t->samp_ival;
	pick->u = size - t->samp_left;
	draw(t, cur);
	return 1;
}

void memprof_rt_sample_set(uint64_t r)
{
	if (r > RAW_SAMPLE_INTERVAL_MAX)
		r = RAW_SAMPLE_INTERVAL_MAX;
	atomic_store_explicit(&memprof_rt_sample_interval, r, memory_order_relaxed);
}

void memprof_rt_sample_init(int have_seed, uint64_t seed)
{
	if (have_seed) {
		process_seed = seed;
	} else if (getrandom(&process_seed, sizeof(process_seed), GRND_NONBLOCK) !=
		   (ssize_t)sizeof(process_seed)) {
		uint64_t s = (uint64_t)(uintptr_t)&process_seed ^
			     ((uint64_t)memprof_rt_now_ms() << 32);

		process_seed = splitmix(&s);
	}
	atomic_fetch_add(&memprof_rt_seed_seq, 1);
}

void memprof_rt_sample_prefork(void)
{
	forks++;
}

void memprof_rt_sample_child(void)
{
	/*
	 * The child must not repeat the parent's draws.  With sample_seed=N
	 * its seed follows from N and the fork's rank in the parent, so a run
	 * stays reproducible; otherwise it is fresh.
	 */
	uint64_t s = process_seed ^ (forks * 0x8cb92ba72f3d8dd7ull);

	if (memprof_rt_opts.sample_seed_set) {
		process_seed = splitmix(&s);
		atomic_fetch_add(&memprof_rt_seed_seq, 1);
	} else {
		memprof_rt_sample_init(0, 0);
	}
	forks = 0;
	atomic_store(&thread_ordinal, 0);
	/* Drop the parent's countdown too (legal: the decision to drop it
	 * does not depend on what it holds), or the child's first sample
	 * would be the parent's next. */
	memprof_rt_tls.samp_ival = 0;
	memprof_rt_tls.samp_left = 0;
}

/* ------------------------------------------------------------ estimates */

static const uint8_t est_tag[RAW_SAMPLE_NFIELDS] = {
#define TAG(name) RT_TAG_##name,
	RAW_SAMPLE_FIELDS(TAG)
#undef TAG
};

uint8_t memprof_rt_sample_tag(unsigned k)
{
	return est_tag[k];
}

void memprof_rt_sample_sums(const struct rt_mib *m, uint64_t out[RAW_SAMPLE_NFIELDS])
{
	unsigned k = 0;

#define GET(name) out[k++] = m->name;
	RAW_SAMPLE_FIELDS(GET)
#undef GET
}

/* The entry of C for interval R, made if needed (C's lock held). */
static struct rt_samp *entry(struct rt_ctx *c, uint64_t r)
{
	struct rt_samp *ns;
	uint32_t cap;

	for (uint32_t i = 0; i < c->nsamp; i++)
		if (c->samp[i].interval == r)
			return &c->samp[i];
	if (c->nsamp == c->samp_cap) {
		cap = c->samp_cap ? c->samp_cap * 2 : 1;
		ns = memprof_rt_ialloc(cap * sizeof(*ns));
		if (!ns)
			return NULL;
		if (c->samp)
			memcpy(ns, c->samp, c->nsamp * sizeof(*ns));
		memprof_rt_ifree(c->samp, c->samp_cap * sizeof(*ns));
		c->samp = ns;
		c->samp_cap = cap;
	}
	ns = &c->samp[c->nsamp++];
	memset(ns, 0, sizeof(*ns));
	ns->interval = r;
	return ns;
}

int memprof_rt_sample_add(struct rt_ctx *c, uint64_t r, uint64_t u,
			  uint64_t size, const uint64_t delta[RAW_SAMPLE_NFIELDS])
{
	struct rt_samp *e = entry(c, r);
	double qs, w;

	if (!e)
		return -1;
	if (r <= 1) {
		qs = 0;
		w = 1;
	} else {
		double pi = -rt_expm1((double)size * ln_q(r));	/* 1 - q^s */

		qs = 1 - pi;
		w = 1 / pi;
	}
	e->n++;
	e->u += u;
	for (unsigned k = 0; k < RAW_SAMPLE_NFIELDS; k++) {
		double x = w * (double)delta[k];

		e->raw[k] += delta[k];
		e->est[k] += x;
		e->var[k] += x * x * qs;
	}
	return 0;
}

uint64_t memprof_rt_sample_dump_seed(void)
{
	static _Atomic uint64_t dumps;
	uint64_t s = process_seed ^ (atomic_fetch_add(&dumps, 1) * 0x9fb21c651e98df25ull);

	return splitmix(&s);
}

/* V rounded to the nearest integer within [LO, HI]. */
static uint64_t clamp_round(double v, double lo, double hi)
{
	v = v < lo ? lo : v > hi ? hi : v;
	return v >= 0x1p64 ? UINT64_MAX : (uint64_t)(v + 0.5);
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void memprof_rt_sample_apply(struct rt_mib *m, const struct rt_ctx *c,
			     uint64_t *rng)
{
	double x[RAW_SAMPLE_NFIELDS], count, f;
	uint64_t sum[RAW_SAMPLE_NFIELDS], n;
	unsigned k = 0;

	memprof_rt_sample_sums(m, sum);
	for (k = 0; k < RAW_SAMPLE_NFIELDS; k++) {
		x[k] = (double)sum[k];
		for (uint32_t i = 0; i < c->nsamp; i++)
			x[k] += c->samp[i].est[k] - (double)c->samp[i].raw[k];
		if (x[k] < 0)
			x[k] = 0;
	}
	/*
	 * The count is rounded at random, up with the chance of its
	 * fraction, so that the integer is itself unbiased (to nearest, 4.4
	 * objects would always be 4).  The sums are rounded to nearest
	 * within what the count, the mins and the maxes allow: a context of
	 * one size keeps TotalSize = AllocCount x size, as a reader expects.
	 * (Indices are those of RAW_SAMPLE_FIELDS.)
	 */
	count = x[0] < 1 ? 1 : x[0];
	f = count - (double)(uint64_t)count;
	n = (uint64_t)count + (uniform(rng) < f ? 1 : 0);
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	m->AllocCount = (uint32_t)n;
#define TOTAL(total, k, min, max)                                              \
	m->total = clamp_round(x[k], (double)(max) > (double)(min) * n ?      \
			       (double)(max) : (double)(min) * n,             \
			       (double)(max) * n)
	TOTAL(TotalAccessCount, 1, m->MinAccessCount, m->MaxAccessCount);
	TOTAL(TotalSize, 2, m->MinSize, m->MaxSize);
	TOTAL(TotalLifetime, 3, m->MinLifetime, m->MaxLifetime);
	TOTAL(TotalAccessDensity, 8, m->MinAccessDensity, m->MaxAccessDensity);
	TOTAL(TotalLifetimeAccessDensity, 9, m->MinLifetimeAccessDensity,
	      m->MaxLifetimeAccessDensity);
#undef TOTAL
	/* Counts of objects, and of pairs of consecutive objects. */
	m->NumMigratedCpu = sat32(clamp_round(x[4], 0, (double)n));
	m->NumLifetimeOverlaps = sat32(clamp_round(x[5], 0, (double)n - 1));
	m->NumSameAllocCpu = sat32(clamp_round(x[6], 0, (double)n - 1));
	m->NumSameDeallocCpu = sat32(clamp_round(x[7], 0, (double)n - 1));
}
