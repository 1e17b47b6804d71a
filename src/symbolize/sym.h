/*
 * sym.h - symbolization of profile PCs: PC -> (module, ELF address) -> frames.
 *
 * Many raw profiles of one program differ only in where the loader put each
 * module (ASLR).  So a PC is first mapped, per profile, to the module that
 * contains it and its ELF address there (sym_map_pc); only then are distinct
 * (module, address) pairs symbolized, each once and cached (sym_lookup).
 * Merging 500 profiles of one program costs about as much DWARF work as one.
 *
 *	struct sym_options opt = { .warn = print_warning, .warn_arg = NULL };
 *	const struct sym_frame *ff[MAX];	// one context's logical frames
 *	const struct sym_frames *fr;
 *	struct mp_err err = { 0 };
 *	struct sym_ctx sym;
 *	struct sym_addr a;
 *	size_t n = 0;
 *
 *	sym_init(&sym, &opt);
 *	if (sym_add_binary(&sym, "./app", &err) ||	// main executable first
 *	    sym_add_binary(&sym, "./libfoo.so", &err) ||
 *	    sym_check_profile(&sym, prof, &err))	// warns on a mismatch
 *		goto out;
 *	for (uint32_t k = 0; k < ctx->npcs; k++) {	// leaf first
 *		if (sym_map_pc(&sym, prof, ctx->pcs[k], &a, &err) ||
 *		    sym_lookup(&sym, &a, &fr, &err))
 *			goto out;
 *		if (fr->n == 0)				// unsymbolized: show
 *			ff[n++] = NULL;			// <build id>+0x<a.offset>
 *		for (uint32_t i = 0; i < fr->n; i++)	// innermost first
 *			ff[n++] = &fr->f[i];
 *	}
 *	for (size_t i = sym_user_start(ff, n); i < n; i++)
 *		if (ff[i])				// file may be NULL
 *			printf("%s %s:%u\n",
 *			       sym_pretty_name(&sym, ff[i]->function),
 *			       ff[i]->file ? ff[i]->file : "??", ff[i]->line);
 *   out:
 *	sym_release(&sym);
 *
 * Modules.  sym_add_binary() registers an ELF executable or shared object.
 * Profiles of version 3 and later record each segment's GNU build id, and a
 * segment belongs to the binary with that build id, whatever its path.  For
 * a build id that no registered binary has, the debug directories are
 * searched for DIR/.build-id/xx/rest, then DIR/.build-id/xx/rest.debug, and
 * a file found there becomes a module too (so libc's frames are symbolized
 * on a system with libc6-dbg); then opt.runtime_libs (the profiling
 * runtime's preload library); then, with opt.libs_cache, the libraries
 * the dynamic loader's cache lists (a stripped libstdc++ is named by its
 * exported symbols).  Version 1 and 2 profiles carry no build id:
 * the first registered binary is the main executable, and it owns the
 * leading segments of the map whose file offset and size fit one of its
 * executable PT_LOADs; frames in other segments stay unsymbolized.
 *
 * Debug information of a module is its own DWARF, else a separate file found
 * by build id (DIR/.build-id/xx/rest.debug) or by .gnu_debuglink (next to the
 * binary, in its .debug/ subdirectory, or DIR/<binary's directory>/), for
 * each debug directory DIR: those given to sym_add_debug_dir(), then
 * /usr/lib/debug unless opt.no_default_debug_dir.  There is never a network
 * lookup: DEBUGINFOD_URLS is ignored.  Split DWARF is read from each unit's
 * .dwo; sections compressed with zstd, from an inflated copy (sym_zstd.c).  Without DWARF for an address, its
 * frame is the ELF symbol that contains it (from_symtab).
 *
 * What a frame says matches llvm-symbolizer --inlining (and LLVM's own
 * MemProf reader, which asks for linkage names from DWARF only): function
 * = DW_AT_linkage_name, else DW_AT_name; file joined to the compilation
 * directory as LLVM joins it; line, column and discriminator of the
 * line-table row for the innermost frame, of DW_AT_call_* for the others.
 * tests/cli/test_sym_oracle.sh checks this on every fixture PC and on sweeps of the
 * fixture binaries and of libc.
 *
 * Cost.  A module's DWARF is read on its first lookup; each compile unit
 * is indexed when an address first lands in it (one pass over its DIEs),
 * each subprogram's scope tree likewise; after that a lookup is a few
 * binary searches.  Distinct addresses cost about 10 us each; a repeated
 * one is a hash probe.  The context holds about 50 bytes per distinct
 * address, 40 per frame and the interned strings (sym_get_stats().memory);
 * libdw's own caches come on top.
 *
 * Symbol cache.  With opt.cache_dir, the answers for a module's addresses
 * are kept across runs in CACHE_DIR/<build id in hex>, one file per module
 * (format in sym_cache.h), read on the module's first lookup: an address
 * the file has costs a binary search and no DWARF is opened; the DWARF is
 * read only for addresses it lacks, and sym_release() then rewrites the
 * file with the addresses of both.  The answers are the same, frame for
 * frame, warnings included, with and without the cache.  An entry is
 * keyed by the build id and fingerprints of what the answers depend on:
 * the contents of the module's file and of the separate debug file that
 * would be found for it (SHA-1: a copy of a binary hits, a stripped or
 * patched one, or a debug file installed later, does not), libdw's
 * version and this module's rules, with the files' status (inode, size,
 * times) sparing the hashing while they are unchanged (a new entry has
 * the status alone, so a cold run hashes nothing); a file whose key,
 * checksum or any field does not hold is ignored and replaced.  Files
 * are written to a temporary and renamed, so concurrent runs leave whole
 * files (the last one wins).
 * A cache that cannot be read or written (a read-only directory, a full
 * disk) only costs the DWARF work: nothing fails, nothing is said.
 * Modules without build id, or whose DWARF uses a dwz alternate file,
 * are not cached.
 *
 * Ownership.  Every string and frame array handed out (sym_frames,
 * sym_module_info, sym_pretty_name) is owned by the context and stays valid,
 * unchanged, until sym_release().  The context is used from one thread.
 *
 * Warnings go to opt.warn, each once: a segment without a binary once per
 * build id (v1/v2: per segment position, file offset and size), a binary
 * matching no segment once per binary, a module without DWARF once per
 * module, PCs outside every segment once.  With opt.strict the first two
 * are errors instead (see sym_map_pc and sym_check_profile).
 */
