/*
 * rawbuild.h - build synthetic raw profiles in tests, byte by byte, with
 * the layout of include/memprof/raw_format.h, for cases real producers do not
 * write on demand (duplicate stack ids, v5 histograms, hostile counts).
 *
 *	struct rb b;
 *	rb_begin(&b, 4);
 *	rb_segment(&b, 0x1000, 0x2000, 0x0, "\x12\x34", 2);
 *	rb_mibs(&b, 1);
 *	rb_mib(&b, 7, &mib, NULL, 0);
 *	rb_stacks(&b, 1);
 *	rb_stack(&b, 7, pcs, 3);
 *	rb_end(&b);		// patches the header; b.data, b.size
 */
#ifndef RAWBUILD_H
#define RAWBUILD_H

#include <stdlib.h>
#include <string.h>

#include "common/mp_mib.h"
#include "common/mp_util.h"
#include "memprof/raw_format.h"

struct rb {
	unsigned char *data;
	size_t size, alloc;
	size_t start;		/* the current profile's header */
	unsigned version;
	size_t nseg_at;		/* where the segment count goes */
	unsigned nseg;
};

static inline unsigned char *rb_put(struct rb *b, size_t n)
{
	while (b->size + n > b->alloc) {
		b->alloc = b->alloc ? b->alloc * 2 : 4096;
		b->data = realloc(b->data, b->alloc);
	}
	memset(b->data + b->size, 0, n);
	b->size += n;
	return b->data + b->size - n;
}

static inline void rb_u64(struct rb *b, uint64_t v)
{
	mp_put_le64(rb_put(b, 8), v);
}

static inline void rb_begin(struct rb *b, unsigned version)
{
	b->start = b->size;
	b->version = version;
	rb_put(b, RAW_HEADER_SIZE);
	mp_put_le64(b->data + b->start, RAW_MAGIC);
	mp_put_le64(b->data + b->start + 8, version);
	mp_put_le64(b->data + b->start + RAW_HDR_SEGMENT_OFFSET,
		    RAW_HEADER_SIZE);
	b->nseg_at = b->size;
	b->nseg = 0;
	rb_u64(b, 0);
}

static inline void rb_segment(struct rb *b, uint64_t start, uint64_t end,
			      uint64_t offset, const void *id, size_t idlen)
{
	rb_u64(b, start);
	rb_u64(b, end);
	rb_u64(b, offset);
	if (b->version >= 3)
		rb_u64(b, idlen);
	memcpy(rb_put(b, RAW_BUILD_ID_MAX), id, idlen);
	mp_put_le64(b->data + b->nseg_at, ++b->nseg);
}

static inline void rb_mibs(struct rb *b, uint64_t count)
{
	mp_put_le64(b->data + b->start + RAW_HDR_MIB_OFFSET, b->size - b->start);
	rb_u64(b, count);
}

static inline void rb_mib(struct rb *b, uint64_t stack_id,
			  const struct mp_mib *m, const uint64_t *hist,
			  uint32_t nhist)
{
	size_t size = b->version >= 4 ? RAW_MIB_SIZE_V4
		    : b->version >= 2 ? RAW_MIB_SIZE_V2 : RAW_MIB_SIZE_V1;
	unsigned char *p;

	rb_u64(b, stack_id);
	p = rb_put(b, size);
	for (int f = 0; f < MIB__COUNT; f++) {
		uint64_t v = m->v[f];

		if (mib_fields[f].offset + mib_fields[f].width > size)
			continue;
		if (f == MIB_AccessHistogramSize)
			v = nhist;
		if (mib_fields[f].width == 8)
			mp_put_le64(p + mib_fields[f].offset, v);
		else
			mp_put_le32(p + mib_fields[f].offset, (uint32_t)v);
	}
	for (uint32_t i = 0; i < nhist; i++) {
		if (b->version >= 5) {
			unsigned char *q = rb_put(b, 2);

			q[0] = (unsigned char)(hist[i] & 0xff);
			q[1] = (unsigned char)(hist[i] >> 8);
		} else {
			rb_u64(b, hist[i]);
		}
	}
}

static inline void rb_stacks(struct rb *b, uint64_t count)
{
	/* The MIB section ends padded to 8, as the runtime writes it. */
	while ((b->size - b->start) % 8)
		rb_put(b, 1);
	mp_put_le64(b->data + b->start + RAW_HDR_STACK_OFFSET,
		    b->size - b->start);
	rb_u64(b, count);
}

static inline void rb_stack(struct rb *b, uint64_t id, const uint64_t *pcs,
			    uint64_t n)
{
	rb_u64(b, id);
	rb_u64(b, n);
	for (uint64_t i = 0; i < n; i++)
		rb_u64(b, pcs[i]);
}

static inline void rb_end(struct rb *b)
{
	mp_put_le64(b->data + b->start + RAW_HDR_TOTAL_SIZE,
		    b->size - b->start);
}

static inline void rb_free(struct rb *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

#endif /* RAWBUILD_H */
