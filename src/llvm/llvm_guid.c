/*
 * llvm_guid.c - the function GUIDs LLVM keys MemProf records and frames
 * by (llvm.h): the first 8 bytes of the MD5 of the canonical linkage
 * name, little-endian.  MD5 from libmd.
 */
#include "llvm.h"

#include <md5.h>
#include <string.h>

#include "common/mp_util.h"

size_t llvm_canonical_len(const char *name)
{
	static const char *const suffixes[] = { ".llvm.", ".part." };
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i]);
		const char *at = NULL, *p = name, *dot;

		/* The last occurrence of the suffix in what is left. */
		while ((p = strstr(p, suffixes[i])) && p < name + len) {
			at = p;
			p++;
		}
		if (!at || at >= name + len)
			continue;
		/* Stripped only when its own '.' is the last one. */
		dot = memrchr(name, '.', len);
		if (dot == at + sl - 1)
			len = (size_t)(at - name);
	}
	return len;
}

uint64_t llvm_guid(const char *linkage_name)
{
	uint8_t digest[MD5_DIGEST_LENGTH];
	MD5_CTX md5;

	MD5Init(&md5);
	MD5Update(&md5, (const uint8_t *)linkage_name,
		  llvm_canonical_len(linkage_name));
	MD5Final(digest, &md5);
	return mp_le64(digest);
}