#ifndef SYM_H
#define SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"
#include "common/mp_frame.h"
#include "common/mp_util.h"
#include "raw/raw.h"
#include "hashtable/ht.h"

/*
 * A program's own allocation wrappers (--alloc-function), treated as the
 * allocation runtime's frames: glob patterns (fnmatch(3), no flags)
 * matched against a frame's linkage name and, for a C++ name, against its
 * demangled form too ("*::alloc*", "sqlite3MemMalloc").  DM demangles;
 * it may be NULL (linkage names only).  MATCHED, if not NULL, has N flags
 * that sym_alloc_match() sets (atomically: views of two inputs may match
 * at once) for each pattern that matched a name, for a warning about a
 * pattern that matched nothing.
 */
struct sym_alloc_rules {
	const char *const *globs;
	size_t n;
	struct sym_demangler *dm;
	bool *matched;
};

/* Does FUNCTION match one of R's patterns?  False when R is NULL. */
bool sym_alloc_match(const struct sym_alloc_rules *r, const char *function);

struct sym_options {
	/* Called with a complete one-line message; NULL drops warnings. */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
	/*
	 * A PC in a segment without a binary is an error (MP_E_NO_BINARY, or
	 * MP_E_BUILD_ID for the main segment while a main binary is
	 * registered; in v1/v2 profiles only the main segment counts, as no
	 * other can have a binary), and so is a main binary that matches no
	 * segment of the profile.
	 */
	bool strict;
	/*
	 * Only a PC in a profile's main segment (its first) without a
	 * binary is an error (a file found by build id does not count): an
	 * LLVM export without the program's frames is of no use to the
	 * compiler.
	 */
	bool strict_main;
	/*
	 * The caller names the inputs whose main segment is another
	 * program's (sym_other_program()): no warning of the context's own,
	 * which could not say which input it is.
	 */
	bool caller_names_others;
	/*
	 * What the caller does with the frames of a module without a binary,
	 * for the warnings' end; NULL: "its frames stay unsymbolized".
	 */
	const char *unsymbolized_fate;
	bool no_default_debug_dir;	/* do not search /usr/lib/debug */
	/* The program's own allocation wrappers, runtime frames too; may be
	 * NULL; must outlive the context. */
	const struct sym_alloc_rules *alloc;
	/*
	 * The persistent symbol cache's directory (see "Symbol cache"
	 * above), or NULL for none; must outlive the context.
	 */
	const char *cache_dir;
	/*
	 * The dynamic loader's cache (/etc/ld.so.cache) in which to find, by
	 * build id, a library no binary and no debug directory has, or NULL
	 * for none (sym_libs.c).
	 */
	const char *libs_cache;
	/*
	 * Library files in which to find, by build id, a module no binary
	 * was given for, before the loader's cache: the profiling runtime's
	 * preload library, whose return addresses a preloaded run's stacks
	 * hold (the command gives the one beside it).  Files that are not
	 * there are passed over; the strings must outlive the context.
	 */
	const char *const *runtime_libs;
	size_t nruntime_libs;
};

