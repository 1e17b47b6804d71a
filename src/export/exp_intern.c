/*
 * exp_intern.c - interned strings and frame names for the writers of
 * src/export/ (exp_intern.h).
 */
#include "exp_intern.h"

#include <stdlib.h>
#include <string.h>

#include "common/mp_util.h"
#include "symbolize/sym.h"

struct key {
	const char *s;
	size_t len;
	const struct exp_interned *t;
};

static bool same_key(const void *key, uint32_t id, const void *arg)
{
	const struct key *k = key;

	(void)arg;
	return k->t->lens[id] == k->len && memcmp(k->t->keys[id], k->s, k->len) == 0;
}

int64_t exp_intern(struct exp_interned *t, const char *s, size_t len,
		   bool *added)
{
	struct key k = { s, len, t };
	uint64_t h = mp_hash_bytes(s, len, 0x9b);
	uint32_t id = ht_find(&t->ht, h, same_key, &k, NULL);
	char *copy;

	*added = false;
	if (id != HT_NONE)
		return id;
	if (t->n >= UINT32_MAX - 1)
		return -1;
	copy = malloc(len + 1);
	if (!copy || !MP_GROW(t->keys, t->akeys, t->n + 1) ||
	    !MP_GROW(t->lens, t->alens, t->n + 1) ||
	    ht_insert(&t->ht, h, (uint32_t)t->n)) {
		free(copy);
		return -1;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->keys[t->n] = copy;
	t->lens[t->n] = len;
	*added = true;
	return (int64_t)t->n++;
}

void exp_interned_release(struct exp_interned *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->lens);
	ht_release(&t->ht);
	memset(t, 0, sizeof(*t));
}

static bool same_address(const void *key, uint32_t i, const void *arg)
{
	return ((const struct exp_names *)arg)->addr[i] == key;
}

int64_t exp_name_id(struct exp_names *t, const char *s, bool *added)
{
	uint64_t h = mp_hash64((uint64_t)(uintptr_t)s);
	uint32_t i = ht_find(&t->ht, h, same_address, s, t);
	int64_t id;

	*added = false;
	if (i != HT_NONE)
		return t->id[i];
	if ((id = exp_intern(&t->text, s, strlen(s), added)) < 0 ||
	    t->n >= UINT32_MAX - 1 ||
	    !MP_GROW(t->addr, t->aaddr, t->n + 1) ||
	    !MP_GROW(t->id, t->aid, t->n + 1) ||
	    ht_insert(&t->ht, h, (uint32_t)t->n))
		return -1;
	t->addr[t->n] = s;
	t->id[t->n++] = (uint32_t)id;
	return id;
}

void exp_names_release(struct exp_names *t)
{
	exp_interned_release(&t->text);
	ht_release(&t->ht);
	free(t->addr);
	free(t->id);
	memset(t, 0, sizeof(*t));
}

const char *exp_frame_name(struct sym_demangler *dm, const struct mp_frame *f,
			   char **tofree)
{
	*tofree = NULL;
	if (!mp_frame_symbolized(f))
		return *tofree = mp_frame_string(f, NULL);
	if (!f->function)
		return "??";
	return dm ? sym_demangled(dm, f->function) : f->function;
}
