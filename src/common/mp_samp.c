#include "mp_samp.h"

#include <math.h>
#include <string.h>

const enum mib_field mp_samp_field[MP_SAMP_NFIELDS] = {
#define SAMP_FIELD(name) MIB_##name,
	RAW_SAMPLE_FIELDS(SAMP_FIELD)
#undef SAMP_FIELD
};

int mp_samp_index(enum mib_field f)
{
	for (int k = 0; k < MP_SAMP_NFIELDS; k++)
		if (mp_samp_field[k] == f)
			return k;
	return -1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

#define FIXED_MAX ((mp_fixed)(((unsigned __int128)1 << 127) - 1))

static mp_fixed fixed_add(mp_fixed a, mp_fixed b)
{
	mp_fixed r;

	return __builtin_add_overflow(a, b, &r) ? FIXED_MAX : r;
}

static bool to_fixed(double d, mp_fixed *out)
{
	if (!isfinite(d) || d < 0)
		return false;
	d *= MP_FIXED_ONE;
	/*
	 * 2^126: well inside the type, and a double converts exactly.  From
	 * 2^52 on a double is a whole number, and adding 0.5 would round to
	 * even, turning a value read back into another: no rounding there,
	 * so that reading a file and writing it gives the same bytes.
	 */
	if (d >= 0x1p126)
		*out = FIXED_MAX;
	else
		*out = d >= 0x1p52 ? (mp_fixed)d : (mp_fixed)(d + 0.5);
	return true;
}

bool mp_samp_set(struct mp_samp *s, int k, double est, double var)
{
	mp_fixed e, v;

	if (!to_fixed(est, &e) || !to_fixed(var, &v))
		return false;
	s->est[k] = e;
	s->var[k] = v;
	return true;
}

bool mp_samp_set_fixed(struct mp_samp *s, int k, mp_fixed est, mp_fixed var)
{
	if (est < 0 || var < 0)
		return false;
	s->est[k] = est;
	s->var[k] = var;
	return true;
}

double mp_samp_est(const struct mp_samp *s, int k)
{
	return (double)s->est[k] / MP_FIXED_ONE;
}

double mp_samp_var(const struct mp_samp *s, int k)
{
	return (double)s->var[k] / MP_FIXED_ONE;
}

void mp_samp_add(struct mp_samp *a, const struct mp_samp *b)
{
	a->n = sat_add(a->n, b->n);
	a->u = sat_add(a->u, b->u);
	for (int k = 0; k < MP_SAMP_NFIELDS; k++) {
		a->est[k] = fixed_add(a->est[k], b->est[k]);
		a->var[k] = fixed_add(a->var[k], b->var[k]);
	}
}

void mp_samp_scale(struct mp_samp *a, uint64_t w)
{
	uint64_t r;

	if (w == 1)
		return;
	a->n = __builtin_mul_overflow(a->n, w, &r) ? UINT64_MAX : r;
	a->u = __builtin_mul_overflow(a->u, w, &r) ? UINT64_MAX : r;
	/* W copies of one run: W times the estimate, W times its variance. */
	for (int k = 0; k < MP_SAMP_NFIELDS; k++) {
		mp_fixed x;

		a->est[k] = __builtin_mul_overflow(a->est[k], (mp_fixed)w, &x) ? FIXED_MAX : x;
		a->var[k] = __builtin_mul_overflow(a->var[k], (mp_fixed)w, &x) ? FIXED_MAX : x;
	}
}

bool mp_samp_valid(const struct mp_samp *s)
{
	return s->interval != 0 && s->n != 0;
}

void mp_samp_fold(struct mp_samp *a, uint32_t *na, const struct mp_samp *b,
		  uint32_t nb, uint64_t w)
{
	for (uint32_t j = 0; j < nb; j++) {
		struct mp_samp s = b[j];
		uint32_t i = 0;

		mp_samp_scale(&s, w);
		while (i < *na && a[i].interval < s.interval)
			i++;
		if (i < *na && a[i].interval == s.interval) {
			mp_samp_add(&a[i], &s);
			continue;
		}
		memmove(&a[i + 1], &a[i], (*na - i) * sizeof(*a));
		a[i] = s;
		(*na)++;
	}
}

bool mp_samp_fold_arena(struct mp_arena *arena, struct mp_samp **list,
			uint32_t *n, const struct mp_samp *b, uint32_t nb,
			uint64_t w)
{
	struct mp_samp *l;

	if (!nb)
		return true;
	l = mp_arena_alloc(arena, ((size_t)*n + nb) * sizeof(*l));
	if (!l)
		return false;
	if (*n)
		memcpy(l, *list, *n * sizeof(*l));
	mp_samp_fold(l, n, b, nb, w);
	*list = l;
	return true;
}

uint64_t mp_samp_count(const struct mp_samp *s, uint32_t ns)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < ns; i++)
		n = sat_add(n, s[i].n);
	return n;
}

