/*
 * sym_cache.c - the persistent symbol cache's files (sym_cache.h): every
 * byte of a file checked before it is used, written whole and renamed
 * into place.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_CLOEXEC, O_NOFOLLOW, mkostemp */
#endif

#include "sym_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/mp_file.h"
#include "hashtable/ht.h"

static const unsigned char magic[8] = { 'M', 'P', 'D', 'S', 'Y', 'M', 'C', '\n' };

#define VERSION 1
#define HDR 112
#define ADDR_BYTES 16
#define FRAME_BYTES 28
#define OFF_CONTENT 64
#define OFF_STAT 84
#define OFF_CRC 100
#define FLAG_DWARF 1u
#define REC_SYMTAB 1u
#define FRAME_INLINED 1u

/* CRC-32 of the file with its CRC field taken as zero. */
static uint32_t file_crc(const unsigned char *p, size_t size)
{
	static const unsigned char zero[4];
	uLong c = crc32(0L, Z_NULL, 0);

	c = crc32_z(c, p, OFF_CRC);
	c = crc32_z(c, zero, sizeof(zero));
	c = crc32_z(c, p + OFF_CRC + 4, size - OFF_CRC - 4);
	return (uint32_t)c;
}

void sym_cache_file_release(struct sym_cache_file *f)
{
	if (!f)
		return;
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* Read FD whole into a new buffer of SIZE bytes; NULL on a short read. */
static unsigned char *read_all(int fd, size_t size)
{
	unsigned char *buf = malloc(size ? size : 1);
	char more;

	/* A file that grew while being read is another writer's: skip it. */
	if (buf && (!mp_read_full(fd, buf, size) || read(fd, &more, 1) != 0)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Is the string reference R (0 = none) inside the strings? */
static bool str_ok(uint32_t r, uint32_t strbytes)
{
	return r == 0 || r <= strbytes;
}

/* Check every field of the file in P (SIZE bytes) against KEY. */
static bool valid(const unsigned char *p, size_t size,
		  const struct sym_cache_key *key, struct sym_cache_file *f)
{
	uint32_t naddrs, nframes, strbytes, bsize;
	const unsigned char *a, *fr, *s;
	uint64_t prev = 0;

	if (size < HDR || memcmp(p, magic, sizeof(magic)) != 0 ||
	    mp_le32(p + 8) != VERSION || (mp_le32(p + 12) & ~FLAG_DWARF))
		return false;
	naddrs = mp_le32(p + 16);
	nframes = mp_le32(p + 20);
	strbytes = mp_le32(p + 24);
	bsize = mp_le32(p + 28);
	if (bsize != key->build_id_size || bsize > RAW_BUILD_ID_MAX ||
	    memcmp(p + 32, key->build_id, bsize) != 0)
		return false;
	for (size_t i = 32 + bsize; i < 64; i++)
		if (p[i])
			return false;
	for (size_t i = OFF_CRC + 4; i < HDR; i++)
		if (p[i])
			return false;
	/* u32 counts: the sum cannot overflow 64 bits. */
	if ((uint64_t)HDR + (uint64_t)naddrs * ADDR_BYTES +
	    (uint64_t)nframes * FRAME_BYTES + strbytes != size)
		return false;
	if (mp_le32(p + OFF_CRC) != file_crc(p, size))
		return false;
	a = p + HDR;
	fr = a + (size_t)naddrs * ADDR_BYTES;
	s = fr + (size_t)nframes * FRAME_BYTES;
	if (strbytes && s[strbytes - 1] != '\0')
		return false;
	for (uint32_t i = 0; i < naddrs; i++, a += ADDR_BYTES) {
		uint64_t addr = mp_le64(a);
		uint32_t first = mp_le32(a + 8), n = mp_le16(a + 12);
		unsigned flags = a[14];

		if ((i && addr <= prev) || a[15] || (flags & 0x0e) ||
		    n > SYM_CACHE_MAX_FRAMES || first > nframes ||
		    n > nframes - first ||
		    ((flags & REC_SYMTAB) && n != 1) ||
		    ((flags >> 4) && n != 0))
			return false;
		prev = addr;
	}
	for (uint32_t i = 0; i < nframes; i++, fr += FRAME_BYTES)
		if (!str_ok(mp_le32(fr), strbytes) ||
		    !str_ok(mp_le32(fr + 4), strbytes) ||
		    (mp_le32(fr + 24) & ~FRAME_INLINED))
			return false;
	f->naddrs = naddrs;
	f->nframes = nframes;
	f->strbytes = strbytes;
	f->has_dwarf = mp_le32(p + 12) & FLAG_DWARF;
	f->content = p + OFF_CONTENT;
	f->stat = p + OFF_STAT;
	return true;
}

/* DIR/<hex of the build id> into BUF; false if it does not fit. */
static bool entry_path(char *buf, size_t size, const char *dir,
		       const struct sym_cache_key *key)
{
	char hex[2 * RAW_BUILD_ID_MAX + 1];
	int n;

	mp_hex(key->build_id, key->build_id_size, hex, sizeof(hex));
	n = snprintf(buf, size, "%s/%s", dir, hex);
	return n > 0 && (size_t)n < size;
}

bool sym_cache_read(const char *dir, const struct sym_cache_key *key,
		    struct sym_cache_file *f)
{
	char path[PATH_MAX];
	struct stat st;
	unsigned char *buf = NULL;
	int fd;

	memset(f, 0, sizeof(*f));
	if (!key->build_id_size || key->build_id_size > RAW_BUILD_ID_MAX ||
	    !entry_path(path, sizeof(path), dir, key))
		return false;
	/* Not through a symbolic link: the entry is a file we wrote. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= HDR &&
	    (uint64_t)st.st_size <= SYM_CACHE_MAX_BYTES)
		buf = read_all(fd, (size_t)st.st_size);
	close(fd);
	if (!buf)
		return false;
	if (!valid(buf, (size_t)st.st_size, key, f)) {
		free(buf);
		memset(f, 0, sizeof(*f));
		return false;
	}
	f->buf = buf;
	f->size = (size_t)st.st_size;
	return true;
}

static const char *str_at(const struct sym_cache_file *f, uint32_t r)
{
	const unsigned char *s = f->buf + HDR + (size_t)f->naddrs * ADDR_BYTES +
				 (size_t)f->nframes * FRAME_BYTES;

	return r ? (const char *)s + r - 1 : NULL;
}

void sym_cache_get(const struct sym_cache_file *f, uint32_t i,
		   struct sym_cache_rec *out, struct sym_frame *frames)
{
	const unsigned char *a = f->buf + HDR + (size_t)i * ADDR_BYTES;
	const unsigned char *fr;
	uint32_t first = mp_le32(a + 8), n = mp_le16(a + 12);

	*out = (struct sym_cache_rec){
		.addr = mp_le64(a), .f = frames, .n = n,
		.from_symtab = a[14] & REC_SYMTAB, .why = a[14] >> 4,
	};
	fr = f->buf + HDR + (size_t)f->naddrs * ADDR_BYTES +
	     (size_t)first * FRAME_BYTES;
	for (uint32_t k = 0; k < n; k++, fr += FRAME_BYTES)
		frames[k] = (struct sym_frame){
			.function = str_at(f, mp_le32(fr)),
			.file = str_at(f, mp_le32(fr + 4)),
			.line = mp_le32(fr + 8),
			.column = mp_le32(fr + 12),
			.discriminator = mp_le32(fr + 16),
			.start_line = mp_le32(fr + 20),
			.inlined = mp_le32(fr + 24) & FRAME_INLINED,
		};
}

bool sym_cache_find(const struct sym_cache_file *f, uint64_t addr,
		    struct sym_cache_rec *out, struct sym_frame *frames)
{
	uint32_t lo = 0, hi = f->buf ? f->naddrs : 0, mid;
	uint64_t x;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		x = mp_le64(f->buf + HDR + (size_t)mid * ADDR_BYTES);
		if (x == addr) {
			sym_cache_get(f, mid, out, frames);
			return true;
		}
		if (x < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* ---- writing ------------------------------------------------------------ */

/* The distinct strings of a file being written, each with its offset. */
struct strtab {
	struct ht ht;
	const char **s;
	uint32_t *off;
	size_t n, as, aoff;
	uint64_t bytes;
};

static bool same_string(const void *key, uint32_t id, const void *arg)
{
	return strcmp(((const struct strtab *)arg)->s[id], key) == 0;
}

/* The reference (1 + offset) of S, added if new; 0 for NULL or no memory. */
static uint32_t str_ref(struct strtab *t, const char *s, bool *fail)
{
	uint64_t h;
	uint32_t id;
	size_t len;

	if (!s)
		return 0;
	len = strlen(s);
	h = mp_hash_bytes(s, len, 0x5c);
	id = ht_find(&t->ht, h, same_string, s, t);
	if (id != HT_NONE)
		return t->off[id] + 1;
	if (t->bytes + len + 1 > SYM_CACHE_MAX_BYTES || t->n >= UINT32_MAX - 1 ||
	    !MP_GROW(t->s, t->as, t->n + 1) ||
	    !MP_GROW(t->off, t->aoff, t->n + 1) ||
	    ht_insert(&t->ht, h, (uint32_t)t->n)) {
		*fail = true;
		return 0;
	}
	t->s[t->n] = s;
	t->off[t->n] = (uint32_t)t->bytes;
	t->bytes += len + 1;
	return t->off[t->n++] + 1;
}

/* mkdir -p DIR, new directories private to the user. */
static bool make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path))
		return false;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return false;
		*p = c;
		if (!c)
			break;
	}
	return true;
}