/* One logical frame: a function, or a function inlined into its caller. */
struct sym_frame {
	const char *function;	/* linkage (mangled) name; NULL if unknown */
	const char *file;	/* absolute unless the DWARF's comp_dir is
				 * relative; NULL if unknown */
	uint32_t line, column, discriminator;	/* 0 if unknown */
	uint32_t start_line;	/* the function's DW_AT_decl_line, 0 if
				 * unknown: LLVM's MemProf keys frames by
				 * line - start_line */
	bool inlined;		/* inlined into the next (outer) frame */
	bool runtime;		/* allocation runtime, see sym_is_runtime() */
	bool alloc_lib;		/* of those, an allocator library's frame
				 * (sym_is_alloc_library()) */
	bool runtime_code;	/* of those, in the profiling runtime's own
				 * source (sym_is_runtime() by file) */
};

struct sym_frames {
	struct sym_frame *f;	/* n frames, innermost first */
	uint32_t n;		/* 0: nothing known about the address */
	bool from_symtab;	/* no DWARF: f[0] is the ELF symbol only */
};

/*
 * Where a PC lies.  module is the index of a module of the context, or -1
 * when the PC lies in no segment (segment == -1) or in a segment without a
 * binary.  offset is what to show for an unsymbolized frame, as
 * "<build id>+0x<offset>": in profiles of version 3 and later the ELF
 * address (PC - load bias), known even without the binary; in version 1
 * and 2, the file offset (PC - segment start + mapping's file offset).
 */
struct sym_addr {
	uint64_t addr;		/* ELF address in the module; valid if module >= 0 */
	uint64_t offset;
	int32_t module;
	int32_t segment;	/* index into prof->segments, or -1 */
	uint32_t build_id_size;	/* 0 in v1/v2 profiles */
	uint8_t build_id[RAW_BUILD_ID_MAX];
};

struct sym_module_info {
	const char *path;	/* the binary, or the debug file standing in */
	const uint8_t *build_id;
	uint32_t build_id_size;	/* 0 if the ELF has none */
	bool from_debug_dir;	/* found by build id, not given by the user */
	bool has_dwarf;		/* known after the first sym_lookup() */
	/* Distinct addresses looked up in the module: */
	uint64_t addrs;		/* in all */
	uint64_t with_line;	/* resolved to a source location */
	uint64_t symtab_only;	/* resolved to an ELF symbol only */
	/* addrs - with_line - symtab_only resolved to nothing */
};

