/*
 * rt_mib.c - Memory Info Blocks: one object's MIB, merging MIBs of one
 * context, the v4 on-disk bytes, and recording an object into its context.
 *
 * The arithmetic is compiler-rt's (MemInfoBlock's constructor and Merge in
 * MemProfData.inc, LLVM 19):
 *	AccessDensity         = accesses * 100 / size
 *	LifetimeAccessDensity = AccessDensity * 1000 / max(lifetime_ms, 1)
 *	NumLifetimeOverlaps  += new.AllocTimestamp < old.DeallocTimestamp
 *	NumSame{Alloc,Dealloc}Cpu += the CPU ids are equal
 * and the Alloc/Dealloc timestamps and CPU ids take the newer object's
 * values.  Two deliberate differences: NumMigratedCpu is summed (compiler-rt
 * keeps the first object's 0 or 1, although the field is a count), and
 * sizes above 4 GB saturate the 32-bit Min/MaxSize instead of wrapping.
 */
#include "rt.h"

#include <string.h>

static inline uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void memprof_rt_mib_one(struct rt_mib *m, uint64_t size, uint64_t accesses,
			uint32_t alloc_ms, uint32_t dealloc_ms,
			uint32_t alloc_cpu, uint32_t dealloc_cpu)
{
	uint32_t life = dealloc_ms >= alloc_ms ? dealloc_ms - alloc_ms : 0;
	/* Mode B has no accesses: skip the two divisions. */
	uint64_t dens = accesses && size ? accesses * 100 / size : 0;
	uint64_t ldens = dens ? dens * 1000 / (life ? life : 1) : 0;

	memset(m, 0, sizeof(*m));
	m->AllocCount = 1;
	m->TotalAccessCount = m->MinAccessCount = m->MaxAccessCount = accesses;
	m->TotalSize = size;
	m->MinSize = m->MaxSize = sat32(size);
	m->AllocTimestamp = alloc_ms;
	m->DeallocTimestamp = dealloc_ms;
	m->TotalLifetime = life;
	m->MinLifetime = m->MaxLifetime = life;
	m->TotalAccessDensity = dens;
	m->MinAccessDensity = m->MaxAccessDensity = sat32(dens);
	m->TotalLifetimeAccessDensity = ldens;
	m->MinLifetimeAccessDensity = m->MaxLifetimeAccessDensity = sat32(ldens);
	m->AllocCpuId = alloc_cpu;
	m->DeallocCpuId = dealloc_cpu;
	m->NumMigratedCpu = alloc_cpu != dealloc_cpu;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void memprof_rt_mib_merge(struct rt_mib *d, const struct rt_mib *m)
{
	d->AllocCount += m->AllocCount;
	d->TotalAccessCount += m->TotalAccessCount;
	d->MinAccessCount = MIN(d->MinAccessCount, m->MinAccessCount);
	d->MaxAccessCount = MAX(d->MaxAccessCount, m->MaxAccessCount);
	d->TotalSize += m->TotalSize;
	d->MinSize = MIN(d->MinSize, m->MinSize);
	d->MaxSize = MAX(d->MaxSize, m->MaxSize);
	d->TotalLifetime += m->TotalLifetime;
	d->MinLifetime = MIN(d->MinLifetime, m->MinLifetime);
	d->MaxLifetime = MAX(d->MaxLifetime, m->MaxLifetime);
	d->TotalAccessDensity += m->TotalAccessDensity;
	d->MinAccessDensity = MIN(d->MinAccessDensity, m->MinAccessDensity);
	d->MaxAccessDensity = MAX(d->MaxAccessDensity, m->MaxAccessDensity);
	d->TotalLifetimeAccessDensity += m->TotalLifetimeAccessDensity;
	d->MinLifetimeAccessDensity =
		MIN(d->MinLifetimeAccessDensity, m->MinLifetimeAccessDensity);
	d->MaxLifetimeAccessDensity =
		MAX(d->MaxLifetimeAccessDensity, m->MaxLifetimeAccessDensity);
	d->NumMigratedCpu += m->NumMigratedCpu;
	d->NumLifetimeOverlaps += m->AllocTimestamp < d->DeallocTimestamp;
	d->AllocTimestamp = m->AllocTimestamp;
	d->DeallocTimestamp = m->DeallocTimestamp;
	d->NumSameAllocCpu += d->AllocCpuId == m->AllocCpuId;
	d->NumSameDeallocCpu += d->DeallocCpuId == m->DeallocCpuId;
	d->AllocCpuId = m->AllocCpuId;
	d->DeallocCpuId = m->DeallocCpuId;
	d->AccessHistogramSize = MAX(d->AccessHistogramSize, m->AccessHistogramSize);
}

void memprof_rt_mib_pack(uint8_t out[RAW_MIB_SIZE_V4], const struct rt_mib *m)
{
	memset(out, 0, RAW_MIB_SIZE_V4);
#define PUT(name, tag, width, off, ver, merge) \
	memprof_rt_put_le(out + (off), (uint64_t)m->name, (width));
	RAW_MIB_FIELDS(PUT)
#undef PUT
	/* RAW_MIB_HIST_PTR_OFFSET: compiler-rt leaves a heap pointer; 0 here. */
}
_Static_assert(RAW_MIB_HIST_PTR_OFFSET + 8 == RAW_MIB_SIZE_V4, "v4 MIB ends with the pointer");

/* Make room for N histogram entries in C (its lock held). */
static int hist_reserve(struct rt_ctx *c, uint32_t n)
{
	uint64_t *nh;
	uint32_t cap = c->hist_cap ? c->hist_cap : 8;

	if (n <= c->hist_cap)
		return 0;
	while (cap < n)
		cap = cap > UINT32_MAX / 2 ? n : cap * 2;
	nh = memprof_rt_ialloc((size_t)cap * sizeof(*nh));
	if (!nh)
		return -1;
	if (c->hist)
		memcpy(nh, c->hist, (size_t)c->hist_cap * sizeof(*nh));
	memprof_rt_ifree(c->hist, (size_t)c->hist_cap * sizeof(*nh));
	c->hist = nh;
	c->hist_cap = cap;
	return 0;
}

void memprof_rt_record(const struct rt_hdr *h, uintptr_t user,
		       uint32_t now_ms, uint32_t cpu)
{
	struct rt_ctx *c = memprof_rt_ctx(RT_STACK(h));
	uint64_t before[RAW_SAMPLE_NFIELDS] = {0}, delta[RAW_SAMPLE_NFIELDS];
	int sampled = (h->stack & RT_SAMPLED) != 0;
	uint64_t size = h->size, acc = 0;
	uint32_t nhist = 0;
	struct rt_mib m;

	if (!c)
		return;
	if (__memprof_shadow_memory_dynamic_address) {
		if (memprof_rt_hist_mode) {
			uint64_t n = (size + RAW_HIST_GRANULE - 1) / RAW_HIST_GRANULE;

			nhist = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		}
		acc = memprof_rt_shadow_count(user, size);
	}
	memprof_rt_mib_one(&m, size, acc, h->alloc_ms, now_ms, h->cpu, cpu);
	m.AccessHistogramSize = nhist;

	memprof_rt_lock(&c->lock);
	if (nhist && hist_reserve(c, nhist) < 0)
		m.AccessHistogramSize = nhist = 0;
	for (uint32_t i = 0; i < nhist; i++)
		c->hist[i] += memprof_rt_hist_counter(user + (uintptr_t)i * RAW_HIST_GRANULE);
	if (c->mib.AllocCount == 0) {
		c->mib = m;
	} else {
		if (sampled)
			memprof_rt_sample_sums(&c->mib, before);
		memprof_rt_mib_merge(&c->mib, &m);
	}
	if (sampled) {
		/* What this object changed, counters of overlaps included,
		 * is what its weight multiplies. */
		const uint64_t *ext = memprof_rt_sample_ext(h);

		memprof_rt_sample_sums(&c->mib, delta);
		for (unsigned k = 0; k < RAW_SAMPLE_NFIELDS; k++)
			delta[k] -= before[k];
		if (memprof_rt_sample_add(c, ext[0], ext[1], size, delta) < 0)
			memprof_rt_log("out of memory: a sampled object counted once");
	}
	memprof_rt_unlock(&c->lock);
}
