/*
 * sym_zstd.c - DWARF sections compressed with zstd, for a libelf that
 * cannot inflate them.
 *
 * -gz=zstd writes each .debug_* section as a compression header
 * (Elf64_Chdr: type 2 = ELFCOMPRESS_ZSTD, the inflated size and
 * alignment) followed by a zstd frame.  libelf before elfutils 0.189
 * inflates only zlib: libdw skips those sections and finds no DWARF.  So
 * the file is copied into memory (a memfd), each such section inflated
 * and appended to the copy, its section header pointed at it and marked
 * uncompressed, and libdwfl reads the copy.  Only 64-bit little-endian
 * files are handled, the only kind a MemProf profile can come from.
 *
 * Memory: the copy is the file plus the inflated sections, each at most
 * ZSTD_RATIO times its compressed bytes, ZSTD_TOTAL_MAX in all.
 */
#include "sym.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define ZSTD_RATIO 64
#define ZSTD_TOTAL_MAX (4ull << 30)
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		buf = (char *)buf + r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

static bool pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pwrite(fd, buf, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		buf = (const char *)buf + r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

/* Whether this libelf inflates zstd itself: elfutils 0.189 and later. */
static bool libelf_has_zstd(void)
{
	const char *v = dwfl_version(NULL);
	unsigned major = 0, minor = 0;

	return v && sscanf(v, "%u.%u", &major, &minor) == 2 &&
	       (major > 0 || minor >= 189);
}

/* The file's section headers, checked against its size; NULL if none. */
static Elf64_Shdr *read_shdrs(int fd, uint64_t size, Elf64_Ehdr *eh,
			      size_t *n, size_t *strndx)
{
	Elf64_Shdr *sh, first;

	*n = eh->e_shnum;
	*strndx = eh->e_shstrndx;
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > size ||
	    !pread_all(fd, &first, sizeof(first), eh->e_shoff))
		return NULL;
	if (*n == 0)			/* extended numbering */
		*n = first.sh_size;
	if (*strndx == SHN_XINDEX)
		*strndx = first.sh_link;
	if (*n == 0 || *n > (size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    *strndx >= *n)
		return NULL;
	sh = malloc(*n * sizeof(*sh));
	if (sh && !pread_all(fd, sh, *n * sizeof(*sh), eh->e_shoff)) {
		free(sh);
		return NULL;
	}
	return sh;
}

/* Whether section S of the file is a DWARF section compressed with zstd. */
static bool is_zstd_debug(int fd, uint64_t size, const Elf64_Shdr *s,
			  const Elf64_Shdr *strtab, Elf64_Chdr *ch)
{
	char name[8];

	if (!(s->sh_flags & SHF_COMPRESSED) || s->sh_type == SHT_NOBITS ||
	    s->sh_offset > size || s->sh_size > size - s->sh_offset ||
	    s->sh_size < sizeof(*ch) || s->sh_name >= strtab->sh_size ||
	    strtab->sh_offset > size || strtab->sh_size > size - strtab->sh_offset ||
	    strtab->sh_size - s->sh_name < sizeof(name) ||
	    !pread_all(fd, name, sizeof(name), strtab->sh_offset + s->sh_name) ||
	    memcmp(name, ".debug_", 7) != 0 ||
	    !pread_all(fd, ch, sizeof(*ch), s->sh_offset))
		return false;
	return ch->ch_type == ELFCOMPRESS_ZSTD;
}

/* Copy FD's SIZE bytes to the start of OUT. */
static bool copy_file(int fd, int out, uint64_t size)
{
	char buf[1 << 16];
	uint64_t off = 0;

	while (off < size) {
		size_t len = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		if (!pread_all(fd, buf, len, off) || !pwrite_all(out, buf, len, off))
			return false;
		off += len;
	}
	return true;
}

int sym_zstd_inflate(int fd, struct mp_err *err)
{
	Elf64_Shdr *sh = NULL;
	Elf64_Ehdr eh;
	Elf64_Chdr *chs = NULL;	/* per section; ch_type 0: not ours */
	struct stat st;
	size_t n, strndx, nz = 0;
	uint64_t end, total = 0;
	void *src = NULL, *dst = NULL;
	int out = -1;

	err->code = MP_OK;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    !pread_all(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    !(sh = read_shdrs(fd, (uint64_t)st.st_size, &eh, &n, &strndx)))
		goto out;
	if (!(chs = calloc(n, sizeof(*chs)))) {
		mp_fail(err, MP_E_NOMEM, NULL);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		Elf64_Chdr *ch = &chs[i];

		if (!is_zstd_debug(fd, (uint64_t)st.st_size, &sh[i], &sh[strndx], ch)) {
			ch->ch_type = 0;
			continue;
		}
		if (ch->ch_size / ZSTD_RATIO > sh[i].sh_size ||
		    ch->ch_size > ZSTD_TOTAL_MAX - total) {
			mp_fail(err, MP_E_TOO_LARGE, "section %zu would "
				"inflate from %llu to %llu bytes, more "
				"than %u times or %llu bytes in all", i,
				(unsigned long long)sh[i].sh_size,
				(unsigned long long)ch->ch_size,
				ZSTD_RATIO, ZSTD_TOTAL_MAX);
			goto out;
		}
		total += ch->ch_size;
		nz++;
	}
	if (!nz || libelf_has_zstd())
		goto out;
	out = memfd_create("memprof-data-inflated", MFD_CLOEXEC);
	if (out < 0 || !copy_file(fd, out, (uint64_t)st.st_size)) {
		mp_fail(err, MP_E_IO, "cannot copy it to inflate its DWARF: %s",
			strerror(errno ? errno : EIO));
		goto fail;
	}
	end = (uint64_t)st.st_size;
	for (size_t i = 0; i < n; i++) {
		Elf64_Chdr ch = chs[i];
		size_t got;

		if (ch.ch_type != ELFCOMPRESS_ZSTD)
			continue;
		src = malloc(sh[i].sh_size - sizeof(ch) + 1);
		dst = malloc(ch.ch_size + 1);
		if (!src || !dst) {
			mp_fail(err, MP_E_NOMEM, NULL);
			goto fail;
		}
		if (!pread_all(fd, src, sh[i].sh_size - sizeof(ch),
			       sh[i].sh_offset + sizeof(ch))) {
			mp_fail(err, MP_E_IO, "cannot read section %zu", i);
			goto fail;
		}
		got = ZSTD_decompress(dst, ch.ch_size, src,
				      sh[i].sh_size - sizeof(ch));
		if (ZSTD_isError(got) || got != ch.ch_size) {
			mp_fail(err, MP_E_ZSTD, "section %zu does not "
				"inflate to the %llu bytes its header says: %s",
				i, (unsigned long long)ch.ch_size,
				ZSTD_isError(got) ? ZSTD_getErrorName(got) :
						    "a different size");
			goto fail;
		}
		end = (end + 15) & ~(uint64_t)15;
		if (!pwrite_all(out, dst, ch.ch_size, end)) {
			mp_fail(err, MP_E_IO, "cannot keep the inflated DWARF: %s",
				strerror(errno ? errno : EIO));
			goto fail;
		}
		sh[i].sh_offset = end;
		sh[i].sh_size = ch.ch_size;
		sh[i].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		sh[i].sh_addralign = ch.ch_addralign ? ch.ch_addralign : 1;
		end += ch.ch_size;
		free(src);
		free(dst);
		src = dst = NULL;
	}
	if (!pwrite_all(out, sh, n * sizeof(*sh), eh.e_shoff)) {
		mp_fail(err, MP_E_IO, "cannot keep the inflated DWARF: %s",
			strerror(errno ? errno : EIO));
		goto fail;
	}
	goto out;
fail:
	if (out >= 0)
		close(out);
	out = -1;
out:
	free(src);
	free(dst);
	free(chs);
	free(sh);
	return out;
}