struct sym_stats {
	uint64_t pcs;		/* sym_map_pc() calls */
	uint64_t unmapped;	/* ... whose PC lies in no segment */
	uint64_t no_binary;	/* ... whose segment has no binary */
	uint64_t addrs;		/* distinct (module, address) symbolized */
	uint64_t cached;	/* ... of which read from the symbol cache */
	uint64_t memory;	/* bytes the context holds for them */
	uint32_t nmodules;
};

struct sym_module;
struct sym_bid;
struct sym_entry;
struct sym_str;

/* All fields are private; read them through the functions below. */
/* The libraries the loader's cache lists, by build id (sym_libs.c). */
struct sym_lib {
	uint8_t id[RAW_BUILD_ID_MAX];
	uint32_t size;		/* 0: not read yet, or none */
	const char *path;	/* into sym_libs.buf */
};

struct sym_libs {
	uint8_t *buf;		/* the cache file */
	struct sym_lib *v;	/* its libraries, most likely first */
	size_t n, nread;	/* v[0..nread) have their build ids read */
	size_t alloc;		/* sym_libs_add()'s room in v */
	bool loaded;		/* sym_libs_load() called */
};

/*
 * Read the loader's cache CACHE: the libraries it lists, once.  A cache
 * that cannot be read or is not glibc's current format gives none: only
 * running out of memory is an error.
 */
enum mp_errcode sym_libs_load(struct sym_libs *L, const char *cache,
			      struct mp_err *err);
/*
 * The path of the library with build id ID, or NULL; reads build ids
 * down the list until it is found, each library once in all.
 */
const char *sym_libs_find(struct sym_libs *L, const uint8_t *id,
			  uint32_t size);
/* Add the library at PATH (kept, not copied) to L's list, last. */
enum mp_errcode sym_libs_add(struct sym_libs *L, const char *path);
void sym_libs_release(struct sym_libs *L);

/*
 * A memfd holding the ELF file open as FD with its DWARF sections that
 * are compressed with zstd inflated, if it has some and this libelf
 * cannot inflate them (sym_zstd.c); else -1, with ERR->code set if they
 * could not be inflated, and ERR saying why.
 */
int sym_zstd_inflate(int fd, struct mp_err *err);

struct sym_ctx {
	struct sym_options opt;
	int32_t main;			/* first binary added, or -1 */
	struct sym_module **mods;	/* each allocated on its own: libdwfl
					 * keeps pointers into it */
	size_t nmods, amods;
	char **dirs;			/* debug directories */
	size_t ndirs, adirs;
	struct sym_bid *bids;		/* build ids seen, each with its module */
	size_t nbids, abids;
	struct ht bid_ht;		/* index of bids by build id */
	uint64_t *warned;		/* hashes of warnings already given */
	size_t nwarned, awarned;
	struct sym_entry *entries;	/* the symbolized addresses */
	size_t nentries, aentries;
	struct ht entry_ht;		/* index of entries by (module, addr) */
	struct sym_str *strs;		/* interned strings */
	size_t nstrs, astrs;
	struct ht str_ht;		/* index of strs by bytes */
	struct sym_frame *scratch;	/* frames of the address in progress */
	size_t ascratch;
	struct mp_arena arena;		/* strings and frame arrays */
	struct sym_stats stats;
	struct sym_libs libs;		/* opt.libs_cache's, read on first need */
	struct sym_libs runtime_libs;	/* opt.runtime_libs, likewise */
	struct sym_libs dir_libs;	/* sym_add_binary_dir()'s files */
};

/* Set up CTX with OPT (copied; NULL = defaults).  Allocates nothing. */
void sym_init(struct sym_ctx *ctx, const struct sym_options *opt);
/*
 * Free everything CTX holds; accepts an initialized or zeroed struct.
 * With opt.cache_dir, first writes the symbol cache entries of modules
 * with addresses their entry lacked (errors ignored: it is a cache).
 */
