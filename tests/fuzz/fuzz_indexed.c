/*
 * fuzz_indexed - the indexed profile reader on any bytes.
 *
 * idx_open() validates the whole file; afterwards nothing is checked again
 * (idx.h), so a file it accepts is walked completely: every context of
 * every record, every frame of every stack (with its file path) walking up
 * with idx_node_parent1() and, for the first frames, by index from the
 * leaf, and the hash-table lookup of the first function names seen plus
 * three that are probably absent.  The input is copied into a buffer of exactly its size
 * so that AddressSanitizer catches a read one byte past the end.
 */
#include "fuzz.h"

#include "indexed/idx.h"

/* The reader points into the input; walking needs scratch only. */
const size_t fuzz_mem_per_byte = 8;

#define MAX_NAMES 16
/* Frames also read by index (idx_stack_frame(id, k): k steps each). */
#define BY_INDEX 32

struct walk {
	const unsigned char *lo, *hi;	/* the input buffer */
	uint64_t contexts, frames, sink;
	char names[MAX_NAMES][64];
	size_t nnames;
	const char *want;		/* idx_find_function: its name */
};

static bool inside(const struct walk *w, const void *p)
{
	return (const unsigned char *)p >= w->lo &&
	       (const unsigned char *)p < w->hi;
}

static int visit(void *arg, const struct idx_file *f,
		 const struct idx_context *c)
{
	struct walk *w = arg;
	uint32_t depth = idx_stack_depth(f, c->stack_id);
	struct idx_frame_buf fb, fb2;
	size_t len;

	w->contexts++;
	FUZZ_ASSERT(c->stack_id < f->trie_size);
	FUZZ_ASSERT(depth >= 1 && depth <= f->ntrie);
	FUZZ_ASSERT(inside(w, c->function));
	len = strlen(c->function);
	FUZZ_ASSERT(inside(w, c->function + len));
	if (w->want)
		FUZZ_ASSERT(strcmp(c->function, w->want) == 0);
	for (uint32_t k = 0; k < c->nhist; k++)
		w->sink += c->hist[k];
	/*
	 * The whole stack, walking up from the leaf (idx_node_parent1());
	 * the first frames also by index from the leaf, which must agree.
	 */
	for (uint32_t k = 0, node = c->stack_id; k < depth; k++) {
		struct mp_frame fr, byk;
		char hex[2 * IDX_BUILD_ID_MAX + 1];
		const char *name;
		uint32_t parent1;

		FUZZ_ASSERT(node < f->trie_size);
		idx_stack_frame(f, node, 0, &fr, &fb);
		if (fr.function) {
			FUZZ_ASSERT(inside(w, fr.function));
			w->sink += strlen(fr.function);
		}
		FUZZ_ASSERT(fr.build_id_size <= IDX_BUILD_ID_MAX);
		FUZZ_ASSERT(!fr.build_id || fr.build_id == fb.build_id);
		if (fr.file) {
			FUZZ_ASSERT(fr.file == fb.path);
			FUZZ_ASSERT(strlen(fb.path) < sizeof(fb.path));
		}
		if (k < BY_INDEX) {
			idx_stack_frame(f, c->stack_id, k, &byk, &fb2);
			FUZZ_ASSERT(byk.function == fr.function &&
				    byk.flags == fr.flags &&
				    byk.offset == fr.offset &&
				    byk.line == fr.line &&
				    byk.build_id_size == fr.build_id_size &&
				    (!fr.file) == (!byk.file) &&
				    (!fr.file || strcmp(fr.file, byk.file) == 0));
		}
		/* The record belongs to its leaf frame's function (for an
		 * unsymbolized leaf, its build id in hex). */
		name = fr.function ? fr.function
				   : mp_frame_build_id_hex(&fr, hex, sizeof(hex));
		if (k == 0)
			FUZZ_ASSERT(strcmp(name, c->function) == 0);
		w->frames++;
		parent1 = idx_node_parent1(f, node);
		/* The walk ends exactly at the depth. */
		FUZZ_ASSERT((parent1 == 0) == (k == depth - 1));
		FUZZ_ASSERT(parent1 <= node);
		node = parent1 - 1;
	}
	/* Records come in name order: a new name differs from the last. */
	if (!w->want && w->nnames < MAX_NAMES && len < sizeof(w->names[0]) &&
	    (!w->nnames || strcmp(w->names[w->nnames - 1], c->function))) {
		memcpy(w->names[w->nnames], c->function, len + 1);
		w->nnames++;
	}
	return 0;
}

static void check(unsigned char *copy, size_t size)
{
	struct walk w = { 0 };
	struct idx_file f;
	struct idx_file_stats st;
	struct mp_err err = { 0 };
	enum mp_errcode rc;

	rc = idx_open(&f, copy, size, &err);
	if (rc) {
		FUZZ_ASSERT_REJECTED(rc, err);
		return;
	}
	w.lo = copy;
	w.hi = copy + size;
	FUZZ_ASSERT(idx_foreach_context(&f, visit, &w) == 0);
	FUZZ_ASSERT(w.contexts == f.ncontexts);
	idx_file_stats(&f, &st);
	FUZZ_ASSERT(st.contexts == f.ncontexts && st.size == size);

	/* Every function a record names is found through the hash table. */
	for (size_t i = 0; i < w.nnames; i++) {
		uint64_t before = w.contexts;

		w.want = w.names[i];
		FUZZ_ASSERT(idx_find_function(&f, w.names[i], visit, &w) == 0);
		FUZZ_ASSERT(w.contexts > before);
	}
	w.want = NULL;
	{
		static const char *const absent[] = { "", "main", "\x01\xff" };

		for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
			int r = idx_find_function(&f, absent[i], visit, &w);

			FUZZ_ASSERT(r == 0 || r == -2);
		}
	}
	__asm__ volatile("" : : "r"(w.sink));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy = malloc(size ? size : 1);

	FUZZ_ASSERT(copy);
	memcpy(copy, data, size);
	check(copy, size);
	/*
	 * The header states the file's size, and in files written since
	 * the checksum its bytes' CRC, so a mutation that inserts or deletes
	 * bytes, or changes any of such a file, is rejected at once.  Try
	 * such an input again with both set right, to reach the checks
	 * behind them.
	 */
	if (fuzz_fix_idx(copy, size))
		check(copy, size);
	free(copy);
	return 0;
}
