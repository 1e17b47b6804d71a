/*
 * sym.c - modules, PC mapping and the symbolization cache.
 *
 * Each module gets a Dwfl of its own with the module reported at bias 0
 * (dwfl_report_elf with base 0 and add_p_vaddr), so that a Dwfl address is
 * the ELF address for ET_EXEC and ET_DYN alike; dwfl_report_offline would
 * put an ET_DYN at 0x10000.  Modules of different programs may overlap in
 * ELF addresses, which one Dwfl cannot hold.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strdup, realpath, pread, O_CLOEXEC */
#endif

#include "sym.h"
#include "sym_cache.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <sha1.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Clang and gcc put an inlined call's discriminator here; dwarf.h lacks it. */
#ifndef DW_AT_GNU_discriminator
#define DW_AT_GNU_discriminator 0x2136
#endif

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"
/* Scope nests deeper than this (never seen) lose their outermost levels. */
#define MAX_SCOPE_DEPTH 256

/*
 * Why an address is left unsymbolized: its debug information cannot be
 * trusted.  A code, not a string, so that the symbol cache can store it.
 */
enum sym_why {
	WHY_NONE,
	WHY_UNIT_HEADER,
	WHY_UNIT_VERSION,
	WHY_LINE_TABLE,
	WHY_NOT_TEXT,
	WHY_NAME_REF,
	WHY_DIE_ORDER,
	WHY_COUNT
};

static const char *const why_text[WHY_COUNT] = {
	[WHY_UNIT_HEADER] = "a compilation unit header libdw cannot read, "
			    "such as one of an unknown DWARF version",
	[WHY_UNIT_VERSION] = "a compilation unit of an unknown DWARF version",
	[WHY_LINE_TABLE] = "a line table that does not read",
	[WHY_NOT_TEXT] = "a name that is not text",
	[WHY_NAME_REF] = "a function whose declaration is not a function",
	[WHY_DIE_ORDER] = "a tree of entries that runs back on itself",
};

/* An executable PT_LOAD, to place the segments of v1/v2 profiles. */
struct sym_load {
	uint64_t offset, vaddr, memsz;
};

/*
 * A subprogram's scope tree: its inlined subroutines and lexical blocks,
 * node 0 being the subprogram itself, and their address ranges sorted by
 * lo, each linked to the nearest range that encloses it.  Built on the
 * first address that lands in the subprogram, so that later addresses
 * find their innermost scope by binary search instead of walking DIEs:
 * clang emits no DW_AT_sibling, so each dwarf_siblingof parses the whole
 * subtree it skips.
 */
struct sym_scope {
	Dwarf_Off off;
	int32_t parent;		/* node index, -1 for the subprogram */
	uint32_t tag;
};

struct sym_srange {
	uint64_t lo, hi;	/* DWARF addresses */
	uint32_t node;
	int32_t up;		/* nearest enclosing range, or -1 */
	uint32_t depth;		/* the node's */
};

struct sym_fn {
	Dwarf_Off off;
	struct sym_scope *nodes;
	struct sym_srange *r;
	uint32_t nnodes, nr;
	bool built;
	bool disorder;		/* its DIEs out of order: die_onward() */
};

/* A subprogram's address range, DWARF addresses; fn indexes sym_cu.fns. */
struct sym_range {
	uint64_t lo, hi;
	uint32_t fn;
};

/*
 * A compile unit: its DIE and the ranges of its subprograms, sorted by lo,
 * collected on first use.  In split DWARF (-gsplit-dwarf) the unit's DIE
 * in the binary is a skeleton holding its address ranges and line table,
 * and its subprograms are in a .dwo file: SCOPE is that split unit's DIE,
 * and DW the Dwarf its offsets belong to (NULL: no .dwo).  Otherwise
 * SCOPE is DIE.  A .dwo is opened on the unit's first use (cu_scope()):
 * a program of thousands of units has as many.
 */
struct sym_cu {
	Dwarf_Die die;
	Dwarf_Die scope;
	Dwarf *dw;
	bool skeleton;		/* its split unit not looked for yet */
	struct sym_range *r;
	size_t n;
	struct sym_fn *fns;
	size_t nfns;
	bool built;
	uint16_t version;	/* of the unit header */
	bool checked;		/* by cu_trusted() */
	uint8_t distrust;	/* why it cannot be trusted, or WHY_NONE */
	bool scoped;		/* by cu_scope() */
	bool gcc;		/* DW_AT_producer "GNU ...", set by cu_scope() */
	bool cxx;		/* a C++ unit, set by cu_scope() */
	struct sym_qscope *qs;	/* scopes for qualified names, on first use */
	size_t nqs;
	bool qs_built;
};

/*
 * A DIE of a unit that names a scope (namespace, class, structure, union,
 * subprogram), in preorder: the DIEs in [lo, hi) are its subtree, up the
 * enclosing one or -1.
 */
struct sym_qscope {
	uint64_t lo, hi;
	int32_t up;
	int tag;
	const char *name;	/* NULL: anonymous */
};

/* A range of a CU, DWARF addresses; cu indexes sym_module.cus. */
struct sym_cu_range {
	uint64_t lo, hi;
	size_t cu;
};

/* An ELF symbol, Dwfl addresses. */
struct sym_elfsym {
	uint64_t addr, size;
	const char *name;	/* owned by libdwfl */
	uint32_t shndx;		/* section index, SHN_ABS & co. */
	uint32_t index;		/* in the symbol table */
	uint8_t bind;		/* 3 global, 2 weak, 1 local */
};

/* An allocated section, for the same-section test of sizeless symbols. */
struct sym_section {
	uint64_t addr, end;
	uint32_t index;
};

struct sym_module {
	/* libdwfl keeps pointers to these two: the module never moves. */
	Dwfl_Callbacks cb;
	char *dbgpath;		/* "DIR:DIR:...", libdwfl's debuginfo_path */
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;		/* Dwfl address - ELF address */
	struct sym_load *xl;	/* executable PT_LOADs */
	size_t nxl;
	uint8_t build_id[RAW_BUILD_ID_MAX];
	uint32_t build_id_size;
	bool from_debug_dir;
	bool warned_nomatch;
	bool warned_untrusted;	/* its DWARF was found corrupt, and said */
	bool warned_nodwarf;	/* "no DWARF" said */
	bool split;		/* has split DWARF units: never cached */
	char *zstd_why;		/* why its zstd-compressed DWARF is unread */
	bool warned_nodwo;	/* "split DWARF file not found" said */
	uint8_t distrust;	/* why none of its DWARF can be trusted */
	uint64_t untrusted;	/* addresses left unsymbolized for that */
	int dwarf;		/* -1 not yet known, 0 none, 1 present */
	bool dw_tried;		/* dwfl_module_getdwarf() called */
	bool dw_nomem;		/* ... and the units' index ran out of memory */
	/*
	 * The symbol cache (sym_cache.h): its file for this module, read on
	 * the first lookup; the key it must carry; whether this run
	 * symbolized addresses it lacks (then it is written at release).
	 * The debug file the key was computed with, to check that libdwfl
	 * used that one: device and inode, valid if pred_found.
	 */
	uint8_t cache_state;	/* CACHE_* */
	bool cache_dirty;
	bool pred_found;
	dev_t pred_dev;
	ino_t pred_ino;
	struct sym_cache_key cache_key;
	struct sym_cache_file cache;
	Dwarf *dw;
	Dwarf_Addr dwbias;	/* Dwfl address - DWARF address */
	struct sym_cu *cus;	/* in .debug_info order */
	size_t ncus;
	struct sym_cu_range *cur;	/* sorted by lo */
	size_t ncur;
	/*
	 * The symbol table sorted by address, built on first use:
	 * dwfl_module_addrinfo scans every symbol on every call.
	 */
	bool syms_built;
	struct sym_elfsym *syms;
	size_t nsyms;
	uint64_t *sym_maxend;	/* max end of sized syms[0..i] */
	uint32_t *sym_sizeless;	/* last sizeless sym at or before i, + 1 */
	struct sym_section *secs;	/* sorted by addr */
	size_t nsecs;
	uint64_t addrs, with_line, symtab_only;
};

struct sym_bid {
	uint8_t id[RAW_BUILD_ID_MAX];
	uint32_t size;
	int32_t module;		/* -1: no binary found for it */
	bool warned;
};

struct sym_entry {
	uint64_t addr;
	const struct sym_frames *fr;
	int32_t module;
	uint8_t why;		/* enum sym_why: why fr is empty */
};

#define CACHE_UNTRIED 0
#define CACHE_OFF 1	/* no cache for this module (none, or no key) */
#define CACHE_READ 2	/* key computed; cache.buf is the file, if valid */

struct sym_str {
	const char *s;
	const char *pretty;	/* demangled, NULL until asked */
	uint32_t len;
	uint8_t cls;		/* SYM_CLS_* bits */
};

#define SYM_CLS_FN_DONE 1
#define SYM_CLS_FN_RT 2
#define SYM_CLS_FILE_DONE 4
#define SYM_CLS_FILE_RT 8
#define SYM_CLS_FN_LIB 16

static const struct sym_frames no_frames;

/* ---- warnings ---------------------------------------------------------- */

static void warn(struct sym_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(struct sym_ctx *ctx, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!ctx->opt.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->opt.warn(ctx->opt.warn_arg, msg);
}

/* What becomes of the frames of a module without a binary. */
static const char *fate(const struct sym_ctx *ctx)
{
	return ctx->opt.unsymbolized_fate ? ctx->opt.unsymbolized_fate
					  : "its frames stay unsymbolized";
}

/*
 * True the first time KEY is seen.  Warnings are few, so a list is enough;
 * when it cannot grow, warning twice beats failing.
 */
static bool first_time(struct sym_ctx *ctx, uint64_t key)
{
	for (size_t i = 0; i < ctx->nwarned; i++)
		if (ctx->warned[i] == key)
			return false;
	if (MP_GROW(ctx->warned, ctx->awarned, ctx->nwarned + 1))
		ctx->warned[ctx->nwarned++] = key;
	return true;
}


/* ---- lifecycle --------------------------------------------------------- */

void sym_init(struct sym_ctx *ctx, const struct sym_options *opt)
{
	memset(ctx, 0, sizeof(*ctx));
	if (opt)
		ctx->opt = *opt;
	ctx->main = -1;
	ctx->arena = (struct mp_arena)MP_ARENA_INIT;
}

static void module_free(struct sym_module *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	for (size_t i = 0; i < m->ncus; i++) {
		for (size_t k = 0; k < m->cus[i].nfns; k++) {
			free(m->cus[i].fns[k].nodes);
			free(m->cus[i].fns[k].r);
		}
		free(m->cus[i].fns);
		free(m->cus[i].r);
		free(m->cus[i].qs);
	}
	free(m->cus);
	free(m->cur);
	free(m->syms);
	free(m->sym_maxend);
	free(m->sym_sizeless);
	free(m->secs);
	free(m->xl);
	sym_cache_file_release(&m->cache);
	free(m->path);
	free(m->dbgpath);
	free(m->zstd_why);
	free(m);
}

static void cache_save(struct sym_ctx *ctx, int32_t module);

void sym_release(struct sym_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->opt.cache_dir)
		for (size_t i = 0; i < ctx->nmods; i++)
			cache_save(ctx, (int32_t)i);
	for (size_t i = 0; i < ctx->nmods; i++)
		module_free(ctx->mods[i]);
	free(ctx->mods);
	for (size_t i = 0; i < ctx->ndirs; i++)
		free(ctx->dirs[i]);
	free(ctx->dirs);
	free(ctx->bids);
	ht_release(&ctx->bid_ht);
	free(ctx->warned);
	free(ctx->entries);
	ht_release(&ctx->entry_ht);
	free(ctx->strs);
	ht_release(&ctx->str_ht);
	free(ctx->scratch);
	sym_libs_release(&ctx->libs);
	sym_libs_release(&ctx->runtime_libs);
	sym_libs_release(&ctx->dir_libs);
	mp_arena_release(&ctx->arena);
	memset(ctx, 0, sizeof(*ctx));
	ctx->main = -1;
}

/* ---- debug directories and separate debug files ------------------------ */

/* DIR1:DIR2:...:/usr/lib/debug, as libdwfl's debuginfo_path wants it. */
static char *make_dbgpath(const struct sym_ctx *ctx)
{
	size_t len = 1, n;
	char *s, *p;

	for (size_t i = 0; i < ctx->ndirs; i++)
		if (!mp_add(len, strlen(ctx->dirs[i]) + 1, &len))
			return NULL;
	if (!mp_add(len, sizeof(DEFAULT_DEBUG_DIR), &len))
		return NULL;
	s = p = malloc(len);
	if (!s)
		return NULL;
	for (size_t i = 0; i < ctx->ndirs; i++) {
		n = strlen(ctx->dirs[i]);
		memcpy(p, ctx->dirs[i], n);
		p += n;
		*p++ = ':';
	}
	if (!ctx->opt.no_default_debug_dir) {
		memcpy(p, DEFAULT_DEBUG_DIR, sizeof(DEFAULT_DEBUG_DIR) - 1);
		p += sizeof(DEFAULT_DEBUG_DIR) - 1;
	} else if (p > s) {
		p--;		/* the trailing ':' */
	}
	*p = '\0';
	return s;
}

/* Does the file at PATH start with "#!"?  (A build tree's libtool
 * wrapper stands where the program will be installed.) */