/* ------------------------------------------------------------ intervals */

/* P(N, x), the regularized lower incomplete gamma function, integer N >= 1:
 * the chance of N or more events of a unit-rate Poisson process by x. */
static double gamma_p(uint64_t n, double x)
{
	double term = 1, sum = 1;

	if (x <= 0)
		return 0;
	/* 1 - e^-x sum_{k<n} x^k/k!, summed in logs for large x. */
	for (uint64_t k = 1; k < n; k++) {
		term *= x / (double)k;
		sum += term;
		if (term < sum * 1e-17 && (double)k > x)
			break;
	}
	return 1 - exp(log(sum) - x);
}

/* The A-quantile of Gamma(N, 1) by bisection (N small: below
 * MP_SAMP_NORMAL_FROM + 1). */
static double gamma_quantile(uint64_t n, double a)
{
	double lo = 0, hi = (double)n + 20 * sqrt((double)n) + 40;

	if (n == 0)
		return 0;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (gamma_p(n, mid) < a)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * The A-quantile of the failures before the N-th success of trials with
 * p = 1/R.  Trials to the N-th success are Gamma(N, R) in the limit of
 * small p (the profiles' R is thousands of bytes and more): failures are
 * that minus the N successes.
 */
static double nb_failures(uint64_t n, uint64_t r, double a)
{
	double f = gamma_quantile(n, a) * (double)r - (double)n;

	return f > 0 ? f : 0;
}

/*
 * Fields that count objects with a property (NumMigratedCpu) or pairs of
 * consecutive objects (the other three): the sampled objects' values
 * say little of them (two sampled objects are rarely consecutive), and
 * none of them may be zero with every object uncertain.  Their interval
 * is what the count's allows: 0 to its upper end (less one for pairs).
 */
static int count_bounded(enum mib_field f)
{
	switch (f) {
	case MIB_NumMigratedCpu:
		return 0;
	case MIB_NumLifetimeOverlaps:
	case MIB_NumSameAllocCpu:
	case MIB_NumSameDeallocCpu:
		return 1;
	default:
		return -1;
	}
}

/*
 * What the sampled objects make sure of, beyond EXACT (the part not
 * sampled): each of the N has at least field F's minimum (the Min field
 * beside a Total one; weights scale N, not minima) and one has its
 * maximum, so F's sum is at least EXACT + N * min and at least max.  One
 * object of 32 KiB sampled at 4 KiB gave a normal interval starting at
 * 31067 bytes.  0 for a field without a minimum.
 */
static double sure_below(const struct mp_mib *m, enum mib_field f, double n,
			 double exact)
{
	enum mib_field min, max;
	double a, b;

	switch (f) {
	case MIB_TotalSize:
		min = MIB_MinSize, max = MIB_MaxSize;
		break;
	case MIB_TotalAccessCount:
		min = MIB_MinAccessCount, max = MIB_MaxAccessCount;
		break;
	case MIB_TotalLifetime:
		min = MIB_MinLifetime, max = MIB_MaxLifetime;
		break;
	case MIB_TotalAccessDensity:
		min = MIB_MinAccessDensity, max = MIB_MaxAccessDensity;
		break;
	case MIB_TotalLifetimeAccessDensity:
		min = MIB_MinLifetimeAccessDensity,
		max = MIB_MaxLifetimeAccessDensity;
		break;
	default:
		return 0;
	}
	a = exact + n * (double)m->v[min];
	b = (double)m->v[max];
	return a > b ? a : b;
}

void mp_samp_ci95(const struct mp_mib *m, const struct mp_samp *s, uint32_t ns,
		  enum mib_field f, double *lo, double *hi)
{
	int k = mp_samp_index(f), kb = mp_samp_index(MIB_TotalSize);
	int kc = mp_samp_index(MIB_AllocCount);
	double v = (double)m->v[f], est = 0, var = 0, seen = 0, exact, cvar = 0;
	double sure;

	*lo = *hi = v;
	if (k < 0 || ns == 0)
		return;
	for (uint32_t i = 0; i < ns; i++) {
		est += mp_samp_est(&s[i], k);
		var += mp_samp_var(&s[i], k);
		cvar += mp_samp_var(&s[i], kc);
	}
	/* Every sampled object certain to be sampled: the values are exact. */
	if (cvar == 0)
		return;
	if (count_bounded(f) >= 0) {
		double clo, chi;

		mp_samp_ci95(m, s, ns, MIB_AllocCount, &clo, &chi);
		*lo = 0;
		*hi = chi - count_bounded(f);
		if (*hi < v)
			*hi = v;
		return;
	}
	/*
	 * What was not sampled is exact: the MIB minus the estimates, when
	 * that is at least one object.  Less is the rounding of estimates
	 * into the MIB's integers (up to about one object), not objects.
	 */
	exact = v - est;
	{
		double cest = 0;

		for (uint32_t i = 0; i < ns; i++)
			cest += mp_samp_est(&s[i], kc);
		if (exact < 0 || (double)m->v[MIB_AllocCount] - cest < 1)
			exact = 0;
	}
	if (f == MIB_AllocCount)
		seen = (double)mp_samp_count(s, ns);
	else if (f == MIB_TotalSize)
		for (uint32_t i = 0; i < ns; i++)
			seen += (double)s[i].u;
	if (var == 0)
		return;
	sure = sure_below(m, f, (double)mp_samp_count(s, ns), exact);
	if (sure < exact + seen)
		sure = exact + seen;
	if (sure > v)
		sure = v;
	if (mp_samp_count(s, ns) >= MP_SAMP_NORMAL_FROM) {
		double sd = sqrt(var);

		*lo = v - 1.96 * sd;
		*hi = v + 1.96 * sd;
		if (*lo < sure)
			*lo = sure;
		return;
	}
	*lo = *hi = exact;
	for (uint32_t i = 0; i < ns; i++) {
		double blo = nb_failures(s[i].n, s[i].interval, 0.025) + (double)s[i].u;
		double bhi = nb_failures(s[i].n, s[i].interval, 0.975) + (double)s[i].u;
		double eb = mp_samp_est(&s[i], kb);
		double ratio = eb > 0 ? mp_samp_est(&s[i], k) / eb : 0;

		*lo += blo * ratio;
		*hi += bhi * ratio;
	}
	/*
	 * The ratio holds for a context of one size.  Where a small object
	 * was sampled beside large ones, its weight (1/p, hundreds) makes
	 * most of the estimate, and the bytes' interval scaled by the mean
	 * says nothing of it; the normal interval does (its sd is about that
	 * weight).  The bytes' own interval needs no such help.
	 */
	if (k != kb) {
		double sd = sqrt(var);

		if (*lo > v - 1.96 * sd)
			*lo = v - 1.96 * sd;
		if (*hi < v + 1.96 * sd)
			*hi = v + 1.96 * sd;
	}
	if (*lo < sure)
		*lo = sure;
	if (*lo > v)
		*lo = v;
	if (*hi < v)
		*hi = v;
}
