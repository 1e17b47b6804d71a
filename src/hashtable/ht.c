#include "ht.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_util.h"

/*
 * Slots come from mp_calloc_big(): a large calloc comes from fresh
 * mappings that the first touch faults in page by page (a rehash of a
 * 32 MiB table: 8,000 faults, microseconds each in a virtual machine),
 * where huge pages take one fault per 2 MiB.
 */

/* ---- in memory ---- */

static uint32_t slot_of(uint32_t h, uint32_t mask)
{
	/* The stored bits are the high half of a mixed hash: spread them. */
	return (uint32_t)(mp_hash64(h) & mask);
}

uint32_t ht_find(struct ht *t, uint64_t hash, ht_eq_fn eq, const void *key,
		 const void *ctx)
{
	uint32_t h = (uint32_t)(hash >> 32), i;

	t->stats.lookups++;
	if (!t->slots)
		return HT_NONE;
	for (i = slot_of(h, t->mask); t->slots[i].id1; i = (i + 1) & t->mask) {
		t->stats.probes++;
		if (t->slots[i].hash == h && eq(key, t->slots[i].id1 - 1, ctx))
			return t->slots[i].id1 - 1;
	}
	return HT_NONE;
}

static void place(struct ht_slot *slots, uint32_t mask, struct ht_slot s)
{
	uint32_t i = slot_of(s.hash, mask);

	while (slots[i].id1)
		i = (i + 1) & mask;
	slots[i] = s;
}

enum mp_errcode ht_insert(struct ht *t, uint64_t hash, uint32_t id)
{
	struct ht_slot s = { (uint32_t)(hash >> 32), id + 1 };

	if (id == HT_NONE)
		return MP_E_TOO_LARGE;
	if (!t->slots || (uint64_t)(t->count + 1) * 2 > (uint64_t)t->mask + 1) {
		uint64_t cap = t->slots ? ((uint64_t)t->mask + 1) * 2 : 64;
		struct ht_slot *bigger;

		if (cap > ((uint64_t)1 << 32))
			return MP_E_TOO_LARGE;
		bigger = mp_calloc_big((size_t)cap, sizeof(*bigger));
		if (!bigger)
			return MP_E_NOMEM;
		for (uint64_t i = 0; t->slots && i <= t->mask; i++)
			if (t->slots[i].id1)
				place(bigger, (uint32_t)(cap - 1), t->slots[i]);
		free(t->slots);
		t->slots = bigger;
		t->mask = (uint32_t)(cap - 1);
		t->stats.grows++;
	}
	place(t->slots, t->mask, s);
	t->count++;
	return MP_OK;
}

void ht_release(struct ht *t)
{
	if (!t)
		return;
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* ---- keys in the slot ---- */

bool ht_map_get(const struct ht_map *m, uint64_t key, uint32_t *value)
{
	uint32_t i;

	if (!m->slots)
		return false;
	for (i = (uint32_t)mp_hash64(key) & m->mask; m->slots[i].used;
	     i = (i + 1) & m->mask) {
		if (m->slots[i].key == key) {
			*value = m->slots[i].value;
			return true;
		}
	}
	return false;
}

static void map_place(struct ht_map_slot *slots, uint32_t mask,
		      struct ht_map_slot s)
{
	uint32_t i = (uint32_t)mp_hash64(s.key) & mask;

	while (slots[i].used)
		i = (i + 1) & mask;
	slots[i] = s;
}

static enum mp_errcode map_room(struct ht_map *m);

enum mp_errcode ht_map_put(struct ht_map *m, uint64_t key, uint32_t value)
{
	enum mp_errcode rc = map_room(m);

	if (rc)
		return rc;
	map_place(m->slots, m->mask, (struct ht_map_slot){ key, value, 1 });
	m->count++;
	return MP_OK;
}

/* Make room for one more key: load stays at most 1/2. */
static enum mp_errcode map_room(struct ht_map *m)
{
	uint64_t cap;
	struct ht_map_slot *bigger;

	if (m->slots && (uint64_t)(m->count + 1) * 2 <= (uint64_t)m->mask + 1)
		return MP_OK;
	cap = m->slots ? ((uint64_t)m->mask + 1) * 2 : 256;
	if (cap > ((uint64_t)1 << 32))
		return MP_E_TOO_LARGE;
	bigger = mp_calloc_big((size_t)cap, sizeof(*bigger));
	if (!bigger)
		return MP_E_NOMEM;
	for (uint64_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].used)
			map_place(bigger, (uint32_t)(cap - 1), m->slots[i]);
	free(m->slots);
	m->slots = bigger;
	m->mask = (uint32_t)(cap - 1);
	m->room = (size_t)cap;
	return MP_OK;
}

