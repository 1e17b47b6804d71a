#!/bin/sh
# What GCC's DWARF leaves out (tests/cli/src/gcc_names.cc, g++ -O2, our
# runtime): members of classes in an anonymous namespace have no linkage
# name, only "Insert", and were named so, two functions as one; a local
# class's member and a lambda's body are defined inside the enclosing
# function's DIE, were never found there, and got the ELF symbol's name
# with the inlined callee's line and no inlined frames.  The out-of-line
# frame now has the ELF symbol's mangled name, an inlined one its name
# qualified by the scopes of its declaration; nested subprograms are
# found, with their inline chains (as llvm-symbolizer-19 gives them).
# An LLVM export names its frames' GUIDs by those names, and show of it
# with --binary found them (it named functions by the bare DWARF name, so
# GCC's internal-linkage functions stayed "guid:HEX").
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
SRC=tests/cli/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need g++ python3

site=$(grep -n 'SITE:grab' "$SRC/gcc_names.cc" | cut -d: -f1)
src=$(cd "$SRC" && pwd)/gcc_names.cc
lib=$(cd "$BUILD" && pwd)/libmemprof.a
md=$(cd "$BUILD" && pwd)/memprof-data
# The same with -gsplit-dwarf: the unit's producer and language are the
# split unit's (a skeleton need not carry them); the .dwo lands in the
# directory of the build, tmp.
for variant in plain split; do
	flags=
	[ "$variant" = split ] && flags=-gsplit-dwarf
	d=$tmp/$variant
	mkdir -p "$d"
	# shellcheck disable=SC2086
	if ! (cd "$d" && g++ -g -O2 $flags "$src" -o gn "$lib" -pthread) 2>"$tmp/err" ||
	   ! MEMPROF_OPTIONS=log_path="$d/p":unwind=backtrace "$d/gn" 2>>"$tmp/err"; then
		notok "$variant: build and run gcc_names.cc: $(cat "$tmp/err")"
		continue
	fi
	(cd "$d" && "$md" show --format=json --no-symbol-cache --binary=gn p.*) >"$tmp/s.json" 2>"$tmp/err"
	python3 - "$tmp/s.json" "$site" "$variant" <<'PY' || notok "$variant: show: $(head -c 300 "$tmp/err")"
import json, sys
d = json.load(open(sys.argv[1]))
site = int(sys.argv[2])
variant = sys.argv[3]
by_size = {c["mib"]["TotalSize"]: c["frames"] for c in d["contexts"]}

def ok(cond, what, frames):
    print(("ok - " if cond else "not ok - ") + variant + ": " + what +
          ("" if cond else ": %s" % [(f.get("function"), f.get("line"), f.get("inlined")) for f in frames[:4]]))

a, b = by_size.get(1000, [{}]), by_size.get(2000, [{}])
ok(a[0].get("function", "").startswith("_ZN12_GLOBAL__N_11A6Insert") and
   b[0].get("function", "").startswith("_ZN12_GLOBAL__N_11B6Insert"),
   "members of classes in an anonymous namespace: two linkage names, not one bare Insert",
   a + b)
w = by_size.get(480, [{}] * 3)
ok(w[0].get("function") == "grab" and w[0].get("line") == site and w[0].get("inlined") and
   w[1].get("demangled") == "outer(int)::Local::Work(int)" and not w[1].get("inlined"),
   "a local class's member defined inside its function: found, with its inlined callee at the site",
   w)
l = by_size.get(800, [{}] * 3)
ok(l[0].get("function") == "grab" and l[0].get("line") == site and l[0].get("inlined") and
   l[1].get("function") == "outer::{lambda}::operator()" and l[1].get("inlined") and
   l[2].get("demangled", "").startswith("outer(int)::{lambda(int)#1}::_FUN"),
   "a lambda's body: found, grab and operator() inlined into _FUN", l)
c = by_size.get(3000, [{}] * 2)
ok(c[0].get("function") == "(anonymous namespace)::C::Put" and c[0].get("inlined") and
   c[1].get("demangled") == "use_c(unsigned long)",
   "an inlined member of a class in an anonymous namespace: its qualified name", c)
k = by_size.get(4000, [{}] * 2)
ok(k[0].get("function") == "ns::K::K<(anonymous namespace)::C>" and k[0].get("inlined") and
   k[1].get("demangled") == "use_k()",
   "an inlined constructor template whose arguments hold '::': qualified too", k)
PY
	# The LLVM export of the profile, shown with the binary: the GUIDs
	# named as the raw profile's frames are (program frames only: the
	# export keeps the --binary's).
	if ! (cd "$d" && "$md" merge --format=llvm -o x.profdata --no-symbol-cache --binary=gn p.* &&
	      "$md" show --format=json --no-symbol-cache --binary=gn x.profdata) >"$tmp/l.json" 2>"$tmp/err"; then
		notok "$variant: LLVM export and show: $(head -c 300 "$tmp/err")"
		continue
	fi
	python3 - "$tmp/s.json" "$tmp/l.json" "$variant" <<'PY'
import json, sys
raw, llvm = (json.load(open(f)) for f in sys.argv[1:3])
variant = sys.argv[3]
def names(doc, program_only):
    out = {}
    for c in doc["contexts"]:
        fs = [f for f in c["frames"] if not program_only or
              (f.get("file") or "").endswith("gcc_names.cc")]
        out[c["mib"]["TotalSize"]] = [f.get("function") for f in fs]
    return out
want, got = names(raw, True), names(llvm, False)
unnamed = sorted({n for fs in got.values() for n in fs if n.startswith("guid:")})
print(("ok - " if want == got and not unnamed else "not ok - ") + variant +
      ": show of the LLVM export names every GUID as the raw profile's frames" +
      ("" if want == got and not unnamed else ": %s against %s" % (got, want)))
PY
done
