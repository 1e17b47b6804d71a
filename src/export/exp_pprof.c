/*
 * exp_pprof.c - a profile as pprof's profile.proto, gzip-compressed, and
 * as folded stacks (export.h).
 *
 * The protobuf encoding is written here by hand: the message is a handful
 * of varint and length-delimited fields (see pprof's proto/profile.proto),
 * which a hundred lines encode; protobuf-c would add a code generator and
 * a library to the build for that.  gzip is zlib's (deflate with a gzip
 * header), which libdw already pulls in.
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "exp_intern.h"
#include "profile/compare.h"
#include "profile/view.h"

/* ---- a protobuf writer ---- */

struct pb {
	unsigned char *d;
	size_t n, alloc;
	bool oom;
};

static void pb_bytes(struct pb *b, const void *p, size_t len)
{
	if (!len)
		return;		/* P may be an empty buffer's NULL */
	if (b->oom || !MP_GROW(b->d, b->alloc, b->n + len + 1)) {
		b->oom = true;
		return;
	}
	memcpy(b->d + b->n, p, len);
	b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_bytes(b, tmp, n);
}

static void pb_key(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* Field FIELD = V (varint); zero values are left out, as proto3 does. */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, 0);
	pb_varint(b, v);
}

/* Field FIELD = the bytes of SUB (a nested message or a string). */
static void pb_sub(struct pb *b, unsigned field, const void *p, size_t len)
{
	pb_key(b, field, 2);
	pb_varint(b, len);
	pb_bytes(b, p, len);
}

/* ---- the tables pprof's messages refer to by id ---- */

struct pprof {
	struct pb out;			/* the Profile message */
	struct exp_interned strings, functions, locations, mappings;
	struct exp_names keys;		/* names and files in locations' keys */
	struct sym_demangler *dm;
	const struct sym_module_info *mods;	/* modules known by path */
	size_t nmods;
	bool program_known;		/* its mapping is the first */
	bool failed;
};

static int64_t str_id(struct pprof *p, const char *s)
{
	bool added;
	int64_t id = exp_intern(&p->strings, s ? s : "", s ? strlen(s) : 0, &added);

	if (id < 0) {
		p->failed = true;
		return 0;
	}
	if (added)
		pb_sub(&p->out, 6, s ? s : "", s ? strlen(s) : 0);
	return id;
}

/* The function of symbolized frame F: its id (1-based). */
static uint64_t function_id(struct pprof *p, const struct mp_frame *f)
{
	const char *name = f->function ? f->function : "??";
	const char *pretty = p->dm ? sym_demangled(p->dm, name) : name;
	char key[64];
	struct pb msg = { 0 };
	bool added;
	int64_t id;
	int klen;

	/* Identity: linkage name, file, start line. */
	klen = snprintf(key, sizeof(key), "\x1f%u\x1f", f->start_line);
	{
		struct pb k = { 0 };

		pb_bytes(&k, name, strlen(name));
		pb_bytes(&k, key, (size_t)klen);
		if (f->file)
			pb_bytes(&k, f->file, strlen(f->file));
		id = k.oom ? -1 : exp_intern(&p->functions, (char *)k.d, k.n, &added);
		free(k.d);
	}
	if (id < 0) {
		p->failed = true;
		return 0;
	}
	if (added) {
		pb_uint(&msg, 1, (uint64_t)id + 1);
		pb_uint(&msg, 2, (uint64_t)str_id(p, pretty));
		pb_uint(&msg, 3, (uint64_t)str_id(p, name));
		pb_uint(&msg, 4, (uint64_t)str_id(p, f->file));
		pb_uint(&msg, 5, f->start_line);
		p->failed |= msg.oom;
		pb_sub(&p->out, 5, msg.d, msg.n);
		free(msg.d);
	}
	return (uint64_t)id + 1;
}

/* The module of P->mods with build id BID (N bytes), or NULL. */
static const struct sym_module_info *known_module(const struct pprof *p,
						  const uint8_t *bid,
						  uint32_t n)
{
	for (size_t k = 0; k < p->nmods; k++)
		if (p->mods[k].build_id_size == n &&
		    !memcmp(p->mods[k].build_id, bid, n))
			return &p->mods[k];
	return NULL;
}

