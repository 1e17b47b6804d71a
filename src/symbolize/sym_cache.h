/*
 * sym_cache.h - the persistent symbol cache's files, private to
 * src/symbolize/ (sym.c decides what goes in and when; this reads and
 * writes the bytes).
 *
 * One file per module, DIR/<build id in hex>, holds the answers sym_lookup()
 * gave for addresses of that module: every frame with its strings, "no
 * symbol" answers too, and why an address was left unsymbolized.  The file
 * also carries two fingerprints of everything the answers were computed
 * from (sym.c: the binary and the separate debug file that would be
 * found): one of their contents, and one of their status (inode, size,
 * times) that saves hashing the contents when the files have not changed.
 * A file whose build id, sizes, checksum or any offset is not as expected
 * is ignored; sym.c ignores one whose fingerprints do not match; the next
 * write replaces it.
 *
 * Layout, little-endian (man/memprof-data.1, FILES, says the same):
 *
 *	header, 112 bytes:
 *	  0 magic "MPDSYMC\n"        8 u32 version (1)
 *	 12 u32 flags (bit 0: the module has DWARF)
 *	 16 u32 naddrs  20 u32 nframes  24 u32 strbytes  28 u32 build id size
 *	 32 build id, 32 bytes, zero-padded
 *	 64 content fingerprint, 20 bytes (SHA-1)
 *	 84 status fingerprint, 16 bytes (all zero: none)
 *	100 u32 CRC-32 (zlib) of the whole file with this field zero
 *	104 8 bytes of zero
 *	naddrs addresses, 16 bytes each, strictly increasing:
 *	  u64 address, u32 first frame, u16 frames, u8 flags (bit 0: from
 *	  the ELF symbol table; bits 4-7: why it is unsymbolized, 0 = not),
 *	  u8 zero
 *	nframes frames, 28 bytes each: u32 function, u32 file (0 = none, else
 *	  1 + offset into the strings), u32 line, column, discriminator,
 *	  start line, u32 flags (bit 0: inlined)
 *	strbytes bytes of NUL-terminated strings
 *
 * Writers write a temporary file in DIR and rename it over the entry:
 * readers see the old file or the new one, never a part, whoever else
 * writes at the same time (the last rename wins).
 */
#ifndef SYM_CACHE_H
#define SYM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym.h"

#define SYM_CACHE_CONTENT_SIZE 20
#define SYM_CACHE_STAT_SIZE 16
/* Files larger than this are neither read nor written: bounded memory. */
#define SYM_CACHE_MAX_BYTES ((size_t)64 << 20)
/* Why-unsymbolized codes fit in 4 bits. */
#define SYM_CACHE_MAX_WHY 15
/* A record of more frames than this is corrupt (sym.c's scope depth). */
#define SYM_CACHE_MAX_FRAMES 256

/* What identifies a module's answers: stored on write. */
struct sym_cache_key {
	const uint8_t *build_id;
	uint32_t build_id_size;		/* 1..RAW_BUILD_ID_MAX */
	uint8_t content[SYM_CACHE_CONTENT_SIZE];
	uint8_t stat[SYM_CACHE_STAT_SIZE];
};

/* A file read and checked whole; addresses are found by binary search. */
struct sym_cache_file {
	unsigned char *buf;		/* owned; NULL: no valid file */
	size_t size;
	uint32_t naddrs, nframes, strbytes;
	bool has_dwarf;
	const uint8_t *content, *stat;	/* its fingerprints, in buf */
};

/* One address's answer, as read from a file or to be written. */
struct sym_cache_rec {
	uint64_t addr;
	const struct sym_frame *f;	/* n frames; only function, file,
					 * line, column, discriminator,
					 * start_line and inlined are kept */
	uint32_t n;
	bool from_symtab;
	uint8_t why;			/* 0, or 1..SYM_CACHE_MAX_WHY */
};

/*
 * Read DIR/<build id> into F if it exists, is whole and is for KEY's
 * build id (the fingerprints are the caller's to compare).  False, with
 * F empty, for a missing, unreadable, foreign or corrupt file: the caller
 * symbolizes as if there were none.  Allocates at most the file's size,
 * itself at most SYM_CACHE_MAX_BYTES.
 */
bool sym_cache_read(const char *dir, const struct sym_cache_key *key,
		    struct sym_cache_file *f);

/*
 * The answer for ADDR in F, into *OUT, its frames in FRAMES (room for
 * SYM_CACHE_MAX_FRAMES; strings point into F).  False if F has none.
 */
bool sym_cache_find(const struct sym_cache_file *f, uint64_t addr,
		    struct sym_cache_rec *out, struct sym_frame *frames);

/* The I-th record of F (I < f->naddrs), as sym_cache_find(). */
void sym_cache_get(const struct sym_cache_file *f, uint32_t i,
		   struct sym_cache_rec *out, struct sym_frame *frames);

/*
 * Write the N records of RECS (sorted by address, no address twice) as
 * the entry for KEY in DIR, creating DIR and its parents (mode 0700) when
 * missing.  MP_E_IO when that cannot be done (read-only, disk full), with
 * nothing left behind; MP_E_TOO_LARGE past SYM_CACHE_MAX_BYTES.
 */
enum mp_errcode sym_cache_write(const char *dir, const struct sym_cache_key *key,
				bool has_dwarf, const struct sym_cache_rec *recs,
				size_t n, struct mp_err *err);

void sym_cache_file_release(struct sym_cache_file *f);

#endif /* SYM_CACHE_H */