void sym_release(struct sym_ctx *ctx);

/*
 * Search DIR (a tree with .build-id/xx/rest.debug, like /usr/lib/debug)
 * before the default; DIR is made absolute now.  MP_E_IO if it does not
 * exist, MP_E_INVALID if it contains ':' (libdwfl's path separator).
 */
enum mp_errcode sym_add_debug_dir(struct sym_ctx *ctx, const char *dir,
				  struct mp_err *err);

/*
 * Take every regular file under DIR (its tree, to SYM_DIR_DEPTH levels,
 * symbolic links to directories not followed) as a binary a module may
 * be found in by build id, when no binary was registered with it: the
 * files are read, each once, only as far as a module without a binary
 * asks, and before the loader's cache.  For programs with many shared
 * objects (plugins, an interpreter's extension modules).  MP_E_IO if
 * DIR cannot be read; at most SYM_DIR_FILES files.
 */
#define SYM_DIR_DEPTH 16
#define SYM_DIR_FILES 100000
enum mp_errcode sym_add_binary_dir(struct sym_ctx *ctx, const char *dir,
				   struct mp_err *err);

/*
 * Register the ELF executable or shared object at PATH (the path is copied).
 * The first binary registered is the main executable of v1/v2 profiles.  A
 * second binary with a build id already registered is ignored with a
 * warning.  Fails with MP_E_IO, MP_E_ELF or MP_E_TRUNCATED (a file cut
 * short: its headers, sections or segments past its end); the message
 * says why, the caller names PATH.
 */
enum mp_errcode sym_add_binary(struct sym_ctx *ctx, const char *path,
			       struct mp_err *err);

/*
 * Is PROF (v3+) a profile of another program than the one given: a main
 * binary registered that is in none of PROF's segments, and no binary or
 * debug file here for PROF's main segment?  Then its frames there stay
 * unsymbolized (or fail under opt.strict and opt.strict_main), and
 * *BID, *N (RAW_BUILD_ID_MAX bytes) get that segment's build id.  Fails
 * only with MP_E_NOMEM.
 */
enum mp_errcode sym_other_program(struct sym_ctx *ctx,
				  const struct raw_profile *prof,
				  bool *other, uint8_t *bid, uint32_t *n,
				  struct mp_err *err);

/*
 * Check the registered binaries against PROF's memory map: warn once per
 * binary that matches no segment, naming both build ids for the main one
 * ("'app' has build id 3f2a..., the profile's main segment has 9c01...").
 * With opt.strict a main binary that does not match is MP_E_BUILD_ID.
 */
enum mp_errcode sym_check_profile(struct sym_ctx *ctx,
				  const struct raw_profile *prof,
				  struct mp_err *err);

/*
 * Map PC of profile PROF to OUT (see struct sym_addr).  A PC in a segment
 * without a binary is warned about once per build id (v1/v2: once per
 * segment position, offset and size), naming the segment:
 *	no binary with build id 3f2a... for segment 0x7f3c...-0x7f3d...;
 *	its frames stay unsymbolized
 * (its end opt.unsymbolized_fate when given).
 * With opt.strict it is an error instead.  Cheap: a scan of the segments
 * and a hash probe; no DWARF is read.
 */
enum mp_errcode sym_map_pc(struct sym_ctx *ctx, const struct raw_profile *prof,
			   uint64_t pc, struct sym_addr *out,
			   struct mp_err *err);

/*
 * The frames of A (from sym_map_pc, or with module and addr set by hand).
 * Each distinct (module, addr) is symbolized once.  The PC is used as is:
 * raw profiles already store return address - 1.  A with module -1 gives
 * n = 0.  Missing or broken debug information never fails: the address
 * falls back to its ELF symbol or to nothing.  Fails only with MP_E_NOMEM,
 * or MP_E_INVALID for a module index out of range.
 */
enum mp_errcode sym_lookup(struct sym_ctx *ctx, int32_t module, uint64_t addr,
			   const struct sym_frames **out, struct mp_err *err);

