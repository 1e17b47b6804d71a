#include "mp_file.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "mp_util.h"

bool mp_is_zstd(const void *data, size_t size)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	return size >= 4 && memcmp(data, magic, 4) == 0;
}

void mp_buf_release(struct mp_buf *buf)
{
	if (!buf)
		return;
	free(buf->data);
	buf->data = NULL;
	buf->size = 0;
	buf->was_compressed = false;
	buf->alloc = 0;
}

/* How much is read at a time, and how many first bytes KNOWN sees. */
#define CHUNK ((size_t)1 << 16)
#define HEAD 16
#define READ_MAX ((size_t)1 << 30)	/* bytes asked of one read() */

struct reader {
	const struct mp_read_opts *o;
	uint64_t max;		/* the cap on the content */
	unsigned char *data;	/* the content so far */
	size_t len, alloc;
	bool checked;		/* KNOWN has seen the first bytes */
};

static enum mp_errcode too_large(struct mp_err *err, uint64_t max)
{
	return mp_fail(err, MP_E_TOO_LARGE, "larger than the input size limit "
		       "of %" PRIu64 " bytes (--max-input-size raises it)", max);
}

/* Append N bytes at P to the content, checking its first bytes once. */
static enum mp_errcode append(struct reader *r, const void *p, size_t n,
			      bool at_end, struct mp_err *err)
{
	if (n > r->max - r->len)
		return too_large(err, r->max);
	if (r->len + n > r->alloc) {
		size_t want = r->alloc ? r->alloc : CHUNK;

		while (want < r->len + n)
			want = want > SIZE_MAX / 2 ? SIZE_MAX : want * 2;
		if (want > r->max + 1)
			want = (size_t)r->max + 1;
		unsigned char *d = realloc(r->data, want);

		if (!d)
			return mp_fail(err, MP_E_NOMEM, NULL);
		r->data = d;
		r->alloc = want;
	}
	if (n) {	/* an empty file has no buffer yet */
		memcpy(r->data + r->len, p, n);
		r->len += n;
	}
	if (!r->checked && r->o && r->o->known && (r->len >= HEAD || at_end)) {
		r->checked = true;
		if (r->len && !r->o->known(r->data, r->len))
			return mp_fail(err, MP_E_BAD_MAGIC, "not a profile: it "
				       "starts with %02x %02x %02x %02x",
				       r->data[0], r->len > 1 ? r->data[1] : 0,
				       r->len > 2 ? r->data[2] : 0,
				       r->len > 3 ? r->data[3] : 0);
	}
	return MP_OK;
}

/* One read(), retried on EINTR: bytes read, 0 at the end, -1 on error. */
static ssize_t read_some(int fd, void *p, size_t n)
{
	ssize_t got;

	do
		got = read(fd, p, n);
	while (got < 0 && errno == EINTR);
	return got;
}

bool mp_read_full(int fd, void *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read_some(fd, (char *)buf + got, size - got);

		if (n <= 0) {
			if (n == 0)
				errno = 0;
			return false;
		}
		got += (size_t)n;
	}
	return true;
}

/*
 * A zstd decoder whose window, which a frame declares and the decoder
 * allocates before any content, is at most MP_ZSTD_WINDOW_MAX: else ten
 * bytes of frame header could ask for 128 MiB (zstd's default limit).
 */
static ZSTD_DStream *new_dstream(void)
{
	ZSTD_DStream *ds = ZSTD_createDStream();

	if (ds && ZSTD_isError(ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax,
						      MP_ZSTD_WINDOW_LOG_MAX))) {
		ZSTD_freeDStream(ds);
		return NULL;
	}
	return ds;
}

/* The error of a zstd call that returned RET. */
static enum mp_errcode zstd_fail(struct mp_err *err, size_t ret)
{
	if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge)
		return mp_fail(err, MP_E_ZSTD, "zstd: the frame's window is over "
			       "%u MiB (compressed with --long or --ultra?): "
			       "decompress it first", MP_ZSTD_WINDOW_MAX >> 20);
	return mp_fail(err, MP_E_ZSTD, "zstd: %s", ZSTD_getErrorName(ret));
}

/*
 * Read FD to its end into R, decompressing a zstd stream as it comes (the
 * compressed bytes are never all in memory).  The first chunk tells
 * which.
 */
static enum mp_errcode read_fd(int fd, struct reader *r, bool *compressed,
			       struct mp_err *err)
{
	unsigned char *chunk = malloc(CHUNK), *out = NULL;
	ZSTD_DStream *ds = NULL;
	enum mp_errcode rc = MP_OK;
	size_t frame_left = 0;
	ssize_t n;
	bool first = true;
	struct stat st;