static bool is_script(const char *path)
{
	char head[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool script = fd >= 0 && pread(fd, head, 2, 0) == 2 &&
		      head[0] == '#' && head[1] == '!';

	if (fd >= 0)
		close(fd);
	return script;
}

/* Is entry NAME of directory D a directory to descend into (not a link)? */
static bool real_dir(DIR *d, const char *name)
{
	struct stat st;

	return fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

/*
 * Add the regular files under directory FD (named PATH) to CTX's
 * --binary-dir files, DEPTH levels down at most, and the links to
 * regular files to LINKS, for after them: a build id is looked up in
 * the order the files were added, and a file's own name is the one to
 * show (Graphviz installs neato, fdp and patchwork as links to dot, and
 * libgvc.so to libgvc.so.6.0.0).  FD is closed.
 */
static enum mp_errcode add_dir_files(struct sym_ctx *ctx, int fd,
				     const char *path, int depth,
				     struct sym_libs *links, struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;
	struct dirent *e;
	DIR *d = fdopendir(fd);

	if (!d) {
		close(fd);
		return mp_fail(err, MP_E_IO, "cannot read directory '%s': %s",
			       path, strerror(errno));
	}
	while (!rc && (e = readdir(d))) {
		struct stat st, lst;
		char *sub;
		int sfd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* A link to a file is followed, one to a directory not. */
		if (fstatat(dirfd(d), e->d_name, &st, 0) != 0 ||
		    (!S_ISREG(st.st_mode) &&
		     !(S_ISDIR(st.st_mode) && depth > 0 &&
		       real_dir(d, e->d_name))))
			continue;
		sub = mp_arena_alloc_uninit(&ctx->arena, strlen(path) +
					    strlen(e->d_name) + 2);
		if (!sub) {
			rc = mp_fail(err, MP_E_NOMEM, NULL);
			break;
		}
		sprintf(sub, "%s/%s", path, e->d_name);
		if (S_ISDIR(st.st_mode)) {
			sfd = openat(dirfd(d), e->d_name,
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sfd >= 0)
				rc = add_dir_files(ctx, sfd, sub, depth - 1,
						   links, err);
		} else if (ctx->dir_libs.n + links->n >= SYM_DIR_FILES) {
			rc = mp_fail(err, MP_E_TOO_LARGE, "more than %d files "
				     "under the --binary-dir directories",
				     SYM_DIR_FILES);
		} else {
			bool link = fstatat(dirfd(d), e->d_name, &lst,
					    AT_SYMLINK_NOFOLLOW) == 0 &&
				    S_ISLNK(lst.st_mode);

			if (sym_libs_add(link ? links : &ctx->dir_libs, sub))
				rc = mp_fail(err, MP_E_NOMEM, NULL);
		}
	}
	closedir(d);
	return rc;
}

enum mp_errcode sym_add_binary_dir(struct sym_ctx *ctx, const char *dir,
				   struct mp_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sym_libs links = { 0 };
	enum mp_errcode rc;

	if (fd < 0)
		return mp_fail(err, MP_E_IO, "cannot open directory: %s",
			       strerror(errno));
	rc = add_dir_files(ctx, fd, dir, SYM_DIR_DEPTH, &links, err);
	for (size_t i = 0; !rc && i < links.n; i++)
		if (sym_libs_add(&ctx->dir_libs, links.v[i].path))
			rc = mp_fail(err, MP_E_NOMEM, NULL);
	sym_libs_release(&links);
	return rc;
}

enum mp_errcode sym_add_debug_dir(struct sym_ctx *ctx, const char *dir,
				  struct mp_err *err)
{
	char *copy;

	if (!*dir || strchr(dir, ':'))
		return mp_fail(err, MP_E_INVALID,
			       "debug directory '%s' is empty or has a ':'",
			       dir);
	/* libdwfl looks up build ids only in absolute directories. */
	copy = realpath(dir, NULL);
	if (!copy)
		return mp_fail(err, errno == ENOMEM ? MP_E_NOMEM : MP_E_IO,
			       "cannot use debug directory '%s': %s", dir,
			       strerror(errno));
	if (!MP_GROW(ctx->dirs, ctx->adirs, ctx->ndirs + 1)) {
		free(copy);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	ctx->dirs[ctx->ndirs++] = copy;
	/* Modules read their path lazily; give them the new one. */
	for (size_t i = 0; i < ctx->nmods; i++) {
		char *p = make_dbgpath(ctx);

		if (!p)
			return mp_fail(err, MP_E_NOMEM, NULL);
		free(ctx->mods[i]->dbgpath);
		ctx->mods[i]->dbgpath = p;
	}
	return MP_OK;
}

/* snprintf that reports truncation as failure. */
static bool path_fmt(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool path_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

/* The CRC-32 of .gnu_debuglink (zlib's polynomial), over a whole file. */
static bool file_crc32(int fd, uint32_t *out)
{
	unsigned char buf[65536];
	uint32_t crc = 0xffffffff;
	ssize_t n;
	off_t off = 0;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			crc ^= buf[i];
			for (int k = 0; k < 8; k++)
				crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
		}
		off += n;
	}
	*out = ~crc;
	return n == 0;
}

/*
 * Does the file open at FD stand for module MOD?  By build id when the
 * module has one, else by the debuglink CRC.
 */
static bool debug_file_matches(Dwfl_Module *mod, int fd, GElf_Word crc)
{
	const unsigned char *bits;
	const void *fbits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	ssize_t flen;
	bool ok = false;
	uint32_t c;
	Elf *elf;

	if (len <= 0)
		return file_crc32(fd, &c) && c == crc;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return false;
	flen = dwelf_elf_gnu_build_id(elf, &fbits);
	ok = flen == len && memcmp(bits, fbits, (size_t)len) == 0;
	elf_end(elf);
	return ok;
}

static int try_debug_file(Dwfl_Module *mod, const char *path,
			  const char *file_name, GElf_Word crc, char **found)
{
	int fd;

	if (strcmp(path, file_name) == 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (debug_file_matches(mod, fd, crc) && (*found = strdup(path)))
		return fd;
	close(fd);
	return -1;
}

/*
 * The file named by .gnu_debuglink DEBUGLINK of FILE_NAME: next to it, in
 * its .debug/ directory, or under each debug directory of DBGPATH.  Open,
 * its name in *FOUND; -1 if none.
 */
static int debuglink_find(Dwfl_Module *mod, const char *dbgpath,
			  const char *file_name, const char *debuglink,
			  GElf_Word crc, char **found)
{
	char dir[PATH_MAX], real[PATH_MAX], path[PATH_MAX];
	const char *slash, *d, *end;
	int fd;

	slash = strrchr(file_name, '/');
	if (!slash)
		path_fmt(dir, sizeof(dir), ".");
	else if (!path_fmt(dir, sizeof(dir), "%.*s",
			   (int)(slash - file_name), file_name))
		return -1;
	if ((path_fmt(path, sizeof(path), "%s/%s", dir, debuglink) &&
	     (fd = try_debug_file(mod, path, file_name, crc, found)) >= 0) ||
	    (path_fmt(path, sizeof(path), "%s/.debug/%s", dir, debuglink) &&
	     (fd = try_debug_file(mod, path, file_name, crc, found)) >= 0))
		return fd;
	if (!realpath(dir, real))
		return -1;
	for (d = dbgpath; d && *d; d = *end ? end + 1 : end) {
		end = strchr(d, ':');
		if (!end)
			end = d + strlen(d);
		if (*d == '/' &&
		    path_fmt(path, sizeof(path), "%.*s%s/%s", (int)(end - d),
			     d, real, debuglink) &&
		    (fd = try_debug_file(mod, path, file_name, crc, found)) >= 0)
			return fd;
	}
	return -1;
}

/*
 * The separate debug file of M found by build id, DIR/.build-id/xx/rest.debug
 * in the first debug directory that has one, as libdwfl looks; -1 if none.
 * *FOUND gets its path.
 */
static int build_id_debug_file(struct sym_module *m, char **found)
{
	char hex[2 * RAW_BUILD_ID_MAX + 1], path[PATH_MAX];
	const char *d, *end;
	int fd;

	if (m->build_id_size < 3)
		return -1;
	mp_hex(m->build_id, m->build_id_size, hex, sizeof(hex));
	for (d = m->dbgpath; d && *d; d = *end ? end + 1 : end) {
		end = strchr(d, ':');
		if (!end)
			end = d + strlen(d);
		if (*d == '+' || *d == '-')
			d++;
		if (d >= end || *d != '/' ||
		    !path_fmt(path, sizeof(path), "%.*s/.build-id/%.2s/%s.debug",
			      (int)(end - d), d, hex, hex + 2))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (debug_file_matches(m->mod, fd, 0) && (*found = strdup(path)))
			return fd;
		close(fd);
		break;
	}
	return -1;
}

/*
 * A copy of the debug file open as *FD with its zstd-compressed DWARF
 * inflated, in place of it, when it needs one (M->zstd_why says why it
 * could not be made).
 */
static void inflate_debug_file(struct sym_module *m, int *fd)
{
	struct mp_err zerr;
	int zfd = sym_zstd_inflate(*fd, &zerr);

	if (zfd >= 0) {
		close(*fd);
		*fd = zfd;
	} else if (zerr.code && m && !m->zstd_why) {
		m->zstd_why = strdup(zerr.detail);
	}
}

/*
 * libdwfl's find_debuginfo: by build id in the debug directories, then by
 * .gnu_debuglink.  Not dwfl_standard_find_debuginfo: that one falls back
 * to debuginfod, i.e. the network, whenever DEBUGINFOD_URLS is set.
 * libdwfl also asks here for a dwz alternate file (DEBUGLINK is then the
 * .gnu_debugaltlink name, not the module's .gnu_debuglink), which
 * dwfl_build_id_find_debuginfo finds by the alternate's build id.  But
 * for the module's own debug file found by build id, that function keeps
 * an Elf of the file, which libdwfl then reads instead of the descriptor
 * returned: a file whose DWARF must be inflated (sym_zstd.c) is found and
 * returned here first.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink,
			  GElf_Word crc, char **found)
{
	struct sym_module *m = *userdata;
	const char *own = NULL;
	GElf_Addr bias;
	GElf_Word owncrc;
	Elf *elf;
	int fd;

	elf = dwfl_module_getelf(mod, &bias);
	if (elf)
		own = dwelf_elf_gnu_debuglink(elf, &owncrc);
	if (m && (!debuglink || (own && strcmp(own, debuglink) == 0))) {
		fd = build_id_debug_file(m, found);
		if (fd >= 0) {
			int orig = fd;

			inflate_debug_file(m, &fd);
			if (fd != orig)
				return fd;
			close(fd);
			free(*found);
			*found = NULL;
		}
	}
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					  file_name, debuglink, crc, found);
	if (fd >= 0 || !debuglink || !file_name || !m)
		return fd;
	fd = debuglink_find(mod, m->dbgpath, file_name, debuglink, crc,
			    found);
	if (fd >= 0 && own && strcmp(own, debuglink) == 0)
		inflate_debug_file(m, &fd);
	return fd;
}

/* We always hand libdwfl the file; it never has to look for one. */
static int find_elf_none(Dwfl_Module *mod, void **userdata,
			 const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base;
	(void)file_name, (void)elfp;
	return -1;
}

/* ---- build id table ---------------------------------------------------- */

static uint64_t bid_hash(const uint8_t *id, uint32_t size)
{
	return mp_hash_bytes(id, size, 0x6b1d);
}

struct bid_key {
	const uint8_t *id;
	uint32_t size;
};

static bool same_bid(const void *key, uint32_t i, const void *arg)
{
	const struct bid_key *k = key;
	const struct sym_bid *b = &((const struct sym_ctx *)arg)->bids[i];

	return b->size == k->size && memcmp(b->id, k->id, k->size) == 0;
}

/*
 * Find or add ID (size 1..RAW_BUILD_ID_MAX); NULL when out of memory.  The
 * pointer is valid until the next build id is added.
 */
static struct sym_bid *bid_get(struct sym_ctx *ctx, const uint8_t *id,
			       uint32_t size, bool *added)
{
	struct bid_key k = { id, size };
	uint64_t h = bid_hash(id, size);
	uint32_t i = ht_find(&ctx->bid_ht, h, same_bid, &k, ctx);
	struct sym_bid *b;

	*added = false;
	if (i != HT_NONE)
		return &ctx->bids[i];
	if (!MP_GROW(ctx->bids, ctx->abids, ctx->nbids + 1) ||
	    ht_insert(&ctx->bid_ht, h, (uint32_t)ctx->nbids))
		return NULL;
	b = &ctx->bids[ctx->nbids++];
	memset(b, 0, sizeof(*b));
	memcpy(b->id, id, size);
	b->size = size;
	b->module = -1;
	*added = true;
	return b;
}

/* ---- modules ------------------------------------------------------------ */

static enum mp_errcode read_phdrs(struct sym_module *m, Elf *elf,
				  struct mp_err *err)
{
	size_t phnum, alloc = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return mp_fail(err, MP_E_ELF, "cannot read program headers: %s",
			       elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return mp_fail(err, MP_E_ELF, "bad program header %zu", i);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (!MP_GROW(m->xl, alloc, m->nxl + 1))
			return mp_fail(err, MP_E_NOMEM, NULL);
		m->xl[m->nxl++] = (struct sym_load){ ph.p_offset, ph.p_vaddr,
						     ph.p_memsz };
	}
	return MP_OK;
}

/* Does [OFF, OFF + LEN) lie in a file of SIZE bytes? */
static bool in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/*
 * Is ELF whole?  A file cut short keeps its ELF header and
 * often its build id, so it would be taken for the right binary with no
 * symbols: its headers, sections and segments must lie in it.
 */
static enum mp_errcode check_whole(Elf *elf, const GElf_Ehdr *eh,
				   struct mp_err *err)
{
	size_t size = 0, n;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	const char *what = NULL;
	uint64_t end = 0;

	if (!elf_rawfile(elf, &size))
		return mp_fail(err, MP_E_ELF, "cannot read: %s", elf_errmsg(-1));
	if (!in_file(eh->e_phoff, (uint64_t)eh->e_phnum * eh->e_phentsize, size)) {
		what = "the program headers";
		end = eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize;
	} else if (eh->e_shoff &&
		   !in_file(eh->e_shoff, (uint64_t)(eh->e_shnum ? eh->e_shnum : 1) *
				eh->e_shentsize, size)) {
		what = "the section headers";
		end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	}
	if (elf_getphdrnum(elf, &n) != 0)
		n = 0;		/* read_phdrs() says why */
	for (size_t i = 0; !what && i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    !in_file(ph.p_offset, ph.p_filesz, size)) {
			what = "a loadable segment";
			end = ph.p_offset + ph.p_filesz;
		}
	while (!what && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    !in_file(sh.sh_offset, sh.sh_size, size)) {
			what = "a section";
			end = sh.sh_offset + sh.sh_size;
		}
	if (!what)
		return MP_OK;
	return mp_fail(err, MP_E_TRUNCATED, "truncated: %s would end at byte %"
		       PRIu64 ", past the file's %zu bytes", what, end, size);
}

/* Open PATH as a module; on success *OUT is the new module. */
static enum mp_errcode module_open(struct sym_ctx *ctx, const char *path,
				   bool from_debug_dir,
				   struct sym_module **out,
				   struct mp_err *err)
{
	struct sym_module *m;
	const unsigned char *bits;
	struct mp_err zerr;
	enum mp_errcode rc;
	GElf_Addr vaddr;
	GElf_Ehdr eh;
	void **ud;
	Elf *elf;
	int fd, zfd, len;

	/* libdwfl would say "no such file" less precisely. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mp_fail(err, MP_E_IO, "cannot open: %s", strerror(errno));
	{
		struct stat st;
		bool dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);

		if (dir) {
			close(fd);
			return mp_fail(err, MP_E_IO, "is a directory, not an "
				       "executable or shared library (--binary-dir "
				       "takes a tree of them, --debug-dir one of "
				       ".build-id debug files)");
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path)) || !(m->dbgpath = make_dbgpath(ctx))) {
		close(fd);
		module_free(m);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	/* DWARF compressed with zstd: libdwfl reads an inflated copy. */
	zfd = sym_zstd_inflate(fd, &zerr);
	close(fd);
	if (zerr.code)
		m->zstd_why = strdup(zerr.detail);
	m->from_debug_dir = from_debug_dir;
	m->dwarf = -1;
	m->cb.find_elf = find_elf_none;
	m->cb.find_debuginfo = find_debuginfo;
	m->cb.section_address = dwfl_offline_section_address;
	m->cb.debuginfo_path = &m->dbgpath;
	m->dwfl = dwfl_begin(&m->cb);
	if (!m->dwfl) {
		if (zfd >= 0)
			close(zfd);
		module_free(m);
		return mp_fail(err, MP_E_NOMEM, "dwfl_begin: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, path, path, zfd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod && zfd >= 0)
		close(zfd);		/* consumed only on success */
	if (!m->mod) {
		rc = is_script(path)
		     ? mp_fail(err, MP_E_ELF, "a script, not an ELF file (a "
			       "libtool wrapper? the program it runs is in "
			       ".libs beside it)")
		     : mp_fail(err, MP_E_ELF, "not a usable ELF file: %s",
			       dwfl_errmsg(-1));
		module_free(m);
		return rc;
	}
	elf = dwfl_module_getelf(m->mod, &m->bias);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		rc = mp_fail(err, MP_E_ELF, "cannot read ELF header: %s",
			     dwfl_errmsg(-1));
		module_free(m);
		return rc;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		module_free(m);
		return mp_fail(err, MP_E_ELF,
			       "neither an executable nor a shared object");
	}
	if ((rc = check_whole(elf, &eh, err)) ||
	    (rc = read_phdrs(m, elf, err))) {
		module_free(m);
		return rc;
	}
	len = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (len > 0 && len <= RAW_BUILD_ID_MAX) {
		memcpy(m->build_id, bits, (size_t)len);
		m->build_id_size = (uint32_t)len;
	}
	dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = m;
	*out = m;
	return MP_OK;
}

static enum mp_errcode module_push(struct sym_ctx *ctx, struct sym_module *m,
				   int32_t *index, struct mp_err *err)
{
	if (ctx->nmods >= INT32_MAX ||
	    !MP_GROW(ctx->mods, ctx->amods, ctx->nmods + 1)) {
		module_free(m);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	*index = (int32_t)ctx->nmods;
	ctx->mods[ctx->nmods++] = m;
	return MP_OK;
}

enum mp_errcode sym_add_binary(struct sym_ctx *ctx, const char *path,
			       struct mp_err *err)
{
	struct sym_module *m;
	struct sym_bid *b = NULL;
	enum mp_errcode rc;
	bool added;
	int32_t idx;
	char hex[2 * RAW_BUILD_ID_MAX + 1];

	if ((rc = module_open(ctx, path, false, &m, err)))
		return rc;
	if (m->build_id_size) {
		b = bid_get(ctx, m->build_id, m->build_id_size, &added);
		if (!b) {
			module_free(m);
			return mp_fail(err, MP_E_NOMEM, NULL);
		}
		if (b->module >= 0 && !ctx->mods[b->module]->from_debug_dir) {
			mp_hex(m->build_id, m->build_id_size, hex,
					    sizeof(hex));
			warn(ctx, "'%s' has the same build id %s as '%s'; using '%s'",
			     path, hex, ctx->mods[b->module]->path,
			     ctx->mods[b->module]->path);
			module_free(m);
			return MP_OK;
		}
	}
	if ((rc = module_push(ctx, m, &idx, err)))
		return rc;
	if (b)
		b->module = idx;
	if (ctx->main < 0)
		ctx->main = idx;
	return MP_OK;
}

/*
 * The library at PATH, found by B's build id, as a module, or -1: as a
 * binary given when GIVEN (a --binary-dir file), else as a file found.
 */
static int32_t library_module(struct sym_ctx *ctx, const char *path,
			      struct sym_bid *b, bool given)
{
	struct sym_module *m;
	struct mp_err err;
	int32_t idx;

	if (module_open(ctx, path, !given, &m, &err))
		return -1;
	/* The file may have been replaced since the cache was read. */
	if (m->build_id_size != b->size ||
	    memcmp(m->build_id, b->id, b->size) != 0) {
		module_free(m);
		return -1;
	}
	/* Stripped, as distributions ship them: not worth a warning. */
	m->warned_nodwarf = !given;
	if (module_push(ctx, m, &idx, &err))
		return -1;
	return idx;
}

/*
 * A library with B's build id, as a module, or -1: the profiling
 * runtime's (opt.runtime_libs), else one the loader's cache lists.
 */
static int32_t find_library(struct sym_ctx *ctx, struct sym_bid *b)
{
	struct sym_libs *own = &ctx->runtime_libs;
	struct mp_err err;
	const char *path;

	if (!own->loaded) {
		own->loaded = true;
		for (size_t i = 0; i < ctx->opt.nruntime_libs; i++)
			if (sym_libs_add(own, ctx->opt.runtime_libs[i]))
				break;	/* out of memory: fewer places to look */
	}
	if ((path = sym_libs_find(own, b->id, b->size)))
		return library_module(ctx, path, b, false);
	if (!ctx->opt.libs_cache ||
	    sym_libs_load(&ctx->libs, ctx->opt.libs_cache, &err) ||
	    !(path = sym_libs_find(&ctx->libs, b->id, b->size)))
		return -1;
	return library_module(ctx, path, b, false);
}

/*
 * The module for a build id no binary was registered with: a file under a
 * --binary-dir, else a file found by it in the debug directories, else the
 * runtime's library or one the loader's cache lists (find_library()), or
 * -1.  The answer is remembered either way.
 */
static int32_t find_by_build_id(struct sym_ctx *ctx, struct sym_bid *b)
{
	char hex[2 * RAW_BUILD_ID_MAX + 1], path[PATH_MAX];
	const char *file;
	static const char *const suffix[] = { "", ".debug" };
	struct sym_module *m;
	struct mp_err err;
	int32_t idx;
	size_t ndirs = ctx->ndirs + !ctx->opt.no_default_debug_dir;

	if (b->size < 2)
		return -1;
	/* A --binary-dir file is a binary given, before any found. */
	if ((file = sym_libs_find(&ctx->dir_libs, b->id, b->size)))
		return library_module(ctx, file, b, true);
	mp_hex(b->id, b->size, hex, sizeof(hex));
	for (size_t i = 0; i < ndirs; i++) {
		const char *dir = i < ctx->ndirs ? ctx->dirs[i] : DEFAULT_DEBUG_DIR;

		for (size_t k = 0; k < 2; k++) {
			if (!path_fmt(path, sizeof(path), "%s/.build-id/%.2s/%s%s",
				      dir, hex, hex + 2, suffix[k]) ||
			    access(path, R_OK) != 0 ||
			    module_open(ctx, path, true, &m, &err))
				continue;
			if (m->build_id_size != b->size ||
			    memcmp(m->build_id, b->id, b->size) != 0) {
				module_free(m);
				continue;
			}
			if (module_push(ctx, m, &idx, &err))
				return -1;
			return idx;
		}
	}
	return find_library(ctx, b);
}

/* ---- mapping PCs --------------------------------------------------------- */

/*
 * Does v1/v2 segment S (file offset, page-aligned mapping) hold executable
 * PT_LOAD L?  The mapping starts at the page holding L's first byte; we do
 * not know the page size, so allow up to 64 KiB of slack.
 */
static bool load_fits(const struct raw_segment *s, const struct sym_load *l,
		      uint64_t *vaddr)
{
	uint64_t delta, span;

	if (s->offset > l->offset || l->offset - s->offset >= 0x10000 ||
	    l->offset - s->offset > l->vaddr)
		return false;
	delta = l->offset - s->offset;
	if (__builtin_add_overflow(delta, l->memsz, &span) ||
	    __builtin_add_overflow(span, 0xffff, &span) ||
	    s->end - s->start > span)
		return false;
	*vaddr = l->vaddr - delta;
	return true;
}

static bool main_fits(const struct sym_module *m, const struct raw_segment *s,
		      uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nxl; i++)
		if (load_fits(s, &m->xl[i], vaddr))
			return true;
	return false;
}

/*
 * In a v1/v2 profile, is segment I the main executable's?  Its segments
 * come first in the map, so I and every segment before it must fit.
 */
static bool main_owns(const struct sym_ctx *ctx, const struct raw_profile *prof,
		      size_t i, uint64_t *vaddr)
{
	const struct sym_module *m;

	if (ctx->main < 0)
		return false;
	m = ctx->mods[ctx->main];
	for (size_t j = 0; j <= i; j++)
		if (!main_fits(m, &prof->segments[j], vaddr))
			return false;
	return true;
}

/*
 * Does v3+ segment S, of M's build id, place M's code where M has it?
 * S's start less its offset (the module's load address) is the start of
 * the page, of up to 64 KiB, that holds an executable PT_LOAD's first
 * byte, and S ends within that PT_LOAD (and its last page).  A damaged
 * offset puts the code elsewhere, where nothing would be found.
 */
static bool v3_fits(const struct sym_module *m, const struct raw_segment *s)
{
	uint64_t a = s->start - s->offset, len = s->end - s->start;

	if (!m->nxl)
		return true;	/* nothing to judge by */
	for (size_t i = 0; i < m->nxl; i++) {
		const struct sym_load *l = &m->xl[i];

		if (l->vaddr >= a && l->vaddr - a < 0x10000 &&
		    len <= l->vaddr - a + l->memsz + 0x10000)
			return true;
	}
	return false;
}

/* Does a segment of PROF have M's build id? */
static bool in_profile(const struct sym_module *m, const struct raw_profile *prof)
{
	for (size_t i = 0; i < prof->nsegments; i++)
		if (m->build_id_size &&
		    prof->segments[i].build_id_size == m->build_id_size &&
		    memcmp(prof->segments[i].build_id, m->build_id,
			   m->build_id_size) == 0)
			return true;
	return false;
}

static enum mp_errcode no_binary_v3(struct sym_ctx *ctx,
				    const struct raw_profile *prof, size_t i,
				    struct sym_bid *b, struct mp_err *err)
{
	const struct raw_segment *s = &prof->segments[i];
	char hex[2 * RAW_BUILD_ID_MAX + 1], mhex[2 * RAW_BUILD_ID_MAX + 1];
	const struct sym_module *m = ctx->main >= 0 ? ctx->mods[ctx->main] : NULL;
	/*
	 * The first binary given is taken for the main executable, but one
	 * whose build id is that of another segment (a library given alone)
	 * is not the wrong build of the main one: say only what is missing.
	 */
	bool mismatch = i == 0 && m && !in_profile(m, prof);

	mp_hex(s->build_id, s->build_id_size, hex, sizeof(hex));
	if (mismatch)
		mp_hex(m->build_id, m->build_id_size, mhex,
				    sizeof(mhex));
	if (ctx->opt.strict || (ctx->opt.strict_main && i == 0)) {
		const char *why = ctx->opt.strict ? "" :
				  " (the program's binary is needed)";

		if (mismatch)
			return mp_fail(err, MP_E_BUILD_ID,
				       "'%s' has build id %s, the profile's main segment 0x%llx-0x%llx has %s%s",
				       m->path, m->build_id_size ? mhex : "(none)",
				       (unsigned long long)s->start,
				       (unsigned long long)s->end, hex, why);
		return mp_fail(err, MP_E_NO_BINARY,
			       "no binary with build id %s for segment 0x%llx-0x%llx%s",
			       hex, (unsigned long long)s->start,
			       (unsigned long long)s->end, why);
	}
	/* Another program's profile: the caller names the input. */
	if ((mismatch && ctx->opt.caller_names_others) || (b && b->warned))
		return MP_OK;
	if (b)
		b->warned = true;
	else if (!first_time(ctx, mp_hash_bytes(s->build_id, s->build_id_size, 3)))
		return MP_OK;
	if (!s->build_id_size)
		warn(ctx, "segment 0x%llx-0x%llx has no build id; %s",
		     (unsigned long long)s->start, (unsigned long long)s->end,
		     fate(ctx));
	else if (mismatch)
		warn(ctx, "'%s' has build id %s, the profile's main segment 0x%llx-0x%llx has %s; %s",
		     m->path, m->build_id_size ? mhex : "(none)",
		     (unsigned long long)s->start, (unsigned long long)s->end,
		     hex, fate(ctx));
	else
		warn(ctx, "no binary with build id %s for segment 0x%llx-0x%llx; %s",
		     hex, (unsigned long long)s->start,
		     (unsigned long long)s->end, fate(ctx));
	return MP_OK;
}

static enum mp_errcode no_binary_v1(struct sym_ctx *ctx,
				    const struct raw_profile *prof, size_t i,
				    struct mp_err *err)
{
	const struct raw_segment *s = &prof->segments[i];
	const struct sym_module *m = ctx->main >= 0 ? ctx->mods[ctx->main] : NULL;
	uint64_t key[4] = { 1, i, s->offset, s->end - s->start };
	unsigned long long start = s->start, end = s->end, off = s->offset;

	/*
	 * Only the main executable's segments can be placed in these
	 * versions, so strict mode cares about segment 0 alone.
	 */
	if ((ctx->opt.strict || ctx->opt.strict_main) && i == 0)
		return mp_fail(err, m ? MP_E_BUILD_ID : MP_E_NO_BINARY,
			       m ? "'%s' does not fit the profile's main segment 0x%llx-0x%llx (file offset 0x%llx)"
				 : "%sno binary for the profile's main segment 0x%llx-0x%llx (file offset 0x%llx)",
			       m ? m->path : "", start, end, off);
	if (!first_time(ctx, mp_hash_bytes(key, sizeof(key), 1)))
		return MP_OK;
	if (i == 0 && m)
		warn(ctx, "'%s' does not fit the profile's main segment 0x%llx-0x%llx (file offset 0x%llx); %s",
		     m->path, start, end, off, fate(ctx));
	else if (i == 0)
		warn(ctx, "no binary for the profile's main segment 0x%llx-0x%llx (file offset 0x%llx); %s",
		     start, end, off, fate(ctx));
	else
		warn(ctx, "no binary for segment 0x%llx-0x%llx (file offset 0x%llx): a version %u profile has no build ids to find one by; %s",
		     start, end, off, prof->version, fate(ctx));
	return MP_OK;
}

enum mp_errcode sym_map_pc(struct sym_ctx *ctx, const struct raw_profile *prof,
			   uint64_t pc, struct sym_addr *out,
			   struct mp_err *err)
{
	const struct raw_segment *s = NULL;
	struct sym_bid *b;
	uint64_t vaddr;
	bool added;
	size_t hint = 0;
	int64_t i;

	memset(out, 0, sizeof(*out));
	out->module = -1;
	out->segment = -1;
	ctx->stats.pcs++;
	i = raw_segment_of(prof, pc, &hint);
	if (i < 0 || i > INT32_MAX) {
		ctx->stats.unmapped++;
		if (first_time(ctx, 0))
			warn(ctx, "pc 0x%llx lies in no segment of the profile; such frames stay unsymbolized",
			     (unsigned long long)pc);
		return MP_OK;
	}
	s = &prof->segments[i];
	out->segment = (int32_t)i;
	if (prof->version >= 3) {
		out->addr = out->offset = pc - s->offset;
		out->build_id_size = s->build_id_size > RAW_BUILD_ID_MAX
			? RAW_BUILD_ID_MAX : s->build_id_size;
		memcpy(out->build_id, s->build_id, out->build_id_size);
		if (!out->build_id_size) {
			ctx->stats.no_binary++;
			return no_binary_v3(ctx, prof, i, NULL, err);
		}
		b = bid_get(ctx, out->build_id, out->build_id_size, &added);
		if (!b)
			return mp_fail(err, MP_E_NOMEM, NULL);
		if (added)
			b->module = find_by_build_id(ctx, b);
		/* A debug file found by build id is not the program's binary
		 * that strict_main asks for: the LLVM export leaves frames
		 * of such files out. */
		if (b->module >= 0 && !(ctx->opt.strict_main && i == 0 &&
					ctx->mods[b->module]->from_debug_dir)) {
			out->module = b->module;
			return MP_OK;
		}
		ctx->stats.no_binary++;
		return no_binary_v3(ctx, prof, i, b, err);
	}
	out->offset = pc - s->start + s->offset;
	if (main_owns(ctx, prof, i, &vaddr)) {
		out->module = ctx->main;
		out->addr = pc - s->start + vaddr;
		return MP_OK;
	}
	ctx->stats.no_binary++;
	return no_binary_v1(ctx, prof, i, err);
}

enum mp_errcode sym_module_of_build_id(struct sym_ctx *ctx, const uint8_t *bid,
				       uint32_t n, int32_t *module,
				       struct mp_err *err)
{
	struct sym_bid *b;
	bool added;

	*module = -1;
	if (n == 0)
		return MP_OK;
	b = bid_get(ctx, bid, n > RAW_BUILD_ID_MAX ? RAW_BUILD_ID_MAX : n, &added);
	if (!b)
		return mp_fail(err, MP_E_NOMEM, NULL);
	if (added)
		b->module = find_by_build_id(ctx, b);
	*module = b->module;
	return MP_OK;
}

/* Does a registered binary (or debug-dir module) carry S's build id? */
static bool covered(const struct sym_ctx *ctx, const struct raw_segment *s)
{
	if (!s->build_id_size)
		return false;
	for (size_t k = 0; k < ctx->nmods; k++) {
		const struct sym_module *m = ctx->mods[k];

		if (m->build_id_size == s->build_id_size &&
		    memcmp(m->build_id, s->build_id, s->build_id_size) == 0)
			return true;
	}
	return false;
}

enum mp_errcode sym_other_program(struct sym_ctx *ctx,
				  const struct raw_profile *prof,
				  bool *other, uint8_t *bid, uint32_t *n,
				  struct mp_err *err)
{
	const struct raw_segment *s0 = prof->nsegments ? &prof->segments[0] : NULL;
	int32_t module;
	enum mp_errcode rc;

	*other = false;
	if (prof->version < 3 || !s0 || !s0->build_id_size || ctx->main < 0 ||
	    in_profile(ctx->mods[ctx->main], prof))
		return MP_OK;
	*n = s0->build_id_size > RAW_BUILD_ID_MAX ? RAW_BUILD_ID_MAX
						   : s0->build_id_size;
	if ((rc = sym_module_of_build_id(ctx, s0->build_id, *n, &module, err)))
		return rc;
	memcpy(bid, s0->build_id, *n);
	*other = module < 0;
	return MP_OK;
}

enum mp_errcode sym_check_profile(struct sym_ctx *ctx,
				  const struct raw_profile *prof,
				  struct mp_err *err)
{
	char hex[2 * RAW_BUILD_ID_MAX + 1], shex[2 * RAW_BUILD_ID_MAX + 1];
	const struct raw_segment *s0 = prof->nsegments ? &prof->segments[0] : NULL;
	uint64_t vaddr;

	for (size_t k = 0; k < ctx->nmods; k++) {
		struct sym_module *m = ctx->mods[k];
		bool is_main = (int32_t)k == ctx->main, found = false;

		if (m->from_debug_dir || m->warned_nomatch)
			continue;
		if (prof->version < 3) {
			/* Only the main executable can be placed. */
			if (!is_main || (s0 && main_fits(m, s0, &vaddr)))
				continue;
			if (ctx->opt.strict)
				return mp_fail(err, MP_E_BUILD_ID,
					       "'%s' does not fit the profile's main segment",
					       m->path);
			/* As sym_map_pc() would at the segment's first PC,
			 * before anything of the profile is used. */
			if (ctx->opt.strict_main && s0)
				return no_binary_v1(ctx, prof, 0, err);
			m->warned_nomatch = true;
			if (s0)
				warn(ctx, "'%s' does not fit the profile's main segment 0x%llx-0x%llx (file offset 0x%llx)",
				     m->path, (unsigned long long)s0->start,
				     (unsigned long long)s0->end,
				     (unsigned long long)s0->offset);
			else
				warn(ctx, "the profile has no segments; '%s' is not used",
				     m->path);
			continue;
		}
		/* Version 3+: each segment of M's build id must fit M. */
		for (size_t i = 0; i < prof->nsegments; i++) {
			const struct raw_segment *si = &prof->segments[i];

			if (!m->build_id_size ||
			    si->build_id_size != m->build_id_size ||
			    memcmp(si->build_id, m->build_id, m->build_id_size) ||
			    v3_fits(m, si))
				continue;
			if (ctx->opt.strict || (ctx->opt.strict_main && is_main))
				return mp_fail(err, MP_E_CORRUPT,
					       "segment 0x%llx-0x%llx has the build "
					       "id of '%s', but its offset 0x%llx puts "
					       "it in no executable segment of the file",
					       (unsigned long long)si->start,
					       (unsigned long long)si->end, m->path,
					       (unsigned long long)si->offset);
			if (!m->warned_nomatch)
				warn(ctx, "segment 0x%llx-0x%llx has the build id of "
				     "'%s', but its offset 0x%llx puts it in no "
				     "executable segment of the file (a damaged "
				     "profile?); %s",
				     (unsigned long long)si->start,
				     (unsigned long long)si->end, m->path,
				     (unsigned long long)si->offset, fate(ctx));
			m->warned_nomatch = true;
			break;
		}
		/*
		 * Version 3+: segments find their binary by build id, so a
		 * binary that fits no segment of this profile is normal when
		 * several programs or builds are read together.  What needs
		 * saying is a main segment that no binary covers while a main
		 * binary was given: most likely the wrong build of it.
		 */
		if (!is_main || !s0 || covered(ctx, s0))
			continue;
		if ((found = in_profile(m, prof)))
			continue;
		mp_hex(m->build_id, m->build_id_size, hex, sizeof(hex));
		if (!m->build_id_size)
			memcpy(hex, "(none)", 7);
		mp_hex(s0->build_id, s0->build_id_size, shex, sizeof(shex));
		/* Without --strict, sym_map_pc() says the same, with the
		 * segment, when it meets the segment's first PC. */
		if (ctx->opt.strict)
			return mp_fail(err, MP_E_BUILD_ID,
				       "'%s' has build id %s, the profile's main segment has %s",
				       m->path, hex, shex);
		if (ctx->opt.strict_main)
			return no_binary_v3(ctx, prof, 0, NULL, err);
	}
	return MP_OK;
}

/* ---- interned strings --------------------------------------------------- */

struct str_key {
	const char *s;
	uint32_t len;
};

static bool same_str(const void *key, uint32_t i, const void *arg)
{
	const struct str_key *k = key;
	const struct sym_str *e = &((const struct sym_ctx *)arg)->strs[i];

	return e->len == k->len && memcmp(e->s, k->s, k->len) == 0;
}

/* The interned copy of S (LEN bytes), or NULL when out of memory. */
static struct sym_str *intern(struct sym_ctx *ctx, const char *s, size_t len)
{
	struct str_key k = { s, (uint32_t)len };
	uint64_t h = mp_hash_bytes(s, len, 0x57);
	struct sym_str *e;
	uint32_t i;
	char *copy;

	if (len >= UINT32_MAX || ctx->nstrs >= UINT32_MAX - 1)
		return NULL;
	i = ht_find(&ctx->str_ht, h, same_str, &k, ctx);
	if (i != HT_NONE)
		return &ctx->strs[i];
	if (!MP_GROW(ctx->strs, ctx->astrs, ctx->nstrs + 1) ||
	    !(copy = mp_arena_alloc(&ctx->arena, len + 1)) ||
	    ht_insert(&ctx->str_ht, h, (uint32_t)ctx->nstrs))
		return NULL;
	memcpy(copy, s, len);
	e = &ctx->strs[ctx->nstrs++];
	*e = (struct sym_str){ .s = copy, .len = (uint32_t)len };
	return e;
}

/*
 * Intern the first N bytes of S as a function name and classify it (once
 * per distinct name) into F's runtime and allocator-library flags.
 */
static const char *intern_fn_n(struct sym_ctx *ctx, const char *s, size_t n,
			       struct sym_frame *f, bool *nomem)
{
	struct sym_str *e;

	if (!s)
		return NULL;
	e = intern(ctx, s, n);
	if (!e) {
		*nomem = true;
		return NULL;
	}
	if (!(e->cls & SYM_CLS_FN_DONE))
		e->cls |= SYM_CLS_FN_DONE |
			  (sym_is_runtime(e->s, NULL) ||
			   sym_alloc_match(ctx->opt.alloc, e->s)
				   ? SYM_CLS_FN_RT : 0) |
			  (sym_is_alloc_library(e->s) ||
			   sym_alloc_match(ctx->opt.alloc, e->s)
				   ? SYM_CLS_FN_LIB : 0);
	f->runtime = f->runtime || (e->cls & SYM_CLS_FN_RT);
	f->alloc_lib = f->alloc_lib || (e->cls & SYM_CLS_FN_LIB);
	return e->s;
}

/* The same for all of S. */
static const char *intern_fn(struct sym_ctx *ctx, const char *s,
			     struct sym_frame *f, bool *nomem)
{
	return s ? intern_fn_n(ctx, s, strlen(s), f, nomem) : NULL;
}

/*
 * Intern a file name from libdw, which joins the line table's directory and
 * the name.  A relative result is joined to COMP_DIR, as llvm-symbolizer
 * does, unless it starts with COMP_DIR already: then the directory was
 * entry 0, the compilation directory itself (libdw gives no way to ask).
 */
static const char *intern_file(struct sym_ctx *ctx, const char *file,
			       const char *comp_dir, struct sym_frame *f,
			       bool *nomem)
{
	char buf[PATH_MAX * 2];
	struct sym_str *e;
	size_t n;

	if (!file)
		return NULL;
	n = comp_dir ? strlen(comp_dir) : 0;
	if (file[0] != '/' && n &&
	    !(strncmp(file, comp_dir, n) == 0 && file[n] == '/') &&
	    path_fmt(buf, sizeof(buf), "%s%s%s", comp_dir,
		     comp_dir[n - 1] == '/' ? "" : "/", file))
		file = buf;
	e = intern(ctx, file, strlen(file));
	if (!e) {
		*nomem = true;
		return NULL;
	}
	if (!(e->cls & SYM_CLS_FILE_DONE))
		e->cls |= SYM_CLS_FILE_DONE |
			  (sym_is_runtime(NULL, e->s) ? SYM_CLS_FILE_RT : 0);
	f->runtime_code = e->cls & SYM_CLS_FILE_RT;
	f->runtime = f->runtime || f->runtime_code;
	return e->s;
}

const char *sym_pretty_name(struct sym_ctx *ctx, const char *name)
{
	struct sym_str *e;
	char small[512], *big = NULL, *buf = small;
	size_t len;

	if (!name)
		return NULL;
	if (name[0] != '_' || name[1] != 'Z')
		return name;
	e = intern(ctx, name, strlen(name));
	if (!e)
		return name;
	if (e->pretty)
		return e->pretty;
	len = sym_demangle(name, small, sizeof(small));
	if (len >= sizeof(small)) {
		big = malloc(len + 1);
		if (!big)
			return name;
		sym_demangle(name, big, len + 1);
		buf = big;
	}
	e->pretty = strcmp(buf, name) == 0 ? e->s
		    : mp_arena_memdup(&ctx->arena, buf, len + 1);
	free(big);
	return e->pretty ? e->pretty : name;
}

/* ---- DWARF ------------------------------------------------------------- */

/* String attribute AT of DIE itself, or NULL. */
static const char *die_string(Dwarf_Die *die, unsigned int at)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr(die, at, &attr));
}

/* References from a function's DIE to its declarations are followed this deep. */
#define MAX_NAME_HOPS 16

/*
 * The name of function DIE (a subprogram or an inlined subroutine): its
 * linkage name, else its plain name, from the DIE itself or the DIEs it
 * refers to through DW_AT_abstract_origin and DW_AT_specification.  Those
 * must be subprograms: *BAD is set, and NULL returned, when one is not,
 * for damaged DWARF would otherwise name the frame after whatever DIE the
 * reference lands on (a typedef, say).  NULL without *BAD: no name.
 * *LINKAGE says whether the name is a linkage name; *LAST (if not NULL)
 * gets the last DIE of the chain, the declaration, whose enclosing scopes
 * qualify a plain name (qualified_name()).
 */
static const char *die_name(Dwarf_Die *die, bool *bad, bool *linkage,
			    Dwarf_Die *last)
{
	Dwarf_Die cur = *die, next;
	Dwarf_Attribute attr;
	const char *plain = NULL, *ln;

	*bad = *linkage = false;
	for (int hop = 0; hop <= MAX_NAME_HOPS; hop++) {
		ln = die_string(&cur, DW_AT_linkage_name);
		if (!ln)
			ln = die_string(&cur, DW_AT_MIPS_linkage_name);
		if (ln) {
			*linkage = true;
			return ln;
		}
		if (!plain)
			plain = die_string(&cur, DW_AT_name);
		if (!dwarf_formref_die(dwarf_attr(&cur, DW_AT_abstract_origin, &attr),
				       &next) &&
		    !dwarf_formref_die(dwarf_attr(&cur, DW_AT_specification, &attr),
				       &next))
			break;
		if (dwarf_tag(&next) != DW_TAG_subprogram) {
			*bad = true;
			return NULL;
		}
		cur = next;
	}
	if (last)
		*last = cur;
	return plain;
}

static uint32_t die_udata(Dwarf_Die *die, unsigned int at)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(die, at, &attr), &v) != 0)
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/*
 * A unit's DIEs lie in the order a depth-first walk meets them, so every
 * walk here meets offsets that only grow: is DIE past *LAST (then made
 * the last)?  Damaged abbreviations or DW_AT_sibling values break that
 * order, and a sibling inside a subtree already walked had each level
 * walk it again, up to 2^depth times: one changed byte in the
 * .debug_abbrev of a g++ build of LevelDB kept show busy for minutes.
 * A walk stops at the first DIE out of order, its unit distrusted.
 */
