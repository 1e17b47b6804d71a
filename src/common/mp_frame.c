#include "mp_frame.h"

#include <stdlib.h>
#include <string.h>

#include "mp_util.h"

char *mp_frame_build_id_hex(const struct mp_frame *f, char *buf, size_t size)
{
	mp_hex(f->build_id, f->build_id_size, buf, size);
	return buf;
}

/* A writer into a buffer of SIZE bytes that counts what did not fit. */
struct fmt {
	char *buf;
	size_t size, n;
};

static void fmt_put(struct fmt *w, const char *s, size_t len)
{
	if (w->n < w->size) {
		size_t room = w->size - w->n;

		memcpy(w->buf + w->n, s, len < room ? len : room);
	}
	w->n += len;
}

static void fmt_str(struct fmt *w, const char *s)
{
	fmt_put(w, s, strlen(s));
}

static void fmt_u64(struct fmt *w, uint64_t v)
{
	char d[MP_U64_DIGITS], *end = d + sizeof(d), *p = mp_u64_digits(end, v);

	fmt_put(w, p, (size_t)(end - p));
}

/* "0x" and V in lowercase hex. */
static void fmt_hex(struct fmt *w, uint64_t v)
{
	char d[18], *p = d + sizeof(d);

	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	fmt_put(w, p, (size_t)(d + sizeof(d) - p));
}

size_t mp_frame_format(const struct mp_frame *f, const char *name, char *buf,
		       size_t size)
{
	struct fmt w = { buf, size, 0 };
	char bid[2 * 255 + 1];

	if (!mp_frame_symbolized(f)) {
		if (f->build_id_size) {
			fmt_str(&w, mp_frame_build_id_hex(f, bid, sizeof(bid)));
			fmt_put(&w, "+", 1);
			fmt_hex(&w, f->offset);
		} else if (f->flags & MP_FRAME_ADDRESS) {
			fmt_hex(&w, f->address);
		} else {
			fmt_put(&w, "?+", 2);
			fmt_hex(&w, f->offset);
		}
	} else {
		if (!name)
			name = f->function ? f->function : "??";
		fmt_str(&w, name);
		if (f->flags & MP_FRAME_GUID) {
			int64_t off = mp_frame_line_offset(f);

			fmt_put(&w, off < 0 ? " -" : " +", 2);
			fmt_u64(&w, (uint64_t)(off < 0 ? -off : off));
		} else {
			fmt_put(&w, " ", 1);
			fmt_str(&w, f->file ? f->file : "??");
			fmt_put(&w, ":", 1);
			fmt_u64(&w, f->line);
		}
		fmt_put(&w, ":", 1);
		fmt_u64(&w, f->column);
		if (f->discriminator && !(f->flags & MP_FRAME_GUID)) {
			fmt_put(&w, " [discriminator ", 16);
			fmt_u64(&w, f->discriminator);
			fmt_put(&w, "]", 1);
		}
		if (mp_frame_inlined(f))
			fmt_put(&w, " (inlined)", 10);
	}
	if (size)
		buf[w.n < size ? w.n : size - 1] = '\0';
	return w.n;
}

char *mp_frame_string(const struct mp_frame *f, const char *name)
{
	size_t n = mp_frame_format(f, name, NULL, 0);
	char *out = n < SIZE_MAX ? malloc(n + 1) : NULL;

	if (out)
		mp_frame_format(f, name, out, n + 1);
	return out;
}

bool mp_prefix_map_add(struct mp_prefix_map *m, const char *rule, bool *nomem)
{
	const char *eq = strchr(rule, '=');
	char *old;

	*nomem = false;
	if (!eq || eq == rule)
		return false;
	if (!MP_GROW(m->rule, m->alloc, m->n + 1) ||
	    !(old = strndup(rule, (size_t)(eq - rule)))) {
		*nomem = true;
		return false;
	}
	m->rule[m->n++] = (struct mp_prefix_rule){
		.old = old, .new = eq + 1, .old_len = (size_t)(eq - rule),
	};
	return true;
}

void mp_prefix_map_release(struct mp_prefix_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->rule[i].old);
	free(m->rule);
	memset(m, 0, sizeof(*m));
}

const char *mp_prefix_map_apply(const struct mp_prefix_map *m,
				const char *path, char *buf, size_t size)
{
	const struct mp_prefix_rule *r;
	size_t i, nlen, rest;

	if (!m || !path)
		return path;
	for (i = m->n; i-- > 0;) {
		r = &m->rule[i];
		if (strncmp(path, r->old, r->old_len) == 0 &&
		    (!path[r->old_len] || path[r->old_len] == '/' ||
		     r->old[r->old_len - 1] == '/'))
			break;
	}
	if (i == (size_t)-1)
		return path;
	nlen = strlen(r->new);
	rest = strlen(path + r->old_len);
	if (nlen + rest >= size)
		return NULL;
	memcpy(buf, r->new, nlen);
	memcpy(buf + nlen, path + r->old_len, rest + 1);
	return buf;
}
