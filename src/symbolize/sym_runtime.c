/*
 * sym_runtime.c - which frames belong to the allocation runtime, and C++
 * demangling for display.
 *
 * Classification works on linkage (mangled) names so that it needs no
 * demangler and costs a few string compares; sym.c runs it once per
 * distinct name.
 */
#include "sym.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* C allocation entry points; glibc also names them __libc_NAME, and its
 * internal calls __GI_NAME. */
static const char *const c_alloc[] = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "cfree",
	"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
	"malloc_usable_size", "strdup", "strndup", "__strdup", "__strndup",
	"wcsdup",
};

static const char *const rt_prefix[] = {
	"__interceptor_", "___interceptor_", "__memprof_", "__sanitizer_",
	"memprof_rt_",
	/* operator new, new[], delete, delete[]: every overload. */
	"_Znw", "_Zna", "_Zdl", "_Zda",
	/* std::__allocate_guarded<A>(A&): shared_ptr's allocation step. */
	"_ZSt18__allocate_guarded",
};

/* Namespaces (after "_ZN" and cv-qualifiers) that are runtime throughout. */
static const char *const rt_namespace[] = {
	"8__memprof", "11__sanitizer", "14__interception",
	/* libc++ helpers that call operator new. */
	"St3__117__libcpp_allocate", "St3__121__libcpp_operator_new",
};

/* Allocator class templates (after "_ZN" and cv-qualifiers). */
static const char *const allocator_class[] = {
	"SaI",				/* std::allocator< */
	"St15__new_allocatorI",		/* std::__new_allocator< (gcc 12+) */
	"9__gnu_cxx13new_allocatorI",	/* __gnu_cxx::new_allocator< */
	"St16allocator_traitsI",	/* std::allocator_traits< */
	"9__gnu_cxx14__alloc_traitsI",	/* __gnu_cxx::__alloc_traits< */
	"St3__19allocatorI",		/* std::__1::allocator< */
	"St3__116allocator_traitsI",	/* std::__1::allocator_traits< */
};

/* Their members that allocate; E closes the class's template arguments. */
static const char *const allocator_member[] = {
	"E8allocate", "E10deallocate", "E17allocate_at_least",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The same classes and members as qualified names, which the symbolizer
 * makes for GCC's functions without linkage name (an allocator of a class
 * in an anonymous namespace): "std::__new_allocator<...>::allocate". */
static const char *const allocator_class_q[] = {
	"std::allocator<", "std::__new_allocator<", "__gnu_cxx::new_allocator<",
	"std::allocator_traits<", "__gnu_cxx::__alloc_traits<",
	"std::__1::allocator<", "std::__1::allocator_traits<",
};
static const char *const allocator_member_q[] = {
	">::allocate", ">::deallocate", ">::allocate_at_least",
};

static bool qualified_allocator_member(const char *fn)
{
	size_t len = strlen(fn);

	for (size_t i = 0; i < N(allocator_class_q); i++) {
		if (!starts(fn, allocator_class_q[i]))
			continue;
		for (size_t k = 0; k < N(allocator_member_q); k++) {
			size_t m = strlen(allocator_member_q[k]);

			if (len > m && strcmp(fn + len - m, allocator_member_q[k]) == 0)
				return true;
		}
		return false;
	}
	return false;
}

/*
 * Is P, a mangled nested name past "_ZN" and its qualifiers, a member of
 * an allocator class that allocates?  A name of such a class with
 * another member is not.
 */
static bool allocator_member_of(const char *p)
{
	for (size_t i = 0; i < N(allocator_class); i++) {
		if (!starts(p, allocator_class[i]))
			continue;
		for (size_t k = 0; k < N(allocator_member); k++)
			if (strstr(p, allocator_member[k]))
				return true;
		return false;
	}
	return false;
}

static bool runtime_function(const char *fn)
{
	const char *p;
	size_t i;

	for (i = 0; i < N(rt_prefix); i++)
		if (starts(fn, rt_prefix[i]))
			return true;
	/* glibc's names for its own calls: __GI___strdup (its DWARF's,
	 * from libc6-dbg), __libc_malloc, __GI___libc_malloc. */
	p = starts(fn, "__GI_") ? fn + 5 : fn;
	p = starts(p, "__libc_") ? p + 7 : p;
	for (i = 0; i < N(c_alloc); i++)
		if (strcmp(p, c_alloc[i]) == 0)
			return true;
	if (qualified_allocator_member(fn))
		return true;
	if (!starts(fn, "_ZN"))
		return false;
	for (p = fn + 3; *p == 'r' || *p == 'V' || *p == 'K'; p++)
		;
	for (i = 0; i < N(rt_namespace); i++)
		if (starts(p, rt_namespace[i]))
			return true;
	return allocator_member_of(p);
}