	if (!chunk)
		return mp_fail(err, MP_E_NOMEM, NULL);
	/* A regular file's size is known: one allocation, and a file over
	 * the cap refused before it is read. */
	if (fstat(fd, &st) != 0)
		memset(&st, 0, sizeof(st));
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > r->max) {
		/* Compressed, it would expand past the cap too. */
		free(chunk);
		return too_large(err, r->max);
	}
	while ((n = read_some(fd, chunk, CHUNK)) > 0) {
		if (first) {
			ssize_t more;

			/* A pipe may hand over fewer bytes than a magic. */
			while (n < HEAD && (more = read_some(fd, chunk + n,
							     CHUNK - (size_t)n)) > 0)
				n += more;
			first = false;
			*compressed = mp_is_zstd(chunk, (size_t)n);
			if (*compressed) {
				ds = new_dstream();
				out = malloc(ZSTD_DStreamOutSize());
				if (!ds || !out) {
					rc = mp_fail(err, MP_E_NOMEM, NULL);
					break;
				}
			} else if (S_ISREG(st.st_mode) && st.st_size > 0 &&
				   (uint64_t)st.st_size < r->max &&
				   r->alloc < (size_t)st.st_size + 1) {
				/* Nothing read yet: what the buffer held can go. */
				size_t want = (size_t)st.st_size + 1;

				if (r->o && r->o->expect >= want &&
				    r->o->expect < r->max)
					want = (size_t)r->o->expect + 1;
				free(r->data);
				r->data = mp_alloc_big(want);
				r->alloc = r->data ? want : 0;
			}
		}
		if (!*compressed) {
			if ((rc = append(r, chunk, (size_t)n, false, err)))
				break;
			/* Sized for the whole file: the rest goes straight in,
			 * not through CHUNK (a copy less), up to the cap (a
			 * reused buffer may be larger).  Room for one more
			 * byte tells a file that grew meanwhile: the loop then
			 * reads on as for any stream, append() minding the cap. */
			size_t fill = r->alloc < r->max ? r->alloc : (size_t)r->max;

			while (r->len < fill &&
			       (n = read_some(fd, r->data + r->len,
					      fill - r->len < READ_MAX
					      ? fill - r->len : READ_MAX)) > 0)
				r->len += (size_t)n;
			if (n < 0)
				break;
			continue;
		}
		ZSTD_inBuffer in = { chunk, (size_t)n, 0 };

		while (in.pos < in.size && !rc) {
			ZSTD_outBuffer ob = { out, ZSTD_DStreamOutSize(), 0 };

			frame_left = ZSTD_decompressStream(ds, &ob, &in);
			if (ZSTD_isError(frame_left))
				rc = zstd_fail(err, frame_left);
			else
				rc = append(r, out, ob.pos, false, err);
		}
		/* Flush what the decompressor holds back. */
		while (!rc && *compressed && frame_left) {
			ZSTD_inBuffer none = { chunk, 0, 0 };
			ZSTD_outBuffer ob = { out, ZSTD_DStreamOutSize(), 0 };

			frame_left = ZSTD_decompressStream(ds, &ob, &none);
			if (ZSTD_isError(frame_left))
				rc = zstd_fail(err, frame_left);
			else if (!ob.pos)
				break;
			else
				rc = append(r, out, ob.pos, false, err);
		}
		if (rc)
			break;
	}
	if (!rc && n < 0)
		rc = mp_fail(err, MP_E_IO, "read error: %s", strerror(errno));
	if (!rc && *compressed && frame_left)
		rc = mp_fail(err, MP_E_TRUNCATED, "zstd frame is truncated");
	if (!rc)
		rc = append(r, chunk, 0, true, err);
	ZSTD_freeDStream(ds);
	free(out);
	free(chunk);
	return rc;
}

