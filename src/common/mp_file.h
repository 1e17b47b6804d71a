/*
 * mp_file.h - reading whole input files and writing output files safely.
 *
 * Inputs: mp_file_read() loads a file into memory; a file that starts with
 * the zstd frame magic is decompressed, whatever its name.  Decompression
 * is bounded (MP_FILE_MAX_EXPANSION times the compressed size, and
 * MP_FILE_MAX_SIZE in all) so that a small hostile file cannot make us
 * allocate without limit.
 *
 * A regular file is mapped privately rather than read (no copy); the
 * caller may still write to the buffer, as to one it allocated.
 *
 * Outputs: an output file is written to a temporary file in the same
 * directory and renamed over the target only once complete and flushed to
 * disk (git's lockfile idea).  Until mp_outfile_commit() succeeds, the old
 * file at the target path is untouched; mp_outfile_abort() removes the
 * temporary.  A SIGINT/SIGTERM while an output is open removes the
 * temporary too.
 *
 *	struct mp_outfile of;
 *	if (mp_outfile_open(&of, "out.memprof", &err))
 *		goto out;
 *	... fwrite(buf, 1, n, of.fp) ...
 *	if (mp_outfile_commit(&of, &err))	// flush, fsync, rename
 *		goto out;
 *   out:
 *	mp_outfile_abort(&of);	// no-op after a successful commit
 */
#ifndef MP_FILE_H
#define MP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mp_err.h"

#define MP_FILE_MAX_SIZE ((size_t)1 << 34)	/* 16 GiB */
#define MP_FILE_MAX_EXPANSION 1024

struct mp_buf {
	unsigned char *data;	/* owned; NULL when empty */
	size_t size;
	bool was_compressed;
	bool mapped;		/* data is a private mmap of the file */
};

/* True when DATA starts with the zstd frame magic. */
bool mp_is_zstd(const void *data, size_t size);

/*
 * Load PATH ("-" = standard input) into BUF, decompressing zstd.  On error
 * BUF is left empty.  The caller frees with mp_buf_release().
 */
enum mp_errcode mp_file_read(struct mp_buf *buf, const char *path,
			     struct mp_err *err);

/* Decompress a zstd buffer of SIZE bytes into OUT (bounded as above). */
enum mp_errcode mp_zstd_decompress(struct mp_buf *out, const void *data,
				   size_t size, struct mp_err *err);

/* Compress SIZE bytes at DATA into OUT as one zstd frame at LEVEL. */
enum mp_errcode mp_zstd_compress(struct mp_buf *out, const void *data,
				 size_t size, int level, struct mp_err *err);

void mp_buf_release(struct mp_buf *buf);

struct mp_outfile {
	FILE *fp;		/* write here; NULL when not open */
	char *path;		/* target path */
	char *tmp;		/* temporary path, NULL once committed */
};

enum mp_errcode mp_outfile_open(struct mp_outfile *of, const char *path,
				struct mp_err *err);
/* Flush, fsync and rename into place.  On failure the temporary is removed. */
enum mp_errcode mp_outfile_commit(struct mp_outfile *of, struct mp_err *err);
/* Close and remove the temporary if still open.  Accepts a zeroed struct. */
void mp_outfile_abort(struct mp_outfile *of);

#endif /* MP_FILE_H */