static bool die_onward(Dwarf_Die *die, Dwarf_Off *last)
{
	Dwarf_Off off = dwarf_dieoffset(die);

	if (off <= *last)
		return false;
	*last = off;
	return true;
}

struct cu_build {
	struct sym_range *r;
	size_t n, alloc;
	struct sym_fn *fns;
	size_t nfns, afns;
	bool nested;		/* subprograms may hold subprograms */
	Dwarf_Off last;		/* die_onward()'s */
	bool disorder, nomem;
};

/*
 * Collect the address ranges of the subprograms of a CU.  Namespaces and
 * classes can hold subprograms, and in GCC's units (B->nested) so can
 * subprograms: GCC places the definitions of a function's local classes'
 * members and of its lambdas' bodies, and GNU C nested functions, inside
 * the function's DIE; clang puts them at the unit's top, and walking its
 * functions' parameters and blocks for nothing cost a tenth of a show's
 * instructions.  Their code lies apart from the function's; the scopes of
 * each subprogram's own code are left to fn_build, which stops at nested
 * subprograms.  Inlined subroutines' subtrees are not walked.
 */
static void collect_ranges(struct cu_build *b, Dwarf_Die *parent, int depth)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Die child;
	ptrdiff_t off;
	int tag;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		if (!die_onward(&child, &b->last)) {
			b->disorder = true;
			return;
		}
		tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			off = 0;
			while (!b->nomem &&
			       (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				if (!b->nfns || b->fns[b->nfns - 1].off !=
						dwarf_dieoffset(&child)) {
					if (b->nfns >= UINT32_MAX ||
					    !MP_GROW(b->fns, b->afns, b->nfns + 1)) {
						b->nomem = true;
						break;
					}
					b->fns[b->nfns++] = (struct sym_fn){
						.off = dwarf_dieoffset(&child) };
				}
				if (!MP_GROW(b->r, b->alloc, b->n + 1)) {
					b->nomem = true;
					break;
				}
				b->r[b->n++] = (struct sym_range){
					lo, hi, (uint32_t)(b->nfns - 1) };
			}
			if (b->nested && dwarf_haschildren(&child))
				collect_ranges(b, &child, depth + 1);
		} else if (tag != DW_TAG_inlined_subroutine &&
			   dwarf_haschildren(&child)) {
			collect_ranges(b, &child, depth + 1);
		}
	} while (!b->nomem && !b->disorder &&
		 dwarf_siblingof(&child, &child) == 0);
}