enum mp_errcode mp_zstd_decompress(struct mp_buf *out, const void *data,
				   size_t size, struct mp_err *err)
{
	ZSTD_DStream *ds;
	ZSTD_inBuffer in = { data, size, 0 };
	size_t limit, alloc = 0, ret = 1;
	unsigned char *dst = NULL;
	ZSTD_outBuffer ob = { NULL, 0, 0 };
	enum mp_errcode rc = MP_OK;

	if (!mp_mul(size, MP_FILE_MAX_EXPANSION, &limit) ||
	    limit > MP_FILE_MAX_SIZE)
		limit = MP_FILE_MAX_SIZE;
	ds = new_dstream();
	if (!ds)
		return mp_fail(err, MP_E_NOMEM, NULL);
	while (in.pos < in.size || ret != 0) {
		if (ob.pos == ob.size) {
			if (alloc >= limit) {
				rc = mp_fail(err, MP_E_TOO_LARGE,
					     "zstd data expands past %zu bytes",
					     limit);
				goto out;
			}
			if (!MP_GROW(dst, alloc, alloc + (1u << 20))) {
				rc = mp_fail(err, MP_E_NOMEM, NULL);
				goto out;
			}
			if (alloc > limit)
				alloc = limit;
			ob.dst = dst;
			ob.size = alloc;
		}
		ret = ZSTD_decompressStream(ds, &ob, &in);
		if (ZSTD_isError(ret)) {
			rc = zstd_fail(err, ret);
			goto out;
		}
		if (in.pos == in.size && ret != 0 && ob.pos < ob.size) {
			/* Input exhausted in the middle of a frame. */
			rc = mp_fail(err, MP_E_TRUNCATED,
				     "zstd frame is truncated");
			goto out;
		}
	}
	out->data = dst;
	out->size = ob.pos;
	out->was_compressed = true;
	out->alloc = alloc;
	dst = NULL;
out:
	free(dst);
	ZSTD_freeDStream(ds);
	return rc;
}

enum mp_errcode mp_zstd_compress(struct mp_buf *out, const void *data,
				 size_t size, int level, struct mp_err *err)
{
	size_t bound = ZSTD_compressBound(size), n;

	memset(out, 0, sizeof(*out));
	out->data = malloc(bound ? bound : 1);
	if (!out->data)
		return mp_fail(err, MP_E_NOMEM, NULL);
	n = ZSTD_compress(out->data, bound, data, size, level);
	if (ZSTD_isError(n)) {
		mp_buf_release(out);
		return mp_fail(err, MP_E_ZSTD, "zstd: %s", ZSTD_getErrorName(n));
	}
	out->size = n;
	out->was_compressed = true;
	return MP_OK;
}

enum mp_errcode mp_file_read(struct mp_buf *buf, const char *path,
			     const struct mp_read_opts *o, struct mp_err *err)
{
	enum mp_errcode rc;

	memset(buf, 0, sizeof(*buf));
	rc = mp_file_reread(buf, path, o, err);
	if (rc)
		mp_buf_release(buf);
	return rc;
}

enum mp_errcode mp_file_reread(struct mp_buf *buf, const char *path,
			       const struct mp_read_opts *o,
			       struct mp_err *err)
{
	struct reader r = { .o = o, .data = buf->data, .alloc = buf->alloc };
	bool compressed = false;
	enum mp_errcode rc;
	struct stat st;
	int fd;

	buf->size = 0;
	buf->was_compressed = false;
	r.max = o && o->max_size ? o->max_size : MP_FILE_MAX_DEFAULT;
	if (r.max > MP_FILE_MAX_SIZE)
		r.max = MP_FILE_MAX_SIZE;
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return mp_fail(err, MP_E_IO, "cannot open: %s",
				       strerror(errno));
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			return mp_fail(err, MP_E_IO, "is a directory");
		}
	}
	rc = read_fd(fd, &r, &compressed, err);
	if (fd != STDIN_FILENO)
		close(fd);
	if (!rc && !r.len)
		rc = mp_fail(err, MP_E_EMPTY, compressed
			     ? "zstd data decompresses to nothing" : "file is empty");
	/* The memory is BUF's whatever happened, for the next file. */
	buf->data = r.data;
	buf->alloc = r.alloc;
	if (rc)
		return rc;
	buf->size = r.len;
	buf->was_compressed = compressed;
	return MP_OK;
}

/*
 * Temporaries to remove if a signal ends the process while an output is
 * being written.  Few outputs are ever open at once.
 */
#define MAX_LIVE_TMP 8
static char *volatile live_tmp[MAX_LIVE_TMP];
static bool handlers_installed;

