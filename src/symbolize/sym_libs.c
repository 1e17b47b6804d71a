/*
 * sym_libs.c - the shared libraries of this system, by build id.
 *
 * A raw profile names the modules of the process by build id alone.  The
 * program comes with --binary and the C library's debug file from
 * /usr/lib/debug, but a library such as libstdc++, stripped and without a
 * debug package, is found nowhere: its frames stayed addresses.  Here it
 * is found in the dynamic loader's cache, /etc/ld.so.cache, which lists
 * the libraries a program gets by soname: each listed file's build id is
 * read when a segment that nothing else covers is met, as far down the
 * list as that segment's build id.  A profile from another machine
 * matches none of them, and nothing changes (but a first run with the
 * page cache cold then reads every library's headers: about 0.8 s here).
 *
 * The cache is glibc's "glibc-ld.so.cache1.1" format (the only one glibc
 * has written by default since 2.32):
 *
 *	char magic[20]		"glibc-ld.so.cache1.1"
 *	u32 nlibs, len_strings
 *	u8 flags, pad[3]
 *	u32 extension_offset, unused[3]		48 bytes in all
 *	entry[nlibs]: i32 flags; u32 key, value; u32 osversion; u64 hwcap
 *
 * key and value are offsets from the start of the file of NUL-terminated
 * strings, the soname and the library's path.  Host byte order.
 */
#include "sym.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mp_file.h"

#define CACHE_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_HEADER 48
#define CACHE_ENTRY 24
/* A real cache is tens of kB; this bounds what a hostile one costs. */
#define CACHE_MAX (64u << 20)

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The whole of PATH into *BUF, at most CACHE_MAX bytes; false on error. */
static bool read_cache(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	bool ok;
	int fd;

	*buf = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     st.st_size >= CACHE_HEADER && (uint64_t)st.st_size <= CACHE_MAX &&
	     (*buf = malloc((size_t)st.st_size)) &&
	     mp_read_full(fd, *buf, (size_t)st.st_size);
	close(fd);
	*len = ok ? (size_t)st.st_size : 0;
	return ok;
}

/*
 * Libraries most allocation stacks pass through go first: the search
 * stops at the build id it wants, and a cold read of every library's
 * headers costs the better part of a second.
 */
static int rank(const char *path)
{
	static const char *const first[] = {
		"libstdc++.so", "libc++.so", "libc++abi.so", "libgcc_s.so",
		"libc.so", "libm.so",
	};
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		if (strncmp(base, first[i], strlen(first[i])) == 0)
			return 0;
	return 1;
}

struct cand {
	uint32_t off;		/* of the path in the cache */
	int rank;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->off > y->off) - (x->off < y->off);
}

/* The build id of the ELF file at PATH into LIB; false if none. */
static bool read_build_id(const char *path, struct sym_lib *lib)
{
	const void *id;
	ssize_t len = -1;
	struct stat st;
	Elf *elf = NULL;
	int fd;

	/*
	 * libelf reads nothing until told its version, which libdwfl does
	 * when it opens a module: a library looked for before any module
	 * was opened (show without --binary) came out unreadable, and every
	 * library of the cache with it, for the rest of the run.
	 */
	elf_version(EV_CURRENT);
	/* Not blocking on a FIFO: only a regular file is read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		len = dwelf_elf_gnu_build_id(elf, &id);
	if (len >= 2 && len <= RAW_BUILD_ID_MAX) {
		memcpy(lib->id, id, (size_t)len);
		lib->size = (uint32_t)len;
	}
	elf_end(elf);
	close(fd);
	return len >= 2 && len <= RAW_BUILD_ID_MAX;
}

enum mp_errcode sym_libs_load(struct sym_libs *L, const char *cache,
			      struct mp_err *err)
{
	struct cand *c = NULL;
	uint32_t nlibs;
	size_t len, n = 0;

	if (L->loaded)
		return MP_OK;
	L->loaded = true;
	/* No cache, or one this code does not know: no libraries. */
	if (!read_cache(cache, &L->buf, &len) ||
	    memcmp(L->buf, CACHE_MAGIC, sizeof(CACHE_MAGIC) - 1) != 0)
		goto none;
	nlibs = get32(L->buf + 20);
	if (nlibs > (len - CACHE_HEADER) / CACHE_ENTRY)
		goto none;
	c = malloc((size_t)nlibs * sizeof(*c) + 1);
	L->v = calloc((size_t)nlibs + 1, sizeof(*L->v));
	if (!c || !L->v) {
		free(c);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	for (uint32_t i = 0; i < nlibs; i++) {
		uint32_t v = get32(L->buf + CACHE_HEADER +
				   (size_t)i * CACHE_ENTRY + 8);

		if (v >= CACHE_HEADER && v < len && L->buf[v] == '/' &&
		    memchr(L->buf + v, '\0', len - v))
			c[n++] = (struct cand){ v,
						rank((const char *)L->buf + v) };
	}
	if (n > 1)
		qsort(c, n, sizeof(*c), cand_cmp);
	/* Each path once, though several sonames and links lead to it. */
	for (size_t i = 0; i < n; i++)
		if (!i || c[i].off != c[i - 1].off)
			L->v[L->n++].path = (char *)L->buf + c[i].off;
	free(c);
	return MP_OK;
none:
	free(L->buf);
	L->buf = NULL;
	return MP_OK;
}

const char *sym_libs_find(struct sym_libs *L, const uint8_t *id,
			  uint32_t size)
{
	for (size_t i = 0; i < L->n; i++) {
		struct sym_lib *lib = &L->v[i];

		/* Read as far as needed, each library once. */
		if (i == L->nread) {
			if (!read_build_id(lib->path, lib))
				lib->size = 0;
			L->nread++;
		}
		if (lib->size == size && memcmp(lib->id, id, size) == 0)
			return lib->path;
	}
	return NULL;
}

enum mp_errcode sym_libs_add(struct sym_libs *L, const char *path)
{
	if (!MP_GROW(L->v, L->alloc, L->n + 1))
		return MP_E_NOMEM;
	L->v[L->n++] = (struct sym_lib){ .path = path };
	return MP_OK;
}

void sym_libs_release(struct sym_libs *L)
{
	free(L->v);
	free(L->buf);
	memset(L, 0, sizeof(*L));
}