/*
 * The mapping of the module whose build id is BID (N bytes): its id, 0 if
 * N is 0.  A module the symbolizer knew (a --binary, or a library or debug
 * file found by build id) is named by its path, so that pprof names its
 * frames "[libstdc++.so.6]", and marked as symbolized: what stays an
 * address there has no symbol in the file, and pprof need not look again.
 * Any other is named by its build id, which pprof can look for under
 * PPROF_BINARY_PATH.
 */
static uint64_t mapping_id(struct pprof *p, const uint8_t *bid, uint32_t n)
{
	char hex[2 * 255 + 1];
	const struct sym_module_info *mi;
	struct pb msg = { 0 };
	bool added;
	int64_t id;

	if (!n)
		return 0;
	/*
	 * pprof takes the first mapping for the program ("File: ..."): when
	 * the program is not known (an indexed input without --binary), a
	 * debug file found by build id (the C library's) would pass for it.
	 * A mapping of no file goes first then.
	 */
	if (!p->program_known && p->mappings.n == 0 &&
	    (mi = known_module(p, bid, n)) && mi->from_debug_dir) {
		id = exp_intern(&p->mappings, "-", 1, &added);
		pb_uint(&msg, 1, (uint64_t)id + 1);
		p->failed |= id < 0 || msg.oom;
		pb_sub(&p->out, 3, msg.d, msg.n);
		free(msg.d);
		msg = (struct pb){ 0 };
	}
	mp_hex(bid, n, hex, sizeof(hex));
	id = exp_intern(&p->mappings, hex, strlen(hex), &added);
	if (id < 0) {
		p->failed = true;
		return 0;
	}
	if (added) {
		mi = known_module(p, bid, n);
		pb_uint(&msg, 1, (uint64_t)id + 1);
		pb_uint(&msg, 5, (uint64_t)str_id(p, mi ? mi->path : hex));
		pb_uint(&msg, 6, (uint64_t)str_id(p, hex));
		/* has_functions, has_filenames, has_line_numbers,
		 * has_inline_frames */
		for (unsigned field = 7; field <= 10; field++)
			pb_uint(&msg, field, mi != NULL);
		p->failed |= msg.oom;
		pb_sub(&p->out, 3, msg.d, msg.n);
		free(msg.d);
	}
	return (uint64_t)id + 1;
}

/* S's number among the strings of locations' keys; 0 when out of memory
 * (P->failed set). */
static uint64_t key_name(struct pprof *p, const char *s)
{
	bool added;
	int64_t id = exp_name_id(&p->keys, s, &added);

	p->failed |= id < 0;
	return id < 0 ? 0 : (uint64_t)id;
}

/*
 * Frame F's part of a location's key: the fields mp_frame_string() prints
 * of it, its strings by number, as varints in a fixed order (so that two
 * frames give the same bytes only when those fields are equal).
 */
static void frame_key(struct pprof *p, struct pb *key, const struct mp_frame *f)
{
	bool guid = f->flags & MP_FRAME_GUID;

	if (mp_frame_symbolized(f)) {
		pb_varint(key, 1);
		pb_varint(key, key_name(p, f->function ? f->function : "??"));
		pb_varint(key, guid);
		pb_varint(key, guid ? 0 : key_name(p, f->file ? f->file : "??"));
		pb_varint(key, f->line);
		pb_varint(key, f->column);
		pb_varint(key, guid ? 0 : f->discriminator);
		pb_varint(key, mp_frame_inlined(f));
	} else if (f->build_id_size) {
		pb_varint(key, 2);
		pb_varint(key, f->build_id_size);
		pb_bytes(key, f->build_id, f->build_id_size);
		pb_varint(key, f->offset);
	} else {
		pb_varint(key, f->flags & MP_FRAME_ADDRESS ? 3 : 4);
		pb_varint(key, f->flags & MP_FRAME_ADDRESS ? f->address : f->offset);
	}
}

/*
 * The location of one PC: frames F[0..N-1], innermost first, all but the
 * last inlined into the next.  pprof lists a location's lines callee
 * first, as they come.
 */