uint32_t *ht_map_find_or_add(struct ht_map *m, uint64_t key, bool *added)
{
	uint32_t i;

	if (map_room(m))
		return NULL;
	for (i = (uint32_t)mp_hash64(key) & m->mask; m->slots[i].used;
	     i = (i + 1) & m->mask)
		if (m->slots[i].key == key) {
			*added = false;
			return &m->slots[i].value;
		}
	m->slots[i] = (struct ht_map_slot){ key, 0, 1 };
	m->count++;
	*added = true;
	return &m->slots[i].value;
}

enum mp_errcode ht_map_reset(struct ht_map *m, size_t n)
{
	uint64_t cap = 256;
	size_t bytes, got;

	while (cap < (uint64_t)n * 2 + 1)
		cap *= 2;
	if (cap > ((uint64_t)1 << 32)) {
		ht_map_release(m);
		return MP_E_TOO_LARGE;
	}
	m->count = 0;
	if (m->slots && m->room >= cap) {
		m->mask = (uint32_t)(cap - 1);
		memset(m->slots, 0, (size_t)cap * sizeof(*m->slots));
		return MP_OK;
	}
	ht_map_release(m);
	/*
	 * Kept for the next reset, whose input may be larger: the room a
	 * huge page gives past CAP (up to four times it) is taken then
	 * instead of fresh memory, which costs more to fault in here than
	 * to zero (bench/RESULTS.md).
	 */
	if (!mp_mul((size_t)cap, sizeof(*m->slots), &bytes) ||
	    !(m->slots = mp_alloc_big_got(bytes, &got)))
		return MP_E_NOMEM;
	memset(m->slots, 0, bytes);
	m->mask = (uint32_t)(cap - 1);
	m->room = got / sizeof(*m->slots);
	return MP_OK;
}

