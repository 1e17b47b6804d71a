/*
 * fuzz_show - what `show`, `overlap` and `diff` load, minus the command
 * line: any bytes that load as a raw, indexed or LLVM profile are put in a
 * view (src/profile) and matched against itself (profile/compare.h),
 * stacks read as the match needs them, which must give an overlap of
 * exactly 1 on every field; then every frame of every context is read.
 *
 * The input goes through the same path as a file given to show: it is
 * written to a memfd and view_add_file() opens "/proc/self/fd/N", so zstd
 * detection and decompression are exercised too.  The file is added twice
 * (two inputs in one view); an indexed file is also loaded through
 * --function with the name of one of its records.  The renderer is not
 * linked here (fuzz targets link no command-line code):
 * tests/cli/test_fuzz_regression.sh runs `memprof-data show --format=json`
 * over this corpus and checks that every document parses.
 */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "profile/compare.h"
#include "profile/view.h"
#include "common/mp_file.h"

/*
 * The view holds every stack as frames of about 100 bytes each, and an
 * indexed file may expand to 16 frames per byte of it (VIEW_FRAMES_PER_BYTE
 * in src/cli/view.c: a trie shares prefixes).
 */
const size_t fuzz_mem_per_byte = 2048;

/* ---- the target ---- */

static int memfd = -1;
static char fd_path[64];

static void setup(void)
{
	if (memfd >= 0)
		return;
	memfd = memfd_create("fuzz_show", MFD_CLOEXEC);
	FUZZ_ASSERT(memfd >= 0);
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", memfd);
}

/* Match the view against itself, no stack expanded before. */
static void check(struct view *v)
{
	static const enum mib_field fields[] = {
		MIB_AllocCount, MIB_TotalSize, MIB_TotalAccessCount,
		MIB_TotalLifetime,
	};
	struct mp_err err = { 0 };
	struct cmp c;

	if (cmp_build(&c, v, v, CMP_MATCH_COLUMN, NULL, &err)) {
		FUZZ_ASSERT(err.code == MP_E_NOMEM);
		return;
	}
	FUZZ_ASSERT(c.contexts[0] == c.contexts[1]);
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		FUZZ_ASSERT(c.total[0][fields[k]] == c.total[1][fields[k]]);
		FUZZ_ASSERT(cmp_overlap(&c, fields[k], -1) == 1.0);
		for (size_t fn = 0; fn < c.nfunctions; fn++)
			FUZZ_ASSERT(cmp_overlap(&c, fields[k], (long)fn) == 1.0);
	}
	cmp_release(&c);
}

/* Read every frame of every context (expanded). */
static void read_frames(const struct view *v)
{
	size_t bytes = 0;

	for (size_t i = 0; i < v->ncontexts; i++)
		for (uint32_t k = 0; k < v->contexts[i].nframes; k++) {
			const struct mp_frame *f = &v->contexts[i].frames[k];

			bytes += f->function ? strlen(f->function) : 0;
			bytes += f->file ? strlen(f->file) : 0;
		}
	FUZZ_ASSERT(bytes < SIZE_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct view v;
	struct mp_err err = { 0 };
	enum mp_errcode rc;
	char function[256] = "";
	unsigned char *fixed = NULL;

	setup();
	/*
	 * An indexed input gets its header's size field and checksum set
	 * right: without that, a mutation that changes the length, or any
	 * byte of a file with a checksum, is rejected at once (fuzz_indexed
	 * tries both ways).
	 */
	if (size >= 24 && memcmp(data, "\x89MPIDX\r\n", 8) == 0) {
		fixed = malloc(size);
		FUZZ_ASSERT(fixed);
		memcpy(fixed, data, size);
		fuzz_fix_idx(fixed, size);
		data = fixed;
	}
	if (mp_is_zstd(data, size)) {
		/* Only to state the decoded size to the regression driver. */
		struct mp_buf z = { 0 };

		if (mp_zstd_decompress(&z, data, size, &err) == MP_OK)
			fuzz_decoded(z.size);
		mp_buf_release(&z);
	}
	FUZZ_ASSERT(ftruncate(memfd, 0) == 0);
	FUZZ_ASSERT(pwrite(memfd, data, size, 0) == (ssize_t)size);
	free(fixed);

	view_init(&v);
	rc = view_add_file(&v, fd_path, NULL, &err);
	if (rc) {
		FUZZ_ASSERT_REJECTED(rc, err);
		view_release(&v);
		return 0;
	}
	FUZZ_ASSERT(view_add_file(&v, fd_path, NULL, &err) == MP_OK);
	FUZZ_ASSERT(v.ninputs == 2);
	FUZZ_ASSERT(v.inputs[0].ncontexts + v.inputs[1].ncontexts == v.ncontexts);
	check(&v);
	rc = view_expand_all(&v, &err);
	if (rc) {
		FUZZ_ASSERT_REJECTED(rc, err);
		view_release(&v);
		return 0;
	}
	read_frames(&v);
	/* An indexed file's first context, found again through the hash table. */
	if (v.inputs[0].idx && v.ncontexts && v.contexts[0].nframes &&
	    v.contexts[0].frames[0].function) {
		const char *name = v.contexts[0].frames[0].function;
		size_t n = strlen(name);

		if (n < sizeof(function))
			memcpy(function, name, n + 1);
	}
	view_release(&v);

	if (function[0]) {
		view_init(&v);
		FUZZ_ASSERT(view_add_file(&v, fd_path, function, &err) == MP_OK);
		FUZZ_ASSERT(v.ncontexts >= 1);
		FUZZ_ASSERT(view_expand_all(&v, &err) == MP_OK);
		check(&v);
		view_release(&v);
	}
	return 0;
}