static int range_cmp(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Wider first, so that a scan backwards meets the inner one first. */
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

/*
 * The subprogram ranges of CU, collected on first use (after cu_scope());
 * false = no memory.
 */
static bool cu_build(struct sym_cu *cu)
{
	struct cu_build b = { .nested = cu->gcc,
			      .last = dwarf_dieoffset(&cu->scope) };

	if (cu->built)
		return true;
	if (cu->dw)
		collect_ranges(&b, &cu->scope, 0);
	if (b.disorder) {
		cu->checked = true;
		cu->distrust = WHY_DIE_ORDER;
	}
	if (b.nomem) {
		free(b.r);
		free(b.fns);
		return false;
	}
	if (b.n > 1)
		qsort(b.r, b.n, sizeof(*b.r), range_cmp);
	cu->r = b.r;
	cu->n = b.n;
	cu->fns = b.fns;
	cu->nfns = b.nfns;
	cu->built = true;
	return true;
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

/*
 * Index the address ranges of every CU, from the CU DIEs.  libdw 0.188's
 * dwfl_module_addrdie and dwfl_module_getsrc rely on .debug_aranges, which
 * clang does not emit: they find nothing in a clang-built binary.
 */
static bool index_cus(struct sym_module *m)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Addr base, lo, hi;
	Dwarf_Half version;
	size_t acus = 0, acur = 0;
	ptrdiff_t off;
	uint8_t type;
	int r;

	while ((r = dwarf_get_units(m->dw, cu, &cu, &version, &type, &cudie,
				    NULL)) == 0) {
		if (type != DW_UT_compile && type != DW_UT_partial &&
		    type != DW_UT_skeleton)
			continue;
		if (!MP_GROW(m->cus, acus, m->ncus + 1))
			return false;
		m->cus[m->ncus] = (struct sym_cu){ .die = cudie, .scope = cudie,
						   .dw = m->dw,
						   .version = version };
		if (type == DW_UT_skeleton) {
			m->split = true;
			m->cus[m->ncus].dw = NULL;
			m->cus[m->ncus].skeleton = true;
		}
		off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (!MP_GROW(m->cur, acur, m->ncur + 1))
				return false;
			m->cur[m->ncur++] = (struct sym_cu_range){ lo, hi, m->ncus };
		}
		m->ncus++;
	}
	/* A unit header libdw cannot read (an unknown version, a length
	 * past the section) hides every unit after it. */
	if (r < 0)
		m->distrust = WHY_UNIT_HEADER;
	if (m->ncur > 1)
		qsort(m->cur, m->ncur, sizeof(*m->cur), cu_range_cmp);
	return true;
}