/*
 * The module whose build id is BID (N bytes): a registered binary, or a
 * file found by build id in the debug directories; -1 when there is none.
 * For frames that name their module by build id (an indexed profile's
 * unsymbolized frames).  Fails only with MP_E_NOMEM.
 */
enum mp_errcode sym_module_of_build_id(struct sym_ctx *ctx, const uint8_t *bid,
				       uint32_t n, int32_t *module,
				       struct mp_err *err);

/*
 * Reading a module's DWARF beside: the first lookup in a module finds its
 * debug file and reads it, which for a C library's compressed one is most
 * of a cold merge of a few inputs.  sym_dwarf_to_open() names a module
 * whose DWARF a lookup would read now (not read yet, and no symbol cache
 * entry that may answer instead), or returns NULL; it may read the
 * module's cache entry.  sym_open_dwarf() reads it, and may run on a
 * thread of its own while the caller looks up addresses of other modules
 * of the context, if nothing else uses the context meanwhile (the caller
 * serializes that) and the context is not released.  It says nothing: a
 * module without DWARF is told at its next lookup.
 *
 *	struct sym_module *x = sym_dwarf_to_open(ctx, libc);
 *	// on another thread: if (x) sym_open_dwarf(x);
 *	sym_lookup(ctx, app, addr, &fr, &err);	// meanwhile
 *	// joined: now sym_lookup(ctx, libc, ...)
 */
struct sym_module *sym_dwarf_to_open(struct sym_ctx *ctx, int32_t module);
void sym_open_dwarf(struct sym_module *m);

/* The main binary's module: the first binary added, or -1. */
int32_t sym_main_module(const struct sym_ctx *ctx);

/* Was a build id met (in a memory map, a stack) that no binary, given
 * or found, has? */
bool sym_binary_missing(const struct sym_ctx *ctx);

/* Describe module MODULE; false if there is no such module. */
bool sym_module_info(const struct sym_ctx *ctx, int32_t module,
		     struct sym_module_info *out);
void sym_get_stats(const struct sym_ctx *ctx, struct sym_stats *out);

/*
 * The Itanium C++ name NAME demangled by libstdc++'s demangler (programs
 * using this module link with libsupc++ or libstdc++), as a string to
 * free(); or NULL with *STATUS -2 when it cannot read NAME or NAME's text
 * would pass SYM_DEMANGLED_RATIO times NAME's length plus
 * SYM_DEMANGLED_SLACK bytes (nested substitutions let a few hundred
 * bytes name a type of gigabytes; of 62k real C++ names, those libLLVM
 * 19 and libstdc++ export and those of cppcheck and RE2, long ones come
 * to 24 times theirs and short ones to 10, "_ZNSsD1Ev"),
 * -1 when out of memory.  The work and memory are bounded by that
 * length, and so the text a reader keeps of every distinct name of a
 * file by at most 128 bytes per byte of its names (of 4 bytes or more).
 */
#define SYM_DEMANGLED_RATIO 64
#define SYM_DEMANGLED_SLACK 256
char *sym_demangle_alloc(const char *name, int *status);

/*
 * Demangle an Itanium C++ name for display, snprintf-style: writes the
 * demangled name, or NAME itself when it is not a mangled name or
 * sym_demangle_alloc() fails, into BUF and returns the full length.
 */
size_t sym_demangle(const char *name, char *buf, size_t size);

/*
 * Where the name proper starts in PRETTY, a demangled function name: past
 * the return type the demangler writes before a function template's name
 * ("int* make<int>(unsigned long)": 5), else 0.  "(anonymous namespace)",
 * operator names ("operator new", "operator< <int>") and blanks inside
 * template arguments are no boundary.
 */
size_t sym_name_start(const char *pretty);

/*
 * The same, cached in CTX: the result is owned by CTX.  Returns NAME itself
 * when it is not mangled or demangling fails, and NULL for NULL.
 */
const char *sym_pretty_name(struct sym_ctx *ctx, const char *name);