static void cleanup_on_signal(int sig)
{
	for (int i = 0; i < MAX_LIVE_TMP; i++)
		if (live_tmp[i])
			unlink(live_tmp[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void track_tmp(char *tmp, bool add)
{
	for (int i = 0; i < MAX_LIVE_TMP; i++) {
		if (add && !live_tmp[i]) {
			live_tmp[i] = tmp;
			break;
		}
		if (!add && live_tmp[i] == tmp) {
			live_tmp[i] = NULL;
			break;
		}
	}
}

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

/*
 * Install the handlers, and hold the signals they catch (in OLD, the mask
 * to restore) while a temporary is created and recorded: one arriving
 * between the two would leave the file behind.  A signal the process was
 * told to ignore (nohup, a background job) stays ignored.  SIGXFSZ is
 * ignored, so that a write past `ulimit -f` fails with EFBIG and the
 * temporary is removed as after any failed write, instead of a silent
 * death that leaves it behind.
 */
static void hold_signals(sigset_t *old)
{
	sigset_t set;

	if (!handlers_installed) {
		struct sigaction sa, was;

		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(int); i++) {
			if (sigaction(cleanup_signals[i], NULL, &was) == 0 &&
			    was.sa_handler == SIG_IGN)
				continue;
			sa.sa_handler = cleanup_on_signal;
			sigaction(cleanup_signals[i], &sa, NULL);
		}
		if (sigaction(SIGXFSZ, NULL, &was) == 0 && was.sa_handler == SIG_DFL) {
			sa.sa_handler = SIG_IGN;
			sigaction(SIGXFSZ, &sa, NULL);
		}
		handlers_installed = true;
	}
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(int); i++)
		sigaddset(&set, cleanup_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* The directory part of PATH ("." when it has none), newly allocated. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/*
 * PATH with its symbolic links followed to the file they name (which may
 * not exist yet), newly allocated; NULL with *E set on failure.  Only the
 * last component is followed: directories are the kernel's to resolve.
 */
static char *follow_links(const char *path, int *e)
{
	char *cur = strdup(path);

	for (int hops = 0; cur; hops++) {
		char target[4096], *next, *dir;
		struct stat st;
		ssize_t n;

		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		n = hops < 40 ? readlink(cur, target, sizeof(target) - 1) : -1;
		if (n < 0) {
			*e = hops < 40 ? errno : ELOOP;
			free(cur);
			return NULL;
		}
		target[n] = '\0';
		if (target[0] == '/' || !strchr(cur, '/')) {
			next = strdup(target);
		} else {
			dir = dir_of(cur);
			next = dir ? malloc(strlen(dir) + (size_t)n + 2) : NULL;
			if (next)
				sprintf(next, "%s/%s", dir, target);
			free(dir);
		}
		free(cur);
		cur = next;
	}
	*e = ENOMEM;
	return NULL;
}

/*
 * The temporary's name: short and fixed, so that a target name of up to
 * NAME_MAX bytes still leaves room (a suffix on the target's own name
 * would not), in the target's directory, so that rename() replaces the
 * target atomically.
 */
#define TMP_NAME "/.memprof-data-XXXXXX"

/*
 * Give the temporary FD what the file it replaces had (ST): its mode and,
 * when we may, its owner; set-id bits only if the owner was kept.  A new
 * file follows the umask.
 */
static void take_attributes(int fd, const struct stat *st, bool replaces)
{
	mode_t um;

	if (!replaces) {
		um = umask(0);
		umask(um);
		fchmod(fd, 0666 & ~um);
		return;
	}
	if ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
	    fchown(fd, st->st_uid, st->st_gid) != 0) {
		fchmod(fd, st->st_mode & 0777);
		return;
	}
	fchmod(fd, st->st_mode & 07777);
}

/*
 * A device, FIFO or socket at PATH, however it is named: written in place.
 * (/dev/stdout of a pipe is a link through /proc to "pipe:[N]", which only
 * the kernel follows.)
 */
static bool special_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	       !S_ISDIR(st.st_mode);
}

/*
 * The file an output at PATH replaces: PATH with its symbolic links
 * followed, in *REAL (newly allocated), and whether it exists (*EXISTS;
 * its status then in *ST).  A directory there is an error.
 */
static enum mp_errcode output_target(const char *path, char **real,
				     struct stat *st, bool *exists,
				     struct mp_err *err)
{
	int e = ENOMEM;

	if (!(*real = follow_links(path, &e)))
		return e == ENOMEM ? mp_fail(err, MP_E_NOMEM, NULL)
			: mp_fail(err, MP_E_IO, "cannot follow the symbolic link: "
				  "%s", strerror(e));
	*exists = stat(*real, st) == 0;
	if (*exists && S_ISDIR(st->st_mode)) {
		free(*real);
		*real = NULL;
		return mp_fail(err, MP_E_IO, "is a directory");
	}
	return MP_OK;
}

enum mp_errcode mp_outfile_check(const char *path, struct mp_err *err)
{
	enum mp_errcode rc;
	struct stat st;
	char *real, *dir;
	bool exists;
	int e;

	if (strcmp(path, "-") == 0 || special_file(path))
		return MP_OK;		/* written in place */
	if ((rc = output_target(path, &real, &st, &exists, err)))
		return rc;
	dir = dir_of(real);
	free(real);
	if (!dir)
		return mp_fail(err, MP_E_NOMEM, NULL);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
		e = errno;
		mp_fail(err, MP_E_IO, "cannot create a temporary file in %s: %s",
			dir, strerror(e));
		free(dir);
		return MP_E_IO;
	}
	free(dir);
	return MP_OK;
}

