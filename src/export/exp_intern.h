/*
 * exp_intern.h - what the writers of src/export/ share (not an API of
 * the module): strings interned by content, and a frame's display name.
 */
#ifndef EXP_INTERN_H
#define EXP_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_frame.h"
#include "hashtable/ht.h"

struct sym_demangler;

/* Byte strings, each kept once, numbered 0, 1, ... in order of arrival. */
struct exp_interned {
	struct ht ht;
	char **keys;		/* owned, NUL-terminated */
	size_t *lens;
	size_t n, akeys, alens;
};

/*
 * The number of the LEN bytes at S, added (*ADDED set) if new; -1 when
 * out of memory.  Zero-initialized is empty.
 */
int64_t exp_intern(struct exp_interned *t, const char *s, size_t len,
		   bool *added);
void exp_interned_release(struct exp_interned *t);

/*
 * Strings interned by content as in exp_interned, looked up by address
 * first: the names of a view's frames come from tables that hand out one
 * address per string (a file's strings, the symbolizer's, the
 * demangler's), so a frame costs one lookup of its name's address,
 * whatever the name's length, and a name's bytes are hashed once per
 * address (a long name on every frame of a deep stack made an export
 * quadratic in its input).  Only for strings that stay in place and
 * unchanged as long as the table: not for a string freed meanwhile,
 * whose address a new one may take.
 */
struct exp_names {
	struct exp_interned text;	/* the strings, by content */
	struct ht ht;			/* addresses, by address */
	const char **addr;
	uint32_t *id;			/* each address's string in text */
	size_t n, aaddr, aid;
};

/* The number of S in T->text, added (*ADDED set) if new; -1 when out of
 * memory.  Zero-initialized is empty. */
int64_t exp_name_id(struct exp_names *t, const char *s, bool *added);
void exp_names_release(struct exp_names *t);

/*
 * How flame graphs and folded stacks name frame F: its function,
 * demangled through DM (may be NULL), "??" for a symbolized frame without
 * one, mp_frame_string() for an unsymbolized frame (then *TOFREE is the
 * string, the caller's to free; else NULL).  NULL when out of memory.
 */
const char *exp_frame_name(struct sym_demangler *dm, const struct mp_frame *f,
			   char **tofree);

#endif /* EXP_INTERN_H */
