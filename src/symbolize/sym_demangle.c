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

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/*
 * libstdc++'s demangler (libiberty's cp-demangle.c, which binutils'
 * c++filt uses too) in the form its verbose terminate handler calls: the
 * text goes to CALLBACK piece by piece, and the demangler itself
 * allocates nothing (its tables live on the stack).  Chosen over the
 * alternatives because it is the Itanium ABI reference implementation
 * and comes with every g++ (libsupc++, linked statically: see the
 * Makefile); libiberty is not packaged as a shared library, elfutils has
 * no demangler, and writing one is a project of its own.
 * __cxa_demangle() is the same code with the text gathered by realloc(),
 * which no caller can stop: a few hundred bytes of nested substitutions
 * (each doubling the type before) name a type of gigabytes, which it
 * spends seconds to minutes and all of memory writing out.
 */
extern int __gcclibcxx_demangle_callback(const char *mangled,
					 void (*callback)(const char *, size_t,
							  void *),
					 void *opaque);

/* The demangled text so far, and where to go when it must stop. */
struct text {
	char *s;
	size_t len, alloc, max;
	jmp_buf stop;
	bool nomem;
};

static void append(const char *p, size_t n, void *arg)
{
	struct text *t = arg;

	if (n > t->max - t->len)
		longjmp(t->stop, 1);
	if (!MP_GROW(t->s, t->alloc, t->len + n + 1)) {
		t->nomem = true;
		longjmp(t->stop, 1);
	}
	memcpy(t->s + t->len, p, n);
	t->len += n;
	t->s[t->len] = '\0';
}

/*
 * Demangle NAME into T; 0 on success, else the demangler's status (-2:
 * not a name it reads) or -1 when T ran out of room or memory.  The jump
 * out of append() leaves only the demangler's frames, plain C data on
 * the stack with nothing to release (which is what makes the jump
 * defined behaviour in the C++ it is compiled as); T is the caller's, so
 * what append() wrote survives it.
 */
static int demangle_into(const char *name, struct text *t)
{
	int rc;

	if (setjmp(t->stop))
		return -1;
	rc = __gcclibcxx_demangle_callback(name, append, t);
	return rc == 0 && !t->s ? -1 : rc;
}

char *sym_demangle_alloc(const char *name, int *status)
{
	size_t n = strlen(name);
	struct text t = {
		.max = n < (SIZE_MAX - SYM_DEMANGLED_SLACK) / SYM_DEMANGLED_RATIO
		       ? n * SYM_DEMANGLED_RATIO + SYM_DEMANGLED_SLACK : SIZE_MAX,
	};

	*status = demangle_into(name, &t);
	if (*status == -1 && !t.nomem)
		*status = -2;	/* too long to be a real name: unreadable */
	if (*status) {
		free(t.s);
		return NULL;
	}
	return t.s;
}

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
	int status;

	/* Only function names: the demangler would also decode "i" as int. */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return name;
	h = mp_hash64((uint64_t)(uintptr_t)name);
	id = ht_find(&d->ht, h, same_name, name, d);
	if (id != HT_NONE)
		return d->pretty[id];
	/* NULL with -1 when out of memory, -2 for a name it cannot read. */
	pretty = sym_demangle_alloc(name, &status);
	if (!pretty && status == -2)
		d->failed++;
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

/* ---- the name in a demangled name ---- */

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/*
 * Past the operator name at P ("operator" just matched): "()", "[]", a run
 * of operator characters ("<<=", "->*") and the blank the demangler puts
 * between "operator<" and a template argument list; or, after a blank,
 * everything up to the parameter list ("new", "delete[]", a conversion's
 * type "char const*" or "std::vector<int, std::allocator<int> >").
 */
static const char *skip_operator(const char *p)
{
	int depth = 0;

	p += 8;
	if ((p[0] == '(' && p[1] == ')') || (p[0] == '[' && p[1] == ']')) {
		p += 2;
	} else if (*p == ' ') {
		for (p++; *p && (depth > 0 || *p != '('); p++)
			depth += *p == '<' ? 1 : *p == '>' && depth > 0 ? -1 : 0;
		return p;
	} else {
		while (*p && strchr("<>=!+-*/%^&|~,", *p))
			p++;
	}
	if (p[0] == ' ' && p[1] == '<')
		p++;
	return p;
}

/* Past the balanced group that opens at P ("(...)" or "<...>"). */
static const char *skip_group(const char *p)
{
	int depth = 0;

	do {
		if (strchr("<([{", *p))
			depth++;
		else if (strchr(">)]}", *p))
			depth--;
		p++;
	} while (*p && depth > 0);
	return p;
}

static bool keyword_at(const char *pretty, const char *p, const char *kw)
{
	size_t n = strlen(kw);

	return !strncmp(p, kw, n) && !ident_char(p[n]) &&
	       (p == pretty || !ident_char(p[-1]));
}

size_t sym_name_start(const char *pretty)
{
	static const char anon[] = "(anonymous namespace)";
	size_t start = 0;
	int depth = 0;

	for (const char *p = pretty; *p;) {
		if (!strncmp(p, anon, sizeof(anon) - 1)) {
			p += sizeof(anon) - 1;
		} else if (keyword_at(pretty, p, "operator")) {
			p = skip_operator(p);
		} else if (keyword_at(pretty, p, "decltype")) {
			/* A return type "decltype (expr)": not the parameters. */
			p += 8;
			if (*p == ' ')
				p++;
			if (*p == '(')
				p = skip_group(p);
		} else {
			if (depth == 0 && *p == '(')
				break;		/* the parameter list */
			if (depth == 0 && *p == ' ')
				start = (size_t)(p + 1 - pretty);
			if (strchr("<([{", *p))
				depth++;
			else if (strchr(">)]}", *p) && depth > 0)
				depth--;
			p++;
		}
	}
	return start;
}
