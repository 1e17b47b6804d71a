/*
 * rawcheck.h - is a record raw_walk() handed over the context raw_parse()
 * made of it?  Shared by test_raw and the fuzz_raw target.
 */
#ifndef RAWCHECK_H
#define RAWCHECK_H

#include <stdbool.h>
#include <string.h>

#include "raw/raw.h"

static inline bool raw_record_is_context(const struct raw_record *r,
					 const struct raw_context *c)
{
	if (c->stack_id != r->stack_id || c->npcs != r->npcs ||
	    c->profile != r->profile || c->nhist != r->nhist ||
	    memcmp(&c->mib, r->mib, sizeof(c->mib)) ||
	    (r->nhist && memcmp(c->hist, r->hist, r->nhist * sizeof(*r->hist))))
		return false;
	for (uint32_t k = 0; k < r->npcs; k++)
		if (c->pcs[k] != mp_le64(r->pcs + (size_t)k * 8))
			return false;
	return true;
}

#endif /* RAWCHECK_H */
