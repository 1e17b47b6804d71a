#include "mp_frame.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "mp_util.h"

char *mp_frame_build_id_hex(const struct mp_frame *f, char *buf, size_t size)
{
	mp_hex(f->build_id, f->build_id_size, buf, size);
	return buf;
}

char *mp_frame_string(const struct mp_frame *f, const char *name)
{
	char bid[2 * 255 + 1];
	char *out = NULL;
	int n;

	if (!mp_frame_symbolized(f)) {
		if (f->build_id_size)
			n = asprintf(&out, "%s+0x%" PRIx64,
				     mp_frame_build_id_hex(f, bid, sizeof(bid)),
				     f->offset);
		else if (f->flags & MP_FRAME_ADDRESS)
			n = asprintf(&out, "0x%" PRIx64, f->address);
		else
			n = asprintf(&out, "?+0x%" PRIx64, f->offset);
		return n < 0 ? NULL : out;
	}
	if (!name)
		name = f->function ? f->function : "??";
	if (f->flags & MP_FRAME_GUID) {
		n = asprintf(&out, "%s +%u:%u%s", name, f->line, f->column,
			     mp_frame_inlined(f) ? " (inlined)" : "");
		return n < 0 ? NULL : out;
	}
	n = asprintf(&out, "%s %s:%u:%u%s%.0u%s%s", name,
		     f->file ? f->file : "??", f->line, f->column,
		     f->discriminator ? " [discriminator " : "",
		     f->discriminator, f->discriminator ? "]" : "",
		     mp_frame_inlined(f) ? " (inlined)" : "");
	return n < 0 ? NULL : out;
}