static uint64_t location_id(struct pprof *p, const struct mp_frame *f,
			    uint32_t n)
{
	struct pb key = { 0 }, msg = { 0 };
	bool added;
	int64_t id;

	for (uint32_t k = 0; k < n; k++)
		frame_key(p, &key, &f[k]);
	id = key.oom || p->failed ? -1
	     : exp_intern(&p->locations, (char *)key.d, key.n, &added);
	free(key.d);
	if (id < 0) {
		p->failed = true;
		return 0;
	}
	if (!added)
		return (uint64_t)id + 1;
	pb_uint(&msg, 1, (uint64_t)id + 1);
	if (!mp_frame_symbolized(&f[0])) {
		pb_uint(&msg, 2, mapping_id(p, f[0].build_id, f[0].build_id_size));
		pb_uint(&msg, 3, mp_frame_where(&f[0]));
	} else {
		for (uint32_t k = 0; k < n; k++) {
			struct pb line = { 0 };

			pb_uint(&line, 1, function_id(p, &f[k]));
			pb_uint(&line, 2, f[k].line);
			/* Line.column (pprof since 2023; older readers skip
			 * it): without it, two calls on one line are one. */
			if (f[k].column)
				pb_uint(&line, 3, f[k].column);
			p->failed |= line.oom;
			pb_sub(&msg, 4, line.d, line.n);
			free(line.d);
		}
	}
	p->failed |= msg.oom;
	pb_sub(&p->out, 4, msg.d, msg.n);
	free(msg.d);
	return (uint64_t)id + 1;
}

static void value_type(struct pprof *p, unsigned field, const char *type,
		       const char *unit)
{
	struct pb msg = { 0 };

	pb_uint(&msg, 1, (uint64_t)str_id(p, type));
	pb_uint(&msg, 2, (uint64_t)str_id(p, unit));
	p->failed |= msg.oom;
	pb_sub(&p->out, field, msg.d, msg.n);
	free(msg.d);
}

static void label(struct pb *s, struct pprof *p, const char *key,
		  const char *str, int64_t num, const char *unit)
{
	struct pb msg = { 0 };

	pb_uint(&msg, 1, (uint64_t)str_id(p, key));
	if (str)
		pb_uint(&msg, 2, (uint64_t)str_id(p, str));
	else
		pb_uint(&msg, 3, (uint64_t)num);
	if (unit)
		pb_uint(&msg, 4, (uint64_t)str_id(p, unit));
	p->failed |= msg.oom;
	pb_sub(s, 3, msg.d, msg.n);
	free(msg.d);
}

/* One sample per context: its locations, its four values, its labels. */
static void sample(struct pprof *p, const struct view_context *c)
{
	static const struct mib_thresholds t = MIB_THRESHOLDS_DEFAULT;
	const struct mp_mib *m = &c->mib;
	struct pb s = { 0 }, ids = { 0 }, vals = { 0 };
	uint64_t allocs = m->v[MIB_AllocCount];

	for (uint32_t i = 0, end; i < c->nframes; i = end) {
		for (end = i; end < c->nframes && mp_frame_inlined(&c->frames[end]);
		     end++)
			;
		end = end < c->nframes ? end + 1 : c->nframes;
		pb_varint(&ids, location_id(p, c->frames + i, end - i));
	}
	pb_sub(&s, 1, ids.d, ids.n);
	pb_varint(&vals, allocs);
	pb_varint(&vals, m->v[MIB_TotalLifetime]);
	pb_varint(&vals, m->v[MIB_TotalAccessCount]);
	pb_varint(&vals, m->v[MIB_TotalSize]);
	pb_sub(&s, 2, vals.d, vals.n);
	label(&s, p, "bytes", NULL,
	      allocs ? (int64_t)(m->v[MIB_TotalSize] / allocs) : 0, "bytes");
	label(&s, p, "lifetime_access_density", NULL,
	      allocs ? (int64_t)(m->v[MIB_TotalLifetimeAccessDensity] / allocs)
		     : 0, NULL);
	label(&s, p, "alloc_type", mib_type_name(mib_alloc_type(m, &t)), 0, NULL);
	p->failed |= s.oom || ids.oom || vals.oom;
	pb_sub(&p->out, 2, s.d, s.n);
	free(s.d);
	free(ids.d);
	free(vals.d);
}

