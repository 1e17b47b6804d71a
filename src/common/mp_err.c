#include "mp_err.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const descriptions[MP_E__COUNT] = {
#define MP_ERR_DESC(name, desc) [MP_E_##name] = desc,
	MP_ERRORS(MP_ERR_DESC)
#undef MP_ERR_DESC
};

const char *mp_strerror(enum mp_errcode code)
{
	if ((unsigned)code >= MP_E__COUNT)
		return "unknown error";
	return descriptions[code];
}

enum mp_errcode mp_fail(struct mp_err *err, enum mp_errcode code,
			const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->detail[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *mp_errmsg(const struct mp_err *err)
{
	if (err->detail[0])
		return err->detail;
	return mp_strerror(err->code);
}