void ht_map_release(struct ht_map *m)
{
	if (!m)
		return;
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- on disk ---- */

uint64_t ht_disk_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint32_t buckets_for(uint32_t n)
{
	uint32_t b = 1;

	/* Load at most 3/4. */
	while ((uint64_t)b * 3 < (uint64_t)n * 4)
		b *= 2;
	return b;
}

enum mp_errcode ht_disk_write(const struct ht_disk_item *items, uint32_t n,
			      unsigned char **out, size_t *out_size)
{
	uint32_t nb = buckets_for(n), *counts, *first;
	size_t size, pos;
	unsigned char *buf;

	*out = NULL;
	*out_size = 0;
	counts = calloc(nb, sizeof(*counts));
	first = calloc(nb, sizeof(*first));
	if (!counts || !first) {
		free(counts);
		free(first);
		return MP_E_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		counts[items[i].hash & (nb - 1)]++;
	size = 8 + (size_t)nb * 4;
	for (uint32_t b = 0; b < nb; b++)
		if (counts[b])
			size += 4 + (size_t)counts[b] * HT_DISK_ITEM_SIZE;
	if (size > UINT32_MAX) {
		free(counts);
		free(first);
		return MP_E_TOO_LARGE;
	}
	buf = calloc(1, size);
	if (!buf) {
		free(counts);
		free(first);
		return MP_E_NOMEM;
	}
	mp_put_le32(buf, nb);
	mp_put_le32(buf + 4, n);
	/* Chains in bucket order; FIRST[b] is the next free item slot. */
	pos = 8 + (size_t)nb * 4;
	for (uint32_t b = 0; b < nb; b++) {
		if (!counts[b])
			continue;
		mp_put_le32(buf + 8 + (size_t)b * 4, (uint32_t)pos);
		mp_put_le32(buf + pos, counts[b]);
		first[b] = (uint32_t)pos + 4;
		pos += 4 + (size_t)counts[b] * HT_DISK_ITEM_SIZE;
	}
	/* Items keep the caller's (name) order within each chain. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = items[i].hash & (nb - 1);
		unsigned char *p = buf + first[b];

		mp_put_le64(p, items[i].hash);
		mp_put_le32(p + 8, items[i].name);
		mp_put_le32(p + 12, items[i].record_offset);
		mp_put_le32(p + 16, items[i].record_size);
		mp_put_le32(p + 20, items[i].contexts);
		first[b] += HT_DISK_ITEM_SIZE;
	}
	free(counts);
	free(first);
	*out = buf;
	*out_size = size;
	return MP_OK;
}

void ht_disk_item_at(const struct ht_disk *t, const unsigned char *p,
		     struct ht_disk_item *out)
{
	(void)t;
	out->hash = mp_le64(p);
	out->name = mp_le32(p + 8);
	out->record_offset = mp_le32(p + 12);
	out->record_size = mp_le32(p + 16);
	out->contexts = mp_le32(p + 20);
}

enum mp_errcode ht_disk_open(struct ht_disk *t, const unsigned char *base,
			     size_t size,
			     bool (*name_ok)(uint32_t name, uint64_t *hash,
					     const void *ctx),
			     const void *ctx, struct mp_err *err)
{
	uint64_t seen = 0;
	uint32_t nb, ne;

	memset(t, 0, sizeof(*t));
	if (size < 8)
		return mp_fail(err, MP_E_CORRUPT,
			       "function hash table is %zu bytes, too small "
			       "for its header", size);
	nb = mp_le32(base);
	ne = mp_le32(base + 4);
	if (nb == 0 || (nb & (nb - 1)))
		return mp_fail(err, MP_E_CORRUPT,
			       "function hash table has %" PRIu32
			       " buckets, not a power of two", nb);
	if ((uint64_t)nb * 4 > size - 8)
		return mp_fail(err, MP_E_CORRUPT,
			       "function hash table's %" PRIu32 " buckets run "
			       "past its end (%zu bytes)", nb, size);
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t off = mp_le32(base + 8 + (size_t)b * 4), count;

		if (!off)
			continue;
		if (off < 8 + (uint64_t)nb * 4 || !mp_in_bounds(off, 4, size))
			return mp_fail(err, MP_E_CORRUPT,
				       "bucket %" PRIu32 " of the function hash "
				       "table points outside its chains (offset "
				       "%" PRIu32 ")", b, off);
		count = mp_le32(base + off);
		if (count == 0 ||
		    !mp_in_bounds((uint64_t)off + 4,
				  (uint64_t)count * HT_DISK_ITEM_SIZE, size))
			return mp_fail(err, MP_E_CORRUPT,
				       "chain of bucket %" PRIu32 " (%" PRIu32
				       " items at offset %" PRIu32 ") runs past "
				       "the function hash table", b, count, off);
		for (uint32_t k = 0; k < count; k++) {
			struct ht_disk_item it;
			uint64_t h;

			ht_disk_item_at(t, base + off + 4 +
					(size_t)k * HT_DISK_ITEM_SIZE, &it);
			if ((it.hash & (nb - 1)) != b)
				return mp_fail(err, MP_E_CORRUPT,
					       "function hash table item in "
					       "bucket %" PRIu32 " has a hash of "
					       "bucket %" PRIu64, b,
					       it.hash & (nb - 1));
			if (!name_ok(it.name, &h, ctx))
				return mp_fail(err, MP_E_CORRUPT,
					       "function hash table item names "
					       "string id %" PRIu32 ", which is "
					       "not a string", it.name);
			if (h != it.hash)
				return mp_fail(err, MP_E_CORRUPT,
					       "function hash table item's hash "
					       "0x%016" PRIx64 " is not its "
					       "name's (0x%016" PRIx64 ")",
					       it.hash, h);
		}
		seen += count;
	}
	if (seen != ne)
		return mp_fail(err, MP_E_CORRUPT,
			       "function hash table holds %" PRIu64 " items but "
			       "says %" PRIu32, seen, ne);
	t->base = base;
	t->size = size;
	t->nbuckets = nb;
	t->nentries = ne;
	return MP_OK;
}

bool ht_disk_find(const struct ht_disk *t, uint64_t hash,
		  bool (*same)(uint32_t name, const void *ctx), const void *ctx,
		  struct ht_disk_item *out)
{
	uint32_t off, count;

	if (!t->base)
		return false;
	/* ht_disk_open checked every chain: no bound needs re-checking. */
	off = mp_le32(t->base + 8 + (size_t)(hash & (t->nbuckets - 1)) * 4);
	if (!off)
		return false;
	count = mp_le32(t->base + off);
	for (uint32_t k = 0; k < count; k++) {
		const unsigned char *p = t->base + off + 4 +
					 (size_t)k * HT_DISK_ITEM_SIZE;

		if (mp_le64(p) != hash)
			continue;
		ht_disk_item_at(t, p, out);
		if (same(out->name, ctx))
			return true;
	}
	return false;
}
