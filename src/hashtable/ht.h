/*
 * ht.h - hash tables: an in-memory index of 32-bit ids, and the on-disk
 * chained hash table of the indexed format (memprof-data-format(5)).
 *
 * In memory.  The table stores ids, not keys: the objects live in arrays
 * the caller owns (strings in an arena, frames in a vector...), and the
 * caller says how to compare one with the key being looked up.  A slot is
 * 8 bytes: 32 bits of the key's hash and the id plus one (0 = empty).
 * Open addressing with linear probing, a power-of-two capacity, load kept
 * at most 1/2, so a miss costs a probe or two.
 *
 *	struct ht t = HT_INIT;
 *	uint64_t h = mp_hash_bytes(s, len, 0);
 *	uint32_t id = ht_find(&t, h, same_string, s);
 *	if (id == HT_NONE) {
 *		id = append_string(s);
 *		if (ht_insert(&t, h, id))
 *			return MP_E_NOMEM;
 *	}
 *	...
 *	ht_release(&t);
 *
 * On disk.  ht_disk_write() lays out buckets and chains for a set of
 * items (hash, name, record location); ht_disk_open() checks every offset
 * of such a table before ht_disk_find() follows any of them.
 */
#ifndef HT_H
#define HT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mp_err.h"

#define HT_NONE UINT32_MAX

struct ht_slot {
	uint32_t hash;		/* bits 32..63 of the key's hash */
	uint32_t id1;		/* id + 1; 0 = empty */
};

struct ht_stats {
	uint64_t lookups, probes, grows;
};

struct ht {
	struct ht_slot *slots;
	uint32_t mask;		/* capacity - 1; capacity 0 when slots NULL */
	uint32_t count;
	struct ht_stats stats;
};

#define HT_INIT { NULL, 0, 0, { 0, 0, 0 } }

/* Does the object with id ID equal KEY? */
typedef bool (*ht_eq_fn)(const void *key, uint32_t id, const void *ctx);

/*
 * The id of the object equal to KEY among those inserted with hash HASH,
 * or HT_NONE.  CTX is passed to EQ untouched.
 */
uint32_t ht_find(struct ht *t, uint64_t hash, ht_eq_fn eq, const void *key,
		 const void *ctx);
/* Add ID under HASH (it must not be there yet).  MP_E_NOMEM on failure. */
enum mp_errcode ht_insert(struct ht *t, uint64_t hash, uint32_t id);
void ht_release(struct ht *t);
/* The memory T's slots take, in bytes. */
static inline uint64_t ht_bytes(const struct ht *t)
{
	return t->slots ? ((uint64_t)t->mask + 1) * sizeof(*t->slots) : 0;
}

/*
 * A map from a pair of 32-bit keys, or from one 64-bit key, to a 32-bit
 * value, keys stored in the slot: no callback, no trip to another array
 * to compare.  Used where lookups are the inner loop (trie nodes, PCs).
 * 16-byte slots, power-of-two capacity, load at most 1/2.
 *
 *	struct ht_map m = HT_MAP_INIT;
 *	uint32_t v;
 *	if (!ht_map_get(&m, key, &v)) {
 *		v = make_new();
 *		if (ht_map_put(&m, key, v))
 *			return MP_E_NOMEM;
 *	}
 */
struct ht_map_slot {
	uint64_t key;
	uint32_t value;
	uint32_t used;
};

struct ht_map {
	struct ht_map_slot *slots;
	uint32_t mask, count;
	size_t room;		/* slots allocated: mask + 1 or more */
};

#define HT_MAP_INIT { NULL, 0, 0, 0 }

static inline uint64_t ht_pair_key(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

bool ht_map_get(const struct ht_map *m, uint64_t key, uint32_t *value);
/*
 * KEY's value slot, added with value 0 when absent (*ADDED tells): one
 * probe for a lookup that may insert.  The pointer is valid until the
 * next call that adds a key.  NULL when out of memory or past 2^31 keys.
 */
uint32_t *ht_map_find_or_add(struct ht_map *m, uint64_t key, bool *added);
/*
 * Empty M and make room for N keys without growing; M's slots are kept
 * when they are enough (clearing memory costs less than faulting fresh
 * pages in, for a table filled again and again), and only as many of
 * them used as N needs: a small input after a big one clears and probes
 * a table of its own size.  On failure M is empty and released.
 */
enum mp_errcode ht_map_reset(struct ht_map *m, size_t n);
/* Add KEY (not present yet) with VALUE.  MP_E_NOMEM on failure. */
enum mp_errcode ht_map_put(struct ht_map *m, uint64_t key, uint32_t value);
void ht_map_release(struct ht_map *m);

/* The hash of the on-disk table (type 1): FNV-1a, 64 bits. */
uint64_t ht_disk_hash(const void *key, size_t len);

struct ht_disk_item {
	uint64_t hash;
	uint32_t name;		/* string id */
	uint32_t record_offset;
	uint32_t record_size;
	uint32_t contexts;
};

#define HT_DISK_ITEM_SIZE 24

/*
 * The bytes of a table for ITEMS (N of them, sorted by name by the caller
 * so that chains come out sorted): *OUT is malloc'ed, *OUT_SIZE its size.
 */
enum mp_errcode ht_disk_write(const struct ht_disk_item *items, uint32_t n,
			      unsigned char **out, size_t *out_size);

/* A validated on-disk table; points into the caller's buffer. */
struct ht_disk {
	const unsigned char *base;
	size_t size;
	uint32_t nbuckets, nentries;
};

/*
 * Check the table at BASE (SIZE bytes): bucket count a power of two, every
 * chain inside the section, items in their own bucket, counts summing to
 * the entry count.  NAME_OK(name, ctx) must accept every item's string id
 * and return its bytes' hash in *HASH, so that the stored hash is checked.
 */
enum mp_errcode ht_disk_open(struct ht_disk *t, const unsigned char *base,
			     size_t size,
			     bool (*name_ok)(uint32_t name, uint64_t *hash,
					     const void *ctx),
			     const void *ctx, struct mp_err *err);

/*
 * Find the item whose name has hash HASH and for which SAME(name, ctx)
 * holds; false if none.  The stored hash is compared before the name.
 */
bool ht_disk_find(const struct ht_disk *t, uint64_t hash,
		  bool (*same)(uint32_t name, const void *ctx), const void *ctx,
		  struct ht_disk_item *out);

/* Item I of the table in chain order (0 <= I < nentries), for iteration. */
void ht_disk_item_at(const struct ht_disk *t, const unsigned char *item,
		     struct ht_disk_item *out);

#endif /* HT_H */
