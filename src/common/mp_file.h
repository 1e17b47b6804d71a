/*
 * mp_file.h - reading whole input files and writing output files safely.
 *
 * Inputs: mp_file_read() loads a file, a pipe or standard input into
 * memory with read() (a mapping would die of SIGBUS if the file shrank
 * under us); content that starts with the zstd frame magic is decompressed
 * as it is read, whatever the file's name, the compressed bytes never all
 * in memory.  The content (after decompression) is capped at
 * mp_read_opts.max_size, MP_FILE_MAX_DEFAULT unless raised, and its first
 * bytes are shown to the caller's KNOWN check as soon as they arrive, so
 * that neither /dev/zero nor a zstd bomb of zeros is read to the end.
 * Memory: the content, plus 64 KiB and zstd's window while decompressing.
 *
 * Outputs: an output file is written to a temporary file in the same
 * directory and renamed over the target only once complete and flushed to
 * disk (git's lockfile idea), then the directory is synced.  Until
 * mp_outfile_commit() succeeds, the old file at the target path is
 * untouched; mp_outfile_abort() removes the temporary.  A SIGINT, SIGTERM
 * or SIGHUP while an output is open removes the temporary too (one the
 * process ignores, as under nohup, stays ignored); SIGXFSZ is ignored, so
 * that `ulimit -f` fails the write instead of killing the process.
 *
 * What is replaced: a symbolic link at the path is followed, and the file
 * it names replaced (the link stays); the replaced file's mode is kept,
 * and its owner and group when we may set them (as root).  A device, FIFO
 * or socket (/dev/null, /dev/stdout, a pipe) is written in place, never
 * replaced, whatever name leads to it; so is standard output, named "-".
 * A directory is an error.  The temporary has a short fixed
 * name (".memprof-data-XXXXXX"), so any valid target name works.
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
#include <stdint.h>
#include <stdio.h>

#include "mp_err.h"

#define MP_FILE_MAX_SIZE ((size_t)1 << 40)	/* what max_size may be raised to */
#define MP_FILE_MAX_DEFAULT ((uint64_t)1 << 30)	/* 1 GiB */
/* mp_zstd_decompress() of a buffer in memory: at most 1024 times it. */
#define MP_FILE_MAX_EXPANSION 1024

struct mp_read_opts {
	uint64_t max_size;	/* the content's cap; 0: MP_FILE_MAX_DEFAULT */
	/*
	 * May content starting with the N bytes at HEAD (N >= 16, or the
	 * whole content when shorter) be read on?  NULL: anything may.
	 * False fails the read with MP_E_BAD_MAGIC.
	 */
	bool (*known)(const void *head, size_t n);
	/*
	 * The largest content a reread buffer is expected to hold (0: not
	 * known).  A buffer too small for a file grows to at least this at
	 * once: a run of ever larger files then takes fresh memory (a page
	 * fault and the kernel's zeroing per page) once, not once per new
	 * largest file.  Only a hint: larger files still fit.
	 */
	uint64_t expect;
};

struct mp_buf {
	unsigned char *data;	/* owned; NULL when empty */
	size_t size;
	bool was_compressed;
	size_t alloc;		/* bytes at DATA, for mp_file_reread() */
};

/*
 * Read exactly SIZE bytes from FD into BUF, retrying on EINTR: false on
 * an error or an end of file before them (errno tells which).
 */
bool mp_read_full(int fd, void *buf, size_t size);

/*
 * The largest zstd window read (8 MiB: what `zstd -19` writes; `--long`
 * and `--ultra` write larger): the decoder allocates a frame's window
 * before its content, so this bounds what any zstd input costs beyond
 * its decoded bytes.
 */
#define MP_ZSTD_WINDOW_LOG_MAX 23
#define MP_ZSTD_WINDOW_MAX (1u << MP_ZSTD_WINDOW_LOG_MAX)

/* True when DATA starts with the zstd frame magic. */
bool mp_is_zstd(const void *data, size_t size);

/*
 * Load PATH ("-" = standard input) into BUF, decompressing zstd, under the
 * limits of O (NULL: the defaults).  On error BUF is left empty.  The
 * caller frees with mp_buf_release().
 */
enum mp_errcode mp_file_read(struct mp_buf *buf, const char *path,
			     const struct mp_read_opts *o, struct mp_err *err);
/*
 * The same into a BUF that may hold an earlier file (or be zeroed): its
 * memory is reused when large enough, and kept on error (BUF's size is
 * then 0).  A merge reads hundreds of files one after the other: fresh
 * memory for each costs its page faults and the kernel's zeroing again,
 * as much as the copy of the bytes themselves.  mp_buf_release() frees.
 */
enum mp_errcode mp_file_reread(struct mp_buf *buf, const char *path,
			       const struct mp_read_opts *o,
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
	char *path;		/* target path, symbolic links followed */
	char *tmp;		/* temporary path, NULL once committed or
				 * when written in place */
	bool direct;		/* a device, FIFO or socket: in place */
};

enum mp_errcode mp_outfile_open(struct mp_outfile *of, const char *path,
				struct mp_err *err);
/*
 * Would mp_outfile_open(PATH) find its directory and may it write there?
 * Asked before the work that fills an output, so that a merge of hundreds
 * of inputs does not learn at its end that the directory is missing or
 * read-only: the same errors as the open, which still checks (things
 * change in between).
 */
enum mp_errcode mp_outfile_check(const char *path, struct mp_err *err);
/*
 * Start what is written to OF so far on its way to the disk, without
 * waiting for it: the fsync of mp_outfile_commit() then waits for the
 * rest only.  For a writer that has more to encode after a part of the
 * file is done.  A failure shows at the commit.
 */
void mp_outfile_push(struct mp_outfile *of);
/* Flush, fsync and rename into place.  On failure the temporary is removed. */
enum mp_errcode mp_outfile_commit(struct mp_outfile *of, struct mp_err *err);
/* Close and remove the temporary if still open.  Accepts a zeroed struct. */
void mp_outfile_abort(struct mp_outfile *of);

#endif /* MP_FILE_H */
