#!/bin/sh
# Issue 16, item 7: a binary whose build id matches but whose DWARF is
# corrupt.  Where llvm-symbolizer-19 warns, we warn too, once per module,
# and the frames that DWARF would name stay unsymbolized (counted as
# such), instead of garbage names or silently lost lines.  Four
# corruptions of real fixtures, made with objcopy (the build id note is
# kept): a compilation unit of DWARF version 7, a line table of version 9,
# a function name with a control byte in .debug_str, and a function whose
# DW_AT_specification points at a typedef (llvm-symbolizer-19 names that
# frame "size_type" without a word; so did we, before).
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need objcopy python3 llvm-symbolizer-19
cd "$tmp" || exit 1

# Section SEC of FILE into OUT with the byte at OFFSET set to VALUE.
patch_section() {
	objcopy --dump-section "$2=sec.bin" "$1" &&
	python3 -c 'import sys
d = bytearray(open("sec.bin", "rb").read())
d[int(sys.argv[1])] = int(sys.argv[2])
open("sec.bin", "wb").write(d)' "$4" "$5" &&
	objcopy --update-section "$2=sec.bin" "$1" "$3"
}
patch_section "$FX/cxx.pie" .debug_info cu7.pie 4 7	# unit version: bytes 4-5
patch_section "$FX/cxx.pie" .debug_line line9.pie 4 9	# line table version
# hot_alloc's name in basic.pie's .debug_str: "hot\001lloc".
python3 - "$FX/basic.pie" name.pie <<'PY'
import subprocess, sys
src, out = sys.argv[1], sys.argv[2]
d = bytearray(open(src, "rb").read())
for line in subprocess.run(["readelf", "-S", "-W", src], capture_output=True,
                           text=True).stdout.splitlines():
    f = line.replace("[ ", "[").split()
    if ".debug_str" in f:
        i = f.index(".debug_str")
        off, size = int(f[i + 3], 16), int(f[i + 4], 16)
j = d.find(b"\0hot_alloc\0", off, off + size) + 1
assert j > 0
d[j + 3] = 1
open(out, "wb").write(d)
PY
# _M_allocate's out-of-line definition in cxx.pie (the one whose
# DW_AT_specification names its declaration in the class) refers to the
# unit's first typedef instead: 4 bytes of .debug_info, a DW_FORM_ref4.
objcopy --dump-section .debug_info=info.bin "$FX/cxx.pie" &&
readelf --debug-dump=info "$FX/cxx.pie" 2>/dev/null >info.txt &&
python3 - <<'PY' && objcopy --update-section .debug_info=info.bin "$FX/cxx.pie" spec.pie
import re, struct
decl = spec = typedef = None
tag = None
for line in open("info.txt"):
    m = re.match(r"\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)", line)
    if m:
        tag, die = m.group(3), int(m.group(2), 16)
        if tag == "DW_TAG_typedef" and m.group(1) == "1" and typedef is None:
            typedef = die
        continue
    m = re.match(r"\s*<([0-9a-f]+)>\s+(\w+)\s*:\s*(.*)", line)
    if not m:
        continue
    if m.group(2) == "DW_AT_linkage_name" and "_M_allocateEm" in m.group(3):
        decl = die
    if m.group(2) == "DW_AT_specification" and decl is not None and \
       m.group(3).strip() == "<0x%x>" % decl:
        spec = int(m.group(1), 16)
assert "Compilation Unit @ offset 0:" in open("info.txt").read()
assert None not in (decl, spec, typedef), (decl, spec, typedef)
d = bytearray(open("info.bin", "rb").read())
assert struct.unpack_from("<I", d, spec)[0] == decl
struct.pack_into("<I", d, spec, typedef)
open("info.bin", "wb").write(d)
PY

for c in "cu7.pie cxx.v4.profraw a compilation unit header libdw cannot read" \
	 "line9.pie cxx.v4.profraw a line table that does not read" \
	 "name.pie basic.pie.v4.profraw a name that is not text" \
	 "spec.pie cxx.v4.profraw a function whose declaration is not a function"; do
	set -- $c
	bin=$1 prof=$2
	shift 2
	why="$*"
	clean=$(echo "$bin" | sed 's/cu7\|line9\|spec/cxx/; s/name/basic/')
	"$MD" show --format=json --binary="$bin" "$FX/$prof" >bad.json 2>err; r=$?
	"$MD" show --format=json --binary="$FX/$clean" "$FX/$prof" >good.json 2>/dev/null
	n=$(grep -c "the debug information of '$bin' cannot be trusted ($why" err)
	frames() {
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for c in d["contexts"] for f in c["frames"] if f.get("function")))' "$1"
	}
	fb=$(frames bad.json) fg=$(frames good.json)
	if [ $r = 0 ] && [ "$n" = 1 ] && [ "$fb" -lt "$fg" ] &&
	   ! grep -q 'hot.lloc\|size_type' bad.json; then
		ok "$why: one warning for the module, its frames unsymbolized ($fb named frames, $fg with the intact binary)"
	else
		notok "$why: exit $r, $n warnings, $fb vs $fg named frames: $(head -c 300 err)"
	fi
done

# llvm-symbolizer-19 agrees that the first is corrupt.
if llvm-symbolizer-19 --obj=cu7.pie 0x1000 2>&1 | grep -q 'unsupported version 7'; then
	ok "llvm-symbolizer-19 warns about the same unit (unsupported version 7)"
else
	notok "llvm-symbolizer-19 does not see the corrupt unit"
fi