/*
 * A skeleton unit's split unit, from its .dwo, on first use.  Without
 * it the skeleton still has the unit's lines.
 */
static void cu_scope(struct sym_cu *cu)
{
	Dwarf_Attribute attr;
	const char *producer;
	Dwarf_Die sub;
	int lang;

	if (cu->scoped)
		return;
	cu->scoped = true;
	if (cu->skeleton) {
		cu->skeleton = false;
		if (dwarf_cu_info(cu->die.cu, NULL, NULL, NULL, &sub, NULL, NULL,
				  NULL) == 0 && dwarf_tag(&sub) == DW_TAG_compile_unit) {
			cu->scope = sub;
			cu->dw = dwarf_cu_getdwarf(sub.cu);
		}
	}
	/* Who made the unit and in which language: the split unit says. */
	producer = dwarf_formstring(dwarf_attr(&cu->scope, DW_AT_producer, &attr));
	lang = dwarf_srclang(&cu->scope);
	cu->gcc = producer && strncmp(producer, "GNU ", 4) == 0;
	cu->cxx = lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
		  lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14 ||
		  lang == DW_LANG_ObjC_plus_plus;
}

/* The CU holding DWARF address A, or NULL. */
static struct sym_cu *find_cu(struct sym_module *m, uint64_t a)
{
	size_t lo = 0, hi = m->ncur, mid;
	Dwarf_Addr bias;
	Dwarf_Die *die;
	Dwarf_Off off;

