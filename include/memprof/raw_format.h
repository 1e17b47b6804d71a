/*
 * raw_format.h - the byte layout of compiler-rt MemProf raw profiles.
 *
 * Facts only, no code: the tool's reader and our runtime's writer both
 * include this file and nothing else from each other.  Everything is
 * little-endian with packed records.  The facts come from LLVM's
 * llvm/include/llvm/ProfileData/MemProfData.inc and compiler-rt's
 * lib/memprof/memprof_rawprofile.cpp (the writer), checked against the
 * profiles clang 14, 16 and 19 write (tests/fixtures/).
 *
 * A file is one or more profiles back to back.  Each profile:
 *	header (48 bytes, offsets relative to the header's first byte)
 *	segment section:  u64 count, count x segment entry
 *	MIB section:      u64 count, count x (u64 stack id, MIB[, histogram])
 *	stack section:    u64 count, count x (u64 stack id, u64 n, n x u64 pc)
 */
#ifndef RAW_FORMAT_H
#define RAW_FORMAT_H

#define RAW_MAGIC 0xff6d70726f667281ULL	/* "\x81rforpm\xff" on disk */
#define RAW_VERSION_MIN 1
#define RAW_VERSION_MAX 5
#define RAW_VERSION_WRITE 4		/* what clang 19's runtime writes */

#define RAW_HEADER_SIZE 48
#define RAW_HDR_MAGIC 0
#define RAW_HDR_VERSION 8
#define RAW_HDR_TOTAL_SIZE 16
#define RAW_HDR_SEGMENT_OFFSET 24
#define RAW_HDR_MIB_OFFSET 32
#define RAW_HDR_STACK_OFFSET 40

#define RAW_BUILD_ID_MAX 32

/* v3+: start, end, offset (load bias), build id size, build id[32]. */
#define RAW_SEGMENT_SIZE_V3 64
/* v1/v2: start, end, offset (file offset), build id[32] (always zero). */
#define RAW_SEGMENT_SIZE_V1 56

/*
 * The fields of the Memory Info Block, in on-disk order.
 * X(name, tag, width in bytes, offset in the MIB, first raw version, merge)
 * The tag is the field's number in the schema of our indexed format.
 * Merge rules (how two MIBs of one context combine):
 *	SUM   add				MIN / MAX  keep the smaller / larger
 *	LAST  the newer MIB's value		KEEP       the first value
 *	OVLP  NumLifetimeOverlaps		SAMEA / SAMED  NumSame*Cpu
 *	HLEN  histogram length: the longer
 */
#define RAW_MIB_FIELDS(X)                                        \
	X(AllocCount, 1, 4, 0, 1, SUM)                           \
	X(TotalAccessCount, 2, 8, 4, 1, SUM)                     \
	X(MinAccessCount, 3, 8, 12, 1, MIN)                      \
	X(MaxAccessCount, 4, 8, 20, 1, MAX)                      \
	X(TotalSize, 5, 8, 28, 1, SUM)                           \
	X(MinSize, 6, 4, 36, 1, MIN)                             \
	X(MaxSize, 7, 4, 40, 1, MAX)                             \
	X(AllocTimestamp, 8, 4, 44, 1, LAST)                     \
	X(DeallocTimestamp, 9, 4, 48, 1, LAST)                   \
	X(TotalLifetime, 10, 8, 52, 1, SUM)                      \
	X(MinLifetime, 11, 4, 60, 1, MIN)                        \
	X(MaxLifetime, 12, 4, 64, 1, MAX)                        \
	X(AllocCpuId, 13, 4, 68, 1, LAST)                        \
	X(DeallocCpuId, 14, 4, 72, 1, LAST)                      \
	X(NumMigratedCpu, 15, 4, 76, 1, SUM)                     \
	X(NumLifetimeOverlaps, 16, 4, 80, 1, OVLP)               \
	X(NumSameAllocCpu, 17, 4, 84, 1, SAMEA)                  \
	X(NumSameDeallocCpu, 18, 4, 88, 1, SAMED)                \
	X(DataTypeId, 19, 8, 92, 2, KEEP)                        \
	X(TotalAccessDensity, 20, 8, 100, 2, SUM)                \
	X(MinAccessDensity, 21, 4, 108, 2, MIN)                  \
	X(MaxAccessDensity, 22, 4, 112, 2, MAX)                  \
	X(TotalLifetimeAccessDensity, 23, 8, 116, 2, SUM)        \
	X(MinLifetimeAccessDensity, 24, 4, 124, 2, MIN)          \
	X(MaxLifetimeAccessDensity, 25, 4, 128, 2, MAX)          \
	X(AccessHistogramSize, 26, 4, 132, 4, HLEN)