/* Write BUF (SIZE bytes) to PATH through a temporary in DIR. */
static enum mp_errcode write_file(const char *dir, const char *path,
				  const unsigned char *buf, size_t size,
				  struct mp_err *err)
{
	char tmp[PATH_MAX];
	size_t done = 0;
	ssize_t n;
	int fd, e;

	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", dir) >= (int)sizeof(tmp))
		return mp_fail(err, MP_E_IO, "cache directory name too long");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && make_dirs(dir)) {
		/* mkostemp() spent the template. */
		snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", dir);
		fd = mkostemp(tmp, O_CLOEXEC);
	}
	if (fd < 0)
		return mp_fail(err, MP_E_IO, "cannot write in '%s': %s", dir,
			       strerror(errno));
	while (done < size) {
		n = write(fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	e = done < size ? (errno ? errno : ENOSPC) : 0;
	if (close(fd) != 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) != 0)
		e = errno;
	if (e) {
		unlink(tmp);
		return mp_fail(err, MP_E_IO, "cannot write '%s': %s", path,
			       strerror(e));
	}
	return MP_OK;
}

enum mp_errcode sym_cache_write(const char *dir, const struct sym_cache_key *key,
				bool has_dwarf, const struct sym_cache_rec *recs,
				size_t n, struct mp_err *err)
{
	struct strtab t = { .ht = HT_INIT };
	char path[PATH_MAX];
	unsigned char *buf = NULL, *a, *fr;
	uint64_t nframes = 0, size;
	enum mp_errcode rc;
	bool fail = false;
	uint32_t *refs = NULL;
	size_t arefs = 0, nrefs = 0, k = 0;

	if (!key->build_id_size || key->build_id_size > RAW_BUILD_ID_MAX ||
	    !entry_path(path, sizeof(path), dir, key))
		return mp_fail(err, MP_E_INVALID, "no build id or path too long");
	if (n > UINT32_MAX)
		return mp_fail(err, MP_E_TOO_LARGE, NULL);
	for (size_t i = 0; i < n; i++) {
		if (recs[i].n > SYM_CACHE_MAX_FRAMES ||
		    recs[i].why > SYM_CACHE_MAX_WHY ||
		    (i && recs[i].addr <= recs[i - 1].addr))
			return mp_fail(err, MP_E_INVALID, "bad symbol cache record");
		nframes += recs[i].n;
	}
	/* The strings first: their offsets go into the frames. */
	if (!mp_mul((size_t)nframes, 2, &arefs) ||
	    !(refs = malloc(arefs * sizeof(*refs) + 1))) {
		rc = mp_fail(err, MP_E_NOMEM, NULL);
		goto out;
	}
	for (size_t i = 0; i < n && !fail; i++)
		for (uint32_t j = 0; j < recs[i].n; j++) {
			refs[nrefs++] = str_ref(&t, recs[i].f[j].function, &fail);
			refs[nrefs++] = str_ref(&t, recs[i].f[j].file, &fail);
		}
	size = HDR + (uint64_t)n * ADDR_BYTES + nframes * FRAME_BYTES + t.bytes;
	if (fail || size > SYM_CACHE_MAX_BYTES) {
		rc = mp_fail(err, MP_E_TOO_LARGE, "symbol cache entry over %zu bytes",
			     SYM_CACHE_MAX_BYTES);
		goto out;
	}
	buf = calloc(1, (size_t)size);
	if (!buf) {
		rc = mp_fail(err, MP_E_NOMEM, NULL);
		goto out;
	}
	memcpy(buf, magic, sizeof(magic));
	mp_put_le32(buf + 8, VERSION);
	mp_put_le32(buf + 12, has_dwarf ? FLAG_DWARF : 0);
	mp_put_le32(buf + 16, (uint32_t)n);
	mp_put_le32(buf + 20, (uint32_t)nframes);
	mp_put_le32(buf + 24, (uint32_t)t.bytes);
	mp_put_le32(buf + 28, key->build_id_size);
	memcpy(buf + 32, key->build_id, key->build_id_size);
	memcpy(buf + OFF_CONTENT, key->content, SYM_CACHE_CONTENT_SIZE);
	memcpy(buf + OFF_STAT, key->stat, SYM_CACHE_STAT_SIZE);
	a = buf + HDR;
	fr = a + n * ADDR_BYTES;
	nframes = 0;
	for (size_t i = 0; i < n; i++, a += ADDR_BYTES) {
		mp_put_le64(a, recs[i].addr);
		mp_put_le32(a + 8, (uint32_t)nframes);
		a[12] = (unsigned char)recs[i].n;
		a[13] = (unsigned char)(recs[i].n >> 8);
		a[14] = (unsigned char)((recs[i].from_symtab ? REC_SYMTAB : 0) |
					(recs[i].why << 4));
		for (uint32_t j = 0; j < recs[i].n; j++, fr += FRAME_BYTES) {
			const struct sym_frame *x = &recs[i].f[j];

			mp_put_le32(fr, refs[k++]);
			mp_put_le32(fr + 4, refs[k++]);
			mp_put_le32(fr + 8, x->line);
			mp_put_le32(fr + 12, x->column);
			mp_put_le32(fr + 16, x->discriminator);
			mp_put_le32(fr + 20, x->start_line);
			mp_put_le32(fr + 24, x->inlined ? FRAME_INLINED : 0);
		}
		nframes += recs[i].n;
	}
	for (size_t i = 0; i < t.n; i++)
		memcpy(fr + t.off[i], t.s[i], strlen(t.s[i]) + 1);
	mp_put_le32(buf + OFF_CRC, file_crc(buf, (size_t)size));
	rc = write_file(dir, path, buf, (size_t)size, err);
out:
	free(buf);
	free(refs);
	free(t.s);
	free(t.off);
	ht_release(&t.ht);
	return rc;
}