	while (lo < hi) {		/* first range with lo > a */
		mid = lo + (hi - lo) / 2;
		if (m->cur[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < 16 && lo > 0; k++, lo--) {
		const struct sym_cu_range *r = &m->cur[lo - 1];
		size_t cu = r->cu;

		if (a >= r->hi)
			continue;
		/*
		 * Units claiming the same range: an inline function that
		 * several objects emitted, of which the linker kept the
		 * first one's code and (GNU ld, same size) pointed the
		 * others' DWARF at it too, though it may describe other
		 * code (other inlining).  The first unit's, in link order,
		 * is the code's, as llvm-symbolizer has it.
		 */
		for (; lo > 1 && m->cur[lo - 2].lo == r->lo &&
		       m->cur[lo - 2].hi == r->hi; lo--)
			if (m->cur[lo - 2].cu < cu)
				cu = m->cur[lo - 2].cu;
		return &m->cus[cu];
	}
	/* A CU without ranges on its DIE: ask .debug_aranges, if any. */
	die = dwfl_module_addrdie(m->mod, a + m->dwbias, &bias);
	if (!die)
		return NULL;
	off = dwarf_dieoffset(die);
	lo = 0;
	hi = m->ncus;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (dwarf_dieoffset(&m->cus[mid].die) < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->ncus && dwarf_dieoffset(&m->cus[lo].die) == off)
		return &m->cus[lo];
	return NULL;
}

/* Say once per module that it has no DWARF, and why if known. */
static void no_dwarf(struct sym_ctx *ctx, struct sym_module *m)
{
	if (m->warned_nodwarf)
		return;
	m->warned_nodwarf = true;
	if (m->zstd_why)
		warn(ctx, "'%s': its DWARF, compressed with zstd, cannot be "
		     "read: %s; using ELF symbols", m->path, m->zstd_why);
	else
		warn(ctx, "no DWARF in '%s'; using ELF symbols", m->path);
}

/*
 * Say once per module that a split unit's .dwo file was not found: its
 * addresses get their lines from the skeleton and their names from ELF
 * symbols, without inlined frames.
 */
static void no_dwo(struct sym_ctx *ctx, struct sym_module *m,
		   struct sym_cu *cu, const char *comp_dir)
{
	Dwarf_Attribute attr;
	const char *dwo;
	char dwp[PATH_MAX];

	if (m->warned_nodwo)
		return;
	m->warned_nodwo = true;
	dwo = dwarf_formstring(dwarf_attr(&cu->die, DW_AT_dwo_name, &attr));
	if (!dwo)	/* DWARF 4's GNU extension */
		dwo = dwarf_formstring(dwarf_attr(&cu->die, DW_AT_GNU_dwo_name,
						  &attr));
	warn(ctx, "'%s': split DWARF file '%s' not found (looked in '%s' and "
	     "beside the binary); its functions are named by ELF symbols, "
	     "without inlined frames", m->path, dwo ? dwo : "?",
	     comp_dir ? comp_dir : "?");
	/* A DWARF package beside the binary did not give the unit: elfutils
	 * reads packages from 0.191 on, and the user cannot point us at one. */
	if (m->path && (size_t)snprintf(dwp, sizeof(dwp), "%s.dwp", m->path) <
			       sizeof(dwp) && access(dwp, F_OK) == 0)
		warn(ctx, "'%s': the DWARF package '%s' beside it was not used "
		     "(libdw %s; elfutils reads packages from 0.191 on)", m->path,
		     dwp, dwfl_version(NULL) ? dwfl_version(NULL) : "?");
}

/*
 * Find M's DWARF and index its units, once: for a C library's separate
 * debug file, whose sections are compressed, libdw inflates them all
 * here, tens of milliseconds.  Touches M alone (sym_open_dwarf()).
 */
static void open_dwarf(struct sym_module *m)
{
	if (m->dw_tried)
		return;
	m->dw_tried = true;
	m->dw = dwfl_module_getdwarf(m->mod, &m->dwbias);
	m->dwarf = m->dw != NULL;
	if (m->dw && !index_cus(m))
		m->dw_nomem = true;
}

static bool module_has_dwarf(struct sym_ctx *ctx, struct sym_module *m,
			     bool *nomem)
{
	open_dwarf(m);
	if (!m->dw)
		no_dwarf(ctx, m);
	if (m->dw_nomem)
		*nomem = true;
	return m->dw != NULL;
}

static void cache_open(struct sym_ctx *ctx, struct sym_module *m);

struct sym_module *sym_dwarf_to_open(struct sym_ctx *ctx, int32_t module)
{
	struct sym_module *m;

	if (module < 0 || (size_t)module >= ctx->nmods)
		return NULL;
	m = ctx->mods[module];
	if (m->dw_tried)
		return NULL;
	if (ctx->opt.cache_dir && m->cache_state == CACHE_UNTRIED)
		cache_open(ctx, m);
	/* A cache entry may answer every lookup: then no DWARF is read. */
	return m->cache.buf ? NULL : m;
}

void sym_open_dwarf(struct sym_module *m)
{
	open_dwarf(m);
}

/* The innermost subprogram range of CU holding A, or NULL. */
static const struct sym_range *cu_find(const struct sym_cu *cu, uint64_t a)
{
	size_t lo = 0, hi = cu->n, mid;

	while (lo < hi) {		/* first range with lo > a */
		mid = lo + (hi - lo) / 2;
		if (cu->r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges rarely nest (a nested subprogram's code lies apart); look
	 * a little back. */
	for (size_t k = 0; k < 64 && lo > 0; k++, lo--)
		if (a < cu->r[lo - 1].hi)
			return &cu->r[lo - 1];
	return NULL;
}

static bool is_scope(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
	       tag == DW_TAG_with_stmt;
}

struct fn_build_state {
	struct sym_fn *fn;
	size_t anodes, ar;
	Dwarf_Off last;		/* die_onward()'s */
	bool disorder, nomem;
};

static void walk_scopes(struct fn_build_state *st, Dwarf_Die *parent,
			int32_t pidx, unsigned depth)
{
	struct sym_fn *fn = st->fn;
	Dwarf_Addr base, lo, hi;
	Dwarf_Die child;
	ptrdiff_t off;
	int32_t idx;
	int tag;

	if (depth >= MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		if (!die_onward(&child, &st->last)) {
			st->disorder = true;
			return;
		}
		tag = dwarf_tag(&child);
		if (!is_scope(tag))
			continue;
		if (fn->nnodes >= INT32_MAX ||
		    !MP_GROW(fn->nodes, st->anodes, fn->nnodes + 1)) {
			st->nomem = true;
			return;
		}
		idx = (int32_t)fn->nnodes++;
		fn->nodes[idx] = (struct sym_scope){ dwarf_dieoffset(&child), pidx,
						     (uint32_t)tag };
		off = 0;
		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (fn->nr >= INT32_MAX ||
			    !MP_GROW(fn->r, st->ar, fn->nr + 1)) {
				st->nomem = true;
				return;
			}
			fn->r[fn->nr++] = (struct sym_srange){ lo, hi, (uint32_t)idx,
							       -1, depth };
		}
		if (dwarf_haschildren(&child))
			walk_scopes(st, &child, idx, depth + 1);
	} while (!st->nomem && !st->disorder &&
		 dwarf_siblingof(&child, &child) == 0);
}

static int srange_cmp(const void *a, const void *b)
{
	const struct sym_srange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Enclosing ranges first. */
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

/* Build FN's scope tree (see struct sym_scope); false = no memory. */
static bool fn_build(struct sym_fn *fn, Dwarf *dw)
{
	struct fn_build_state st = { .fn = fn, .last = fn->off };
	int32_t *stack;
	size_t top = 0;
	Dwarf_Die die;

	fn->built = true;
	if (!MP_GROW(fn->nodes, st.anodes, 1))
		return false;
	fn->nodes[0] = (struct sym_scope){ fn->off, -1, DW_TAG_subprogram };
	fn->nnodes = 1;
	if (!dwarf_offdie(dw, fn->off, &die))
		return true;
	walk_scopes(&st, &die, 0, 1);
	fn->disorder = st.disorder;
	if (st.nomem)
		return false;
	if (fn->nr > 1)
		qsort(fn->r, fn->nr, sizeof(*fn->r), srange_cmp);
	/* Link each range to the nearest one enclosing it: a stack sweep. */
	stack = malloc(fn->nr * sizeof(*stack) + 1);
	if (!stack)
		return false;
	for (uint32_t i = 0; i < fn->nr; i++) {
		const struct sym_srange *e = &fn->r[i];

		while (top && !(fn->r[stack[top - 1]].lo <= e->lo &&
				e->hi <= fn->r[stack[top - 1]].hi))
			top--;
		fn->r[i].up = top ? stack[top - 1] : -1;
		stack[top++] = (int32_t)i;
	}
	free(stack);
	return true;
}

/*
 * The innermost scope node of FN holding DWARF address A.  The range with
 * the greatest lo at or below A is the innermost candidate; if it ended
 * before A, so did every range nested in it or before it among its
 * siblings, and the answer lies among the ranges enclosing it.
 */
static uint32_t fn_find(const struct sym_fn *fn, uint64_t a)
{
	size_t lo = 0, hi = fn->nr, mid;
	int32_t i;

	while (lo < hi) {		/* first range with lo > a */
		mid = lo + (hi - lo) / 2;
		if (fn->r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (int32_t)lo - 1; i >= 0; i = fn->r[i].up)
		if (a < fn->r[i].hi)
			return fn->r[i].node;
	return 0;
}

static bool push_frame(struct sym_ctx *ctx, size_t *n, struct sym_frame f)
{
	if (*n >= UINT32_MAX || !MP_GROW(ctx->scratch, ctx->ascratch, *n + 1))
		return false;
	ctx->scratch[(*n)++] = f;
	return true;
}

/* ---- ELF symbols --------------------------------------------------------- */

static int elfsym_cmp(const void *a, const void *b)
{
	const struct sym_elfsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* At one address the preferred symbol last: a scan backwards from
	 * the last symbol at or below the address meets it first. */
	if (x->bind != y->bind)
		return x->bind < y->bind ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	/* Then the first in the table, as libdwfl. */
	return x->index < y->index ? 1 : x->index > y->index ? -1 : 0;
}

static int section_cmp(const void *a, const void *b)
{
	const struct sym_section *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool index_sections(struct sym_module *m, Elf *elf, GElf_Addr bias)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t alloc = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    !sh.sh_size)
			continue;
		if (!MP_GROW(m->secs, alloc, m->nsecs + 1))
			return false;
		m->secs[m->nsecs++] = (struct sym_section){
			sh.sh_addr + bias, sh.sh_addr + bias + sh.sh_size,
			(uint32_t)elf_ndxscn(scn) };
	}
	if (m->nsecs > 1)
		qsort(m->secs, m->nsecs, sizeof(*m->secs), section_cmp);
	return true;
}

static uint32_t section_of(const struct sym_module *m, uint64_t a)
{
	size_t lo = 0, hi = m->nsecs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->secs[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && a < m->secs[lo - 1].end)
		return m->secs[lo - 1].index;
	return SHN_UNDEF;
}

/* Sort the module's symbols once; false when out of memory. */
static bool index_syms(struct sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t alloc = 0;
	Elf *elf = NULL, *symelf;
	GElf_Addr addr, bias = 0;
	GElf_Word shndx;
	GElf_Sym sym;
	const char *name;
	uint64_t maxend = 0;
	uint32_t last = 0;
	int type;

	m->syms_built = true;
	for (int i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx,
					       &symelf, &bias);
		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		if (!elf)
			elf = symelf;
		if (!MP_GROW(m->syms, alloc, m->nsyms + 1))
			return false;
		m->syms[m->nsyms++] = (struct sym_elfsym){
			addr, sym.st_size, name, shndx, (uint32_t)i,
			GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 3
			: GELF_ST_BIND(sym.st_info) == STB_WEAK ? 2 : 1 };
	}
	if (m->nsyms > 1)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), elfsym_cmp);
	m->sym_maxend = malloc(m->nsyms * sizeof(*m->sym_maxend) + 1);
	m->sym_sizeless = malloc(m->nsyms * sizeof(*m->sym_sizeless) + 1);
	if (!m->sym_maxend || !m->sym_sizeless ||
	    (elf && !index_sections(m, elf, bias)))
		return false;
	for (size_t i = 0; i < m->nsyms; i++) {
		const struct sym_elfsym *y = &m->syms[i];

		if (y->size && y->addr + y->size > maxend)
			maxend = y->addr + y->size;
		if (!y->size)
			last = (uint32_t)i + 1;
		m->sym_maxend[i] = maxend;
		m->sym_sizeless[i] = last;
	}
	return true;
}

/*
 * The ELF symbol for Dwfl address A, by libdwfl's rules without its linear
 * scan: the closest sized symbol containing A (at one address: global
 * before weak before local, then the smaller); failing that, the closest
 * sizeless symbol (an assembly label) at or below A in A's section, unless
 * a sized symbol ends between the two.  NULL if none.
 */
static const char *elf_symbol(struct sym_module *m, uint64_t a, bool *nomem)
{
	size_t lo = 0, hi, mid, i;
	const struct sym_elfsym *y;
	uint32_t sec;

	if (!m->syms_built && !index_syms(m)) {
		*nomem = true;
		return NULL;
	}
	hi = m->nsyms;
	while (lo < hi) {		/* first symbol above a */
		mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* No symbol at or before i ends above a once maxend says so. */
	for (i = lo; i-- > 0 && m->sym_maxend[i] > a;) {
		y = &m->syms[i];
		if (y->size && a - y->addr < y->size)
			return y->name;
	}
	if (!m->sym_sizeless[lo - 1])
		return NULL;
	y = &m->syms[m->sym_sizeless[lo - 1] - 1];
	if (m->sym_maxend[lo - 1] > y->addr)
		return NULL;
	if (y->shndx >= SHN_LORESERVE)
		return y->addr == a ? y->name : NULL;
	sec = section_of(m, a);
	return sec != SHN_UNDEF && sec == y->shndx ? y->name : NULL;
}

/* The ELF symbol holding DA as the only frame: no DWARF for it. */
static bool symtab_frame(struct sym_ctx *ctx, struct sym_module *m,
			 Dwarf_Addr da, size_t *nout)
{
	struct sym_frame f = { 0 };
	const char *name;
	bool nomem = false;
	size_t n = 0;

	name = elf_symbol(m, da, &nomem);
	if (nomem)
		return false;
	if (!name)
		return true;
	f.function = intern_fn(ctx, name, &f, &nomem);
	if (nomem || !push_frame(ctx, &n, f))
		return false;
	*nout = n;
	return true;
}

/*
 * Is S text: valid UTF-8 without control characters?  A name that is not
 * came from corrupt debug information (a string offset into binary data),
 * not from a compiler.
 */
static bool is_text(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		uint32_t cp;
		size_t n = mp_utf8_len(p, &cp);

		if (!n || cp < 0x20 || cp == 0x7f)
			return false;
		p += n;
	}
	return true;
}

/*
 * Can CU be trusted?  Checked once per CU, when an address first falls in
 * it: a unit version libdw reads (2 to 5) and, when the unit has a line
 * table, one that reads.  llvm-symbolizer warns about such units; reading
 * on would give garbage names or lose lines silently.  *WHY gets the
 * reason when not.
 */
static bool cu_trusted(struct sym_cu *cu, uint8_t *why)
{
	Dwarf_Attribute attr;
	Dwarf_Lines *lines;
	size_t nlines;

	if (!cu->checked) {
		cu->checked = true;
		if (cu->version < 2 || cu->version > 5)
			cu->distrust = WHY_UNIT_VERSION;
		else if (dwarf_attr(&cu->die, DW_AT_stmt_list, &attr) &&
			 dwarf_getsrclines(&cu->die, &lines, &nlines) != 0)
			cu->distrust = WHY_LINE_TABLE;
	}
	*why = cu->distrust;
	return !cu->distrust;
}

/* Say once per module that its DWARF is corrupt, and why. */
static void distrust(struct sym_ctx *ctx, struct sym_module *m, uint8_t why)
{
	m->untrusted++;
	if (m->warned_untrusted)
		return;
	m->warned_untrusted = true;
	warn(ctx, "the debug information of '%s' cannot be trusted (%s): "
	     "the frames it would name stay unsymbolized", m->path,
	     why < WHY_COUNT && why_text[why] ? why_text[why] : "?");
}

/* The line-table row of DWARF address A in CU, as a frame without function. */
static struct sym_frame line_loc(struct sym_ctx *ctx, struct sym_cu *cu,
				 uint64_t a, const char *comp_dir, bool *nomem)
{
	struct sym_frame loc = { 0 };
	Dwarf_Line *line = dwarf_getsrc_die(&cu->die, a);
	unsigned int disc;
	int lineno, col;

	if (!line)
		return loc;
	loc.file = intern_file(ctx, dwarf_linesrc(line, NULL, NULL), comp_dir,
			       &loc, nomem);
	if (dwarf_lineno(line, &lineno) == 0 && lineno > 0)
		loc.line = (uint32_t)lineno;
	if (dwarf_linecol(line, &col) == 0 && col > 0)
		loc.column = (uint32_t)col;
	if (dwarf_linediscriminator(line, &disc) == 0)
		loc.discriminator = disc;
	return loc;
}

/* The call site recorded on inlined subroutine DIE, for its caller's frame. */
static struct sym_frame call_loc(struct sym_ctx *ctx, struct sym_cu *cu,
				 Dwarf_Die *die, const char *comp_dir,
				 bool *nomem)
{
	struct sym_frame loc = { 0 };
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;

	if (dwarf_getsrcfiles(&cu->die, &files, &nfiles) == 0 &&
	    dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) == 0 &&
	    idx < nfiles)
		loc.file = intern_file(ctx, dwarf_filesrc(files, idx, NULL, NULL),
				       comp_dir, &loc, nomem);
	loc.line = die_udata(die, DW_AT_call_line);
	loc.column = die_udata(die, DW_AT_call_column);
	loc.discriminator = die_udata(die, DW_AT_GNU_discriminator);
	return loc;
}

/* ---- qualified names for GCC's functions of internal linkage ---- */

struct qscope_build {
	struct sym_qscope *v;
	size_t n, alloc;
	Dwarf_Off last;		/* die_onward()'s */
	bool disorder, nomem;
};

/* Is unnamed type DIE a closure: GCC names its members "<lambda>" (the
 * constructor) and the like. */