/*
 * DataTypeId exists in every version but is garbage in v1 files, hence
 * "first version 2" above: v1 readers leave it zero.  Tag 27 is the
 * histogram pointer the runtime leaves on disk (a stale heap address);
 * it is skipped, and the entries that follow the MIB are the histogram.
 */
#define RAW_MIB_HIST_PTR_OFFSET 136

#define RAW_MIB_SIZE_V1 100
#define RAW_MIB_SIZE_V2 132	/* also v3 */
#define RAW_MIB_SIZE_V4 144	/* also v5 */

/* Histogram entries after a v4 MIB are u64; after a v5 MIB, u16 values
 * encoded as a 12-bit mantissa (bits 0-11) and 4-bit exponent: m << e. */
#define RAW_HIST_ENTRY_SIZE_V4 8
#define RAW_HIST_ENTRY_SIZE_V5 2

/* Each histogram entry counts accesses to 8 bytes of the object. */
#define RAW_HIST_GRANULE 8

/* The instrumented code's shadow: one u64 counter per 64-byte granule. */
#define MEMPROF_SHADOW_SCALE 6
#define MEMPROF_GRANULE (1u << MEMPROF_SHADOW_SCALE)

/*
 * Sampled profiles (libmemprof with sample_interval=R; not compiler-rt).
 *
 * Each allocated byte is sampled with probability p = 1/R; an object of
 * size s is recorded with probability 1 - q^s (q = 1 - p) and then stands
 * for 1/(1 - q^s) objects.  The MIBs of a sampled profile hold those
 * unbiased estimates (rounded), so readers that know nothing of sampling
 * see estimates.  What confidence intervals need sits in a block between
 * the header and the segment section, which the header's offsets skip
 * (llvm-profdata-19 reads such a file):
 *
 *	u64 RAW_SAMPLE_MAGIC
 *	u64 size of the block in bytes, this word and the magic included
 *	u64 the process's sampling interval R at the dump (0: turned off)
 *	u64 K, the number of estimated fields; K x u64 their MIB tags
 *	u64 count of entries; per entry, for one context and one interval:
 *	    u64 stack id (as in the MIB section), u64 R in bytes (>= 1),
 *	    u64 n, the objects sampled, u64 u = sum of (size - offset of the
 *	    sampled byte), K x f64 estimate, K x f64 variance of the estimate
 *
 * Estimate and variance of field x over the sampled objects i (weight
 * w_i = 1/(1 - q^s_i)): sum w_i x_i and sum (w_i x_i)^2 q^s_i.  A context
 * with objects sampled at two intervals has two entries; an object that
 * was not sampled (recorded exactly) is in the MIB only.  The f64s are
 * IEEE 754 binary64, little-endian.
 */
#define RAW_SAMPLE_MAGIC 0x31706d6173706d81ULL	/* "\x81mpsamp1" on disk */
#define RAW_SAMPLE_FIELDS(X) \
	X(AllocCount) X(TotalAccessCount) X(TotalSize) X(TotalLifetime) \
	X(NumMigratedCpu) X(NumLifetimeOverlaps) X(NumSameAllocCpu)     \
	X(NumSameDeallocCpu) X(TotalAccessDensity)                      \
	X(TotalLifetimeAccessDensity)
#define RAW_SAMPLE_NFIELDS 10
/* The largest R the runtime takes: 1 GiB. */
#define RAW_SAMPLE_INTERVAL_MAX (1ULL << 30)

#endif /* RAW_FORMAT_H */
