/*
 * sym_demangle.c - C++ names demangled for display, each distinct name
 * once (sym.h, struct sym_demangler).
 *
 * Deep C++ stacks print the same few hundred names millions of times:
 * demangling each on every print cost show most of its time.  Names are
 * looked up by address, which is enough because every name a command
 * prints comes from a table that holds each distinct name once (an
 * indexed file's string table, the symbolizer's interned strings); two
 * copies of one name at different addresses are only demangled twice.
 */
#include "sym.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler; see sym_runtime.c for why this one. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

void sym_demangler_init(struct sym_demangler *d)
{
	memset(d, 0, sizeof(*d));
}

void sym_demangler_release(struct sym_demangler *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		if (d->pretty[i] != d->names[i])
			free((char *)d->pretty[i]);
	free(d->names);
	free(d->pretty);
	ht_release(&d->ht);
	memset(d, 0, sizeof(*d));
}

static bool same_name(const void *key, uint32_t id, const void *ctx)
{
	const struct sym_demangler *d = ctx;

	return d->names[id] == key;
}

const char *sym_demangled(struct sym_demangler *d, const char *name)
{
	uint64_t h;
	uint32_t id;
	char *pretty;
	int status = -1;

	/* Only function names: __cxa_demangle would also decode "i" as int. */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return name;
	h = mp_hash64((uint64_t)(uintptr_t)name);
	id = ht_find(&d->ht, h, same_name, name, d);
	if (id != HT_NONE)
		return d->pretty[id];
	pretty = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !pretty) {
		free(pretty);
		pretty = NULL;
		/* -1 is out of memory; -2 a name it cannot read. */
		if (status == -2)
			d->failed++;
	}
	if (d->n == UINT32_MAX - 1 ||
	    !MP_GROW(d->names, d->anames, d->n + 1) ||
	    !MP_GROW(d->pretty, d->apretty, d->n + 1) ||
	    ht_insert(&d->ht, h, (uint32_t)d->n)) {
		free(pretty);
		return name;	/* not cached: shown mangled */
	}
	d->names[d->n] = name;
	d->pretty[d->n] = pretty ? pretty : name;
	return d->pretty[d->n++];
}
