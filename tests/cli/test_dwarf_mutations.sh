#!/bin/sh
# Damaged DWARF, at random: the fixtures' binaries with a few bytes of
# one debug section changed (tests/cli/mutate_dwarf.py), symbolizing
# their real profiles.  test_dwarf_trust.sh checks what is said of four
# known corruptions; this checks that no corruption of the kinds a disk,
# a download or a bad tool makes costs a crash or a hang (under
# `make check-asan`, nor a sanitizer report).  Fixed seeds: a failure
# names its seed and copy, and reproduces.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
MUT=$(pwd)/tests/cli/mutate_dwarf.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3 g++ readelf
cd "$tmp" || exit 1

# C++ with inlined frames (DWARF 5: str_offsets, addrx, rnglists), and C
# with a shared library whose DWARF stays whole.
for run in "cxx.pie 1 $FX/cxx.v4.profraw" \
	   "basic.pie 2 $FX/basic.pie.v4.profraw"; do
	set -- $run
	out=$(python3 "$MUT" "$MD" "$FX/$1" 120 "$2" "$3" 2>&1)
	if [ "$out" = "ok 120" ]; then
		ok "120 damaged copies of $1: no crash, hang or sanitizer report"
	else
		notok "damaged copies of $1: $out"
		trap - EXIT	# the damaged copies stay, for a look
		echo "# kept in $tmp"
	fi
done

# GCC gives each DIE with children a DW_AT_sibling.  One pointing into
# its own subtree (here: every one, at its DIE's first child) had each
# level of the walks over a unit's DIEs walk the levels below it again:
# 2^depth visits, 24 s for the 26 nested namespaces below (a g++ build of
# LevelDB with one damaged byte in .debug_abbrev took minutes).  Now the
# unit is distrusted at the first DIE met out of order, with the warning
# other corrupt DWARF gets.
python3 - <<'PY'
n = 26
open("deep.cc", "w").write(
    "".join("namespace n%d {\n" % k for k in range(n)) +
    "__attribute__((noinline)) int *make(int n) { return new int[n]; }\n" +
    "".join("int v%d = %d; }\n" % (k, k) for k in reversed(range(n))) +
    "int main(int argc, char **) {\n"
    "\tint *p = %s::make(argc * 100);\n"
    "\tp[0] = argc;\n\tint r = p[0] - argc;\n\tdelete[] p;\n\treturn r;\n}\n"
    % "::".join("n%d" % k for k in range(n)))
PY
lib=$(cd "$(dirname "$MD")" && pwd)/libmemprof.a
if g++ -g -O2 deep.cc -o deep "$lib" -pthread 2>err &&
   MEMPROF_OPTIONS=log_path=$tmp/deep.prof ./deep 2>>err &&
   python3 - deep deep.bad <<'PY'
import re, subprocess, sys
src, out = sys.argv[1], sys.argv[2]
# Each DW_AT_sibling of the first unit (deep.cc's) whose DIE has a child,
# and that child's offset; readelf prints each attribute's own offset.
dump = subprocess.run(["readelf", "--debug-dump=info", src],
                      capture_output=True, text=True).stdout
inward, pending, depth = [], None, 0
for line in dump.splitlines():
    if "Compilation Unit @" in line and "offset 0:" not in line:
        break
    m = re.match(r"\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: [1-9]", line)
    if m:
        if pending is not None and int(m.group(1)) == depth + 1:
            inward.append((pending, int(m.group(2), 16)))
        pending, depth = None, int(m.group(1))
        continue
    m = re.match(r"\s*<([0-9a-f]+)>\s+DW_AT_sibling\s*: <0x[0-9a-f]+>", line)
    if m:
        pending = int(m.group(1), 16)
sec = next(l.split() for l in subprocess.run(
    ["readelf", "-SW", src], capture_output=True, text=True).stdout.splitlines()
    if " .debug_info " in l)
base = int(sec[sec.index(".debug_info") + 3], 16)
d = bytearray(open(src, "rb").read())
for at, child in inward:	# DW_FORM_ref4, unit-relative: the unit is at 0
    d[base + at:base + at + 4] = child.to_bytes(4, "little")
open(out, "wb").write(d)
sys.exit(len(inward) < 26)
PY
then
	chmod +x deep.bad
	timeout 10 "$MD" show --no-symbol-cache --binary=deep.bad deep.prof.* \
		>/dev/null 2>err
	rc=$?
	if [ "$rc" = 0 ] &&
	   grep -q "debug information of 'deep.bad' cannot be trusted (a tree of entries that runs back on itself)" err; then
		ok "DW_AT_sibling into its own subtree: the unit distrusted at once, not walked 2^26 times"
	else
		notok "DW_AT_sibling into its own subtree: exit $rc (124: over 10 s), $(cat err)"
	fi
else
	notok "could not build and damage the nested-namespace program: $(cat err)"
fi
