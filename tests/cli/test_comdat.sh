#!/bin/sh
# An inline function two objects emit differently (tests/cli/src/comdat/:
# a.cc inlines S::init() into S::S(), b.cc calls it): the linker keeps the
# first object's code, and GNU ld points the other's DWARF at it too, so
# two units claim S::S()'s addresses.  The first unit in link order is
# the code's, as llvm-symbolizer-19 and llvm-profdata-19 have it: show
# must give the inlined S::init() frame when a.o comes first, and none
# when b.o does (it gave the other unit's frames in both orders).
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
SRC=$(pwd)/tests/cli/src/comdat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need clang++-19 llvm-symbolizer-19

cd "$tmp" || exit 1
CF="-g -O2 -fno-omit-frame-pointer -fmemory-profile"
for f in a b c; do
	clang++-19 $CF -I"$SRC" -c "$SRC/$f.cc" -o $f.o || { notok "compile $f.cc"; exit 0; }
done
for order in "a b c" "b a c"; do
	name=$(echo "$order" | tr -d ' ')
	# shellcheck disable=SC2086
	clang++-19 -fmemory-profile $(for f in $order; do echo $f.o; done) -o "$name" ||
		{ notok "link $name"; continue; }
	MEMPROF_OPTIONS="log_path=$tmp/p$name" "./$name"
	# The frames of g()'s caller, ours and llvm-symbolizer-19's at the
	# same ELF address.
	"$MD" show --format=json --no-symbol-cache --binary="$name" "$tmp/p$name".* \
		>"$name.json" 2>/dev/null
	if python3 - "$name.json" "$name" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
bias = int(d["segments"][0]["offset"], 16)
ctxs = [c for c in d["contexts"] if c["frames"] and c["frames"][0].get("function") == "_Z1gP1S"]
assert len(ctxs) == 2, [c["frames"][:2] for c in d["contexts"]]
want = ["_ZN1S4initEv", "_ZN1SC2Ev"] if sys.argv[2] == "abc" else ["_ZN1SC2Ev"]
for c in ctxs:
    fr = c["frames"]
    # The frames of the one PC in S::S() after g(), inlined ones first.
    ours, k = [], 1
    while True:
        ours.append(fr[k]["function"])
        if not fr[k]["inlined"]:
            break
        k += 1
    pc = int(fr[1]["address"], 16) - bias
    out = subprocess.run(["llvm-symbolizer-19", "--obj=" + sys.argv[2], "--inlining",
                          "--no-demangle", hex(pc - 1)], capture_output=True,
                         text=True).stdout.strip().split("\n")
    theirs = out[0::2]
    assert ours == theirs, (ours, theirs)
    assert ours == want, (ours, want)
PY
	then
		ok "an inline function two objects emit ($name): the kept copy's frames, as llvm-symbolizer-19's"
	else
		notok "COMDAT copies ($name): the other unit's frames"
	fi
done
