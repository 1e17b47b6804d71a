/*
 * rt_util.c - what the rest of the runtime builds on without malloc: spin
 * locks, page mappings, a small internal allocator, growable buffers and
 * stdio-free messages.
 */
#include "rt.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------ locks */

void memprof_rt_lock(rt_lock *l)
{
	for (;;) {
		if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
			return;
		for (int spins = 0;
		     atomic_load_explicit(&l->v, memory_order_relaxed);
		     spins++) {
			if (spins < 64)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
	}
}

void memprof_rt_unlock(rt_lock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* ------------------------------------------------------------ mappings */

void *memprof_rt_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void memprof_rt_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/*
 * The internal allocator: power-of-two size classes from 16 bytes to
 * 64 KB carved from 1 MB chunks, one free list per class, one lock.  It
 * serves the stack depot and histograms, both rare next to malloc calls.
 * Bigger requests get their own mapping.
 */
#define IA_MIN_SHIFT 4
#define IA_MAX_SHIFT 16
#define IA_CHUNK (1u << 20)

static rt_lock ia_lock;
static void *ia_free[IA_MAX_SHIFT + 1];
static char *ia_bump, *ia_end;

static unsigned ia_shift(size_t size)
{
	unsigned s = IA_MIN_SHIFT;

	while (((size_t)1 << s) < size)
		s++;
	return s;
}

void *memprof_rt_ialloc(size_t size)
{
	unsigned s;
	void *p;

	if (size > ((size_t)1 << IA_MAX_SHIFT))
		return memprof_rt_map((size + RT_PAGE - 1) & ~(size_t)(RT_PAGE - 1));
	s = ia_shift(size);
	memprof_rt_lock(&ia_lock);
	p = ia_free[s];
	if (p) {
		ia_free[s] = *(void **)p;
		memset(p, 0, (size_t)1 << s);
	} else {
		if (!ia_bump || (size_t)(ia_end - ia_bump) < ((size_t)1 << s)) {
			char *c = memprof_rt_map(IA_CHUNK);

			if (!c) {
				memprof_rt_unlock(&ia_lock);
				return NULL;
			}
			/* The tail of the old chunk is given up. */
			ia_bump = c;
			ia_end = c + IA_CHUNK;
		}
		p = ia_bump;
		ia_bump += (size_t)1 << s;
	}
	memprof_rt_unlock(&ia_lock);
	return p;
}

void memprof_rt_ifree(void *p, size_t size)
{
	unsigned s;

	if (!p)
		return;
	if (size > ((size_t)1 << IA_MAX_SHIFT)) {
		memprof_rt_unmap(p, (size + RT_PAGE - 1) & ~(size_t)(RT_PAGE - 1));
		return;
	}
	s = ia_shift(size);
	memprof_rt_lock(&ia_lock);
	*(void **)p = ia_free[s];
	ia_free[s] = p;
	memprof_rt_unlock(&ia_lock);
}

void memprof_rt_ialloc_lock(void)
{
	memprof_rt_lock(&ia_lock);
}

void memprof_rt_ialloc_unlock(void)
{
	memprof_rt_unlock(&ia_lock);
}

void memprof_rt_ialloc_child(void)
{
	atomic_init(&ia_lock.v, 0);
}

/* ------------------------------------------------------------ buffers */

void *memprof_rt_buf_add(struct rt_buf *b, size_t n)
{
	void *p;

	if (b->failed)
		return NULL;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 64 * 1024;
		void *np;

		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->failed = 1;
				return NULL;
			}
			cap *= 2;
		}
		if (b->p)
			np = mremap(b->p, b->cap, cap, MREMAP_MAYMOVE);
		else
			np = mmap(NULL, cap, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (np == MAP_FAILED) {
			b->failed = 1;
			return NULL;
		}
		b->p = np;
		b->cap = cap;
	}
	p = b->p + b->len;
	b->len += n;
	return p;
}

void memprof_rt_buf_put64(struct rt_buf *b, uint64_t v)
{
	uint8_t *p = memprof_rt_buf_add(b, 8);

	if (p)
		memprof_rt_put_le(p, v, 8);
}

void memprof_rt_buf_release(struct rt_buf *b)
{
	if (b->p)
		munmap(b->p, b->cap);
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = 0;
}

/* ------------------------------------------------------------ messages */

struct out {
	char buf[512];
	size_t n;
};

static void out_c(struct out *o, char c)
{
	if (o->n < sizeof(o->buf))
		o->buf[o->n++] = c;
}

static void out_s(struct out *o, const char *s)
{
	while (s && *s)
		out_c(o, *s++);
}

static void out_u(struct out *o, unsigned long v, unsigned base)
{
	char d[24];
	int i = 0;

	do {
		d[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (i)
		out_c(o, d[--i]);
}

static void vformat(struct out *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int lng = 0;

		if (*fmt != '%') {
			out_c(o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == 'l' || *fmt == 'z') {
			lng = 1;
			fmt++;
		}
		switch (*fmt) {
		case 's':
			out_s(o, va_arg(ap, const char *));
			break;
		case 'd': {
			long v = lng ? va_arg(ap, long) : va_arg(ap, int);

			if (v < 0) {
				out_c(o, '-');
				v = -v;
			}
			out_u(o, (unsigned long)v, 10);
			break;
		}
		case 'u':
			out_u(o, lng ? va_arg(ap, unsigned long) :
				       va_arg(ap, unsigned), 10);
			break;
		case 'x':
			out_u(o, lng ? va_arg(ap, unsigned long) :
				       va_arg(ap, unsigned), 16);
			break;
		case 'p':
			out_s(o, "0x");
			out_u(o, (unsigned long)va_arg(ap, void *), 16);
			break;
		case '%':
			out_c(o, '%');
			break;
		default:
			out_c(o, '?');
			break;
		}
		if (!*fmt)
			break;
	}
}

static void emit(const char *fmt, va_list ap)
{
	struct out o = {.n = 0};
	int saved = errno;

	out_s(&o, "libmemprof: ");
	vformat(&o, fmt, ap);
	out_c(&o, '\n');
	for (size_t off = 0; off < o.n;) {
		ssize_t w = write(2, o.buf + off, o.n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved;
}

void memprof_rt_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
}

void memprof_rt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	abort();
}
