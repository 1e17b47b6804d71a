#include "mp_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

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
	if (buf->mapped)
		munmap(buf->data, buf->size);
	else
		free(buf->data);
	buf->data = NULL;
	buf->size = 0;
	buf->was_compressed = false;
	buf->mapped = false;
}

static enum mp_errcode read_fd(int fd, struct mp_buf *buf, struct mp_err *err)
{
	size_t alloc = 0, len = 0;
	unsigned char *data = NULL;
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *map;

		if ((uint64_t)st.st_size > MP_FILE_MAX_SIZE)
			return mp_fail(err, MP_E_TOO_LARGE,
				       "file is larger than %zu bytes",
				       MP_FILE_MAX_SIZE);
		/*
		 * Map it privately: no copy, pages the kernel already holds,
		 * and writes stay ours (copy on write) as with a buffer.  The
		 * file might shrink under us (SIGBUS); profiles are written
		 * whole and renamed into place, so that is not expected.
		 */
		map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			/*
			 * Every byte is read: map the pages in one call (Linux
			 * 5.14) rather than trapping on each 64 KiB, which costs
			 * far more on virtual machines.  Only a hint.
			 */
#ifdef MADV_POPULATE_READ
			madvise(map, (size_t)st.st_size, MADV_POPULATE_READ);
#endif
			buf->data = map;
			buf->size = (size_t)st.st_size;
			buf->mapped = true;
			return MP_OK;
		}
		alloc = (size_t)st.st_size + 1;
		data = malloc(alloc);
		if (!data)
			return mp_fail(err, MP_E_NOMEM, NULL);
	}
	for (;;) {
		ssize_t n;

		if (len == alloc) {
			if (alloc >= MP_FILE_MAX_SIZE) {
				free(data);
				return mp_fail(err, MP_E_TOO_LARGE,
					       "file is larger than %zu bytes",
					       MP_FILE_MAX_SIZE);
			}
			if (!MP_GROW(data, alloc, alloc + 65536)) {
				free(data);
				return mp_fail(err, MP_E_NOMEM, NULL);
			}
		}
		n = read(fd, data + len, alloc - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(data);
			return mp_fail(err, MP_E_IO, "read error: %s",
				       strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf->data = data;
	buf->size = len;
	return MP_OK;
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
	ds = ZSTD_createDStream();
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
			rc = mp_fail(err, MP_E_ZSTD, "zstd: %s",
				     ZSTD_getErrorName(ret));
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
			     struct mp_err *err)
{
	struct mp_buf raw = { 0 };
	enum mp_errcode rc;
	int fd;

	memset(buf, 0, sizeof(*buf));
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return mp_fail(err, MP_E_IO, "cannot open: %s",
				       strerror(errno));
	}
	rc = read_fd(fd, &raw, err);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc)
		return rc;
	if (raw.size == 0) {
		mp_buf_release(&raw);
		return mp_fail(err, MP_E_EMPTY, "file is empty");
	}
	if (!mp_is_zstd(raw.data, raw.size)) {
		*buf = raw;
		return MP_OK;
	}
	rc = mp_zstd_decompress(buf, raw.data, raw.size, err);
	mp_buf_release(&raw);
	if (rc == MP_OK && buf->size == 0) {
		mp_buf_release(buf);
		return mp_fail(err, MP_E_EMPTY, "zstd data decompresses to nothing");
	}
	return rc;
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

/*
 * Install the handlers, and hold the signals they catch (in OLD, the mask
 * to restore) while a temporary is created and recorded: one arriving
 * between the two would leave the file behind.
 */
static void hold_signals(sigset_t *old)
{
	sigset_t set;

	if (!handlers_installed) {
		signal(SIGINT, cleanup_on_signal);
		signal(SIGTERM, cleanup_on_signal);
		signal(SIGHUP, cleanup_on_signal);
		handlers_installed = true;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

enum mp_errcode mp_outfile_open(struct mp_outfile *of, const char *path,
				struct mp_err *err)
{
	size_t len = strlen(path);
	sigset_t old;
	int fd, e;

	memset(of, 0, sizeof(*of));
	of->path = strdup(path);
	of->tmp = malloc(len + sizeof(".tmp.XXXXXX"));
	if (!of->path || !of->tmp) {
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	memcpy(of->tmp, path, len);
	memcpy(of->tmp + len, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
	hold_signals(&old);
	fd = mkostemp(of->tmp, O_CLOEXEC);
	e = errno;
	if (fd >= 0)
		track_tmp(of->tmp, true);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		free(of->tmp);
		of->tmp = NULL;
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_IO, "cannot create temporary file: %s",
			       strerror(e));
	}
	/* mkostemp creates 0600; an output should follow the umask. */
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	of->fp = fdopen(fd, "wb");
	if (!of->fp) {
		close(fd);
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	return MP_OK;
}

enum mp_errcode mp_outfile_commit(struct mp_outfile *of, struct mp_err *err)
{
	int e = 0;

	if (fflush(of->fp) != 0 || ferror(of->fp))
		e = errno ? errno : EIO;
	else if (fsync(fileno(of->fp)) != 0 && errno != EINVAL)
		e = errno;
	if (fclose(of->fp) != 0 && !e)
		e = errno ? errno : EIO;
	of->fp = NULL;
	if (!e && rename(of->tmp, of->path) != 0)
		e = errno;
	if (e) {
		mp_outfile_abort(of);
		return mp_fail(err, MP_E_IO, "cannot write output: %s",
			       strerror(e));
	}
	track_tmp(of->tmp, false);
	free(of->tmp);
	of->tmp = NULL;
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
}
