/*
 * rt_new.c - C++ operator new and delete, every replaceable variant, as C
 * functions under their Itanium-mangled names (x86-64: size_t is 'm',
 * std::align_val_t is passed as a size_t).
 *
 *	_Znwm _Znam                                  new, new[]
 *	_ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t      nothrow
 *	_ZnwmSt11align_val_t _ZnamSt11align_val_t    aligned
 *	_ZnwmSt11align_val_tRKSt9nothrow_t, _Znam... aligned nothrow
 *	_ZdlPv _ZdaPv, _ZdlPvm _ZdaPvm (sized), ..RKSt9nothrow_t, ..St11align_val_t,
 *	_ZdlPvmSt11align_val_t, ..St11align_val_tRKSt9nothrow_t  (12 deletes)
 *
 * Failure: the throwing forms call the installed new-handler and retry, as
 * the standard asks, and with no handler throw std::bad_alloc through
 * libstdc++'s std::__throw_bad_alloc() (the unwinder passes through these C
 * frames: x86-64 C objects carry unwind tables).  The nothrow forms return
 * NULL without calling the handler, since a C frame cannot catch what it
 * might throw.  Only C++ programs reference these symbols, so only they
 * pull this object, and with it the libstdc++ references, from the archive.
 * All are weak: a program's own operator new wins without a clash.
 */
#include "rt.h"

#include <stddef.h>

#define WEAK __attribute__((weak))

typedef void (*new_handler)(void);
extern new_handler _ZSt15get_new_handlerv(void);	/* std::get_new_handler() */
extern _Noreturn void _ZSt17__throw_bad_allocv(void);	/* std::__throw_bad_alloc() */

void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt);
void *_ZnamRKSt9nothrow_t(size_t size, const void *nt);
void *_ZnwmSt11align_val_t(size_t size, size_t align);
void *_ZnamSt11align_val_t(size_t size, size_t align);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt);
void _ZdlPv(void *p);
void _ZdaPv(void *p);
void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdlPvm(void *p, size_t size);
void _ZdaPvm(void *p, size_t size);
void _ZdlPvSt11align_val_t(void *p, size_t align);
void _ZdaPvSt11align_val_t(void *p, size_t align);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt);
void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align);
void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align);

/* The throwing forms: handler loop, then std::bad_alloc. */
static inline void *new_or_throw(size_t size, size_t align, uintptr_t fp)
{
	for (;;) {
		void *p = memprof_rt_alloc(size, align, fp, 0);
		new_handler h;

		if (p)
			return p;
		h = _ZSt15get_new_handlerv();
		if (!h)
			_ZSt17__throw_bad_allocv();
		h();
	}
}

WEAK void *_Znwm(size_t size)
{
	return new_or_throw(size, 0, RT_FRAME);
}

WEAK void *_Znam(size_t size)
{
	return new_or_throw(size, 0, RT_FRAME);
}

WEAK void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt)
{
	(void)nt;
	return memprof_rt_alloc(size, 0, RT_FRAME, 0);
}

WEAK void *_ZnamRKSt9nothrow_t(size_t size, const void *nt)
{
	(void)nt;
	return memprof_rt_alloc(size, 0, RT_FRAME, 0);
}

WEAK void *_ZnwmSt11align_val_t(size_t size, size_t align)
{
	return new_or_throw(size, align, RT_FRAME);
}

WEAK void *_ZnamSt11align_val_t(size_t size, size_t align)
{
	return new_or_throw(size, align, RT_FRAME);
}

WEAK void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align,
					       const void *nt)
{
	(void)nt;
	return memprof_rt_alloc(size, align, RT_FRAME, 0);
}

WEAK void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align,
					       const void *nt)
{
	(void)nt;
	return memprof_rt_alloc(size, align, RT_FRAME, 0);
}

WEAK void _ZdlPv(void *p)
{
	memprof_rt_free(p);
}

WEAK void _ZdaPv(void *p)
{
	memprof_rt_free(p);
}

WEAK void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
	(void)nt;
	memprof_rt_free(p);
}

WEAK void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
	(void)nt;
	memprof_rt_free(p);
}

WEAK void _ZdlPvm(void *p, size_t size)
{
	(void)size;
	memprof_rt_free(p);
}

WEAK void _ZdaPvm(void *p, size_t size)
{
	(void)size;
	memprof_rt_free(p);
}

WEAK void _ZdlPvSt11align_val_t(void *p, size_t align)
{
	(void)align;
	memprof_rt_free(p);
}

WEAK void _ZdaPvSt11align_val_t(void *p, size_t align)
{
	(void)align;
	memprof_rt_free(p);
}

WEAK void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align,
					      const void *nt)
{
	(void)align;
	(void)nt;
	memprof_rt_free(p);
}

WEAK void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align,
					      const void *nt)
{
	(void)align;
	(void)nt;
	memprof_rt_free(p);
}

WEAK void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align)
{
	(void)size;
	(void)align;
	memprof_rt_free(p);
}

WEAK void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align)
{
	(void)size;
	(void)align;
	memprof_rt_free(p);
}