/*
 * OF writes in place to FD (a device, FIFO or socket, or standard output),
 * which it then owns.
 */
static enum mp_errcode open_in_place(struct mp_outfile *of, int fd,
				     struct mp_err *err)
{
	int e;

	if (fd < 0 || !(of->fp = fdopen(fd, "wb"))) {
		e = errno;
		if (fd >= 0)
			close(fd);
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_IO, "cannot open: %s", strerror(e));
	}
	of->direct = true;
	return MP_OK;
}

enum mp_errcode mp_outfile_open(struct mp_outfile *of, const char *path,
				struct mp_err *err)
{
	enum mp_errcode rc;
	struct stat st;
	bool replaces;
	sigset_t old;
	char *dir;
	int fd, e;

	memset(of, 0, sizeof(*of));
	if (strcmp(path, "-") == 0)
		return open_in_place(of, fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3),
				     err);
	if (special_file(path))
		return open_in_place(of, open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY),
				     err);
	if ((rc = output_target(path, &of->path, &st, &replaces, err)))
		return rc;
	if (replaces && !S_ISREG(st.st_mode))
		/* Became one since (a race): written in place all the same. */
		return open_in_place(of, open(of->path, O_WRONLY | O_CLOEXEC |
					      O_NOCTTY), err);
	hold_signals(&old);
	dir = dir_of(of->path);
	of->tmp = dir ? malloc(strlen(dir) + sizeof(TMP_NAME)) : NULL;
	if (!of->tmp) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(dir);
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	sprintf(of->tmp, "%s" TMP_NAME, strcmp(dir, "/") ? dir : "");
	fd = mkostemp(of->tmp, O_CLOEXEC);
	e = errno;
	if (fd >= 0)
		track_tmp(of->tmp, true);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		free(of->tmp);
		of->tmp = NULL;
		mp_outfile_abort(of);
		mp_fail(err, MP_E_IO, "cannot create a temporary file in %s: %s",
			dir, strerror(e));
		free(dir);
		return MP_E_IO;
	}
	free(dir);
	take_attributes(fd, &st, replaces);
	of->fp = fdopen(fd, "wb");
	if (!of->fp) {
		close(fd);
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	return MP_OK;
}

/* Make a rename in the directory of PATH durable; only a best effort. */
static void sync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

void mp_outfile_push(struct mp_outfile *of)
{
	if (!of->fp || of->direct || fflush(of->fp) != 0)
		return;
#ifdef SYNC_FILE_RANGE_WRITE
	/* Written back while the caller goes on: the fsync of a file of
	 * megabytes written at once waited for all of it (2.0 to 2.3 ms
	 * for 3.5 MB, bench/RESULTS.md). */
	sync_file_range(fileno(of->fp), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
}

enum mp_errcode mp_outfile_commit(struct mp_outfile *of, struct mp_err *err)
{
	int e = 0;

	if (fflush(of->fp) != 0 || ferror(of->fp))
		e = errno ? errno : EIO;
	else if (!of->direct && fsync(fileno(of->fp)) != 0 && errno != EINVAL)
		e = errno;
	if (fclose(of->fp) != 0 && !e)
		e = errno ? errno : EIO;
	of->fp = NULL;
	if (!e && of->tmp && rename(of->tmp, of->path) != 0)
		e = errno;
	if (e) {
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_IO, "cannot write output: %s",
			       strerror(e));
	}
	if (of->tmp) {
		sync_dir(of->path);
		track_tmp(of->tmp, false);
		free(of->tmp);
		of->tmp = NULL;
	}
	free(of->path);
	of->path = NULL;
	return MP_OK;
}

void mp_outfile_abort(struct mp_outfile *of)
{
	if (!of)
		return;
	if (of->fp)
		fclose(of->fp);
	of->fp = NULL;
	if (of->tmp) {
		unlink(of->tmp);
		track_tmp(of->tmp, false);
		free(of->tmp);
		of->tmp = NULL;
	}
	free(of->path);
	of->path = NULL;
	of->direct = false;
}