static bool is_closure(Dwarf_Die *die)
{
	Dwarf_Off last = dwarf_dieoffset(die);
	Dwarf_Die child;
	const char *name;

	if (dwarf_child(die, &child) != 0)
		return false;
	do {
		if (!die_onward(&child, &last))
			return false;
		name = dwarf_tag(&child) == DW_TAG_subprogram
			? die_string(&child, DW_AT_name) : NULL;
		if (name && strncmp(name, "<lambda", 7) == 0)
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool names_scope(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_subprogram;
}

/*
 * Record PARENT's children that name scopes, their subtrees ending at
 * END, and walk down them and lexical blocks (local classes); the DIEs
 * of code (inlined subroutines) are not walked.
 */
static void qscope_walk(struct qscope_build *b, Dwarf_Die *parent,
			uint64_t end, int32_t up, int depth)
{
	Dwarf_Die child, next;
	int tag, more;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		uint64_t lo = dwarf_dieoffset(&child), hi;
		int32_t me = up;
		const char *name;

		if (!die_onward(&child, &b->last)) {
			b->disorder = true;
			return;
		}
		next = child;
		more = dwarf_siblingof(&child, &next) == 0;
		hi = more ? dwarf_dieoffset(&next) : end;
		tag = dwarf_tag(&child);
		if (!(names_scope(tag) || tag == DW_TAG_lexical_block) ||
		    !dwarf_haschildren(&child)) {
			child = next;
			continue;
		}
		if (tag != DW_TAG_lexical_block) {
			if (b->n >= INT32_MAX || !MP_GROW(b->v, b->alloc, b->n + 1)) {
				b->nomem = true;
				return;
			}
			name = die_string(&child, DW_AT_name);
			if (!name && tag != DW_TAG_namespace &&
			    tag != DW_TAG_subprogram && is_closure(&child))
				name = "{lambda}";
			b->v[b->n] = (struct sym_qscope){ lo, hi, up, tag, name };
			me = (int32_t)b->n++;
		}
		qscope_walk(b, &child, hi, me, depth + 1);
		child = next;
	} while (more && !b->nomem && !b->disorder);
}

/*
 * NAME qualified by the scopes enclosing DECL, a DIE of CU's unit, as
 * the demangler would write them ("leveldb::(anonymous
 * namespace)::LRUCache::Insert"), into BUF of SIZE bytes: its length, or
 * 0 to keep NAME (DECL outside the unit, no enclosing scope, no room, no
 * memory for the unit's scopes).  Built on first use, one walk of the
 * unit's DIEs outside code.
 */
static size_t qualified_name(struct sym_cu *cu, Dwarf_Die *decl,
			     const char *name, char *buf, size_t size)
{
	const struct sym_qscope *chain[64];
	size_t lo = 0, hi, mid, n = 0, len = 0, nlen;
	uint64_t off = dwarf_dieoffset(decl);
	int32_t i;

	if (!cu->qs_built) {
		struct qscope_build b = { .last = dwarf_dieoffset(&cu->scope) };

		cu->qs_built = true;
		qscope_walk(&b, &cu->scope, UINT64_MAX, -1, 0);
		if (b.disorder)
			cu->distrust = WHY_DIE_ORDER;
		if (b.nomem || b.disorder) {
			free(b.v);
			return 0;
		}
		cu->qs = b.v;
		cu->nqs = b.n;
	}
	if (decl->cu != cu->scope.cu)
		return 0;
	hi = cu->nqs;
	while (lo < hi) {		/* first scope starting past off */
		mid = lo + (hi - lo) / 2;
		if (cu->qs[mid].lo <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (int32_t)lo - 1; i >= 0 && !(off > cu->qs[i].lo && off < cu->qs[i].hi);
	     i = cu->qs[i].up)
		;
	/* Unnamed subprograms are definitions whose declaration is named
	 * elsewhere: left out. */
	for (; i >= 0 && n < sizeof(chain) / sizeof(chain[0]); i = cu->qs[i].up)
		if (cu->qs[i].name || cu->qs[i].tag != DW_TAG_subprogram)
			chain[n++] = &cu->qs[i];
	if (n == 0)
		return 0;
	while (n-- > 0) {
		const char *part = chain[n]->name ? chain[n]->name
			: chain[n]->tag == DW_TAG_namespace ? "(anonymous namespace)"
			: "{unnamed type}";
		int w = snprintf(buf + len, size - len, "%s::", part);

		if (w < 0 || (size_t)w >= size - len)
			return 0;
		len += (size_t)w;
	}
	nlen = strlen(name);
	if (nlen >= size - len)
		return 0;
	memcpy(buf + len, name, nlen + 1);
	return len + nlen;
}

/*
 * GCC gives a function of internal linkage (a member of a class in an
 * anonymous namespace, a local class's, a lambda's body) no linkage name,
 * only its bare name ("Insert"), which two classes' members share.  The
 * ELF symbol holding Dwfl address DA has the mangled name: it names the
 * out-of-line frame, as llvm-symbolizer names every outermost frame, less
 * a clone's suffix (".isra.0", ".part.0", ".cold"), which inlined copies
 * and the function itself do not have: *LEN is the length kept.  NULL
 * unless the symbol is a mangled C++ name (C names stay DWARF's).  Only
 * for GCC's units: clang leaves linkage names out only with
 * -gline-tables-only, where its own -fmemory-profile-use names functions
 * by the bare name too, as llvm-profdata does.
 */
static const char *mangled_symbol(struct sym_module *m, Dwarf_Addr da,
				  size_t *len, bool *nomem)
{
	const char *s = elf_symbol(m, da, nomem);

	if (!s || strncmp(s, "_Z", 2) != 0)
		return NULL;
	*len = strcspn(s, ".");
	return s;
}

/*
 * The name of a frame in a GCC unit whose function has only a plain NAME
 * (of *LEN bytes) and declaration DECL: out of line (TAG a subprogram),
 * the mangled ELF symbol; inlined, or without such a symbol, in a C++
 * unit, NAME qualified by its scopes (in BUF of SIZE bytes); else NAME.
 * *LEN gets the length of the answer.
 */
static const char *gcc_function_name(struct sym_module *m, struct sym_cu *cu,
				     Dwarf_Addr da, int tag, Dwarf_Die *decl,
				     const char *name, char *buf, size_t size,
				     size_t *len, bool *nomem)
{
	const char *sym = tag == DW_TAG_subprogram
		? mangled_symbol(m, da, len, nomem) : NULL;
	size_t qlen;

	if (sym)
		return sym;
	/* GCC's DW_AT_name is never qualified ("::" may appear in its
	 * template arguments: "thread<void (&)(ns::C*)>"). */
	if (cu->cxx && (qlen = qualified_name(cu, decl, name, buf, size))) {
		*len = qlen;
		return buf;
	}
	return name;
}

/* ---- every function's name ---- */

struct names_walk {
	void (*fn)(void *arg, const char *name);
	void *arg;
	struct sym_module *m;
	struct sym_cu *cu;
	Dwarf_Off last;		/* die_onward()'s, per unit */
	char *buf;		/* a name made here, NUL-terminated */
	size_t cap;
	bool nomem;
};

/* The lowest code address of subprogram DIE, in *LO: false if none. */
static bool die_code_start(Dwarf_Die *die, Dwarf_Addr *lo)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	if (dwarf_lowpc(die, lo) == 0)
		return true;
	/* (BASE carries the base address from one call to the next.) */
	*lo = UINT64_MAX;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (start < *lo)
			*lo = start;
	return *lo != UINT64_MAX;
}

/* Call W's function with the LEN bytes of NAME, a string of its own. */
static void name_n(struct names_walk *w, const char *name, size_t len)
{
	if (name[len] == '\0') {
		w->fn(w->arg, name);
		return;
	}
	if (!MP_GROW(w->buf, w->cap, len + 1)) {
		w->nomem = true;
		return;
	}
	memcpy(w->buf, name, len);
	w->buf[len] = '\0';
	w->fn(w->arg, w->buf);
}

/*
 * A GCC unit's function of internal linkage has no linkage name, and
 * symbolize() names its frames as gcc_function_name() does: out of line
 * by the ELF symbol at its code, inlined by NAME qualified by the scopes
 * of DECL.  Both go to W (an LLVM export took its GUIDs from them); the
 * bare NAME went already.
 */
static void name_gcc_function(struct names_walk *w, Dwarf_Die *die,
			      Dwarf_Die *decl, const char *name)
{
	char qbuf[1024];
	const char *sym;
	Dwarf_Addr lo;
	size_t len;

	if (die_code_start(die, &lo) &&
	    (sym = mangled_symbol(w->m, lo + w->m->dwbias, &len, &w->nomem)))
		name_n(w, sym, len);
	if (w->cu->cxx && (len = qualified_name(w->cu, decl, name, qbuf,
						sizeof(qbuf))))
		name_n(w, qbuf, len);
}

/*
 * Name every subprogram below PARENT to W: definitions, declarations in
 * classes and the abstract DIEs of functions only ever inlined (the
 * inlined copies' subtrees are not walked).  libdw's dwarf_getfuncs()
 * did this without die_onward()'s check, and a damaged .debug_abbrev had
 * it walk for minutes; a unit out of order names what came before.
 */
static void name_functions(struct names_walk *w, Dwarf_Die *parent,
			   int depth)
{
	Dwarf_Die child, decl;
	bool bad, linkage;
	const char *name;
	int tag;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		if (!die_onward(&child, &w->last) || w->nomem)
			return;
		tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram &&
		    (name = die_name(&child, &bad, &linkage, &decl))) {
			w->fn(w->arg, name);
			if (!linkage && w->cu->gcc)
				name_gcc_function(w, &child, &decl, name);
		}
		if (tag != DW_TAG_inlined_subroutine && dwarf_haschildren(&child))
			name_functions(w, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

enum mp_errcode sym_foreach_function(struct sym_ctx *ctx,
				     void (*fn)(void *arg, const char *name),
				     void *arg, struct mp_err *err)
{
	struct names_walk w = { .fn = fn, .arg = arg };
	bool nomem = false;

	for (size_t i = 0; i < ctx->nmods && !w.nomem; i++) {
		struct sym_module *m = ctx->mods[i];

		if (!module_has_dwarf(ctx, m, &nomem))
			continue;
		w.m = m;
		for (size_t k = 0; k < m->ncus && !w.nomem; k++) {
			cu_scope(&m->cus[k]);
			if (!m->cus[k].dw)
				continue;
			w.cu = &m->cus[k];
			w.last = dwarf_dieoffset(&m->cus[k].scope);
			name_functions(&w, &m->cus[k].scope, 0);
		}
	}
	free(w.buf);
	return nomem || w.nomem ? mp_fail(err, MP_E_NOMEM, NULL) : MP_OK;
}

/*
 * The frames of Dwfl address DA in M, into ctx->scratch.  The CU comes from
 * the module's CU ranges, the subprogram from the CU's subprogram ranges,
 * the innermost inlined subroutine or block from the subprogram's scope
 * tree; the path from there out to the subprogram, read outwards, is the
 * inline chain.  The innermost location is the line-table row; each outer
 * frame's location is the call site recorded on the inlined subroutine it
 * contains.
 */
static bool symbolize(struct sym_ctx *ctx, struct sym_module *m,
		      Dwarf_Addr da, size_t *nout, bool *from_symtab,
		      uint8_t *why)
{
	const struct sym_scope *nodes[MAX_SCOPE_DEPTH];
	struct sym_frame loc, f;
	Dwarf_Die die;
	const struct sym_range *r;
	struct sym_fn *fn;
	struct sym_cu *cu = NULL;
	Dwarf_Attribute attr;
	const char *comp_dir, *name;
	size_t n = 0, depth = 0, name_len;
	bool nomem = false, bad, linkage;
	Dwarf_Die decl_die;
	char qbuf[1024];
	uint64_t a;
	int32_t node;
	int tag, decl;

	*nout = 0;
	*from_symtab = false;
	*why = WHY_NONE;
	if (module_has_dwarf(ctx, m, &nomem))
		cu = find_cu(m, da - m->dwbias);
	if (nomem)
		return false;
	if (m->distrust) {
		*why = m->distrust;
		distrust(ctx, m, *why);
		return true;		/* no frame: unsymbolized */
	}
	if (!cu) {
		*from_symtab = true;
		return symtab_frame(ctx, m, da, nout);
	}
	if (!cu_trusted(cu, why)) {
		distrust(ctx, m, *why);
		return true;		/* no frame: unsymbolized */
	}
	a = da - m->dwbias;
	comp_dir = dwarf_formstring(dwarf_attr(&cu->die, DW_AT_comp_dir, &attr));
	cu_scope(cu);
	if (!cu->dw)
		no_dwo(ctx, m, cu, comp_dir);
	loc = line_loc(ctx, cu, a, comp_dir, &nomem);
	if (!cu_build(cu))
		return false;
	r = cu_find(cu, a);
	fn = r ? &cu->fns[r->fn] : NULL;
	if (fn && !fn->built && !fn_build(fn, cu->dw))
		return false;
	if (fn && fn->disorder)
		cu->distrust = WHY_DIE_ORDER;
	if (!cu_trusted(cu, why)) {	/* the walks above may tell */
		distrust(ctx, m, *why);
		return true;
	}
	/* The chain from the innermost scope out to the subprogram. */
	for (node = fn ? (int32_t)fn_find(fn, a) : -1;
	     node >= 0 && depth < MAX_SCOPE_DEPTH; node = fn->nodes[node].parent)
		nodes[depth++] = &fn->nodes[node];
	if (depth == 0) {
		/* A line but no subprogram: name it by the ELF symbol. */
		name = elf_symbol(m, da, &nomem);
		loc.function = intern_fn(ctx, name, &loc, &nomem);
		if (nomem || ((loc.function || loc.file) &&
			      !push_frame(ctx, &n, loc)))
			return false;
		*nout = n;
		return true;
	}
	for (size_t k = 0; k < depth; k++) {
		tag = nodes[k]->tag;
		if ((tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) ||
		    !dwarf_offdie(cu->dw, nodes[k]->off, &die))
			continue;
		f = loc;
		name = die_name(&die, &bad, &linkage, &decl_die);
		name_len = name ? strlen(name) : 0;
		if (!bad && !linkage && name && cu->gcc)
			name = gcc_function_name(m, cu, da, tag, &decl_die, name,
						 qbuf, sizeof(qbuf), &name_len,
						 &nomem);
		if (bad || cu->distrust || (name && !is_text(name)) ||
		    (f.file && !is_text(f.file))) {
			*why = bad ? WHY_NAME_REF : cu->distrust ? cu->distrust
				: WHY_NOT_TEXT;
			distrust(ctx, m, *why);
			*nout = 0;
			return true;
		}
		f.function = intern_fn_n(ctx, name, name_len, &f, &nomem);
		f.inlined = tag == DW_TAG_inlined_subroutine;
		if (dwarf_decl_line(&die, &decl) == 0 && decl > 0)
			f.start_line = (uint32_t)decl;
		if (nomem || !push_frame(ctx, &n, f))
			return false;
		if (!f.inlined)
			break;
		loc = call_loc(ctx, cu, &die, comp_dir, &nomem);
	}
	*nout = n;
	return !nomem;
}

/* ---- the persistent symbol cache ----------------------------------------- */

/*
 * What the answers for a module depend on, and so what its cache entry is
 * keyed by besides the build id (sym_cache.h has the file): the file the
 * module was opened from (a binary, or a debug file found by build id),
 * the separate debug file libdwfl would be given for it (or that there is
 * none), libdw's version and the version of the rules of this file.  The
 * files count by their contents (SHA-1), so that a copy of a binary hits
 * the same entry and a stripped or patched one with the same build id
 * does not; a debug file installed or removed after an entry was written
 * changes the key, and the entry is replaced.  Hashing the contents costs
 * about 1 ms per MB, so the entry also keeps the files' status (device,
 * inode, size, modification and change times): when that is unchanged,
 * so are the contents, and nothing is hashed.  A file changed less than
 * two seconds before is not trusted by its status (times have coarse
 * granularity): its status is not recorded.  An entry written where there
 * was none is keyed by the status alone (all-zero content fingerprint,
 * which no contents match), sparing the cold run the hashing.
 */
/* Change it whenever symbolize() may answer differently: old entries go. */
#define SYM_RULES "memprof-data sym 6"

static void fp_mix(uint64_t h[2], const void *p, size_t n)
{
	h[0] = mp_hash_bytes(p, n, h[0]);
	h[1] = mp_hash_bytes(p, n, h[1] ^ 0x2545f4914f6cdd1dULL);
}

/* Mix a file's status into H; *TOO_NEW if it changed very recently. */
static void stat_mix(uint64_t h[2], const struct stat *st, time_t now,
		     bool *too_new)
{
	uint64_t v[7] = { st->st_dev, st->st_ino, (uint64_t)st->st_size,
			  (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec,
			  (uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec };

	fp_mix(h, v, sizeof(v));
	if (st->st_mtim.tv_sec >= now - 2 || st->st_ctim.tv_sec >= now - 2)
		*too_new = true;
}

/* Hash the contents of FD, then its length, into SHA; false on error. */
static bool content_mix(SHA1_CTX *sha, int fd)
{
	unsigned char buf[65536], len[8];
	uint64_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), (off_t)off)) > 0) {
		SHA1Update(sha, buf, (size_t)n);
		off += (uint64_t)n;
	}
	mp_put_le64(len, off);
	SHA1Update(sha, len, sizeof(len));
	return n == 0;
}