/*
 * True when a frame with this linkage name (or NULL) and source file (or
 * NULL) belongs to the allocation runtime, not to the program.  The rule:
 *  - names of compiler-rt's MemProf runtime and interceptors: prefixes
 *    __interceptor_, ___interceptor_, __memprof_, __sanitizer_, and the
 *    namespaces __memprof, __sanitizer, __interception (_ZN8__memprof...);
 *  - our own runtime: prefix memprof_rt_;
 *  - the C allocation functions, exactly: malloc calloc realloc
 *    reallocarray free cfree posix_memalign aligned_alloc memalign valloc
 *    pvalloc malloc_usable_size strdup strndup __strdup __strndup wcsdup,
 *    and the same with prefix __libc_ (glibc's internal names);
 *  - C++ operator new/new[]/delete/delete[], every overload (_Znw, _Zna,
 *    _Zdl, _Zda followed by anything);
 *  - allocate/deallocate of the standard allocators: a name starting with
 *    std::allocator<, std::__new_allocator<, __gnu_cxx::new_allocator<,
 *    std::allocator_traits<, __gnu_cxx::__alloc_traits< or their libc++
 *    std::__1:: versions, and containing E8allocate, E10deallocate or
 *    E17allocate_at_least after that (mangled form); plus libc++'s
 *    std::__1::__libcpp_allocate and __libcpp_operator_new, and
 *    std::__allocate_guarded (make_shared/allocate_shared);
 *  - a file under compiler-rt/lib/ or src/runtime/.
 * Containers' own members (std::vector<...>::_M_realloc_insert) are user
 * frames: they say which container allocated.
 */
bool sym_is_runtime(const char *function, const char *file);

/*
 * Index of the first user frame of a calling context given as its logical
 * frames, leaf first (every PC's frames, innermost first, PC after PC).
 * FRAMES[i] may be NULL for a frame that could not be symbolized.  Leading
 * frames whose 'runtime' flag is set are skipped; a NULL frame stops the
 * skipping (what it is cannot be known, so it is kept).  Returns N when
 * every frame is a runtime frame.
 */
size_t sym_user_start(const struct sym_frame *const *frames, size_t n);

/*
 * Is FUNCTION (a linkage name) one of the allocator library's frames that
 * sym_is_runtime() counts but a compiler matches contexts through:
 * std::allocator's and allocator_traits' allocate and friends (and their
 * libc++ and __gnu_cxx kin), std::__allocate_guarded, libc++'s
 * __libcpp_allocate?  Indexed profiles keep such frames, flagged
 * (MP_FRAME_ALLOC_LIB); show hides them as it hides the runtime's.
 */
bool sym_is_alloc_library(const char *function);

/*
 * Call FN with the linkage name (else the name) of every function the
 * DWARF of CTX's modules defines, and the names the symbolizer gives
 * frames of a GCC unit's function without one (its ELF symbol, its
 * qualified name): to map LLVM's function GUIDs back to names.  A name
 * may come more than once.  Fails only with MP_E_NOMEM.
 */
enum mp_errcode sym_foreach_function(struct sym_ctx *ctx,
				     void (*fn)(void *arg, const char *name),
				     void *arg, struct mp_err *err);

/*
 * C++ names demangled for display, each distinct name once, with no
 * limit on length:
 *
 *	struct sym_demangler d;
 *	sym_demangler_init(&d);
 *	puts(sym_demangled(&d, "_Z3fooi"));	// "foo(int)"
 *	sym_demangler_release(&d);
 *
 * sym_demangled() returns NAME itself when it is not a mangled name, when
 * the demangler cannot read it (counted in FAILED: clang 19 mangles some
 * names that libstdc++ 12 does not know; sym_demangle_alloc()'s bound)
 * or when out of memory; else a
 * string owned by D.  Names are cached by address: NAME must stay valid
 * and unchanged as long as D.  Not thread-safe.
 */