static enum mp_errcode gzip_write(const struct pb *b, FILE *out,
				  struct mp_err *err)
{
	z_stream z;
	unsigned char buf[65536];
	int zrc;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return mp_fail(err, MP_E_NOMEM, NULL);
	z.next_in = b->d;
	z.avail_in = (uInt)b->n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zrc = deflate(&z, Z_FINISH);
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, out) !=
		    sizeof(buf) - z.avail_out) {
			deflateEnd(&z);
			return mp_fail(err, MP_E_IO, "cannot write output: %s",
				       strerror(errno ? errno : EIO));
		}
	} while (zrc == Z_OK);
	deflateEnd(&z);
	return zrc == Z_STREAM_END ? MP_OK : mp_fail(err, MP_E_NOMEM, NULL);
}

enum mp_errcode exp_pprof_write(struct view *v, struct sym_demangler *dm,
				const struct sym_module_info *mods,
				size_t nmods, int32_t program, FILE *out,
				struct mp_err *err)
{
	struct pprof p = { .dm = dm, .mods = mods, .nmods = nmods };
	enum mp_errcode rc = MP_OK;

	str_id(&p, "");		/* string 0 must be "" */
	value_type(&p, 1, "alloc_objects", "count");
	value_type(&p, 1, "total_lifetime", "milliseconds");
	value_type(&p, 1, "access_count", "count");
	value_type(&p, 1, "alloc_space", "bytes");	/* last: the default */
	/* The program first: pprof's header names the first mapping's file
	 * ("File: app"). */
	if (program >= 0 && (size_t)program < nmods) {
		mapping_id(&p, mods[program].build_id,
			   mods[program].build_id_size);
		p.program_known = true;
	}
	for (size_t i = 0; i < v->ncontexts && !rc; i++) {
		if ((rc = view_frames(v, &v->contexts[i], err)))
			break;
		sample(&p, &v->contexts[i]);
	}
	if (!rc && (p.failed || p.out.oom))
		rc = mp_fail(err, MP_E_NOMEM, NULL);
	if (!rc)
		rc = gzip_write(&p.out, out, err);
	free(p.out.d);
	exp_interned_release(&p.strings);
	exp_interned_release(&p.functions);
	exp_interned_release(&p.locations);
	exp_interned_release(&p.mappings);
	exp_names_release(&p.keys);
	return rc;
}

/* ---- folded stacks ---- */

enum mp_errcode exp_folded_write(struct view *v, enum mib_field value,
				 struct sym_demangler *dm, FILE *out,
				 struct mp_err *err)
{
	enum mp_errcode rc = MP_OK;

	for (size_t i = 0; i < v->ncontexts && !rc; i++) {
		struct view_context *c = &v->contexts[i];

		if ((rc = view_frames(v, c, err)))
			break;
		if (!c->mib.v[value])
			continue;
		/* Outermost first, as flame graph tools read them. */
		for (uint32_t k = c->nframes; k-- > 0;) {
			char *s;
			const char *name = exp_frame_name(dm, &c->frames[k], &s);

			if (!name)
				return mp_fail(err, MP_E_NOMEM, NULL);
			/* A ';' inside a name would split it (flame graph
			 * tools split frames there), a newline the line. */
			for (const unsigned char *q = (const unsigned char *)name;
			     *q; q++)
				fputc(*q == ';' ? ':' : *q < 0x20 || *q == 0x7f ? '?'
				      : *q, out);
			fputc(k ? ';' : ' ', out);
			free(s);
		}
		if (!c->nframes)
			fputs("[no frames] ", out);
		fprintf(out, "%" PRIu64 "\n", c->mib.v[value]);
	}
	if (!rc && ferror(out))
		rc = mp_fail(err, MP_E_IO, "cannot write output: %s",
			     strerror(errno ? errno : EIO));
	return rc;
}
