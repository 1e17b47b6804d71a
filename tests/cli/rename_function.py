#!/usr/bin/env python3
"""rename_function.py IN OUT OLD NEW - a copy of the binary IN with the name
OLD replaced by NEW in every string table (.debug_str, .strtab, ...).

NEW is a Python bytes literal body ("v\\xc2\\x9b..."), of OLD's length so
that no offset moves; the build id note is untouched, so the copy still
matches the profiles of IN.  For the tests of hostile function names.
"""
import ast
import sys

src, dst, old, new = sys.argv[1:5]
old = old.encode()
new = ast.literal_eval('b"' + new + '"')
data = open(src, "rb").read()
assert len(new) == len(old), "NEW must be as long as OLD"
assert old in data, "OLD is not in IN"
open(dst, "wb").write(data.replace(old, new))