/*
 * A source file of compiler-rt, or of our runtime (its files are
 * src/runtime/rt_*): not any src/runtime/ directory, which a program may
 * have of its own.
 */
static bool runtime_file(const char *file)
{
	const char *ours = strstr(file, "src/runtime/rt_");

	return strstr(file, "compiler-rt/lib/") ||
	       (ours && (ours == file || ours[-1] == '/') &&
		!strchr(ours + strlen("src/runtime/"), '/'));
}

/*
 * The runtime frames a compiler still wants: LLVM's MemProf matches a
 * context from the call of operator new inside std::allocator and its
 * kin, so these are kept in an indexed profile (flagged) where the
 * interceptors, malloc and operator new themselves are dropped.
 */
bool sym_is_alloc_library(const char *fn)
{
	const char *p;

	if (!fn)
		return false;
	if (starts(fn, "_ZSt18__allocate_guarded") ||
	    qualified_allocator_member(fn))
		return true;
	if (!starts(fn, "_ZN"))
		return false;
	for (p = fn + 3; *p == 'r' || *p == 'V' || *p == 'K'; p++)
		;
	if (starts(p, "St3__117__libcpp_allocate") ||
	    starts(p, "St3__121__libcpp_operator_new"))
		return true;
	return allocator_member_of(p);
}

bool sym_is_runtime(const char *function, const char *file)
{
	return (function && runtime_function(function)) ||
	       (file && runtime_file(file));
}

#define NAME_ALONE_MAX 512

/*
 * BARE, a demangled name from its start, cut where its parameter list or
 * its ABI tags begin, into ALONE ("tagged_alloc" of
 * "tagged_alloc[abi:cxx11](unsigned long)", "my_alloc<int>" of
 * "my_alloc<int>(unsigned long)"), and less its last template arguments
 * into PLAIN ("my_alloc"; "" when it has none); each NAME_ALONE_MAX
 * bytes.  False when there is nothing to cut or no room.
 */
static bool name_alone(const char *bare, char *alone, char *plain)
{
	size_t len = 0, open = 0;
	int depth = 0;

	for (; bare[len]; len++) {
		const char *p = bare + len;

		if (depth == 0 && (*p == '(' || strncmp(p, "[abi:", 5) == 0))
			break;
		if (*p == '<' && depth++ == 0)
			open = len;
		else if (*p == '>' && depth > 0)
			depth--;
	}
	if (!bare[len] || len == 0 || len >= NAME_ALONE_MAX)
		return false;
	memcpy(alone, bare, len);
	alone[len] = '\0';
	plain[0] = '\0';
	if (open && alone[len - 1] == '>') {
		memcpy(plain, bare, open);
		plain[open] = '\0';
	}
	return true;
}

bool sym_alloc_match(const struct sym_alloc_rules *r, const char *function)
{
	char alone[NAME_ALONE_MAX], plain[NAME_ALONE_MAX];
	const char *pretty, *bare;
	bool hit = false, cut;

	if (!r || !function)
		return false;
	pretty = r->dm ? sym_demangled(r->dm, function) : function;
	/* A function template's demangled name starts with its return
	 * type: "my_alloc*" matches "int* my_alloc<int>(unsigned long)" as
	 * the name from its start; and "my_alloc", "tagged_alloc" match the
	 * name without its parameters, ABI tags or template arguments. */
	bare = pretty + sym_name_start(pretty);
	cut = pretty != function && name_alone(bare, alone, plain);
	for (size_t i = 0; i < r->n; i++) {
		if (fnmatch(r->globs[i], function, 0) != 0 &&
		    (pretty == function || fnmatch(r->globs[i], pretty, 0) != 0) &&
		    (bare == pretty || fnmatch(r->globs[i], bare, 0) != 0) &&
		    (!cut || fnmatch(r->globs[i], alone, 0) != 0) &&
		    (!cut || !plain[0] || fnmatch(r->globs[i], plain, 0) != 0))
			continue;
		if (!r->matched)
			return true;
		/* Each pattern that matches is told, not just the first. */
		__atomic_store_n(&r->matched[i], true, __ATOMIC_RELAXED);
		hit = true;
	}
	return hit;
}

size_t sym_user_start(const struct sym_frame *const *frames, size_t n)
{
	size_t i = 0;

	while (i < n && frames[i] && frames[i]->runtime)
		i++;
	return i;
}

size_t sym_demangle(const char *name, char *buf, size_t size)
{
	const char *src = name;
	char *d = NULL;
	int status;
	size_t len;

	/* Only function names: the demangler would also decode "i" as int. */
	if (name[0] == '_' && name[1] == 'Z' &&
	    (d = sym_demangle_alloc(name, &status)))
		src = d;
	len = strlen(src);
	if (size) {
		size_t n = len < size ? len : size - 1;

		memcpy(buf, src, n);
		buf[n] = '\0';
	}
	free(d);
	return len;
}
