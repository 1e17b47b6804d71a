/*
 * fuzz.h - what the fuzz targets and their regression driver share.
 *
 * Each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput().  Linked
 * with libFuzzer (`make fuzz`) it is fuzzed; linked with regression.c
 * (`make check`) it replays every file of tests/fuzz/corpus/<name>/, so an
 * input that once crashed stays fixed (zstd's tests/fuzz layout).
 *
 * A target must never crash, leak or loop on any input; it calls
 * FUZZ_ASSERT() on what must hold for every input (a rejected input has a
 * precise message; what was written reads back), which aborts, so that
 * libFuzzer records the input as a crash.
 *
 * Resources.  Each target states how much heap it may use per byte of
 * input (FUZZ_MEM_PER_BYTE); the regression driver measures the peak of
 * every replay and fails an input that needs more than
 *	FUZZ_MEM_PER_BYTE x (input bytes + decoded bytes) + FUZZ_MEM_SLACK
 * where "decoded bytes" is what a zstd input decompressed to, reported
 * through fuzz_note_decoded() (a weak hook: libFuzzer builds lack it),
 * and a zstd input may add its frame's window, at most
 * MP_ZSTD_WINDOW_MAX (common/mp_file.h).
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_err.h"
#include "indexed/idx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Heap bytes a target may use per input byte; defined by each target. */
extern const size_t fuzz_mem_per_byte;
#define FUZZ_MEM_SLACK ((size_t)4 << 20)

/* Defined by the regression driver only. */
void fuzz_note_decoded(size_t bytes) __attribute__((weak));

static inline void fuzz_decoded(size_t bytes)
{
	if (fuzz_note_decoded)
		fuzz_note_decoded(bytes);
}

#define FUZZ_ASSERT(cond)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: fuzz assertion failed: %s\n", \
				__FILE__, __LINE__, #cond);                \
			abort();                                           \
		}                                                          \
	} while (0)

/*
 * A reader's rejection must say why: the code recorded, and a detail that
 * names the problem (only out-of-memory may fall back to the code's short
 * description), never just "malformed".
 */
#define FUZZ_ASSERT_REJECTED(rc, err)                                      \
	do {                                                               \
		FUZZ_ASSERT((rc) > MP_OK && (rc) < MP_E__COUNT);           \
		FUZZ_ASSERT((err).code == (rc));                           \
		FUZZ_ASSERT((err).detail[0] || (rc) == MP_E_NOMEM);        \
		FUZZ_ASSERT(strcmp(mp_errmsg(&(err)), "malformed") != 0);  \
	} while (0)

/*
 * If DATA is an indexed profile whose header's file size (u64 at offset
 * 16) is not SIZE, or whose checksum (with its flag set) does not hold,
 * set them right and return true: a mutation then reaches the checks
 * behind them, as a hostile writer's bytes would.
 */
static inline int fuzz_fix_idx(unsigned char *data, size_t size)
{
	uint64_t v = size;
	int fixed = 0;

	if (size < 64 || memcmp(data, "\x89MPIDX\r\n", 8) != 0)
		return 0;
	for (int i = 0; i < 8; i++)
		if (data[16 + i] != (unsigned char)(v >> (8 * i))) {
			data[16 + i] = (unsigned char)(v >> (8 * i));
			fixed = 1;
		}
	if (data[28] & 1) {
		uint32_t crc = idx_checksum(data, size);

		for (int i = 0; i < 4; i++)
			if (data[56 + i] != (unsigned char)(crc >> (8 * i))) {
				data[56 + i] = (unsigned char)(crc >> (8 * i));
				fixed = 1;
			}
	}
	return fixed;
}

#endif /* FUZZ_H */