/* The rules, libdw's version and the build id, into either fingerprint. */
static void rules_mix(void (*mix)(void *arg, const void *p, size_t n),
		      void *arg, const struct sym_module *m)
{
	const char *ver = dwfl_version(NULL);

	mix(arg, SYM_RULES, sizeof(SYM_RULES));
	if (ver)
		mix(arg, ver, strlen(ver) + 1);
	mix(arg, m->build_id, m->build_id_size);
}

static void mix_stat(void *arg, const void *p, size_t n)
{
	fp_mix(arg, p, n);
}

static void mix_sha(void *arg, const void *p, size_t n)
{
	SHA1Update(arg, p, n);
}

/*
 * The separate debug file find_debuginfo() would give libdwfl for M, open,
 * or -1: the first file DIR/.build-id/xx/rest.debug that opens, if its
 * build id is M's (libdwfl tries no further directory after one that
 * opens), else the .gnu_debuglink search.
 */
static int predict_debug_file(struct sym_module *m, Elf *elf)
{
	const char *link;
	char *found = NULL;
	GElf_Word crc;
	int fd;

	fd = build_id_debug_file(m, &found);
	free(found);
	if (fd >= 0)
		return fd;
	link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
	if (!link)
		return -1;
	fd = debuglink_find(m->mod, m->dbgpath, m->path, link, crc, &found);
	free(found);
	return fd;
}

/*
 * On M's first lookup: its key, and its cache file if there is one whose
 * fingerprints match.  FD[0] is the module's file, FD[1] its separate
 * debug file or -1.
 */
static void cache_open(struct sym_ctx *ctx, struct sym_module *m)
{
	struct sym_cache_key *key = &m->cache_key;
	uint64_t h[2] = { 0x6d656d70726f6631ULL, 0x73796d6361636865ULL };
	struct stat st[2];
	bool too_new = false, have;
	time_t now = time(NULL);
	GElf_Addr bias;
	int fd[2] = { -1, -1 };
	SHA1_CTX sha;

	m->cache_state = CACHE_OFF;
	if (!m->build_id_size)
		return;
	fd[0] = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd[0] < 0 || fstat(fd[0], &st[0]) != 0)
		goto out;
	fd[1] = predict_debug_file(m, dwfl_module_getelf(m->mod, &bias));
	if (fd[1] >= 0 && fstat(fd[1], &st[1]) != 0)
		goto out;
	m->pred_found = fd[1] >= 0;
	if (m->pred_found) {
		m->pred_dev = st[1].st_dev;
		m->pred_ino = st[1].st_ino;
	}
	key->build_id = m->build_id;
	key->build_id_size = m->build_id_size;
	rules_mix(mix_stat, h, m);
	stat_mix(h, &st[0], now, &too_new);
	if (fd[1] >= 0)
		stat_mix(h, &st[1], now, &too_new);
	else
		fp_mix(h, "no debug file", 13);
	memset(key->stat, 0, sizeof(key->stat));
	if (!too_new)
		memcpy(key->stat, h, sizeof(key->stat));
	have = sym_cache_read(ctx->opt.cache_dir, key, &m->cache);
	memset(key->content, 0, sizeof(key->content));
	if (have && !too_new &&
	    memcmp(m->cache.stat, key->stat, sizeof(key->stat)) == 0) {
		/* The same files as when the entry was written. */
		memcpy(key->content, m->cache.content, sizeof(key->content));
	} else if (!have && !too_new) {
		/*
		 * No entry: the new one is keyed by status alone, which spares
		 * a cold run the hashing; a run that finds the status changed
		 * hashes the contents, misses, and writes both.
		 */
	} else {
		SHA1Init(&sha);
		rules_mix(mix_sha, &sha, m);
		if (!content_mix(&sha, fd[0]) ||
		    (fd[1] >= 0 && !content_mix(&sha, fd[1]))) {
			sym_cache_file_release(&m->cache);
			goto out;
		}
		if (fd[1] < 0)
			SHA1Update(&sha, (const uint8_t *)"no debug file", 13);
		SHA1Final(key->content, &sha);
		if (have && memcmp(m->cache.content, key->content,
				   sizeof(key->content)) != 0)
			sym_cache_file_release(&m->cache);
		else if (have && !too_new)
			m->cache_dirty = true;	/* record the files' status */
	}
	m->cache_state = CACHE_READ;
	if (m->cache.buf &&
	    !MP_GROW(ctx->scratch, ctx->ascratch, SYM_CACHE_MAX_FRAMES))
		sym_cache_file_release(&m->cache);
out:
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/*
 * The answer for ELF address A of M from its cache file, into
 * ctx->scratch as symbolize() leaves it, with the warnings symbolize()
 * would give.  False if the file does not have A; *NOMEM on failure.
 */
static bool from_cache(struct sym_ctx *ctx, struct sym_module *m, uint64_t a,
		       size_t *nout, bool *from_symtab, uint8_t *why,
		       bool *nomem)
{
	struct sym_cache_rec rec;

	if (!m->cache.buf ||
	    !sym_cache_find(&m->cache, a, &rec, ctx->scratch))
		return false;
	if (rec.why >= WHY_COUNT) {
		/* Not written by these rules: drop the file (it is rewritten). */
		sym_cache_file_release(&m->cache);
		m->cache_dirty = true;
		return false;
	}
	if (m->dwarf < 0)
		m->dwarf = m->cache.has_dwarf;
	if (!m->cache.has_dwarf)
		no_dwarf(ctx, m);
	if (rec.why)
		distrust(ctx, m, rec.why);
	for (uint32_t k = 0; k < rec.n; k++) {
		struct sym_frame *f = &ctx->scratch[k];

		f->runtime = f->alloc_lib = f->runtime_code = false;
		f->file = intern_file(ctx, f->file, NULL, f, nomem);
		f->function = intern_fn(ctx, f->function, f, nomem);
	}
	*nout = rec.n;
	*from_symtab = rec.from_symtab;
	*why = rec.why;
	return true;
}

struct cache_item {
	uint64_t addr;
	uint32_t entry;
};

static int cache_item_cmp(const void *a, const void *b)
{
	const struct cache_item *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Did libdwfl read the debug file M's key was computed with?  It names
 * the separate debug file it used, if any; the key's one must be that.
 * And answers read through a dwz alternate file (.gnu_debugaltlink)
 * depend on one more file: such modules are not cached.
 */
static bool key_held(struct sym_module *m)
{
	const char *debugfile = NULL, *alt;
	const void *altid;
	struct stat st;

	if (m->dw && dwelf_dwarf_gnu_debugaltlink(m->dw, &alt, &altid) > 0)
		return false;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, NULL,
			 &debugfile);
	if (!debugfile)
		return true;
	return m->pred_found && stat(debugfile, &st) == 0 &&
	       st.st_dev == m->pred_dev && st.st_ino == m->pred_ino;
}

/*
 * Write the cache entry of module MODULE if this run symbolized addresses
 * its file lacked: every address of the file and of this run.  Failure
 * (a read-only or full disk, no memory) only leaves the entry as it was.
 */
static void cache_save(struct sym_ctx *ctx, int32_t module)
{
	struct sym_module *m = ctx->mods[module];
	struct sym_cache_rec *recs = NULL, old;
	struct sym_frame *oldf = NULL;
	struct cache_item *items = NULL;
	size_t nitems = 0, nrecs = 0, of = 0, k = 0;
	struct mp_err err;

	/* A split unit's answers depend on its .dwo file, not in the key. */
	if (!m->cache_dirty || m->dwarf < 0 || m->split || !key_held(m))
		return;
	for (size_t i = 0; i < ctx->nentries; i++)
		nitems += ctx->entries[i].module == module;
	items = malloc(nitems * sizeof(*items) + 1);
	recs = malloc((nitems + m->cache.naddrs) * sizeof(*recs) + 1);
	oldf = malloc((size_t)m->cache.nframes * sizeof(*oldf) + 1);
	if (!items || !recs || !oldf)
		goto out;
	nitems = 0;
	for (size_t i = 0; i < ctx->nentries; i++)
		if (ctx->entries[i].module == module)
			items[nitems++] = (struct cache_item){
				ctx->entries[i].addr, (uint32_t)i };
	qsort(items, nitems, sizeof(*items), cache_item_cmp);
	/* Merge the two sorted lists; an address in both is the same answer. */
	for (uint32_t i = 0; i < m->cache.naddrs || k < nitems;) {
		if (i < m->cache.naddrs)
			sym_cache_get(&m->cache, i, &old, oldf + of);
		if (k < nitems && (i >= m->cache.naddrs || items[k].addr <= old.addr)) {
			const struct sym_entry *e = &ctx->entries[items[k].entry];

			recs[nrecs++] = (struct sym_cache_rec){
				e->addr, e->fr->f, e->fr->n, e->fr->from_symtab,
				e->why };
			if (i < m->cache.naddrs && items[k].addr == old.addr)
				i++;
			k++;
		} else {
			recs[nrecs++] = old;
			of += old.n;
			i++;
		}
	}
	sym_cache_write(ctx->opt.cache_dir, &m->cache_key, m->dwarf > 0, recs,
			nrecs, &err);
out:
	free(items);
	free(recs);
	free(oldf);
}

/* ---- the answers in memory ------------------------------------------------ */

static uint64_t entry_hash(int32_t module, uint64_t addr)
{
	return mp_hash64(addr ^ ((uint64_t)(uint32_t)module << 48) ^
			 ((uint64_t)(uint32_t)module * 0x9e3779b97f4a7c15ULL));
}

static bool same_entry(const void *key, uint32_t i, const void *arg)
{
	const struct sym_entry *k = key;
	const struct sym_entry *e = &((const struct sym_ctx *)arg)->entries[i];

	return e->addr == k->addr && e->module == k->module;
}

enum mp_errcode sym_lookup(struct sym_ctx *ctx, int32_t module, uint64_t addr,
			   const struct sym_frames **out, struct mp_err *err)
{
	struct sym_module *m;
	struct sym_frames *fr;
	struct sym_entry key = { .addr = addr, .module = module };
	uint64_t h;
	uint32_t i;
	size_t n, bytes;
	bool from_symtab, cached = false, nomem = false;
	uint8_t why;

	*out = &no_frames;
	if (module < 0)
		return MP_OK;
	if ((size_t)module >= ctx->nmods)
		return mp_fail(err, MP_E_INVALID, "no module %d", (int)module);
	h = entry_hash(module, addr);
	i = ht_find(&ctx->entry_ht, h, same_entry, &key, ctx);
	if (i != HT_NONE) {
		*out = ctx->entries[i].fr;
		return MP_OK;
	}
	if (ctx->nentries >= UINT32_MAX - 1)
		return mp_fail(err, MP_E_TOO_LARGE, "too many distinct addresses");
	if (!MP_GROW(ctx->entries, ctx->aentries, ctx->nentries + 1) ||
	    ht_insert(&ctx->entry_ht, h, (uint32_t)ctx->nentries))
		return mp_fail(err, MP_E_NOMEM, NULL);

	m = ctx->mods[module];
	if (ctx->opt.cache_dir && m->cache_state == CACHE_UNTRIED)
		cache_open(ctx, m);
	if (m->cache_state == CACHE_READ)
		cached = from_cache(ctx, m, addr, &n, &from_symtab, &why, &nomem);
	if (nomem || (!cached &&
		      !symbolize(ctx, m, addr + m->bias, &n, &from_symtab, &why)))
		return mp_fail(err, MP_E_NOMEM, NULL);
	if (cached)
		ctx->stats.cached++;
	else if (m->cache_state == CACHE_READ)
		m->cache_dirty = true;
	if (!mp_mul(n, sizeof(struct sym_frame), &bytes) ||
	    !(fr = mp_arena_alloc(&ctx->arena, sizeof(*fr))) ||
	    (n && !(fr->f = mp_arena_memdup(&ctx->arena, ctx->scratch, bytes))))
		return mp_fail(err, MP_E_NOMEM, NULL);
	fr->n = (uint32_t)n;
	fr->from_symtab = from_symtab && n > 0;

	m->addrs++;
	if (n && fr->f[0].file)
		m->with_line++;
	else if (n && fr->f[0].function)
		m->symtab_only++;
	ctx->stats.addrs++;
	ctx->entries[ctx->nentries++] = (struct sym_entry){
		.addr = addr, .fr = fr, .module = module, .why = why };
	*out = fr;
	return MP_OK;
}

/* ---- information -------------------------------------------------------- */

int32_t sym_main_module(const struct sym_ctx *ctx)
{
	return ctx->main;
}

bool sym_binary_missing(const struct sym_ctx *ctx)
{
	for (size_t i = 0; i < ctx->nbids; i++)
		if (ctx->bids[i].module < 0)
			return true;
	return false;
}

bool sym_module_info(const struct sym_ctx *ctx, int32_t module,
		     struct sym_module_info *out)
{
	const struct sym_module *m;

	if (module < 0 || (size_t)module >= ctx->nmods)
		return false;
	m = ctx->mods[module];
	*out = (struct sym_module_info){
		.path = m->path,
		.build_id = m->build_id,
		.build_id_size = m->build_id_size,
		.from_debug_dir = m->from_debug_dir,
		.has_dwarf = m->dwarf > 0,
		.addrs = m->addrs,
		.with_line = m->with_line,
		.symtab_only = m->symtab_only,
	};
	return true;
}

void sym_get_stats(const struct sym_ctx *ctx, struct sym_stats *out)
{
	*out = ctx->stats;
	out->nmodules = (uint32_t)ctx->nmods;
	out->memory = ctx->arena.total +
		      ctx->aentries * sizeof(struct sym_entry) +
		      ht_bytes(&ctx->entry_ht) +
		      ctx->astrs * sizeof(struct sym_str) +
		      ht_bytes(&ctx->str_ht);
}