struct sym_demangler {
	struct ht ht;			/* by the name's address */
	const char **names, **pretty;
	size_t n, anames, apretty;
	uint64_t failed;		/* names the demangler could not read */
};

void sym_demangler_init(struct sym_demangler *d);
const char *sym_demangled(struct sym_demangler *d, const char *name);
void sym_demangler_release(struct sym_demangler *d);

/*
 * Stacks as frames (struct mp_frame, common/mp_frame.h): a raw context's
 * PCs, or locations already placed in their modules (merge's location
 * keys), each PC becoming its inline frames, innermost first.  A PC that
 * cannot be symbolized stays one frame holding its address and, when
 * known, its module's build id and offset in the module.
 *
 *	struct sym_stack st = { 0 };
 *	rc = sym_stack_symbolize(&sym, prof, c->pcs, c->npcs, 0, &st,
 *				 &stats, &err);
 *	... st.f[0 .. st.n - 1] ...
 *	sym_stack_release(&st);
 *
 * Frames' strings belong to SYM; the build ids to whoever the PCs or the
 * location came from.  A stack's contents are replaced by the next
 * sym_stack_symbolize() call on it, and are valid until then.
 */
struct sym_stack {
	struct mp_frame *f;	/* n frames, innermost first */
	size_t n, alloc;
};

struct sym_stack_stats {
	uint64_t frames, symbolized;	/* logical frames kept */
	uint64_t runtime_dropped;	/* frames removed */
	uint64_t all_runtime;		/* contexts that were all runtime */
	uint64_t cut;			/* stacks cut at a PC in no segment */
	uint64_t unmapped_code;		/* stacks through code no longer
					 * mapped, kept (raw_unmapped_run_end) */
	uint64_t stale;			/* PCs in the runtime's code past the
					 * leading frames, left out
					 * (MP_FRAME_RUNTIME_CODE) */
};

/*
 * sym_stack_symbolize()'s FLAGS.  A stack is cut at its first PC after
 * the leaf that lies in no segment of its profile, unless KEEP_BAD: past
 * code built without frame pointers (libstdc++) an unwinder reads
 * garbage return addresses, one site splitting into hundreds of
 * contexts; what follows such a PC is garbage too.  Not when the stack
 * comes back to mapped code for good after it (raw_unmapped_run_end():
 * a library unloaded before the profile was written): those PCs are
 * kept, as addresses.
 */
enum {
	SYM_STACK_KEEP_RUNTIME = 1,	/* keep the runtime's leading frames */
	SYM_STACK_KEEP_BAD = 2,		/* keep PCs in no segment, and after */
};

/* A place in a module, for sym_stack_add. */
struct sym_location {
	int32_t module;		/* the module with a binary, or -1 */
	uint64_t addr;		/* ELF address in it, when module >= 0 */
	uint64_t pc;		/* the address the frames carry */
	/* When it cannot be symbolized: its module and offset there. */
	const uint8_t *build_id;
	uint8_t build_id_size;
	uint64_t offset;
	bool unmapped;		/* it lay in no segment */
};

/*
 * Append LOC's frames to ST.  Fails as sym_lookup().
 */
enum mp_errcode sym_stack_add(struct sym_ctx *sym, const struct sym_location *loc,
			      struct sym_stack *st, struct mp_err *err);

/*
 * Symbolize the NPCS PCS of a context of profile PROF into ST (replacing
 * its contents), then drop the leading frames of the allocation runtime
 * (sym_is_runtime(), and the options' alloc rules) unless KEEP_RUNTIME; a
 * stack made only of runtime frames is kept whole, and counted.  STATS
 * may be NULL.  Fails as sym_map_pc() and sym_lookup().
 */
enum mp_errcode sym_stack_symbolize(struct sym_ctx *sym,
				    const struct raw_profile *prof,
				    const uint64_t *pcs, uint32_t npcs,
				    unsigned flags, struct sym_stack *st,
				    struct sym_stack_stats *stats,
				    struct mp_err *err);

void sym_stack_release(struct sym_stack *st);

#endif /* SYM_H */
